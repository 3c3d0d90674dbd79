// CPU kernels against naive reference loops on random inputs (several shapes, broadcasting).
#include <cmath>

#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

// Naive numpy-broadcast index: offset of `out_idx` in a tensor of dims `d` (right-aligned).
int64_t bcast_offset(const std::vector<int64_t>& out, int64_t lin, const std::vector<int64_t>& d) {
  int64_t off = 0, stride = 1;
  for (int i = int(out.size()) - 1; i >= 0; --i) {
    int64_t idx = lin % out[size_t(i)];
    lin /= out[size_t(i)];
    int di = i - int(out.size() - d.size());
    if (di >= 0) {
      if (d[size_t(di)] != 1) off += idx * stride;
      stride *= d[size_t(di)];
    }
  }
  return off;
}

TEST(CpuKernels, BinaryOpsBroadcastLikeNumpy) {
  struct Case { std::vector<int64_t> a, b, out; };
  for (const Case& c : {Case{{2, 3, 4}, {3, 1}, {2, 3, 4}}, Case{{4}, {2, 3, 4}, {2, 3, 4}},
                        Case{{5, 1, 6}, {1, 7, 1}, {5, 7, 6}}, Case{{3, 8}, {3, 8}, {3, 8}},
                        Case{{2, 3}, {1}, {2, 3}}}) {
    for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
      GraphBuilder b;
      auto x = b.input("x", known(c.a));
      auto y = b.input("y", known(c.b));
      auto z = b.value("z");
      b.node(op, {x, y}, {z});
      b.output(z);
      std::vector<HostTensor> in = {random_tensor(c.a, 1), random_tensor(c.b, 2)};
      for (int64_t i = 0; i < in[1].numel(); ++i) in[1].f()[i] += 3.0f;  // keep Div away from 0
      auto out = run_graph(b.g, in);
      ASSERT_TRUE(out) << out.status().to_string();
      ASSERT_EQ(out.value()[0].dims, c.out);
      std::vector<float> want(size_t(shape_numel(c.out)));
      for (int64_t i = 0; i < int64_t(want.size()); ++i) {
        float p = in[0].f()[bcast_offset(c.out, i, c.a)], q = in[1].f()[bcast_offset(c.out, i, c.b)];
        std::string o = op;
        want[size_t(i)] = o == "Add" ? p + q : o == "Sub" ? p - q : o == "Mul" ? p * q : p / q;
      }
      expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-6f, 0, op);
    }
  }
}

TEST(CpuKernels, IncompatibleBroadcastIsAnErrorNamingTheNode) {
  GraphBuilder b;
  auto x = b.input("x", known({2, 3}));
  auto y = b.input("y", known({4}));
  auto z = b.value("z");
  b.node("Add", {x, y}, {z}).name = "/blk/Add";
  b.output(z);
  std::vector<HostTensor> in = {random_tensor({2, 3}, 1), random_tensor({4}, 2)};
  auto out = run_graph(b.g, in);
  ASSERT_FALSE(out);
  EXPECT_NE(out.status().message().find("node /blk/Add (Add)"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("do not broadcast"), std::string::npos);
}

TEST(CpuKernels, UnaryActivationsMatchLibm) {
  for (const char* op : {"Relu", "Sigmoid", "Tanh", "Erf", "Gelu", "Sqrt"}) {
    GraphBuilder b;
    auto x = b.input("x", known({3, 37}));
    auto z = b.value("z");
    b.node(op, {x}, {z});
    b.output(z);
    std::vector<HostTensor> in = {random_tensor({3, 37}, 7, 6.0f)};
    std::string o = op;
    if (o == "Sqrt") for (int64_t i = 0; i < in[0].numel(); ++i) in[0].f()[i] = std::fabs(in[0].f()[i]);
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    std::vector<float> want(size_t(in[0].numel()));
    for (size_t i = 0; i < want.size(); ++i) {
      double v = in[0].f()[i];
      want[i] = float(o == "Relu" ? std::max(v, 0.0) : o == "Sigmoid" ? 1 / (1 + std::exp(-v)) : o == "Tanh" ? std::tanh(v)
                      : o == "Erf" ? std::erf(v) : o == "Gelu" ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))) : std::sqrt(v));
    }
    expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-6f, 1e-7f, op);
  }
}

