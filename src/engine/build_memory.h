#pragma once
// The builder's per-bucket memory measurement (Plan::bucket_memory, plan format ≥ 4).
//
// A context is not sized by the profile's maximum: it allocates for the batches it runs, and
// keeps what the largest one needed. So the plan records, per batch bucket, what one context
// held after running that bucket (ascending, the smaller buckets first): a fresh executor of the
// final program (the tactics the build chose) runs each bucket three times (eager, capture,
// replay on a backend with graphs) on random inputs at profile 0's opt dims with dim 0 = the
// bucket, then memory_bytes() is read. Measured, not estimated: a bucket the time budget does
// not reach (or whose run fails, e.g. out of device memory) is left out, and the pass log says
// why. Buckets below every profile's minimum batch are skipped (no call runs them).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/engine.h"

namespace ts::engine {

// PERF NOTE: the measurement runs the model up to the largest bucket; on the cpu backend a big
// profile at batch 1024 or 4096 takes seconds, so it stops once kBucketMemoryBudgetS have gone
// (every build pays it: the test suite builds hundreds of plans). The cuda backend measures the
// 13 buckets of a shape-sweep model (1..4096, T = 60) in well under that.
inline constexpr double kBucketMemoryBudgetS = 1.0;

// The per-bucket figures of `program` (graph with its chosen tactics) for `buckets`; one line
// per skipped or unmeasured bucket is appended to *log. Never fails the build.
std::vector<BucketMemory> measure_bucket_memory(const Backend& be, std::shared_ptr<const Program> program,
                                                const ExecutorOptions& eo, const std::vector<OptimizationProfile>& profiles,
                                                double budget_s, std::vector<std::string>* log);

}  // namespace ts::engine
