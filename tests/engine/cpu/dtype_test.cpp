// Element types beyond f32 on the CPU backend: integer arithmetic (u8, i8, i32, i64 wrap like
// numpy; x / 0 is 0 instead of a crash), Pow with a base and exponent of different types, and
// Cast to and from f16 / bf16 with numpy's round-to-nearest-even.
#include <cmath>
#include <cstdint>
#include <limits>

#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

template <typename T>
HostTensor typed(DType t, std::vector<int64_t> dims, const std::vector<T>& v) {
  HostTensor h;
  h.dtype = t;
  h.dims = std::move(dims);
  h.bytes.resize(v.size() * sizeof(T));
  std::memcpy(h.bytes.data(), v.data(), h.bytes.size());
  return h;
}

template <typename T>
std::vector<T> elems(const HostTensor& h) {
  std::vector<T> v(h.bytes.size() / sizeof(T));
  std::memcpy(v.data(), h.bytes.data(), h.bytes.size());
  return v;
}

// Runs `op` on two runtime inputs of the given tensors; returns output 0.
Result<HostTensor> run_binary(const std::string& op, HostTensor a, HostTensor b) {
  GraphBuilder g;
  auto x = g.input("x", known(a.dims), a.dtype);
  auto y = g.input("y", known(b.dims), b.dtype);
  auto z = g.value("z", a.dtype);
  g.node(op, {x, y}, {z}).name = "/" + op;
  g.output(z);
  std::vector<HostTensor> in = {std::move(a), std::move(b)};
  auto out = run_graph(g.g, in);
  if (!out) return out.status();
  return out.value()[0];
}

TEST(CpuDtypes, Uint8ArithmeticWrapsLikeNumpy) {
  auto a = typed<uint8_t>(DType::kU8, {5}, {200, 3, 16, 7, 9});
  auto b = typed<uint8_t>(DType::kU8, {5}, {100, 5, 17, 2, 0});
  const std::vector<std::pair<std::string, std::vector<uint8_t>>> want = {
      {"Add", {44, 8, 33, 9, 9}},       // 300 wraps to 44
      {"Sub", {100, 254, 255, 5, 9}},   // 3 - 5 wraps to 254
      {"Mul", {32, 15, 16, 14, 0}},     // 20000 mod 256 = 32, 272 mod 256 = 16
      {"Div", {2, 0, 0, 3, 0}},         // integer division; 9 / 0 gives 0, not SIGFPE
  };
  for (const auto& [op, w] : want) {
    auto out = run_binary(op, a, b);
    ASSERT_TRUE(out) << op << ": " << out.status().to_string();
    EXPECT_EQ(out.value().dtype, DType::kU8) << op;
    EXPECT_EQ(elems<uint8_t>(out.value()), w) << op;
  }
}

TEST(CpuDtypes, SignedIntegersBroadcastAndNeverTrap) {
  const int32_t kMin32 = std::numeric_limits<int32_t>::min();
  auto a = typed<int32_t>(DType::kI32, {2, 3}, {7, -7, kMin32, 10, 0, -9});
  auto b = typed<int32_t>(DType::kI32, {3}, {2, -1, -1});
  auto div = run_binary("Div", a, b);
  ASSERT_TRUE(div) << div.status().to_string();
  // Truncating division (C, ONNX Runtime); INT_MIN / -1 wraps instead of raising SIGFPE.
  EXPECT_EQ(elems<int32_t>(div.value()), (std::vector<int32_t>{3, 7, kMin32, 5, 0, 9}));
  auto add = run_binary("Add", a, b);
  ASSERT_TRUE(add) << add.status().to_string();
  EXPECT_EQ(elems<int32_t>(add.value()), (std::vector<int32_t>{9, -8, std::numeric_limits<int32_t>::max(), 12, -1, -10}));

  auto c = typed<int64_t>(DType::kI64, {3}, {int64_t(1) << 40, -5, 6});
  auto d = typed<int64_t>(DType::kI64, {1}, {0});
  auto div0 = run_binary("Div", c, d);
  ASSERT_TRUE(div0) << div0.status().to_string();
  EXPECT_EQ(elems<int64_t>(div0.value()), (std::vector<int64_t>{0, 0, 0}));
  auto mul = run_binary("Mul", c, typed<int64_t>(DType::kI64, {3}, {3, -3, 0}));
  ASSERT_TRUE(mul) << mul.status().to_string();
  EXPECT_EQ(elems<int64_t>(mul.value()), (std::vector<int64_t>{int64_t(3) << 40, 15, 0}));

  auto e = run_binary("Sub", typed<int8_t>(DType::kI8, {2}, {-128, 100}), typed<int8_t>(DType::kI8, {2}, {1, -100}));
  ASSERT_TRUE(e) << e.status().to_string();
  EXPECT_EQ(elems<int8_t>(e.value()), (std::vector<int8_t>{127, -56}));
}

