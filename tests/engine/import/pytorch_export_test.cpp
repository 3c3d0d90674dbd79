// A real PyTorch export (Debian's python3-torch under /usr/bin/python3): GRU-2×128 with
// input 32, batch_first, dynamic batch/seq, opset 14; imported and run through every pass.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include "engine/onnx_import.h"
#include "engine/passes/passes.h"
#include "test_data.h"

namespace ts::engine {
namespace {

constexpr const char* kExportScript = R"PY(
import sys, torch
class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = torch.nn.GRU(32, 128, 2, batch_first=True)
    def forward(self, x):
        y, _ = self.gru(x)
        return y
torch.onnx.export(M().eval(), torch.randn(1, 60, 32), sys.argv[1], input_names=["x"],
                  output_names=["y"], dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch", 1: "seq"}},
                  opset_version=14)
)PY";

TEST(PyTorchExport, Gru2x128ImportsAndEveryShapeIsInferred) {
  auto dir = ts::testing::scratch_dir("engine_import_gru");
  auto script = dir / "export.py", model = dir / "gru.onnx";
  std::ofstream(script) << kExportScript;
  std::string cmd = "/usr/bin/python3 " + script.string() + " " + model.string() + " > " +
                    (dir / "export.log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "PyTorch export failed, see " << (dir / "export.log");

  auto r = import_onnx_file(model.string());
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  Graph& g = r.value();
  EXPECT_EQ(g.opset, 14);
  EXPECT_NE(g.producer.find("pytorch"), std::string::npos) << g.producer;
  PassLog log;
  Status s = run_passes(g, log);
  ASSERT_TRUE(s.is_ok()) << s.message();

  ASSERT_EQ(g.inputs.size(), 1u);
  ASSERT_EQ(g.outputs.size(), 1u);
  EXPECT_EQ(shape_to_string(g.value(g.inputs[0]).shape), "[batch,seq,32]");
  EXPECT_EQ(shape_to_string(g.value(g.outputs[0]).shape), "[batch,seq,128]");
  for (const Node& n : g.nodes) {
    for (ValueId v : n.outputs) {
      if (v == kNoValue) continue;
      EXPECT_TRUE(g.value(v).rank_known) << n.name << " output " << g.value(v).name;
    }
  }
  int grus = 0;
  for (const Node& n : g.nodes) {
    if (n.op != "GRU") continue;
    ++grus;
    EXPECT_EQ(n.attr_i("hidden_size", 0), 128);
    EXPECT_EQ(n.attr_i("linear_before_reset", 0), 1);
    // PyTorch's zero initial_h (ConstantOfShape → Slice) is dropped: the backend's default.
    EXPECT_TRUE(n.inputs.size() < 6 || n.inputs[5] == kNoValue) << n.name;
  }
  EXPECT_EQ(grus, 2);
  for (const Node& n : g.nodes) {
    EXPECT_NE(n.op, "ConstantOfShape") << "zero-state glue should be gone";
  }
}

}  // namespace
}  // namespace ts::engine