// x → Softmax(axis) → z (opset 17).
Graph softmax_graph(const std::vector<int64_t>& d, int64_t axis) {
  GraphBuilder b;
  auto x = b.input("x", known(d));
  auto z = b.value("z");
  b.node("Softmax", {x}, {z}).attrs["axis"] = axis;
  b.output(z);
  b.g.opset = 17;
  return b.g;
}

TEST(CpuKernels, SoftmaxAlongEachAxis) {
  std::vector<int64_t> d = {2, 3, 5};
  for (int64_t axis : {-1, 0, 1}) {
    std::vector<HostTensor> in = {random_tensor(d, 3, 4.0f)};
    auto out = run_graph(softmax_graph(d, axis), in);
    ASSERT_TRUE(out) << out.status().to_string();
    int ax = int(axis < 0 ? axis + 3 : axis);
    std::vector<float> want(30);
    int64_t st[3] = {15, 5, 1};
    for (int64_t i = 0; i < 30; ++i) {
      int64_t base = i - ((i / st[ax]) % d[size_t(ax)]) * st[ax];
      double mx = -1e30, sum = 0;
      for (int64_t k = 0; k < d[size_t(ax)]; ++k) mx = std::max(mx, double(in[0].f()[base + k * st[ax]]));
      for (int64_t k = 0; k < d[size_t(ax)]; ++k) sum += std::exp(in[0].f()[base + k * st[ax]] - mx);
      want[size_t(i)] = float(std::exp(in[0].f()[i] - mx) / sum);
    }
    expect_close(out.value()[0].f(), want.data(), 30, 1e-5f, 1e-7f, "softmax");
  }
}

// onnx_fuzz: Softmax of an empty tensor along its empty axis offset a null data pointer (UBSan:
// "applying non-zero offset 4 to null pointer"). An empty input gives an empty output.
TEST(CpuKernels, SoftmaxOfAnEmptyTensorIsEmpty) {
  for (std::vector<int64_t> d : {std::vector<int64_t>{1, 0, 2}, std::vector<int64_t>{3, 0}, std::vector<int64_t>{0, 4}}) {
    for (int64_t axis : {0, 1}) {
      std::vector<HostTensor> in = {random_tensor(d, 3)};
      auto out = run_graph(softmax_graph(d, axis), in);
      ASSERT_TRUE(out) << out.status().to_string();
      EXPECT_EQ(out.value()[0].dims, d);
      EXPECT_EQ(out.value()[0].numel(), 0);
    }
  }
}

TEST(CpuKernels, LayerNormalizationLastAxis) {
  GraphBuilder b;
  auto x = b.input("x", known({4, 7, 16}));
  auto s = b.constant("s", {16}, random_vec(16, 4));
  auto bb = b.constant("b", {16}, random_vec(16, 5));
  auto z = b.value("z");
  b.node("LayerNormalization", {x, s, bb}, {z}).attrs["epsilon"] = 1e-5f;
  b.output(z);
  std::vector<HostTensor> in = {random_tensor({4, 7, 16}, 6, 3.0f)};
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  auto sv = random_vec(16, 4), bv = random_vec(16, 5);
  std::vector<float> want(size_t(in[0].numel()));
  for (int64_t r = 0; r < 28; ++r) {
    double m = 0, v = 0;
    for (int k = 0; k < 16; ++k) m += in[0].f()[r * 16 + k];
    m /= 16;
    for (int k = 0; k < 16; ++k) v += std::pow(in[0].f()[r * 16 + k] - m, 2);
    v /= 16;
    for (int k = 0; k < 16; ++k) want[size_t(r * 16 + k)] = float((in[0].f()[r * 16 + k] - m) / std::sqrt(v + 1e-5) * sv[size_t(k)] + bv[size_t(k)]);
  }
  expect_close(out.value()[0].f(), want.data(), int64_t(want.size()), 1e-5f, 1e-6f, "layernorm");
}

