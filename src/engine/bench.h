#pragma once
// Measuring a plan as trtexec does (`ticksentry bench`, docs/engine.md "bench"):
//   host-to-host  ExecutionContext::execute() from host inputs to host outputs, each call timed
//                 on the host clock; inputs and outputs page-locked (Engine::allocate_host) by
//                 default, pageable with BenchOptions::pageable (what a caller without
//                 allocate_host gets: large inputs are staged through a second copy).
//   device        (cuda backend) inputs and outputs in device memory, per iteration on one
//                 stream: event, H2D copies from the same host buffers, event,
//                 enqueue_on_stream (the engine alone: "compute", device-resident), event, D2H
//                 copies, event. The H2D / compute / D2H split and their sum (trtexec's "Host
//                 Latency") come from those events; "enqueue" is the host time of the
//                 enqueue_on_stream call. Iterations are queued in groups of 32 and then
//                 synchronized, so the device runs them back to back as trtexec's does.
// Both phases: warm-up for warm_up_ms (at least 3 calls: a shape's first call runs eagerly, the
// second captures its CUDA graph), then at least `iterations` calls and at least `duration_s`
// seconds. Percentiles are nearest-rank over the per-call times.
// CUDA graphs: the engine captures one per shape bucket and replays it (what serving runs).
// With use_cuda_graph false (trtexec's default) the context launches every kernel one by one
// instead, so the two can be compared; set_cuda_graphs_for_this_thread() is how the run_bench
// tells the context it creates.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"

namespace ts::engine {

struct BenchOptions {
  std::map<std::string, std::vector<int64_t>> shapes;  // dims per input (inputs with dynamic dims must be named)
  double warm_up_ms = 200;                             // trtexec --warmUp
  double duration_s = 3;                               // trtexec --duration: time at least this long
  int iterations = 10;                                 // trtexec --iterations: and at least this many calls
  bool pageable = false;                               // host buffers pageable instead of page-locked
  bool use_cuda_graph = false;                         // replay the engine's CUDA graphs (cuda backend)
  bool device_phase = true;                            // the device-resident phase where the backend has one
  std::vector<double> percentiles{90, 95, 99};         // trtexec --percentile, each in [0, 100]
  uint32_t seed = 42;                                  // inputs: uniform [-1, 1) floats, small integers
};

struct LatencyStats {
  int64_t count = 0;
  double min_us = 0, max_us = 0, mean_us = 0, median_us = 0;
  std::vector<std::pair<double, double>> percentiles;  // (percentile, µs)
};
// Nearest-rank statistics of `us` (any order); percentiles outside [0, 100] are left out.
LatencyStats latency_stats(std::vector<double> us, const std::vector<double>& percentiles);

struct BenchLayer {
  int index = 0;
  std::string op, name, tactic, precision;
};
// The layer lines of Engine::describe() ("  [i] op name tactic=T precision=P ...").
std::vector<BenchLayer> describe_layers(const std::string& describe);
// The plan's precision from Engine::describe()'s first line ("... precision fp16 ..."); "" if absent.
std::string describe_precision(const std::string& describe);

struct BenchReport {
  std::string backend, precision;
  std::string device, driver, runtime;  // cuda: "NVIDIA H200", "580.159.04", "CUDA runtime 13.0"; cpu: the CPU
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
  bool pageable = false, use_cuda_graph = false;
  double warm_up_ms = 0, duration_s = 0;
  int iterations_asked = 0;
  // host-to-host
  int warm_up_calls = 0;
  double wall_s = 0;
  LatencyStats host_to_host;
  double throughput_per_s = 0;  // calls per second of wall time
  int64_t batch = 1;            // dim 0 of the first input (samples per call)
  // device (cuda backend)
  bool device_timed = false;
  std::string device_note;  // why there is no device phase
  LatencyStats h2d, compute, d2h, host_latency, enqueue;
  double device_wall_s = 0, device_throughput_per_s = 0;
  // memory and the plan
  int64_t context_memory_bytes = 0;  // ExecutionContext::memory_bytes() after the runs at this shape
  int64_t weight_bytes = 0;
  int64_t plan_scratch_max_bytes = 0;  // Engine::device_memory_bytes(): the plan's estimate at max shapes
  std::string context;                 // ExecutionContext::describe() after the runs
  std::vector<BenchLayer> layers;
};

Result<BenchReport> run_bench(const Engine& engine, const BenchOptions& options);

// Whether contexts created on this thread replay CUDA graphs (default true). Read by the cuda
// backend when it creates a context's executor; run_bench sets it around create_context.
void set_cuda_graphs_for_this_thread(bool on);
bool cuda_graphs_for_this_thread();

}  // namespace ts::engine