TEST(CpuDtypes, MixedDtypesOutsidePowAreAnError) {
  auto out = run_binary("Add", typed<float>(DType::kF32, {2}, {1, 2}), typed<int64_t>(DType::kI64, {2}, {1, 2}));
  ASSERT_FALSE(out);
  EXPECT_NE(out.status().message().find("node /Add"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("input dtypes differ: f32 and i64"), std::string::npos) << out.status().message();
  auto b = run_binary("Add", typed<uint16_t>(DType::kF16, {1}, {0x3c00}), typed<uint16_t>(DType::kF16, {1}, {0x3c00}));
  ASSERT_FALSE(b);
  EXPECT_NE(b.status().message().find("dtype f16 is not supported"), std::string::npos) << b.status().message();
}

TEST(CpuDtypes, PowMixesBaseAndExponentTypes) {
  // f32 base, i64 exponents per element (and broadcast over rows)
  auto f = run_binary("Pow", typed<float>(DType::kF32, {2, 3}, {2, 3, 4, -2, 0.5f, 10}),
                      typed<int64_t>(DType::kI64, {3}, {2, 3, -1}));
  ASSERT_TRUE(f) << f.status().to_string();
  EXPECT_EQ(f.value().dtype, DType::kF32);
  EXPECT_EQ(elems<float>(f.value()), (std::vector<float>{4, 27, 0.25f, 4, 0.125f, 0.1f}));
  // i32 base, f32 exponents: the result keeps the base's type, truncated like numpy's astype
  auto i = run_binary("Pow", typed<int32_t>(DType::kI32, {4}, {1, 2, 3, 10}),
                      typed<float>(DType::kF32, {4}, {4, 5, 0.5f, -1}));
  ASSERT_TRUE(i) << i.status().to_string();
  EXPECT_EQ(i.value().dtype, DType::kI32);
  EXPECT_EQ(elems<int32_t>(i.value()), (std::vector<int32_t>{1, 32, 1, 0}));
  // i64 ^ i64 (same type) and a scalar f32 exponent on an i64 base
  auto l = run_binary("Pow", typed<int64_t>(DType::kI64, {3}, {3, -2, 7}), typed<int64_t>(DType::kI64, {}, {3}));
  ASSERT_TRUE(l) << l.status().to_string();
  EXPECT_EQ(elems<int64_t>(l.value()), (std::vector<int64_t>{27, -8, 343}));
  auto bad = run_binary("Pow", typed<float>(DType::kF32, {1}, {2}), typed<uint16_t>(DType::kF16, {1}, {0x4000}));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("Pow of f32 by f16 is not supported"), std::string::npos) << bad.status().message();
}

Result<HostTensor> run_cast(HostTensor x, int64_t to, DType out_dtype) {
  GraphBuilder g;
  auto in = g.input("x", known(x.dims), x.dtype);
  auto z = g.value("z", out_dtype);
  g.node("Cast", {in}, {z}).attrs["to"] = to;
  g.output(z);
  std::vector<HostTensor> ins = {std::move(x)};
  auto out = run_graph(g.g, ins);
  if (!out) return out.status();
  return out.value()[0];
}

