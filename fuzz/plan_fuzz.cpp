// libFuzzer target for plan load and execution: any byte string must give an Engine or an
// error, never a crash, hang or giant allocation; and an Engine that loads must run on random
// inputs inside its profile (engine_exercise.h: an error Status or a result whose shape is the
// one the engine reported, never a write past a buffer). Both the checksummed path
// (Engine::load) and the payload parser behind the checksum (deserialize_plan without
// verification, then make_engine, where plan_check.h applies the builder's rules) are fed, so
// mutations reach the graph, its attributes and the kernels.
//   cmake --preset fuzz && cmake --build --preset fuzz
//   build/fuzz/fuzz/plan_fuzz -max_total_time=60 fuzz/corpus/plan_fuzz   (bench/fuzz.sh runs it)
// The ctest smoke run of the same property is tests/engine/cpu/plan_fuzz_smoke_test.cpp.
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/engine.h"
#include "engine/plan.h"
#include "engine/runtime.h"
#include "engine_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  uint32_t seed = 2166136261u;  // FNV-1a of the input: the same input runs the same inputs
  for (uint8_t b : bytes) seed = (seed ^ b) * 16777619u;
  auto& tally = ts::fuzz::ExerciseTally::get();
  auto loaded = ts::engine::Engine::load(bytes);
  if (loaded) {
    ts::fuzz::exercise(*loaded.value(), seed, tally.stats());
    tally.input_done(true);
    return 0;
  }
  bool engine = false;
  auto plan = ts::engine::deserialize_plan(bytes, /*verify_checksum=*/false);
  if (plan) {
    auto e = ts::engine::make_engine(std::move(plan).value());
    if (e) ts::fuzz::exercise(*e.value(), seed, tally.stats());
    engine = e.is_ok();
  }
  tally.input_done(engine);
  return 0;
}
