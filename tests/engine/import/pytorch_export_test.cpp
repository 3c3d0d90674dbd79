// Real PyTorch exports (Debian's python3-torch under /usr/bin/python3):
// - GRU-2×128 with input 32, batch_first, dynamic batch/seq, opset 14; imported and run
//   through every pass;
// - the negative-axis idioms of sequence models (x[:, -2:], unsqueeze(-2), flip(-2)), built
//   and run by the engine against PyTorch's own outputs.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

#include "engine/engine.h"
#include "engine/npy.h"
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

// PyTorch writes negative axes and starts as it finds them in the model code: x[:, -2:] is
// Slice(starts=[-2]), unsqueeze(-2) is Unsqueeze(axes=[-2]), flip(dims=[-2]) is Slice with
// axes [-2] and steps [-1]. Shape inference once mistook the value -2 for its "unknown"
// sentinel and refused such models ("starts/ends are not constant").
constexpr const char* kNegativeAxesScript = R"PY(
import sys, os, numpy as np, torch
out = sys.argv[1]
class M(torch.nn.Module):
    def forward(self, x):                      # x [batch, 5, 1, 8]
        a = x.squeeze(-2)                      # [batch, 5, 8]
        last2 = a[:, -2:, :].unsqueeze(-2)     # [batch, 2, 1, 8]
        flipped = torch.flip(a, dims=[-2])     # [batch, 5, 8]
        return last2, flipped
torch.manual_seed(0)
x = torch.randn(3, 5, 1, 8)
torch.onnx.export(M().eval(), x, os.path.join(out, "neg.onnx"), input_names=["x"],
                  output_names=["last2", "flipped"], dynamic_axes={"x": {0: "batch"}}, opset_version=14)
y = M()(x)
np.save(os.path.join(out, "x.npy"), x.numpy())
np.save(os.path.join(out, "last2.npy"), y[0].numpy())
np.save(os.path.join(out, "flipped.npy"), y[1].numpy())
)PY";

TEST(PyTorchExport, NegativeAxesSliceUnsqueezeFlipBuildAndMatchTorch) {
  auto dir = ts::testing::scratch_dir("engine_import_negative_axes");
  auto script = dir / "export.py";
  std::ofstream(script) << kNegativeAxesScript;
  std::string cmd = "/usr/bin/python3 " + script.string() + " " + dir.string() + " > " +
                    (dir / "export.log").string() + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << "PyTorch export failed, see " << (dir / "export.log");

  BuildOptions opts;
  opts.time_tactics = false;
  auto plan = build_file((dir / "neg.onnx").string(), opts);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  auto engine = Engine::load(plan.value());
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  auto ctx = engine.value()->create_context();
  ASSERT_TRUE(ctx.is_ok()) << ctx.status().message();

  auto x = npy_read((dir / "x.npy").string());
  ASSERT_TRUE(x.is_ok()) << x.status().message();
  std::vector<TensorView> in = {x.value().view()};
  std::vector<HostTensor> want, got;
  std::vector<TensorView> out;
  for (const auto& b : engine.value()->outputs()) {
    auto w = npy_read((dir / (b.name + ".npy")).string());
    ASSERT_TRUE(w.is_ok()) << w.status().message();
    got.push_back(HostTensor::zeros(w.value().dtype, w.value().dims));
    want.push_back(std::move(w.value()));
  }
  for (auto& g : got) out.push_back(g.view());
  Status st = ctx.value()->execute(in, out);
  ASSERT_TRUE(st.is_ok()) << st.message();
  for (size_t i = 0; i < want.size(); ++i) {
    const std::string& name = engine.value()->outputs()[i].name;
    EXPECT_EQ(out[i].dims, want[i].dims) << name;
    ASSERT_EQ(out[i].bytes(), want[i].data.size()) << name;
    // Pure data movement: bit-exact.
    EXPECT_EQ(std::memcmp(got[i].data.data(), want[i].data.data(), want[i].data.size()), 0) << name;
  }
}

}  // namespace
}  // namespace ts::engine
