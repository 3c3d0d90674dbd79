// Conv on the CPU backend against a naive reference: 1-D (tactics direct and onednn), 2-D and
// 3-D (onednn) with strides, dilations, asymmetric pads, groups, auto_pad SAME_UPPER /
// SAME_LOWER / VALID, constant and runtime weights; and the errors a bad Conv gets.
#include <cmath>

#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

struct ConvCase {
  std::vector<int64_t> x;          // [N, C, D...]
  int64_t m = 1;                   // output channels
  std::vector<int64_t> k;          // kernel per spatial dim
  std::vector<int64_t> strides, dilations, pads;  // empty = ONNX default
  int64_t group = 1;
  std::string auto_pad = "NOTSET";
  bool bias = true;
  bool const_w = true;
};

// The ONNX spec, written out independently of the kernel: SAME pads to ceil(in/stride) with
// the odd pad at the end (UPPER) or the beginning (LOWER).
void pads_of(const ConvCase& c, size_t i, int64_t* pb, int64_t* pe, int64_t* out) {
  size_t sp = c.k.size();
  int64_t in = c.x[2 + i], s = c.strides.empty() ? 1 : c.strides[i];
  int64_t d = c.dilations.empty() ? 1 : c.dilations[i], eff = (c.k[i] - 1) * d + 1;
  *pb = *pe = 0;
  if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
    int64_t o = (in + s - 1) / s, total = std::max<int64_t>(0, (o - 1) * s + eff - in);
    *pb = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    *pe = total - *pb;
  } else if (c.auto_pad == "NOTSET" && !c.pads.empty()) {
    *pb = c.pads[i];
    *pe = c.pads[i + sp];
  }
  *out = (in + *pb + *pe - eff) / s + 1;
}

std::vector<float> naive_conv(const ConvCase& c, const float* x, const std::vector<float>& w,
                              const std::vector<float>& bias, std::vector<int64_t>* out_dims) {
  size_t sp = c.k.size();
  std::vector<int64_t> pb(sp), pe(sp), od(sp);
  for (size_t i = 0; i < sp; ++i) pads_of(c, i, &pb[i], &pe[i], &od[i]);
  int64_t n = c.x[0], ch = c.x[1], cg = ch / c.group, mg = c.m / c.group;
  *out_dims = {n, c.m};
  out_dims->insert(out_dims->end(), od.begin(), od.end());
  int64_t out_sp = 1, in_sp = 1, k_sp = 1;
  for (size_t i = 0; i < sp; ++i) {
    out_sp *= od[i];
    in_sp *= c.x[2 + i];
    k_sp *= c.k[i];
  }
  std::vector<float> y(size_t(n * c.m * out_sp));
  std::vector<int64_t> o_idx(sp), k_idx(sp);
  for (int64_t ni = 0; ni < n; ++ni)
    for (int64_t mi = 0; mi < c.m; ++mi)
      for (int64_t op = 0; op < out_sp; ++op) {
        for (size_t i = sp, r = size_t(op); i-- > 0;) { o_idx[i] = int64_t(r) % od[i]; r /= size_t(od[i]); }
        double s = c.bias ? bias[size_t(mi)] : 0.0;
        for (int64_t ci = 0; ci < cg; ++ci)
          for (int64_t kp = 0; kp < k_sp; ++kp) {
            for (size_t i = sp, r = size_t(kp); i-- > 0;) { k_idx[i] = int64_t(r) % c.k[i]; r /= size_t(c.k[i]); }
            int64_t in_off = 0;
            bool inside = true;
            for (size_t i = 0; i < sp; ++i) {
              int64_t st = c.strides.empty() ? 1 : c.strides[i], d = c.dilations.empty() ? 1 : c.dilations[i];
              int64_t p = o_idx[i] * st + k_idx[i] * d - pb[i];
              if (p < 0 || p >= c.x[2 + i]) inside = false;
              in_off = in_off * c.x[2 + i] + p;
            }
            if (!inside) continue;
            int64_t xc = (mi / mg) * cg + ci;
            s += double(w[size_t((mi * cg + ci) * k_sp + kp)]) * x[(ni * ch + xc) * in_sp + in_off];
          }
        y[size_t((ni * c.m + mi) * out_sp + op)] = float(s);
      }
  return y;
}