// The optional Mean and InvStdDev outputs, over trailing axes given by a negative axis: shaped
// like x with the normalized axes set to 1.
TEST(CpuKernels, LayerNormalizationMeanAndInvStdDevOutputs) {
  for (int64_t axis : {-2, 1, -3}) {
    GraphBuilder b;
    auto x = b.input("x", known({2, 3, 5}));
    auto s = b.constant("s", {}, {1.5f});
    auto y = b.value("y"), mean = b.value("mean"), inv = b.value("inv");
    auto& n = b.node("LayerNormalization", {x, s}, {y, mean, inv});
    n.attrs["axis"] = axis;
    n.attrs["epsilon"] = 1e-3f;
    b.output(y);
    b.output(mean);
    b.output(inv);
    std::vector<HostTensor> in = {random_tensor({2, 3, 5}, 8, 2.0f)};
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    const int64_t ax = axis < 0 ? axis + 3 : axis;
    std::vector<int64_t> stat_dims = {2, 3, 5};
    int64_t rows = 1, len = 1;
    for (int64_t i = 0; i < 3; ++i) {
      if (i >= ax) stat_dims[size_t(i)] = 1;
      (i < ax ? rows : len) *= std::vector<int64_t>{2, 3, 5}[size_t(i)];
    }
    ASSERT_EQ(out.value()[1].dims, stat_dims) << "axis " << axis;
    ASSERT_EQ(out.value()[2].dims, stat_dims) << "axis " << axis;
    std::vector<float> want_y(30), want_m(static_cast<size_t>(rows)), want_i(static_cast<size_t>(rows));
    for (int64_t r = 0; r < rows; ++r) {
      double m = 0, v = 0;
      for (int64_t k = 0; k < len; ++k) m += in[0].f()[r * len + k];
      m /= double(len);
      for (int64_t k = 0; k < len; ++k) v += std::pow(in[0].f()[r * len + k] - m, 2);
      v /= double(len);
      want_m[size_t(r)] = float(m);
      want_i[size_t(r)] = float(1.0 / std::sqrt(v + 1e-3));
      for (int64_t k = 0; k < len; ++k) want_y[size_t(r * len + k)] = float((in[0].f()[r * len + k] - m) * want_i[size_t(r)] * 1.5);
    }
    expect_close(out.value()[0].f(), want_y.data(), 30, 1e-5f, 1e-6f, "y axis " + std::to_string(axis));
    expect_close(out.value()[1].f(), want_m.data(), rows, 1e-5f, 1e-6f, "mean axis " + std::to_string(axis));
    expect_close(out.value()[2].f(), want_i.data(), rows, 1e-5f, 1e-6f, "inv_std_dev axis " + std::to_string(axis));
  }
}