TEST(CpuDtypes, CastToFloat16RoundsToNearestEven) {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<float, uint16_t>> cases = {
      {1.0f, 0x3c00},
      {-0.0f, 0x8000},
      {65504.0f, 0x7bff},                          // largest f16
      {65519.0f, 0x7bff},                          // rounds down below the halfway point
      {65520.0f, 0x7c00},                          // halfway to 2^16: overflows to inf
      {-1e9f, 0xfc00},
      {inf, 0x7c00},
      {1.0f + std::ldexp(1.0f, -11), 0x3c00},      // tie: to even (down)
      {1.0f + 3 * std::ldexp(1.0f, -11), 0x3c02},  // tie: to even (up)
      {std::ldexp(1.0f, -14), 0x0400},             // smallest normal
      {std::ldexp(1.0f, -24), 0x0001},             // smallest subnormal
      {std::ldexp(1.0f, -25), 0x0000},             // tie: to even (zero)
      {1.5f * std::ldexp(1.0f, -25), 0x0001},
      {std::ldexp(1023.0f, -24) + std::ldexp(1.0f, -25), 0x0400},  // subnormal rounds up to normal
  };
  std::vector<float> xs;
  std::vector<uint16_t> want;
  for (auto [x, h] : cases) {
    xs.push_back(x);
    want.push_back(h);
  }
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  auto out = run_cast(typed<float>(DType::kF32, {int64_t(xs.size())}, xs), 10, DType::kF16);
  ASSERT_TRUE(out) << out.status().to_string();
  ASSERT_EQ(out.value().dtype, DType::kF16);
  auto got = elems<uint16_t>(out.value());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(got[i], want[i]) << "f32 " << xs[i] << " (case " << i << ")";
  }
  EXPECT_EQ(got.back() & 0x7c00, 0x7c00);  // NaN stays NaN
  EXPECT_NE(got.back() & 0x03ff, 0);

  // f64 → f16 rounds once: 1 + 2^-11 + 2^-40 is just above the tie, so it rounds up; going
  // through f32 first would drop the 2^-40 and round the tie down to 1.0.
  auto d = run_cast(typed<double>(DType::kF64, {1}, {1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}), 10, DType::kF16);
  ASSERT_TRUE(d) << d.status().to_string();
  EXPECT_EQ(elems<uint16_t>(d.value()), std::vector<uint16_t>{0x3c01});
}

TEST(CpuDtypes, CastFromFloat16AndBFloat16) {
  auto h = typed<uint16_t>(DType::kF16, {6}, {0x3c00, 0xc000, 0x0001, 0x7bff, 0xfc00, 0x3555});
  auto f = run_cast(h, 1, DType::kF32);
  ASSERT_TRUE(f) << f.status().to_string();
  auto fv = elems<float>(f.value());
  EXPECT_EQ(fv[0], 1.0f);
  EXPECT_EQ(fv[1], -2.0f);
  EXPECT_EQ(fv[2], std::ldexp(1.0f, -24));
  EXPECT_EQ(fv[3], 65504.0f);
  EXPECT_TRUE(std::isinf(fv[4]) && fv[4] < 0);
  EXPECT_EQ(fv[5], 0.333251953125f);
  auto d = run_cast(h, 11, DType::kF64);
  ASSERT_TRUE(d) << d.status().to_string();
  EXPECT_EQ(elems<double>(d.value())[5], 0.333251953125);
  auto i = run_cast(typed<uint16_t>(DType::kF16, {2}, {0x4500, 0xc500}), 7, DType::kI64);  // 5.0, -5.0
  ASSERT_TRUE(i) << i.status().to_string();
  EXPECT_EQ(elems<int64_t>(i.value()), (std::vector<int64_t>{5, -5}));
  auto bf = run_cast(typed<float>(DType::kF32, {2}, {1.0f + std::ldexp(1.0f, -8), 3.0f}), 16, DType::kBF16);
  ASSERT_TRUE(bf) << bf.status().to_string();
  EXPECT_EQ(elems<uint16_t>(bf.value()), (std::vector<uint16_t>{0x3f80, 0x4040}));  // tie to even, exact
  auto back = run_cast(bf.value(), 1, DType::kF32);
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(elems<float>(back.value()), (std::vector<float>{1.0f, 3.0f}));
}

TEST(CpuDtypes, CastBetweenIntegersWrapsAndFromFloatTruncates) {
  auto w = run_cast(typed<int64_t>(DType::kI64, {3}, {300, -1, (int64_t(1) << 40) + 5}), 2, DType::kU8);
  ASSERT_TRUE(w) << w.status().to_string();
  EXPECT_EQ(elems<uint8_t>(w.value()), (std::vector<uint8_t>{44, 255, 5}));
  auto t = run_cast(typed<float>(DType::kF32, {3}, {2.9f, -2.9f, std::numeric_limits<float>::quiet_NaN()}), 6, DType::kI32);
  ASSERT_TRUE(t) << t.status().to_string();
  EXPECT_EQ(elems<int32_t>(t.value()), (std::vector<int32_t>{2, -2, 0}));
}

TEST(CpuDtypes, CastToAnUnsupportedTypeNamesNodeAndAttribute) {
  GraphBuilder g;
  auto in = g.input("x", known({2}));
  auto z = g.value("z");
  auto& n = g.node("Cast", {in}, {z});
  n.name = "/to_string";
  n.attrs["to"] = int64_t(8);  // STRING
  Status s = cpu_backend().check_supported(g.g, n);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("node /to_string: op Cast to=8 is not supported"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace ts::engine::testing