void check_conv(const ConvCase& c, const std::string& tactic, const std::string& what) {
  SCOPED_TRACE(what + " tactic " + tactic);
  GraphBuilder b;
  auto x = b.input("x", known(c.x));
  std::vector<int64_t> wd = {c.m, c.x[1] / c.group};
  wd.insert(wd.end(), c.k.begin(), c.k.end());
  auto wv = random_vec(size_t(shape_numel(wd)), 11), bv = random_vec(size_t(c.m), 12);
  ValueId w = c.const_w ? b.constant("W", wd, wv) : b.input("W", known(wd));
  std::vector<ValueId> ins = {x, w};
  if (c.bias) ins.push_back(b.constant("B", {c.m}, bv));
  auto z = b.value("z");
  auto& n = b.node("Conv", ins, {z});
  n.attrs["kernel_shape"] = c.k;
  if (!c.strides.empty()) n.attrs["strides"] = c.strides;
  if (!c.dilations.empty()) n.attrs["dilations"] = c.dilations;
  if (!c.pads.empty()) n.attrs["pads"] = c.pads;
  if (c.group != 1) n.attrs["group"] = c.group;
  if (c.auto_pad != "NOTSET") n.attrs["auto_pad"] = c.auto_pad;
  b.output(z);
  auto tactics = cpu_backend().tactics(b.g, b.g.nodes[0]);
  ASSERT_NE(std::find(tactics.begin(), tactics.end(), tactic), tactics.end());
  std::vector<HostTensor> in = {random_tensor(c.x, 13)};
  if (!c.const_w) {
    HostTensor wt;
    wt.dims = wd;
    wt.bytes.resize(wv.size() * 4);
    std::memcpy(wt.bytes.data(), wv.data(), wt.bytes.size());
    in.push_back(wt);
  }
  auto out = run_graph(b.g, in, tactic);
  ASSERT_TRUE(out) << out.status().to_string();
  std::vector<int64_t> want_dims;
  auto want = naive_conv(c, in[0].f(), wv, bv, &want_dims);
  ASSERT_EQ(out.value()[0].dims, want_dims);
  expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-4f, 1e-5f, what);
}

TEST(CpuConv, TwoDimensionalMatchesNaive) {
  const std::vector<std::pair<std::string, ConvCase>> cases = {
      {"3x3 pad 1", {{2, 3, 9, 8}, 4, {3, 3}, {}, {}, {1, 1, 1, 1}}},
      {"strides 2x1, asymmetric pads, dilation 2x1",
       {{1, 2, 11, 7}, 5, {3, 2}, {2, 1}, {2, 1}, {1, 0, 2, 1}}},
      {"group 3, 2x3 kernel", {{2, 6, 7, 9}, 6, {2, 3}, {1, 2}, {}, {0, 1, 1, 0}, 3}},
      {"depthwise", {{1, 4, 8, 8}, 4, {3, 3}, {}, {}, {1, 1, 1, 1}, 4}},
      {"SAME_UPPER stride 2", {{1, 3, 7, 6}, 2, {3, 3}, {2, 2}, {}, {}, 1, "SAME_UPPER"}},
      {"SAME_LOWER stride 2", {{1, 3, 7, 6}, 2, {3, 3}, {2, 2}, {}, {}, 1, "SAME_LOWER"}},
      {"SAME_LOWER even kernel", {{2, 2, 5, 5}, 3, {2, 4}, {}, {}, {}, 1, "SAME_LOWER"}},
      {"VALID ignores pads", {{1, 2, 6, 5}, 2, {3, 2}, {1, 2}, {}, {}, 1, "VALID"}},
      {"no bias, runtime weights", {{2, 3, 5, 6}, 4, {3, 3}, {}, {}, {1, 0, 0, 1}, 1, "NOTSET", false, false}},
  };
  for (const auto& [what, c] : cases) check_conv(c, "onednn", what);
}

TEST(CpuConv, ThreeDimensionalMatchesNaive) {
  check_conv({{1, 2, 4, 5, 6}, 3, {2, 3, 3}, {1, 2, 1}, {}, {0, 1, 1, 1, 0, 1}}, "onednn", "3-D");
}

