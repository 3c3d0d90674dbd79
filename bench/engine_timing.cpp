#include "engine_timing.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>

#ifdef TS_BENCH_CUDA
#include <cuda_runtime.h>
#endif

namespace ts::bench {

using Clock = std::chrono::steady_clock;

std::vector<std::string> split_csv(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

double percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  auto n = int64_t(sorted.size());
  int64_t k = std::clamp<int64_t>(int64_t(std::ceil(p * double(n))) - 1, 0, n - 1);
  return sorted[size_t(k)];
}

HostTimes time_host_calls(const std::function<Status(int)>& run, int warm_calls, double warm_s, int min_calls,
                          double min_time_s, int max_calls) {
  HostTimes t;
  int q = 0;
  auto w_end = Clock::now() + std::chrono::duration<double>(warm_s);
  for (int w = 0; w < warm_calls || Clock::now() < w_end; ++w) {
    if (auto s = run(q++); !s) {
      t.error = s.to_string();
      return t;
    }
  }
  auto end = Clock::now() + std::chrono::duration<double>(min_time_s);
  while (int(t.us.size()) < min_calls || Clock::now() < end) {
    auto r0 = Clock::now();
    auto s = run(q++);
    auto r1 = Clock::now();
    if (!s) {
      t.error = s.to_string();
      return t;
    }
    t.us.push_back(std::chrono::duration<double, std::micro>(r1 - r0).count());
    if (int(t.us.size()) >= max_calls) break;
  }
  std::sort(t.us.begin(), t.us.end());
  return t;
}

#ifdef TS_BENCH_CUDA
DeviceTimes time_device_resident(engine::ExecutionContext& ctx, const void* host_x, std::vector<int64_t> in_dims,
                                 size_t in_bytes, size_t out_bytes, int runs) {
  using namespace ts::engine;
  DeviceTimes t;
  void *dx = nullptr, *dy = nullptr;
  cudaStream_t s = nullptr;
  std::vector<cudaEvent_t> ev;
  auto fail = [&](const std::string& what) {
    t.error = what;
    return t;
  };
  struct Cleanup {
    void*& dx;
    void*& dy;
    cudaStream_t& s;
    std::vector<cudaEvent_t>& ev;
    ~Cleanup() {
      if (s) cudaStreamSynchronize(s);
      for (cudaEvent_t e : ev) cudaEventDestroy(e);
      if (s) cudaStreamDestroy(s);
      cudaFree(dx);
      cudaFree(dy);
    }
  } cleanup{dx, dy, s, ev};
  if (cudaMalloc(&dx, in_bytes) != cudaSuccess || cudaMalloc(&dy, out_bytes) != cudaSuccess)
    return fail("cudaMalloc failed");
  if (cudaMemcpy(dx, host_x, in_bytes, cudaMemcpyHostToDevice) != cudaSuccess) return fail("cudaMemcpy failed");
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return fail("cudaStreamCreate failed");
  std::vector<TensorView> in{TensorView{DType::kF32, std::move(in_dims), dx}}, outs(1);
  outs[0].data = dy;
  outs[0].capacity_bytes = out_bytes;
  auto enqueue = [&]() { return ctx.enqueue_on_stream(in, outs, DeviceStream{s}); };
  constexpr int kWarm = 20;
  auto w0 = Clock::now();
  for (int w = 0; w < kWarm; ++w) {  // the first calls at the bucket run eagerly, then it is captured
    if (auto st = enqueue(); !st) return fail(st.to_string());
    if (w == kWarm / 2) {  // pace of the captured calls only
      if (cudaStreamSynchronize(s) != cudaSuccess) return fail("warm-up failed on the device");
      w0 = Clock::now();
    }
  }
  if (cudaStreamSynchronize(s) != cudaSuccess) return fail("warm-up failed on the device");
  if (runs <= 0) {
    double per_us = std::chrono::duration<double, std::micro>(Clock::now() - w0).count() / (kWarm - kWarm / 2 - 1);
    runs = std::clamp(int(0.3e6 / std::max(per_us, 1.0)), 20, 200);
  }
  ev.resize(size_t(2 * runs));
  for (cudaEvent_t& e : ev)
    if (cudaEventCreate(&e) != cudaSuccess) return fail("cudaEventCreate failed");
  for (int r = 0; r < runs; ++r) {
    cudaEventRecord(ev[size_t(2 * r)], s);
    if (auto st = enqueue(); !st) return fail(st.to_string());
    cudaEventRecord(ev[size_t(2 * r + 1)], s);
  }
  if (cudaStreamSynchronize(s) != cudaSuccess) return fail("timed runs failed on the device");
  std::vector<double> us;
  for (int r = 0; r < runs; ++r) {
    float ms = 0;
    cudaEventElapsedTime(&ms, ev[size_t(2 * r)], ev[size_t(2 * r + 1)]);
    us.push_back(double(ms) * 1000.0);
  }
  std::sort(us.begin(), us.end());
  t.p50_us = percentile(us, 0.5);
  t.p99_us = percentile(us, 0.99);
  t.runs = runs;
  return t;
}
#else
DeviceTimes time_device_resident(engine::ExecutionContext&, const void*, std::vector<int64_t>, size_t, size_t, int) {
  DeviceTimes t;
  t.error = "built without the cuda backend";
  return t;
}
#endif

}  // namespace ts::bench
