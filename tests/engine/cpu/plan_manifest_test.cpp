// The plan's model manifest section (engine/plan_manifest.h): written into a built plan, read
// back, absent from older plans (which keep loading), and every corruption of it refused with
// its reason — never a crash, past the checksum too.
#include <random>

#include "engine/builder.h"
#include "engine/plan.h"
#include "engine/runtime.h"
#include "graph_builder.h"
#include "plan_test_util.h"

namespace ts::engine::testing {
namespace {

// x [batch, T, 3] → ReduceMean over T and F → Sigmoid: a window model of F = 3.
Graph window_graph() {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::sym("seq"), Dim::known(3)});
  auto m = b.value("m"), p = b.value("prob");
  auto& r = b.node("ReduceMean", {x}, {m});
  r.attrs["axes"] = std::vector<int64_t>{1, 2};
  r.attrs["keepdims"] = int64_t(0);
  b.node("Sigmoid", {m}, {p});
  b.output(p);
  b.g.opset = 17;
  return b.g;
}

ModelManifest manifest() {
  ModelManifest m;
  m.input_name = "x";
  m.window_rows = 8;
  m.features = 3;
  m.feature_names = {"ret_1s_bps", "spread_bps", "imbalance"};
  m.output_name = "prob";
  m.threshold = 0.35;
  m.model_name = "tiny";
  m.model_version = "7";
  return m;
}

BuildOptions options() {
  BuildOptions o;
  o.time_tactics = false;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 8, 3}, {4, 8, 3}, {16, 8, 3}};
  o.profiles.push_back(p);
  return o;
}

std::vector<uint8_t> build(std::optional<ModelManifest> m) {
  auto plan = build_from_graph(window_graph(), PassLog{}, options());
  EXPECT_TRUE(plan) << plan.status().to_string();
  if (!plan) return {};
  auto with = with_plan_manifest(plan.value(), m);
  EXPECT_TRUE(with) << with.status().to_string();
  return with ? with.value() : std::vector<uint8_t>{};
}

TEST(PlanManifest, WrittenIntoABuiltPlanAndReadBack) {
  const auto bytes = build(manifest());
  auto m = read_plan_manifest(bytes);
  ASSERT_TRUE(m) << m.status().to_string();
  ASSERT_TRUE(m.value().has_value());
  EXPECT_EQ(*m.value(), manifest());
  auto e = Engine::load(bytes);
  ASSERT_TRUE(e) << "the engine loads a plan with a manifest: " << e.status().to_string();
  const std::string d = describe_manifest(manifest());
  EXPECT_NE(d.find("manifest: input x [batch, 8, 3]; output prob [batch, 1], probability in column 0; evaluated at "
                   "threshold 0.35; model tiny 7"),
            std::string::npos)
      << d;
  EXPECT_NE(d.find("manifest features: ret_1s_bps, spread_bps, imbalance"), std::string::npos) << d;

  const auto none = build(std::nullopt);
  ASSERT_TRUE(Engine::load(none));
  EXPECT_FALSE(read_plan_manifest(none).value().has_value());
  // Adding and removing the section changes nothing else: the bytes come back the same.
  auto removed = with_plan_manifest(bytes, std::nullopt);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed.value(), none);
  EXPECT_EQ(with_plan_manifest(none, manifest()).value(), bytes);
}

TEST(PlanManifest, PlansOfFormatTwoLoadWithoutOne) {
  // A version-2 plan is a version-3 plan without the manifest section (its u32 "none"): made
  // here from a new plan, as the builds before the manifest wrote them (a version-4 plan
  // without per-bucket memory ends with the manifest's u32 0, the bucket count u32 0, the CRC).
  auto parsed = deserialize_plan(build(std::nullopt));
  ASSERT_TRUE(parsed) << parsed.status().to_string();
  parsed.value().bucket_memory.clear();
  auto v4 = serialize_plan(parsed.value());
  ASSERT_GT(v4.size(), 16u);
  std::vector<uint8_t> v2(v4.begin(), v4.end() - 12);  // drop the manifest's u32 0, the count and the CRC
  v2[8] = 2;
  v2.resize(v2.size() + 4);
  v2 = resealed(v2);
  auto e = Engine::load(v2);
  ASSERT_TRUE(e) << e.status().to_string();
  auto m = read_plan_manifest(v2);
  ASSERT_TRUE(m) << m.status().to_string();
  EXPECT_FALSE(m.value().has_value());
  expect_truncated_as(v2, 3, "manifest version");  // the same bytes claiming version 3
}