TEST(CpuConv, OneDimensionalBothTacticsAutoPad) {
  const std::vector<std::pair<std::string, ConvCase>> cases = {
      {"pads, dilation", {{2, 4, 20}, 6, {3}, {1}, {2}, {4, 0}}},
      {"group, stride", {{1, 6, 17}, 6, {5}, {2}, {}, {2, 2}, 3}},
      {"SAME_UPPER", {{2, 3, 10}, 4, {4}, {3}, {}, {}, 1, "SAME_UPPER"}},
      {"SAME_LOWER", {{2, 3, 10}, 4, {4}, {3}, {}, {}, 1, "SAME_LOWER"}},
      {"VALID runtime weights", {{1, 2, 9}, 3, {3}, {2}, {}, {}, 1, "VALID", true, false}},
  };
  for (const auto& [what, c] : cases) {
    check_conv(c, "direct", what);
    check_conv(c, "onednn", what);
  }
}

TEST(CpuConv, TacticsPerSpatialRank) {
  GraphBuilder b;
  auto x = b.input("x", known({1, 2, 9}));
  auto z = b.value("z");
  b.node("Conv", {x, b.constant("W", {3, 2, 3}, random_vec(18, 1))}, {z});
  // 1-D: oneDNN by default (measured faster, see cpu_conv.cpp), the direct loops as the other
  // candidate the builder times.
  EXPECT_EQ(cpu_backend().tactics(b.g, b.g.nodes[0]), (std::vector<std::string>{"onednn", "direct"}));
  GraphBuilder b2;
  auto x2 = b2.input("x", known({1, 2, 9, 9}));
  auto z2 = b2.value("z");
  b2.node("Conv", {x2, b2.constant("W", {3, 2, 3, 3}, random_vec(54, 1))}, {z2});
  EXPECT_EQ(cpu_backend().tactics(b2.g, b2.g.nodes[0]), std::vector<std::string>{"onednn"});
  // A plan that asks a 2-D conv for the 1-D tactic is refused, not run wrongly.
  auto k = cpu_backend().make_kernel(b2.g, b2.g.nodes[0], "direct");
  ASSERT_FALSE(k);
  EXPECT_NE(k.status().message().find("no tactic 'direct'"), std::string::npos) << k.status().message();
}

// Errors name the node and say what is wrong.
Status conv_error(const std::vector<int64_t>& xd, const std::vector<int64_t>& wd,
                  const std::map<std::string, AttrValue>& attrs) {
  GraphBuilder b;
  auto x = b.input("x", known(xd));
  auto z = b.value("z");
  auto& n = b.node("Conv", {x, b.constant("W", wd, std::vector<float>(size_t(shape_numel(wd)), 0.5f))}, {z});
  n.name = "/tcn/conv";
  n.attrs = attrs;
  b.output(z);
  std::vector<HostTensor> in = {random_tensor(xd, 3)};
  auto out = run_graph(b.g, in);
  return out ? Status::ok() : out.status();
}

TEST(CpuConv, BadConvsGetClearErrors) {
  struct Case { std::vector<int64_t> x, w; std::map<std::string, AttrValue> attrs; std::string want; };
  const std::vector<Case> cases = {
      {{1, 3, 8, 8}, {2, 2, 3, 3}, {}, "X channels 3 do not match W [2,2,3,3] with group 1"},
      {{1, 2, 8, 8}, {2, 2, 3, 3}, {{"auto_pad", std::string("SAME")}}, "node /tcn/conv: op Conv auto_pad=SAME is not a valid value"},
      {{1, 2, 8, 8}, {2, 2, 3, 3}, {{"strides", std::vector<int64_t>{0, 1}}}, "node /tcn/conv: op Conv strides=[0,1] must be positive"},
      {{1, 2, 8, 8}, {2, 2, 3, 3}, {{"pads", std::vector<int64_t>{1, 1, 1}}}, "pads=[1,1,1] must have 2 values per spatial dim"},
      {{1, 2, 8, 8}, {2, 2, 3, 3}, {{"strides", std::vector<int64_t>{2}}}, "strides [2] has 1 values for 2 spatial dims"},
      {{1, 2, 2, 8}, {2, 2, 3, 3}, {}, "kernel [2,2,3,3] (dilated 3) is larger than the padded input [1,2,2,8]"},
      {{1, 2, 2, 2, 2, 2}, {2, 2, 1, 1, 1, 1}, {}, "op Conv with 4 spatial dims is not supported by the cpu backend (1 to 3)"},
  };
  for (const auto& c : cases) {
    Status s = conv_error(c.x, c.w, c.attrs);
    ASSERT_FALSE(s) << c.want;
    EXPECT_NE(s.message().find(c.want), std::string::npos) << s.message();
    EXPECT_NE(s.message().find("/tcn/conv"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace ts::engine::testing
