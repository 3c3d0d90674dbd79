// The plan's per-bucket context memory (plan format 4, engine/build_memory.h): measured at build
// for every batch bucket, read back by Engine::bucket_memory() and shown by describe() (what
// `ticksentry inspect` prints); plans of format 3 and older keep loading with their single
// estimate; a damaged section is refused with its reason.
#include "engine/builder.h"
#include "engine/plan.h"
#include "engine/runtime.h"
#include "graph_builder.h"
#include "plan_test_util.h"

namespace ts::engine::testing {
namespace {

// x [batch, T, 4] → MatMul [4, 32] → Relu → ReduceMean over T and the 32 → Sigmoid: its
// intermediates grow with the batch.
Graph growing_graph() {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::sym("seq"), Dim::known(4)});
  std::vector<float> w(4 * 32);
  for (size_t i = 0; i < w.size(); ++i) w[i] = float(int(i % 7) - 3) * 0.1f;
  auto wv = b.constant("w", {4, 32}, w);
  auto h = b.value("h"), r = b.value("r"), m = b.value("m"), p = b.value("prob");
  b.node("MatMul", {x, wv}, {h});
  b.node("Relu", {h}, {r});
  auto& red = b.node("ReduceMean", {r}, {m});
  red.attrs["axes"] = std::vector<int64_t>{1, 2};
  red.attrs["keepdims"] = int64_t(0);
  b.node("Sigmoid", {m}, {p});
  b.output(p);
  Value& out = b.g.values[size_t(p)];  // [batch]: the batch symbol on the output too (buckets)
  out.rank_known = true;
  out.shape = Shape{Dim::sym("batch")};
  b.g.opset = 17;
  return b.g;
}

BuildOptions options(int64_t min_batch = 1) {
  BuildOptions o;
  o.time_tactics = false;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{min_batch, 16, 4}, {8, 16, 4}, {256, 16, 4}};
  o.profiles.push_back(p);
  return o;
}

Plan built(int64_t min_batch = 1) {
  auto bytes = build_from_graph(growing_graph(), PassLog{}, options(min_batch));
  EXPECT_TRUE(bytes) << bytes.status().to_string();
  if (!bytes) return {};
  auto p = deserialize_plan(bytes.value());
  EXPECT_TRUE(p) << p.status().to_string();
  return p ? std::move(p).value() : Plan{};
}

TEST(PlanBucketMemory, EveryBucketIsMeasuredAtBuildAndShown) {
  const Plan p = built();
  ASSERT_EQ(p.bucket_memory.size(), 9u) << "buckets 1, 2, 4, ..., 256";
  for (size_t i = 0; i < p.bucket_memory.size(); ++i) {
    EXPECT_EQ(p.bucket_memory[i].batch, int64_t(1) << i);
    EXPECT_GT(p.bucket_memory[i].bytes, 0) << "bucket " << p.bucket_memory[i].batch;
    if (i > 0) {
      EXPECT_GE(p.bucket_memory[i].bytes, p.bucket_memory[i - 1].bytes) << "a context's memory only grows";
    }
  }
  // [256, 16, 32] fp32 of MatMul output alone is 512 KiB; batch 1's whole context is far less.
  EXPECT_GE(p.bucket_memory.back().bytes, 256 * 16 * 32 * 4);
  EXPECT_LT(p.bucket_memory.front().bytes * 16, p.bucket_memory.back().bytes);

  auto e = Engine::load(serialize_plan(p));
  ASSERT_TRUE(e) << e.status().to_string();
  const auto m = e.value()->bucket_memory();
  ASSERT_EQ(m.size(), p.bucket_memory.size());
  EXPECT_EQ(m.back().bytes, p.bucket_memory.back().bytes);
  const std::string d = e.value()->describe();
  EXPECT_NE(d.find("context memory per batch bucket (measured at build, weights excluded"), std::string::npos) << d;
  EXPECT_NE(d.find(" 1: "), std::string::npos) << d;
  EXPECT_NE(d.find(", 256: "), std::string::npos) << d;
  // What a context holds after running at a bucket is what the plan says for that bucket.
  auto ctx = e.value()->create_context();
  ASSERT_TRUE(ctx);
  std::vector<float> x(size_t(4 * 16 * 4), 0.5f), y(4);
  std::vector<TensorView> in{TensorView{DType::kF32, {4, 16, 4}, x.data()}};
  std::vector<TensorView> out(1);
  out[0].data = y.data();
  out[0].capacity_bytes = y.size() * sizeof(float);
  ASSERT_TRUE(ctx.value()->execute(in, out));
  EXPECT_LE(ctx.value()->memory_bytes(), m[2].bytes) << "batch 4 holds no more than the build measured at bucket 4";
}

