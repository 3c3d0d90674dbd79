#pragma once
// Timing helpers shared by the engine benchmarks (engine_cuda_bench, shape_sweep): percentiles,
// host-to-host runs of ExecutionContext::execute() and device-resident runs through
// enqueue_on_stream timed with CUDA events.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"

namespace ts::bench {

std::vector<std::string> split_csv(const std::string& s);
// Nearest rank over sorted values.
double percentile(const std::vector<double>& sorted, double p);

struct HostTimes {
  std::vector<double> us;  // sorted, one per call
  std::string error;
};
// Calls run(i) (i counts calls, for rotating inputs): warm-up ≥ warm_calls and ≥ warm_s, then
// timed call by call with steady_clock until ≥ min_calls and ≥ min_time_s (at most max_calls).
HostTimes time_host_calls(const std::function<Status(int)>& run, int warm_calls, double warm_s, int min_calls,
                          double min_time_s, int max_calls = 200000);

struct DeviceTimes {
  double p50_us = 0, p99_us = 0;
  int runs = 0;
  std::string error;  // why there is no figure (built without the cuda backend: always set)
};
// enqueue_on_stream with input and output in device memory: 20 warm-up calls (the first at a
// bucket run eagerly, then it is captured), then `runs` (event, enqueue, event) triples queued
// back to back on one stream, one synchronize; P50/P99 of the per-call event times.
// runs ≤ 0: as many as fit in about 0.3 s at the warm-up's pace (20..200).
DeviceTimes time_device_resident(engine::ExecutionContext& ctx, const void* host_x, std::vector<int64_t> in_dims,
                                 size_t in_bytes, size_t out_bytes, int runs = 200);

}  // namespace ts::bench
