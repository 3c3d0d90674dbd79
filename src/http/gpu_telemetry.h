#pragma once
// GPU telemetry through NVML, loaded at run time (dlopen "libnvidia-ml.so.1"), so the binary
// runs — and builds — on machines without the NVIDIA driver; there open() returns null and no
// GPU metrics exist. Per GPU (label gpu="0", ...), sampled by sample():
//   ticksentry_gpu_utilization_ratio     0..1, the share of the last sample period a kernel ran
//   ticksentry_gpu_memory_used_bytes, ticksentry_gpu_memory_total_bytes
//   ticksentry_gpu_temperature_celsius
//   ticksentry_gpu_power_watts
// A failing NVML call leaves that gauge at its last value and counts
// ticksentry_gpu_telemetry_errors_total. Threading: open() on the start-up thread (it creates
// the gauges); sample() from one thread at a time (the dashboard's live feed, once a second).
#include <memory>
#include <string>
#include <vector>

#include "core/metrics.h"

namespace ts::http {

class GpuTelemetry {
 public:
  // Null when NVML cannot be loaded or initialised, or there is no GPU; `why` says which.
  static std::unique_ptr<GpuTelemetry> open(Metrics& metrics, std::string* why = nullptr);
  ~GpuTelemetry();
  GpuTelemetry(const GpuTelemetry&) = delete;
  GpuTelemetry& operator=(const GpuTelemetry&) = delete;

  void sample();
  size_t gpu_count() const { return gpus_.size(); }

 private:
  struct Api;
  struct Gpu {
    void* handle = nullptr;
    prometheus::Gauge* util = nullptr;
    prometheus::Gauge* mem_used = nullptr;
    prometheus::Gauge* mem_total = nullptr;
    prometheus::Gauge* temp = nullptr;
    prometheus::Gauge* power = nullptr;
  };
  GpuTelemetry() = default;
  void* lib_ = nullptr;
  std::unique_ptr<Api> api_;
  std::vector<Gpu> gpus_;
  prometheus::Counter* errors_ = nullptr;
};

}  // namespace ts::http
