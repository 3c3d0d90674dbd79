// Shape arithmetic as PyTorch exports it: models whose Slice/Reshape/Expand/ConstantOfShape/
// Range arguments are computed from x.shape, exported by Debian's torch (/usr/bin/python3),
// built on the cpu backend and compared with torch at the export shape and at other shapes
// (the arguments are evaluated per shape, not frozen at the export's). And what truly depends
// on data is refused, naming the node and where the data enters.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>

#include "engine/engine.h"
#include "engine/npy.h"
#include "onnx_model_builder.h"
#include "test_data.h"

namespace ts::engine {
namespace {

// Each model: name, export at x [3, 10, F]; reference outputs for every shape in kShapes.
constexpr const char* kScript = R"PY(
import sys, os, numpy as np, torch
out, opset = sys.argv[1], int(sys.argv[2])
torch.manual_seed(0)
F = 6
class Tcn(torch.nn.Module):          # causal trims written h[:, :, :x.shape[1]]
    def __init__(self):
        super().__init__()
        self.c1 = torch.nn.Conv1d(F, 8, 3, padding=2, dilation=1)
        self.c2 = torch.nn.Conv1d(8, 8, 3, padding=4, dilation=2)
        self.fc = torch.nn.Linear(8, 1)
    def forward(self, x):
        h = x.transpose(1, 2)
        h = torch.relu(self.c1(h))[:, :, :x.shape[1]]
        h = torch.relu(self.c2(h))[:, :, :x.shape[1]]
        return self.fc(h[:, :, -1])
class ReshapeArith(torch.nn.Module):  # Shape → Gather → Mul → Unsqueeze → Concat → Reshape
    def forward(self, x):
        b, t = x.shape[0], x.shape[1]
        y = x.reshape(b, t * 2, F // 2)
        z = y.view(b * t, -1)
        return z.reshape(x.shape[0], x.shape[1], -1) + 1
class ExpandRange(torch.nn.Module):   # ConstantOfShape, Range, Expand with computed shapes
    def forward(self, x):
        h0 = torch.zeros(x.shape[0], 4, dtype=x.dtype)
        pos = torch.arange(x.shape[1]).to(x.dtype)
        e = pos.unsqueeze(0).unsqueeze(-1).expand(x.shape[0], x.shape[1], F)
        return x + e, h0 + x.mean(dim=2)[:, :4]
class SliceArith(torch.nn.Module):    # starts/ends computed from the sequence length
    def forward(self, x):
        t = x.shape[1]
        return x[:, t // 2:, :], x[:, : t - 1, 1:3], x[:, 1:t:2, :]
models = {"tcn": Tcn(), "reshape": ReshapeArith(), "expand": ExpandRange(), "slice": SliceArith()}
shapes = [(3, 10), (1, 1), (5, 17)]
for name, m in models.items():
    m.eval()
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    x = torch.randn(3, 10, F)
    with torch.no_grad():
        n_out = len(m(x)) if isinstance(m(x), tuple) else 1
    onames = [f"y{i}" for i in range(n_out)]
    torch.onnx.export(m, x, os.path.join(d, "model.onnx"), input_names=["x"], output_names=onames,
                      dynamic_axes={"x": {0: "batch", 1: "seq"}}, opset_version=opset)
    for b, t in shapes:
        if name == "slice" and t < 2: continue
        xs = torch.randn(b, t, F)
        with torch.no_grad():
            ys = m(xs)
        ys = ys if isinstance(ys, tuple) else (ys,)
        np.save(os.path.join(d, f"x_{b}x{t}.npy"), xs.numpy())
        for n, y in zip(onames, ys):
            np.save(os.path.join(d, f"{n}_{b}x{t}.npy"), y.numpy())
)PY";

class ShapeArith : public ::testing::TestWithParam<int> {
 protected:
  static std::filesystem::path export_models(int opset) {
    auto dir = ts::testing::scratch_dir("engine_shape_arith_" + std::to_string(opset));
    std::ofstream(dir / "export.py") << kScript;
    std::string cmd = "/usr/bin/python3 " + (dir / "export.py").string() + " " + dir.string() + " " +
                      std::to_string(opset) + " > " + (dir / "export.log").string() + " 2>&1";
    if (std::system(cmd.c_str()) != 0) return {};
    return dir;
  }
};

// Builds `name` and runs it at every exported shape; returns "" or what went wrong.
std::string build_and_compare(const std::filesystem::path& dir, const std::string& name) {
  BuildOptions opts;
  opts.time_tactics = false;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 1, 6}, {3, 10, 6}, {8, 32, 6}};
  opts.profiles.push_back(p);
  auto plan = build_file((dir / name / "model.onnx").string(), opts);
  if (!plan) return "build: " + plan.status().message();
  auto engine = Engine::load(plan.value());
  if (!engine) return "load: " + engine.status().message();
  auto ctx = engine.value()->create_context();
  if (!ctx) return "context: " + ctx.status().message();
  std::string problems;
  int runs = 0;
  for (const char* shape : {"3x10", "1x1", "5x17"}) {
    auto x = npy_read((dir / name / ("x_" + std::string(shape) + ".npy")).string());
    if (!x) continue;  // not exported for this shape
    ++runs;
    std::vector<TensorView> in = {x.value().view()};
    std::vector<HostTensor> want, got;
    for (const auto& b : engine.value()->outputs()) {
      auto w = npy_read((dir / name / (b.name + "_" + shape + ".npy")).string());
      if (!w) return w.status().message();
      got.push_back(HostTensor::zeros(w.value().dtype, w.value().dims));
      want.push_back(std::move(w.value()));
    }
    std::vector<TensorView> out;
    for (auto& g : got) out.push_back(g.view());
    Status st = ctx.value()->execute(in, out);
    if (!st) return std::string("execute at ") + shape + ": " + st.message();
    for (size_t i = 0; i < want.size(); ++i) {
      if (out[i].dims != want[i].dims) {
        problems += std::string(shape) + " " + engine.value()->outputs()[i].name + ": dims " + dims_str(out[i].dims) +
                    " vs torch " + dims_str(want[i].dims) + "; ";
        continue;
      }
      double worst = 0;
      for (int64_t k = 0; k < want[i].numel(); ++k) {
        const double a = got[i].as<float>()[k], b = want[i].as<float>()[k];
        worst = std::max(worst, std::abs(a - b) / (1.0 + std::abs(b)));  // relative, absolute near 0
      }
      if (worst > 1e-5) problems += std::string(shape) + ": error " + std::to_string(worst) + "; ";
    }
  }
  if (runs < 2) problems += "fewer than two shapes exported; ";
  return problems;
}

TEST_P(ShapeArith, ExportedPatternsBuildAndMatchTorchAtEveryShape) {
  auto dir = export_models(GetParam());
  ASSERT_FALSE(dir.empty()) << "PyTorch export failed (see engine_shape_arith_*/export.log)";
  for (const char* name : {"tcn", "reshape", "expand", "slice"}) {
    EXPECT_EQ(build_and_compare(dir, name), "") << name << " at opset " << GetParam();
  }
}

INSTANTIATE_TEST_SUITE_P(Opsets, ShapeArith, ::testing::Values(14, 17));

// A Slice end read from the input's values (not its shape) is data: refused, naming the Slice,
// the argument and the input the data comes from.
TEST(ShapeArithRefusal, SliceEndFromTensorDataIsRefusedWithTheNodeAndWhy) {
  testing::OnnxModelBuilder b;
  b.input("x", {"batch", 10});
  b.output("y", {"batch", "n"});
  b.constant_i64("zero", {1}, {0});
  b.constant_i64("one", {1}, {1});
  b.constant_i64("idx", {}, {0});
  auto int_attr = [](onnx::NodeProto& n, const char* name, int64_t v) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  };
  int_attr(b.node("ReduceMean", {"x"}, {"m"}, "mean"), "keepdims", 0);
  int_attr(b.node("Cast", {"m"}, {"mi"}, "to_int"), "to", onnx::TensorProto::INT64);
  b.node("Reshape", {"mi", "one"}, {"end"}, "as_vector");
  b.node("Slice", {"x", "zero", "end", "one"}, {"y"}, "trim");
  BuildOptions opts;
  opts.time_tactics = false;
  auto plan = build(b.bytes(), opts);
  ASSERT_FALSE(plan.is_ok());
  const std::string m = plan.status().message();
  EXPECT_NE(m.find("node 'trim' (Slice)"), std::string::npos) << m;
  EXPECT_NE(m.find("ends"), std::string::npos) << m;
  EXPECT_NE(m.find("input 'x'"), std::string::npos) << m;
  EXPECT_NE(m.find("not only on shapes"), std::string::npos) << m;
}

