#include "engine/backends/cuda/cuda_int8.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace ts::engine::cuda {

Result<std::unique_ptr<Int8Gemm>> Int8Gemm::create(const float* w_nk, int64_t k, int64_t n, const float* bias,
                                                   CudaAct act, float in_scale, std::span<const float> w_scales) {
  if (k <= 0 || n <= 0) return Status(StatusCode::kInvalidArgument, "int8 GEMM needs K, N > 0");
  if (int64_t(w_scales.size()) != n) {
    return Status(StatusCode::kInvalidArgument, "int8 GEMM: " + std::to_string(w_scales.size()) +
                                                    " weight scales for " + std::to_string(n) + " output channels");
  }
  if (!(std::isfinite(in_scale) && in_scale > 0)) {
    return Status(StatusCode::kInvalidArgument, "int8 GEMM: input scale " + std::to_string(in_scale) + " is not > 0");
  }
  std::unique_ptr<Int8Gemm> g(new Int8Gemm());
  g->k_ = k;
  g->n_ = n;
  g->k_words_ = (k + 3) / 4;
  g->inv_in_scale_ = 1.0f / in_scale;
  g->act_ = act;
  const int64_t kp = g->k_words_ * 4;
  std::vector<int8_t> q(size_t(n * kp), 0);
  std::vector<float> dq(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) {
    const float s = w_scales[size_t(c)];
    if (!(std::isfinite(s) && s > 0)) {
      return Status(StatusCode::kInvalidArgument, "int8 GEMM: weight scale of channel " + std::to_string(c) + " is not > 0");
    }
    for (int64_t i = 0; i < k; ++i) {
      const float v = std::nearbyint(w_nk[c * k + i] / s);
      q[size_t(c * kp + i)] = int8_t(std::clamp(v, -127.0f, 127.0f));
    }
    dq[size_t(c)] = in_scale * s;
  }
  TS_RETURN_IF_ERROR(g->wq_.upload(q.data(), q.size()));
  TS_RETURN_IF_ERROR(g->dequant_.upload(dq.data(), dq.size() * sizeof(float)));
  if (bias) TS_RETURN_IF_ERROR(g->bias_.upload(bias, size_t(n) * sizeof(float)));
  return g;
}

Status Int8Gemm::run(const CudaArgs& a, const float* x, int64_t m, float* y) const {
  return launch_int8_gemm(x, m, k_, wq_.as<int32_t>(), k_words_, n_, inv_in_scale_, dequant_.as<float>(),
                          bias_.get() ? bias_.as<float>() : nullptr, act_, y, a.stream);
}

}  // namespace ts::engine::cuda
