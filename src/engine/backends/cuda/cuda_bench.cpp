// The device phase of run_bench (cuda_bench.h, engine/bench.h).
#include "engine/backends/cuda/cuda_bench.h"

#include "engine/backends/cuda/cuda_common.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace ts::engine::cuda {
namespace {

using Clock = std::chrono::steady_clock;

// "580.159.04" from the kernel module's version file; "" where there is none (a container
// without /proc/driver/nvidia).
std::string kernel_driver_version() {
  std::ifstream f("/proc/driver/nvidia/version");
  std::string line;
  if (!std::getline(f, line)) return "";
  std::istringstream words(line);
  std::string w, prev;
  while (words >> w) {
    if (prev == "Module" && !w.empty() && std::isdigit(static_cast<unsigned char>(w[0]))) return w;
    prev = w;
  }
  return "";
}

std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// Device buffers, a stream and events, freed in order (after the stream is idle).
struct Resources {
  std::vector<void*> dev;
  cudaStream_t stream = nullptr;
  std::vector<cudaEvent_t> events;
  ~Resources() {
    if (stream) cudaStreamSynchronize(stream);
    for (cudaEvent_t e : events) cudaEventDestroy(e);
    if (stream) cudaStreamDestroy(stream);
    for (void* p : dev) cudaFree(p);
  }
};

}  // namespace

Result<DeviceInfo> device_info() {
  int dev = 0;
  TS_CUDA(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  TS_CUDA(cudaGetDeviceProperties(&prop, dev));
  int drv = 0, rt = 0;
  TS_CUDA(cudaDriverGetVersion(&drv));
  TS_CUDA(cudaRuntimeGetVersion(&rt));
  DeviceInfo d;
  d.name = prop.name;
  d.driver = kernel_driver_version();
  if (d.driver.empty()) d.driver = "CUDA driver API " + cuda_version(drv);
  d.runtime = "CUDA runtime " + cuda_version(rt) + " (driver API " + cuda_version(drv) + "), sm_" +
              std::to_string(prop.major) + std::to_string(prop.minor);
  return d;
}

Result<DeviceBenchTimes> device_bench(ExecutionContext& ctx, std::span<const TensorView> host_inputs,
                                      std::span<TensorView> host_outputs, double warm_up_ms, double duration_s,
                                      int iterations) {
  Resources r;
  const size_t ni = host_inputs.size(), no = host_outputs.size();
  std::vector<TensorView> din(host_inputs.begin(), host_inputs.end()), dout(host_outputs.begin(), host_outputs.end());
  for (size_t i = 0; i < ni + no; ++i) {
    const size_t bytes = std::max<size_t>(i < ni ? host_inputs[i].bytes() : host_outputs[i - ni].capacity_bytes, 1);
    void* p = nullptr;
    TS_CUDA(cudaMalloc(&p, bytes));
    r.dev.push_back(p);
    if (i < ni) din[i].data = p;
    else dout[i - ni].data = p;
  }
  TS_CUDA(cudaStreamCreateWithFlags(&r.stream, cudaStreamNonBlocking));
  constexpr int kGroup = 32;  // iterations queued before one synchronize
  r.events.resize(size_t(4 * kGroup));
  for (cudaEvent_t& e : r.events) TS_CUDA(cudaEventCreate(&e));
  cudaStream_t s = r.stream;

  DeviceBenchTimes t;
  // One iteration: [e0] H2D [e1] engine [e2] D2H [e3]; ev null: untimed.
  auto iteration = [&](cudaEvent_t* ev, double* enqueue_us) -> Status {
    if (ev) TS_CUDA(cudaEventRecord(ev[0], s));
    for (size_t i = 0; i < ni; ++i) {
      if (host_inputs[i].bytes())
        TS_CUDA(cudaMemcpyAsync(din[i].data, host_inputs[i].data, host_inputs[i].bytes(), cudaMemcpyHostToDevice, s));
    }
    if (ev) TS_CUDA(cudaEventRecord(ev[1], s));
    const auto a = Clock::now();
    TS_RETURN_IF_ERROR(ctx.enqueue_on_stream(din, dout, DeviceStream{s}));
    if (enqueue_us) *enqueue_us = std::chrono::duration<double, std::micro>(Clock::now() - a).count();
    if (ev) TS_CUDA(cudaEventRecord(ev[2], s));
    for (size_t o = 0; o < no; ++o) {
      const size_t bytes = size_t(shape_numel(dout[o].dims)) * dtype_size(dout[o].dtype);
      if (bytes) TS_CUDA(cudaMemcpyAsync(host_outputs[o].data, dout[o].data, bytes, cudaMemcpyDeviceToHost, s));
      host_outputs[o].dims = dout[o].dims;
    }
    if (ev) TS_CUDA(cudaEventRecord(ev[3], s));
    return Status::ok();
  };

  const auto warm_end = Clock::now() + std::chrono::microseconds(int64_t(warm_up_ms * 1000));
  for (int w = 0; w < 3 || Clock::now() < warm_end; ++w) {
    TS_RETURN_IF_ERROR(iteration(nullptr, nullptr));
    TS_CUDA(cudaStreamSynchronize(s));
  }
  const auto t0 = Clock::now();
  const auto end = t0 + std::chrono::microseconds(int64_t(duration_s * 1e6));
  double enq[kGroup];
  while (int(t.compute_us.size()) < iterations || Clock::now() < end) {
    const int n = kGroup;
    for (int k = 0; k < n; ++k) TS_RETURN_IF_ERROR(iteration(&r.events[size_t(4 * k)], &enq[k]));
    TS_CUDA(cudaStreamSynchronize(s));
    for (int k = 0; k < n; ++k) {
      cudaEvent_t* ev = &r.events[size_t(4 * k)];
      float ms[3] = {0, 0, 0}, total = 0;
      for (int q = 0; q < 3; ++q) TS_CUDA(cudaEventElapsedTime(&ms[q], ev[q], ev[q + 1]));
      TS_CUDA(cudaEventElapsedTime(&total, ev[0], ev[3]));
      t.h2d_us.push_back(double(ms[0]) * 1e3);
      t.compute_us.push_back(double(ms[1]) * 1e3);
      t.d2h_us.push_back(double(ms[2]) * 1e3);
      t.total_us.push_back(double(total) * 1e3);
      t.enqueue_us.push_back(enq[k]);
    }
    if (t.compute_us.size() >= 1000000) break;
  }
  t.wall_s = std::chrono::duration<double>(Clock::now() - t0).count();
  return t;
}

}  // namespace ts::engine::cuda