// Rows of 64 with a per-element scale and no bias (the vectorized path), with Mean and
// InvStdDev, on inputs with a large offset (mean ≫ spread).
TEST(CpuKernels, LayerNormalizationWideRowsWithStats) {
  GraphBuilder b;
  auto x = b.input("x", known({3, 5, 64}));
  auto s = b.constant("s", {64}, random_vec(64, 12));
  auto y = b.value("y"), mean = b.value("mean"), inv = b.value("inv");
  b.node("LayerNormalization", {x, s}, {y, mean, inv}).attrs["epsilon"] = 1e-5f;
  b.output(y);
  b.output(mean);
  b.output(inv);
  std::vector<HostTensor> in = {random_tensor({3, 5, 64}, 13, 2.0f)};
  for (int64_t i = 0; i < in[0].numel(); ++i) in[0].f()[i] += 10.0f;
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  auto sv = random_vec(64, 12);
  std::vector<float> want_y(size_t(in[0].numel())), want_m(15), want_i(15);
  for (int64_t r = 0; r < 15; ++r) {
    double m = 0, v = 0;
    for (int k = 0; k < 64; ++k) m += in[0].f()[r * 64 + k];
    m /= 64;
    for (int k = 0; k < 64; ++k) v += std::pow(in[0].f()[r * 64 + k] - m, 2);
    v /= 64;
    want_m[size_t(r)] = float(m);
    want_i[size_t(r)] = float(1.0 / std::sqrt(v + 1e-5));
    for (int k = 0; k < 64; ++k) want_y[size_t(r * 64 + k)] = float((in[0].f()[r * 64 + k] - m) / std::sqrt(v + 1e-5) * sv[size_t(k)]);
  }
  ASSERT_EQ(out.value()[1].dims, (std::vector<int64_t>{3, 5, 1}));
  expect_close(out.value()[0].f(), want_y.data(), int64_t(want_y.size()), 1e-5f, 1e-5f, "y");
  expect_close(out.value()[1].f(), want_m.data(), 15, 1e-5f, 1e-6f, "mean");
  expect_close(out.value()[2].f(), want_i.data(), 15, 1e-5f, 1e-5f, "inv_std_dev");
}

TEST(CpuKernels, LayerNormalizationStashTypeOtherThanFloatIsRefused) {
  GraphBuilder b;
  auto x = b.input("x", known({2, 4}));
  auto y = b.value("y"), mean = b.value("mean");
  auto& n = b.node("LayerNormalization", {x, b.constant("s", {4}, random_vec(4, 1))}, {y, mean});
  n.name = "/ln";
  n.attrs["stash_type"] = int64_t(11);
  Status s = cpu_backend().check_supported(b.g, n);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("node /ln: op LayerNormalization stash_type=11 is not supported"), std::string::npos)
      << s.message();
}

TEST(CpuKernels, ReduceMeanKeepdims) {
  GraphBuilder b;
  auto x = b.input("x", known({3, 4, 5}));
  auto z = b.value("z");
  auto& n = b.node("ReduceMean", {x}, {z});
  n.attrs["axes"] = std::vector<int64_t>{-1};
  b.output(z);
  std::vector<HostTensor> in = {random_tensor({3, 4, 5}, 8)};
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  EXPECT_EQ(out.value()[0].dims, (std::vector<int64_t>{3, 4, 1}));
  for (int r = 0; r < 12; ++r) {
    double m = 0;
    for (int k = 0; k < 5; ++k) m += in[0].f()[r * 5 + k];
    EXPECT_NEAR(out.value()[0].f()[r], m / 5, 1e-6);
  }
}

void naive_gemm(const float* a, const float* w, const float* bias, int64_t m, int64_t k, int64_t n, bool trans_b,
                const std::string& act, float* c) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = bias ? bias[j] : 0.0;
      for (int64_t kk = 0; kk < k; ++kk) s += double(a[i * k + kk]) * (trans_b ? w[j * k + kk] : w[kk * n + j]);
      if (act == "relu") s = std::max(s, 0.0);
      if (act == "sigmoid") s = 1 / (1 + std::exp(-s));
      if (act == "tanh") s = std::tanh(s);
      if (act == "gelu") s = 0.5 * s * (1 + std::erf(s / std::sqrt(2.0)));
      c[i * n + j] = float(s);
    }
}