// Every shape argument is evaluated at the user's min/opt/max shapes: a Reshape to [-1, 12]
// builds symbolically, but at the min shape 1x1x6 six elements do not fill a row of 12, and the
// error quotes that shape and the node.
TEST(ShapeArithProfiles, ErrorQuotesTheProfileShapesWhereAnArgumentFails) {
  testing::OnnxModelBuilder b;
  b.input("x", {"batch", "seq", 6});
  b.output("y", {"rows", 12});
  b.constant_i64("target", {2}, {-1, 12});
  b.node("Reshape", {"x", "target"}, {"y"}, "to_rows");
  BuildOptions opts;
  opts.time_tactics = false;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 1, 6}, {4, 10, 6}, {8, 32, 6}};
  opts.profiles.push_back(p);
  auto plan = build(b.bytes(), opts);
  ASSERT_FALSE(plan.is_ok());
  const std::string m = plan.status().message();
  EXPECT_NE(m.find("at profile 0's min shapes x:1x1x6"), std::string::npos) << m;
  EXPECT_NE(m.find("node 'to_rows' (Reshape)"), std::string::npos) << m;
  // At shapes where every argument is valid the same model builds.
  opts.profiles[0].inputs["x"] = ShapeRange{{2, 1, 6}, {4, 10, 6}, {8, 32, 6}};
  auto ok = build(b.bytes(), opts);
  EXPECT_TRUE(ok.is_ok()) << ok.status().message();
}