TEST(PlanBucketMemory, BucketsBelowTheProfilesMinimumAreNotRun) {
  const Plan p = built(/*min_batch=*/8);
  ASSERT_FALSE(p.bucket_memory.empty());
  EXPECT_EQ(p.bucket_memory.front().batch, 8);
  EXPECT_EQ(p.bucket_memory.back().batch, 256);
}

TEST(PlanBucketMemory, PlansOfFormatThreeLoadWithTheirEstimateOnly) {
  Plan p = built();
  p.bucket_memory.clear();
  std::vector<uint8_t> v4 = serialize_plan(p);  // ends with the manifest's u32 0, the count u32 0, the CRC
  std::vector<uint8_t> v3(v4.begin(), v4.end() - 8);
  v3[8] = 3;
  v3.resize(v3.size() + 4);
  v3 = resealed(v3);
  auto e = Engine::load(v3);
  ASSERT_TRUE(e) << e.status().to_string();
  EXPECT_TRUE(e.value()->bucket_memory().empty());
  EXPECT_GT(e.value()->device_memory_bytes(), 0) << "the single estimate is still there";
  const std::string d = e.value()->describe();
  EXPECT_EQ(d.find("context memory per batch bucket"), std::string::npos) << d;
  EXPECT_NE(d.find("bytes at max shapes (estimate)"), std::string::npos) << d;
  expect_truncated_as(v3, 4, "bucket memory");  // the same bytes claiming version 4
}

TEST(PlanBucketMemory, ADamagedSectionIsRefusedWithItsReason) {
  const Plan good = built();
  ASSERT_GE(good.bucket_memory.size(), 2u);
  auto load_error = [](const Plan& p) {
    auto e = Engine::load(serialize_plan(p));
    return e ? std::string("loaded") : e.status().message();
  };
  Plan p = good;
  std::swap(p.bucket_memory[0], p.bucket_memory[1]);
  EXPECT_EQ(load_error(p), "loading plan: invalid plan: memory per bucket: entry 1 (batch 1, " +
                               std::to_string(good.bucket_memory[0].bytes) +
                               " bytes) must have batch >= 1, ascending, and bytes >= 0");
  p = good;
  p.bucket_memory[0].bytes = -5;
  EXPECT_NE(load_error(p).find("entry 0 (batch 1, -5 bytes)"), std::string::npos) << load_error(p);
  p = good;
  p.bucket_memory[0].batch = 0;
  EXPECT_NE(load_error(p).find("entry 0 (batch 0,"), std::string::npos) << load_error(p);
  // A count larger than the bytes that remain: refused before anything is allocated for it.
  p = good;
  p.bucket_memory.clear();
  std::vector<uint8_t> b = serialize_plan(p);
  const size_t count_at = b.size() - 8;
  b[count_at + 3] = 0x7f;
  auto e = Engine::load(resealed(b));
  ASSERT_FALSE(e);
  EXPECT_NE(e.status().message().find("bucket memory count"), std::string::npos) << e.status().message();
}

}  // namespace
}  // namespace ts::engine::testing