TEST(CpuKernels, FusedGemmBothTacticsAllActivations) {
  struct Case { int64_t m, k, n; bool tb; };
  for (const Case& c : {Case{1, 32, 384, true}, Case{5, 7, 13, false}, Case{9, 64, 70, true}, Case{64, 128, 16, false}}) {
    for (const char* act : {"none", "relu", "sigmoid", "tanh", "gelu"}) {
      for (const char* tactic : {"avx2", "onednn"}) {
        GraphBuilder b;
        auto x = b.input("x", known({c.m, c.k}));
        auto wv = random_vec(size_t(c.k * c.n), 11, 0.3f), bv = random_vec(size_t(c.n), 12);
        auto w = b.constant("W", c.tb ? std::vector<int64_t>{c.n, c.k} : std::vector<int64_t>{c.k, c.n}, wv);
        auto bias = b.constant("bias", {c.n}, bv);
        auto z = b.value("z");
        auto& n = b.node("FusedGemm", {x, w, bias}, {z});
        n.attrs["activation"] = std::string(act);
        n.attrs["trans_b"] = int64_t(c.tb);
        b.output(z);
        std::vector<HostTensor> in = {random_tensor({c.m, c.k}, 13)};
        auto out = run_graph(b.g, in, tactic);
        ASSERT_TRUE(out) << out.status().to_string();
        std::vector<float> want(size_t(c.m * c.n));
        naive_gemm(in[0].f(), wv.data(), bv.data(), c.m, c.k, c.n, c.tb, act, want.data());
        expect_close(out.value()[0].f(), want.data(), c.m * c.n, 1e-5f, 1e-5f,
                     std::string("FusedGemm ") + act + " " + tactic + " m=" + std::to_string(c.m));
      }
    }
  }
}

TEST(CpuKernels, MatMulBatchedWithBroadcastAndRuntimeB) {
  GraphBuilder b;
  auto x = b.input("x", known({3, 1, 4, 5}));
  auto y = b.input("y", known({2, 5, 6}));
  auto z = b.value("z");
  b.node("MatMul", {x, y}, {z});
  b.output(z);
  std::vector<HostTensor> in = {random_tensor({3, 1, 4, 5}, 21), random_tensor({2, 5, 6}, 22)};
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{3, 2, 4, 6}));
  for (int bi = 0; bi < 3; ++bi)
    for (int bj = 0; bj < 2; ++bj) {
      std::vector<float> want(24);
      naive_gemm(in[0].f() + bi * 20, in[1].f() + bj * 30, nullptr, 4, 5, 6, false, "none", want.data());
      expect_close(out.value()[0].f() + (bi * 2 + bj) * 24, want.data(), 24, 1e-5f, 1e-6f, "batched matmul");
    }
}

TEST(CpuKernels, GemmTransAAlphaBetaC) {
  GraphBuilder b;
  auto x = b.input("a", known({6, 4}));  // transA: A is [K=6, M=4]
  auto y = b.input("b", known({6, 5}));
  auto c = b.input("c", known({4, 1}));
  auto z = b.value("z");
  auto& n = b.node("Gemm", {x, y, c}, {z});
  n.attrs["transA"] = int64_t(1);
  n.attrs["alpha"] = 0.5f;
  n.attrs["beta"] = 2.0f;
  b.output(z);
  std::vector<HostTensor> in = {random_tensor({6, 4}, 31), random_tensor({6, 5}, 32), random_tensor({4, 1}, 33)};
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 5; ++j) {
      double s = 0;
      for (int k = 0; k < 6; ++k) s += in[0].f()[k * 4 + i] * in[1].f()[k * 5 + j];
      EXPECT_NEAR(out.value()[0].f()[i * 5 + j], 0.5 * s + 2.0 * in[2].f()[i], 1e-5);
    }
}