// The trial run gives an integer shape input values a user could give: an Expand shape of
// ones (an all-zero shape, as before, cannot expand [3, 1] and failed the build).
TEST(ShapeArithProfiles, TrialRunGivesShapeInputsValuesAUserCouldGive) {
  testing::OnnxModelBuilder b;
  b.input("x", {3, 1});
  b.input("shape", {2}, onnx::TensorProto::INT64);
  b.output("y", {"r", "c"});
  b.node("Expand", {"x", "shape"}, {"y"}, "expand");
  BuildOptions opts;
  opts.time_tactics = false;
  auto plan = build(b.bytes(), opts);
  ASSERT_TRUE(plan.is_ok()) << plan.status().message();
  auto engine = Engine::load(plan.value());
  ASSERT_TRUE(engine.is_ok()) << engine.status().message();
  auto ctx = engine.value()->create_context();
  ASSERT_TRUE(ctx.is_ok());
  HostTensor x = HostTensor::zeros(DType::kF32, {3, 1});
  for (int i = 0; i < 3; ++i) x.as<float>()[i] = float(i + 1);
  HostTensor shape = HostTensor::zeros(DType::kI64, {2});
  shape.as<int64_t>()[0] = 3;
  shape.as<int64_t>()[1] = 4;
  HostTensor y = HostTensor::zeros(DType::kF32, {3, 4});
  std::vector<TensorView> in, out = {y.view()};
  for (const auto& bnd : engine.value()->inputs()) in.push_back(bnd.name == "x" ? x.view() : shape.view());
  Status st = ctx.value()->execute(in, out);
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{3, 4}));
  for (int i = 0; i < 12; ++i) EXPECT_EQ(y.as<float>()[i], float(i / 4 + 1)) << i;
}

}  // namespace
}  // namespace ts::engine
