// libFuzzer target for ONNX import → build → execute: small graphs of the supported ops
// generated from the fuzzer's bytes (onnx_graph_gen.h) are built into a CPU plan, loaded and run
// on random inputs inside the profile (engine_exercise.h). Import, build and run may refuse a
// graph with an error Status; none may crash, hang, write past a buffer or report an output
// shape that the run does not produce.
//   build/fuzz/fuzz/onnx_fuzz -max_total_time=60 fuzz/corpus/onnx_fuzz   (bench/fuzz.sh runs it)
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "engine/engine.h"
#include "engine_exercise.h"
#include "onnx_graph_gen.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const uint32_t seed = in.ConsumeIntegral<uint32_t>();
  ts::fuzz::GraphGen gen(in);
  const std::vector<uint8_t> model = gen.generate();
  ts::engine::BuildOptions o;
  o.time_tactics = false;  // the default profile: batch 1..1024 (runs stay near its minimum)
  auto& tally = ts::fuzz::ExerciseTally::get();
  auto plan = ts::engine::build(model, o);
  if (!plan) {
    tally.input_done(false);
    return 0;
  }
  auto e = ts::engine::Engine::load(plan.value());
  if (!e) {  // the builder's own plan must load (plan_check agrees with the builder)
    std::fprintf(stderr, "onnx_fuzz: the builder's plan does not load: %s\n", e.status().to_string().c_str());
    __builtin_trap();
  }
  ts::fuzz::exercise(*e.value(), seed, tally.stats());
  tally.input_done(true);
  return 0;
}