TEST(CpuKernels, Conv1dPadsDilationsStridesGroups) {
  struct Case { int64_t n, c, l, m, k, stride, dil, pb, pe, group; };
  for (const Case& c : {Case{2, 4, 20, 6, 3, 1, 2, 4, 0, 1}, Case{1, 6, 17, 6, 5, 2, 1, 2, 2, 3},
                        Case{3, 2, 9, 4, 2, 1, 4, 4, 0, 2}}) {
    GraphBuilder b;
    auto x = b.input("x", known({c.n, c.c, c.l}));
    auto wv = random_vec(size_t(c.m * (c.c / c.group) * c.k), 41), bv = random_vec(size_t(c.m), 42);
    auto w = b.constant("W", {c.m, c.c / c.group, c.k}, wv);
    auto bias = b.constant("B", {c.m}, bv);
    auto z = b.value("z");
    auto& n = b.node("Conv", {x, w, bias}, {z});
    n.attrs["kernel_shape"] = std::vector<int64_t>{c.k};
    n.attrs["strides"] = std::vector<int64_t>{c.stride};
    n.attrs["dilations"] = std::vector<int64_t>{c.dil};
    n.attrs["pads"] = std::vector<int64_t>{c.pb, c.pe};
    n.attrs["group"] = c.group;
    b.output(z);
    std::vector<HostTensor> in = {random_tensor({c.n, c.c, c.l}, 43)};
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    int64_t lout = (c.l + c.pb + c.pe - (c.k - 1) * c.dil - 1) / c.stride + 1;
    ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{c.n, c.m, lout}));
    int64_t cg = c.c / c.group, mg = c.m / c.group;
    for (int64_t ni = 0; ni < c.n; ++ni)
      for (int64_t mi = 0; mi < c.m; ++mi)
        for (int64_t t = 0; t < lout; ++t) {
          double s = bv[size_t(mi)];
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t kk = 0; kk < c.k; ++kk) {
              int64_t il = t * c.stride + kk * c.dil - c.pb;
              if (il < 0 || il >= c.l) continue;
              s += wv[size_t((mi * cg + ci) * c.k + kk)] * in[0].f()[(ni * c.c + (mi / mg) * cg + ci) * c.l + il];
            }
          EXPECT_NEAR(out.value()[0].f()[(ni * c.m + mi) * lout + t], s, 1e-5);
        }
  }
}

TEST(CpuKernels, ShapeOpsChainResolvesAtRunTime) {
  // x [b, 6, 4] → Shape → Gather(0) → Unsqueeze → Concat([-1... ]) → Reshape(x, [b, 24]) → Transpose
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::known(6), Dim::known(4)});
  auto sh = b.value("sh", DType::kI64), b0 = b.value("b0", DType::kI64), b1 = b.value("b1", DType::kI64);
  auto cat = b.value("cat", DType::kI64), r = b.value("r"), t = b.value("t");
  b.node("Shape", {x}, {sh});
  b.node("Gather", {sh, b.constant_i64("idx0", {0})}, {b0});
  b.node("Concat", {b0, b.constant_i64("m1", {-1})}, {cat}).attrs["axis"] = int64_t(0);
  b.node("Reshape", {x, cat}, {r});
  b.node("Transpose", {r}, {t}).attrs["perm"] = std::vector<int64_t>{1, 0};
  (void)b1;
  b.output(t);
  for (int64_t batch : {1, 3}) {
    std::vector<HostTensor> in = {random_tensor({batch, 6, 4}, 51)};
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{24, batch}));
    for (int64_t i = 0; i < 24; ++i)
      for (int64_t j = 0; j < batch; ++j) EXPECT_EQ(out.value()[0].f()[i * batch + j], in[0].f()[j * 24 + i]);
  }
}