TEST(PlanManifest, AnInconsistentManifestIsNotWritten) {
  const auto plan = build(std::nullopt);
  ModelManifest m = manifest();
  m.probability_column = 2;
  auto with = with_plan_manifest(plan, m);
  ASSERT_FALSE(with);
  EXPECT_EQ(with.status().message(), "model manifest: probability_column 2 is outside the output's 1 column");
  m = manifest();
  m.feature_names.pop_back();
  with = with_plan_manifest(plan, m);
  ASSERT_FALSE(with);
  EXPECT_EQ(with.status().message(), "model manifest: 2 feature names for F = 3");
  m = manifest();
  m.threshold = 1.5;
  EXPECT_FALSE(with_plan_manifest(plan, m));
  m = manifest();
  m.output_name.clear();
  EXPECT_FALSE(with_plan_manifest(plan, m));
}

TEST(PlanManifest, ACorruptSectionIsRefusedWithItsReason) {
  auto p = deserialize_plan(build(manifest()));
  ASSERT_TRUE(p);
  p.value().bucket_memory.clear();  // the per-bucket memory (format 4) then is its u32 count 0
  const auto good = serialize_plan(p.value());
  // The section sits after the calibration table, just before the per-bucket memory and the
  // CRC: find it by its version.
  const auto without = serialize_plan([&] {
    Plan q = p.value();
    q.manifest.reset();
    return q;
  }());
  const size_t at = without.size() - 12;  // the u32 manifest version in the plan without one
  ASSERT_EQ(std::vector<uint8_t>(good.begin(), good.begin() + long(at)),
            std::vector<uint8_t>(without.begin(), without.begin() + long(at)));
  auto m = good;
  m[at] = 7;
  auto e = Engine::load(resealed(m));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.status().message(), "loading plan: plan manifest version 7 is not supported (this build reads version 1)");
  // Valid checksum, a manifest that contradicts itself: refused by name.
  Plan q = p.value();
  q.manifest->probability_column = 5;
  e = Engine::load(serialize_plan(q));
  ASSERT_FALSE(e);
  EXPECT_EQ(e.status().message(),
            "loading plan: corrupt plan: manifest: probability_column 5 is outside the output's 1 column");
  // A count larger than the bytes left.
  m = good;
  const size_t names_count = at + 4 + (4 + 1) + 8 + 8;  // version, "x", T, F
  m[names_count + 3] = 0x7f;
  e = Engine::load(resealed(m));
  ASSERT_FALSE(e);
  EXPECT_NE(e.status().message().find("manifest feature names count"), std::string::npos) << e.status().to_string();

  // Mutations inside the section: the checksum refuses every one; past it, the parser never
  // crashes and refuses or reads a self-consistent manifest.
  std::mt19937 rng(27);
  int refused = 0, changed = 0;
  const int kRuns = 2000;
  for (int i = 0; i < kRuns; ++i) {
    auto x = good;
    const size_t span = good.size() - 4 - at;
    for (int k = 0; k < 1 + int(rng() % 3); ++k) x[at + rng() % span] ^= uint8_t(1u << (rng() % 8));
    if (x == good) continue;  // the same bit flipped twice
    ++changed;
    if (!Engine::load(x)) ++refused;
    auto parsed = deserialize_plan(x, /*verify_checksum=*/false);
    if (parsed && parsed.value().manifest) {
      EXPECT_EQ(manifest_problem(*parsed.value().manifest), "");
    }
  }
  EXPECT_EQ(refused, changed);
  EXPECT_GT(changed, kRuns * 9 / 10);
}

}  // namespace
}  // namespace ts::engine::testing
