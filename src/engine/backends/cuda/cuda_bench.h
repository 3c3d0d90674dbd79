#pragma once
// The device phase of run_bench (engine/bench.h) on the cuda backend. No CUDA header here:
// engine/bench.cpp includes it in builds with the cuda backend.
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"

namespace ts::engine::cuda {

struct DeviceInfo {
  std::string name;     // "NVIDIA H200"
  std::string driver;   // the kernel driver's version ("580.159.04"), else the CUDA driver API's ("13.0")
  std::string runtime;  // "CUDA runtime 13.0"
};
Result<DeviceInfo> device_info();

struct DeviceBenchTimes {
  std::vector<double> h2d_us, compute_us, d2h_us, total_us, enqueue_us;  // one per timed iteration
  double wall_s = 0;
};
// Copies `host_inputs` to device buffers of its own and times iterations of H2D copy,
// ctx.enqueue_on_stream on the device buffers, D2H copy into `host_outputs` (their data and
// capacity_bytes; dims are filled in), each bracketed by CUDA events on one stream (bench.h).
Result<DeviceBenchTimes> device_bench(ExecutionContext& ctx, std::span<const TensorView> host_inputs,
                                      std::span<TensorView> host_outputs, double warm_up_ms, double duration_s,
                                      int iterations);

}  // namespace ts::engine::cuda