TEST(CpuKernels, SliceNegativeStepSqueezeUnsqueezeExpandWhere) {
  GraphBuilder b;
  auto x = b.input("x", known({4, 10}));
  auto s = b.value("s"), u = b.value("u"), q = b.value("q"), e = b.value("e");
  b.node("Slice", {x, b.constant_i64("st", {8}), b.constant_i64("en", {1}), b.constant_i64("ax", {1}),
                   b.constant_i64("sp", {-3})}, {s});                      // [4,3]: cols 8,5,2
  b.node("Unsqueeze", {s, b.constant_i64("ua", {0})}, {u});                  // [1,4,3]
  b.node("Expand", {u, b.constant_i64("es", {2, 4, 3})}, {e});              // [2,4,3]
  b.node("Squeeze", {u, b.constant_i64("sa", {0})}, {q});                    // [4,3]
  b.output(e);
  b.output(q);
  std::vector<HostTensor> in = {random_tensor({4, 10}, 61)};
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{2, 4, 3}));
  ASSERT_EQ(out.value()[1].dims, (std::vector<int64_t>{4, 3}));
  for (int rep = 0; rep < 2; ++rep)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 3; ++j) {
        float want = in[0].f()[i * 10 + 8 - 3 * j];
        EXPECT_EQ(out.value()[0].f()[rep * 12 + i * 3 + j], want);
        EXPECT_EQ(out.value()[1].f()[i * 3 + j], want);
      }
}

TEST(CpuKernels, FusedAttentionMatchesNaive) {
  GraphBuilder b;
  auto q = b.input("q", known({2, 5, 8})), k = b.input("k", known({2, 7, 8})), v = b.input("v", known({2, 7, 4}));
  auto y = b.value("y");
  auto& n = b.node("FusedAttention", {q, k, v}, {y});
  n.attrs["scale"] = 0.35f;
  n.attrs["k_transposed"] = int64_t(0);
  b.output(y);
  std::vector<HostTensor> in = {random_tensor({2, 5, 8}, 71), random_tensor({2, 7, 8}, 72), random_tensor({2, 7, 4}, 73)};
  auto out = run_graph(b.g, in);
  ASSERT_TRUE(out) << out.status().to_string();
  for (int bb = 0; bb < 2; ++bb)
    for (int i = 0; i < 5; ++i) {
      double s[7], mx = -1e30, sum = 0;
      for (int j = 0; j < 7; ++j) {
        s[j] = 0;
        for (int c = 0; c < 8; ++c) s[j] += in[0].f()[(bb * 5 + i) * 8 + c] * in[1].f()[(bb * 7 + j) * 8 + c];
        s[j] *= 0.35;
        mx = std::max(mx, s[j]);
      }
      for (double& t : s) { t = std::exp(t - mx); sum += t; }
      for (int c = 0; c < 4; ++c) {
        double o = 0;
        for (int j = 0; j < 7; ++j) o += s[j] / sum * in[2].f()[(bb * 7 + j) * 4 + c];
        EXPECT_NEAR(out.value()[0].f()[(bb * 5 + i) * 4 + c], o, 1e-5);
      }
    }
}


