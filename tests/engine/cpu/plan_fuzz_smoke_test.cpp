// Smoke run of the plan-loader fuzzer: thousands of mutated copies of a real plan (bit flips,
// truncations, random bytes, spliced garbage) must be refused with an error, never crash.
// Mutations are also fed past the checksum so the payload parser and graph checks are hit, and
// every mutated plan that loads is run on random inputs (fuzz/engine_exercise.h, as plan_fuzz
// does): an error or a result of the shape the engine reported, never a crash or an overflow.
#include <random>

#include "engine_exercise.h"

#include "engine/builder.h"
#include "engine/plan.h"
#include "engine/runtime.h"
#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

std::vector<uint8_t> real_plan() {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("seq"), Dim::sym("batch"), Dim::known(4)});
  auto w = b.constant("W", {1, 18, 4}, random_vec(72, 1)), r = b.constant("R", {1, 18, 6}, random_vec(108, 2));
  auto y = b.value("Y"), yh = b.value("Y_h"), z = b.value("z");
  auto& n = b.node("GRU", {x, w, r}, {y, yh});
  n.attrs["hidden_size"] = int64_t(6);
  n.attrs["linear_before_reset"] = int64_t(1);
  b.node("Sigmoid", {yh}, {z});
  b.output(z);
  BuildOptions o;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 1, 4}, {5, 2, 4}, {50, 8, 4}};
  o.profiles.push_back(p);
  auto plan = build_from_graph(b.g, PassLog{{"fuse: none"}}, o);
  EXPECT_TRUE(plan) << plan.status().to_string();
  return plan ? plan.value() : std::vector<uint8_t>{};
}

TEST(PlanFuzzSmoke, MutatedPlansAreRefusedWithoutCrashing) {
  auto good = real_plan();
  ASSERT_FALSE(good.empty());
  ASSERT_TRUE(Engine::load(good));
  std::mt19937 rng(1234);
  int refused = 0, parsed_unchecked = 0, loaded_unchecked = 0;
  ts::fuzz::ExerciseStats ran;
  ts::fuzz::exercise(*Engine::load(good).value(), 1, &ran);
  EXPECT_EQ(ran.runs, 1) << "the real plan runs";
  const int kRuns = 3000;
  for (int i = 0; i < kRuns; ++i) {
    std::vector<uint8_t> m = good;
    switch (i % 4) {
      case 0:
        for (int k = 0; k < 1 + int(rng() % 4); ++k) m[rng() % m.size()] ^= uint8_t(1u << (rng() % 8));
        break;
      case 1: m.resize(rng() % m.size()); break;
      case 2:
        for (int k = 0; k < 8; ++k) m[rng() % m.size()] = uint8_t(rng());
        break;
      case 3: {
        size_t at = rng() % m.size();
        for (size_t k = at; k < std::min(m.size(), at + 16); ++k) m[k] = 0xFF;
        break;
      }
    }
    auto e = Engine::load(m);
    if (!e) {
      ++refused;
      EXPECT_FALSE(e.status().message().empty());
    }
    // Past the checksum: the parser's bounds checks and the graph validation must hold.
    auto p = deserialize_plan(m, /*verify_checksum=*/false);
    if (p) {
      ++parsed_unchecked;
      auto e2 = make_engine(std::move(p).value());
      if (e2) {
        ++loaded_unchecked;
        ts::fuzz::exercise(*e2.value(), uint32_t(i), &ran);
      }
    }
  }
  EXPECT_EQ(refused, kRuns);  // every mutation changes bytes the checksum covers
  EXPECT_GT(ran.runs + ran.refused, 0) << "no mutated plan reached the engine";
  std::printf("fuzz smoke: %d/%d refused, %d parsed with the checksum skipped, %d loaded, %d ran, %d refused at run\n",
              refused, kRuns, parsed_unchecked, loaded_unchecked, ran.runs, ran.refused);
}

}  // namespace
}  // namespace ts::engine::testing
