#include "http/gpu_telemetry.h"

#include <dlfcn.h>

namespace ts::http {

namespace {
// The few NVML declarations used (nvml.h is not needed to build): return codes are 0 on success.
struct NvmlUtilization { unsigned int gpu, memory; };
struct NvmlMemory { unsigned long long total, free, used; };
using NvmlDevice = void*;
constexpr int kNvmlTemperatureGpu = 0;
}  // namespace

struct GpuTelemetry::Api {
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*count)(unsigned int*) = nullptr;
  int (*handle)(unsigned int, NvmlDevice*) = nullptr;
  int (*utilization)(NvmlDevice, NvmlUtilization*) = nullptr;
  int (*memory)(NvmlDevice, NvmlMemory*) = nullptr;
  int (*temperature)(NvmlDevice, int, unsigned int*) = nullptr;
  int (*power_mw)(NvmlDevice, unsigned int*) = nullptr;
};

std::unique_ptr<GpuTelemetry> GpuTelemetry::open(Metrics& metrics, std::string* why) {
  auto say = [&](const std::string& s) {
    if (why) *why = s;
    return nullptr;
  };
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return say("libnvidia-ml.so.1 not found (no NVIDIA driver)");
  std::unique_ptr<GpuTelemetry> t(new GpuTelemetry());
  t->lib_ = lib;
  t->api_ = std::make_unique<Api>();
  Api& a = *t->api_;
  auto sym = [&](auto& fn, const char* name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    return fn != nullptr;
  };
  if (!sym(a.init, "nvmlInit_v2") || !sym(a.shutdown, "nvmlShutdown") || !sym(a.count, "nvmlDeviceGetCount_v2") ||
      !sym(a.handle, "nvmlDeviceGetHandleByIndex_v2") || !sym(a.utilization, "nvmlDeviceGetUtilizationRates") ||
      !sym(a.memory, "nvmlDeviceGetMemoryInfo") || !sym(a.temperature, "nvmlDeviceGetTemperature") ||
      !sym(a.power_mw, "nvmlDeviceGetPowerUsage")) {
    a.init = nullptr;  // nothing to shut down
    return say("libnvidia-ml.so.1 lacks an NVML function this build uses");
  }
  if (a.init() != 0) {
    a.init = nullptr;
    return say("nvmlInit failed (driver not loaded?)");
  }
  unsigned int n = 0;
  if (a.count(&n) != 0 || n == 0) return say("NVML sees no GPU");
  for (unsigned int i = 0; i < n; ++i) {
    Gpu g;
    if (a.handle(i, &g.handle) != 0) continue;
    const std::map<std::string, std::string> label = {{"gpu", std::to_string(i)}};
    g.util = &metrics.gauge("gpu_utilization_ratio", "Share of the last sample period a kernel ran on the GPU", label);
    g.mem_used = &metrics.gauge("gpu_memory_used_bytes", "GPU memory in use", label);
    g.mem_total = &metrics.gauge("gpu_memory_total_bytes", "GPU memory in all", label);
    g.temp = &metrics.gauge("gpu_temperature_celsius", "GPU core temperature", label);
    g.power = &metrics.gauge("gpu_power_watts", "GPU board power draw", label);
    t->gpus_.push_back(g);
  }
  t->errors_ = &metrics.counter("gpu_telemetry_errors_total", "NVML calls that failed while sampling");
  if (t->gpus_.empty()) return say("NVML gave no GPU handle");
  t->sample();
  return t;
}

GpuTelemetry::~GpuTelemetry() {
  if (api_ && api_->init && api_->shutdown) api_->shutdown();
  if (lib_) dlclose(lib_);
}

void GpuTelemetry::sample() {
  const Api& a = *api_;
  for (Gpu& g : gpus_) {
    NvmlUtilization u{};
    NvmlMemory m{};
    unsigned int temp = 0, mw = 0;
    int failed = 0;
    if (a.utilization(g.handle, &u) == 0) g.util->Set(u.gpu / 100.0); else ++failed;
    if (a.memory(g.handle, &m) == 0) {
      g.mem_used->Set(double(m.used));
      g.mem_total->Set(double(m.total));
    } else {
      ++failed;
    }
    if (a.temperature(g.handle, kNvmlTemperatureGpu, &temp) == 0) g.temp->Set(temp); else ++failed;
    if (a.power_mw(g.handle, &mw) == 0) g.power->Set(mw / 1000.0); else ++failed;
    if (failed) errors_->Increment(failed);
  }
}

}  // namespace ts::http