// The AVX2 path's blocking: 4-row query blocks plus a tail row, key counts that are not a
// multiple of 8, output widths with an 8-wide part and a scalar tail, both K layouts.
TEST(CpuKernels, FusedAttentionBlockedShapesMatchNaive) {
  struct Case { int64_t bh, tq, tk, d, dv; bool kt; };
  for (const Case& c : {Case{3, 9, 13, 16, 20, true}, Case{3, 9, 13, 16, 20, false}, Case{2, 60, 60, 16, 16, false},
                        Case{1, 1, 1, 3, 1, true}, Case{2, 4, 8, 8, 8, true}}) {
    SCOPED_TRACE("tq " + std::to_string(c.tq) + " tk " + std::to_string(c.tk) + " dv " + std::to_string(c.dv) +
                 " k_transposed " + std::to_string(c.kt));
    GraphBuilder b;
    std::vector<int64_t> kd = c.kt ? std::vector<int64_t>{c.bh, c.d, c.tk} : std::vector<int64_t>{c.bh, c.tk, c.d};
    auto q = b.input("q", known({c.bh, c.tq, c.d})), k = b.input("k", known(kd)), v = b.input("v", known({c.bh, c.tk, c.dv}));
    auto y = b.value("y");
    auto& n = b.node("FusedAttention", {q, k, v}, {y});
    n.attrs["scale"] = 0.25f;
    n.attrs["k_transposed"] = int64_t(c.kt ? 1 : 0);
    b.output(y);
    std::vector<HostTensor> in = {random_tensor({c.bh, c.tq, c.d}, 81), random_tensor(kd, 82),
                                  random_tensor({c.bh, c.tk, c.dv}, 83)};
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    ASSERT_EQ(out.value()[0].dims, (std::vector<int64_t>{c.bh, c.tq, c.dv}));
    for (int64_t bb = 0; bb < c.bh; ++bb)
      for (int64_t i = 0; i < c.tq; ++i) {
        std::vector<double> s(size_t(c.tk));
        double mx = -1e30, sum = 0;
        for (int64_t j = 0; j < c.tk; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < c.d; ++e) {
            float kv = c.kt ? in[1].f()[(bb * c.d + e) * c.tk + j] : in[1].f()[(bb * c.tk + j) * c.d + e];
            acc += double(in[0].f()[(bb * c.tq + i) * c.d + e]) * kv;
          }
          s[size_t(j)] = acc * 0.25;
          mx = std::max(mx, s[size_t(j)]);
        }
        for (double& t : s) { t = std::exp(t - mx); sum += t; }
        for (int64_t e = 0; e < c.dv; ++e) {
          double o = 0;
          for (int64_t j = 0; j < c.tk; ++j) o += s[size_t(j)] / sum * in[2].f()[(bb * c.tk + j) * c.dv + e];
          ASSERT_NEAR(out.value()[0].f()[(bb * c.tq + i) * c.dv + e], o, 1e-5) << "b " << bb << " row " << i << " col " << e;
        }
      }
  }
}

// Transposes that keep the last axis (copied a row at a time) and ones that move it (a strided
// gather per output row), including a last axis of size 1.
TEST(CpuKernels, TransposeRowCopiesMatchIndexing) {
  struct Case { std::vector<int64_t> dims, perm; };
  for (const Case& c : {Case{{5, 6, 16}, {1, 0, 2}}, Case{{2, 3, 4, 5}, {0, 2, 1, 3}}, Case{{2, 3, 4, 5}, {3, 1, 0, 2}},
                        Case{{7}, {0}}, Case{{3, 1, 4}, {1, 0, 2}}, Case{{5, 6, 16}, {1, 2, 0}}, Case{{4, 3, 1}, {1, 0, 2}}}) {
    GraphBuilder b;
    auto x = b.input("x", known(c.dims));
    auto y = b.value("y");
    b.node("Transpose", {x}, {y}).attrs["perm"] = c.perm;
    b.output(y);
    std::vector<HostTensor> in = {random_tensor(c.dims, 91)};
    auto out = run_graph(b.g, in);
    ASSERT_TRUE(out) << out.status().to_string();
    size_t r = c.dims.size();
    std::vector<int64_t> od(r), xs(r, 1);
    for (size_t i = 0; i < r; ++i) od[i] = c.dims[size_t(c.perm[i])];
    for (size_t i = r - 1; i > 0; --i) xs[i - 1] = xs[i] * c.dims[i];
    ASSERT_EQ(out.value()[0].dims, od);
    int64_t n = 1;
    for (int64_t v : od) n *= v;
    for (int64_t flat = 0; flat < n; ++flat) {
      int64_t rem = flat, off = 0;
      for (size_t i = r; i-- > 0;) {
        off += (rem % od[i]) * xs[size_t(c.perm[i])];
        rem /= od[i];
      }
      ASSERT_EQ(out.value()[0].f()[flat], in[0].f()[off]) << "element " << flat;
    }
  }
}
}  // namespace
}  // namespace ts::engine::testing
