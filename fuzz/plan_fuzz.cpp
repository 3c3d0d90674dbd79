// libFuzzer target for the plan loader: any byte string must give a Plan or an error, never a
// crash, hang or giant allocation. Both the checksummed path (Engine::load) and the payload
// parser behind the checksum (deserialize_plan without verification, then make_engine) are fed.
//   clang++ -std=c++20 -fsanitize=fuzzer,address,undefined -Isrc fuzz/plan_fuzz.cpp <ts_engine
//   built with the same sanitizers> ... ; ./plan_fuzz corpus/   (seed corpus: any built .plan)
// The ctest smoke run of the same property is tests/engine/cpu/plan_fuzz_smoke_test.cpp.
#include <cstddef>
#include <cstdint>
#include <span>

#include "engine/engine.h"
#include "engine/plan.h"
#include "engine/runtime.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  (void)ts::engine::Engine::load(bytes);
  auto plan = ts::engine::deserialize_plan(bytes, /*verify_checksum=*/false);
  if (plan) (void)ts::engine::make_engine(std::move(plan).value());
  return 0;
}
