// FusedAttention on the device (the node the engine's fuse_attention pass makes from
// MatMul(q, kᵀ) → [scale] → Softmax → MatMul(·, v)): one thread per query row, keys and values
// streamed through shared memory in tiles, online softmax (running max and sum, the
// accumulator rescaled when the max grows), so no score matrix is written and any key length
// works.
//
// PERF NOTE: the models here have head dims of 16 (d_model 64, 4 heads) and T ≤ 120: a query
// row's q and accumulator (2 × D floats) stay in registers, every thread of a block reads the
// same K/V element from shared memory (a broadcast, no bank conflicts), and one block covers
// all queries of a (batch, head) slice for T ≤ 64. The kernel is templated on D (16, 32, 64,
// 128: the smallest ≥ max(d, dv); K/V rows are zero-padded to D) so the loops unroll.
#include <cfloat>

#include "engine/backends/cuda/cuda_layers.h"

namespace ts::engine::cuda {
namespace {

constexpr int kQueriesPerBlock = 64;

template <int D>
__global__ void __launch_bounds__(kQueriesPerBlock)
    attention_kernel(const float* __restrict__ q, const float* __restrict__ k, const float* __restrict__ v,
                     float* __restrict__ o, int64_t tq, int64_t tk, int d, int dv, float scale, bool k_transposed) {
  constexpr int kTile = D >= 128 ? 32 : 64;
  __shared__ __align__(16) float ks[kTile][D];
  __shared__ __align__(16) float vs[kTile][D];
  const int64_t bh = blockIdx.x;
  const int64_t i = int64_t(blockIdx.y) * kQueriesPerBlock + threadIdx.x;
  const bool active = i < tq;
  const float* qb = q + bh * tq * d;
  const float* kb = k + bh * tk * d;
  const float* vb = v + bh * tk * dv;
  float qr[D], acc[D];
#pragma unroll
  for (int c = 0; c < D; ++c) {
    qr[c] = active && c < d ? qb[i * d + c] * scale : 0.0f;
    acc[c] = 0.0f;
  }
  float m = -FLT_MAX, l = 0.0f;
  for (int64_t j0 = 0; j0 < tk; j0 += kTile) {
    const int n = int(tk - j0 < kTile ? tk - j0 : kTile);
    __syncthreads();
    for (int e = threadIdx.x; e < n * D; e += kQueriesPerBlock) {
      const int jj = e / D, c = e % D;
      const int64_t j = j0 + jj;
      ks[jj][c] = c < d ? (k_transposed ? kb[int64_t(c) * tk + j] : kb[j * d + c]) : 0.0f;
      vs[jj][c] = c < dv ? vb[j * dv + c] : 0.0f;
    }
    __syncthreads();
    if (!active) continue;
    for (int jj = 0; jj < n; ++jj) {
      // 16-byte shared loads (a broadcast: every thread reads the same key): a quarter of the
      // load instructions of scalar reads, which bound the kernel (ncu at batch 4096,
      // bench/results/archive/ncu-transformer-b4096-h200-20261130-1237.txt).
      const float4* kr = reinterpret_cast<const float4*>(ks[jj]);
      const float4* vr = reinterpret_cast<const float4*>(vs[jj]);
      float s = 0.0f;
#pragma unroll
      for (int c4 = 0; c4 < D / 4; ++c4) {
        const float4 kv = kr[c4];
        s = fmaf(qr[4 * c4], kv.x, s);
        s = fmaf(qr[4 * c4 + 1], kv.y, s);
        s = fmaf(qr[4 * c4 + 2], kv.z, s);
        s = fmaf(qr[4 * c4 + 3], kv.w, s);
      }
      if (s > m) {
        const float corr = expf(m - s);
        l *= corr;
#pragma unroll
        for (int c = 0; c < D; ++c) acc[c] *= corr;
        m = s;
      }
      const float p = expf(s - m);
      l += p;
#pragma unroll
      for (int c4 = 0; c4 < D / 4; ++c4) {
        const float4 vv = vr[c4];
        acc[4 * c4] = fmaf(p, vv.x, acc[4 * c4]);
        acc[4 * c4 + 1] = fmaf(p, vv.y, acc[4 * c4 + 1]);
        acc[4 * c4 + 2] = fmaf(p, vv.z, acc[4 * c4 + 2]);
        acc[4 * c4 + 3] = fmaf(p, vv.w, acc[4 * c4 + 3]);
      }
    }
  }
  if (!active) return;
  const float inv = 1.0f / l;
  float* ob = o + (bh * tq + i) * dv;
#pragma unroll
  for (int c = 0; c < D; ++c)
    if (c < dv) ob[c] = acc[c] * inv;
}

template <int D>
Status launch_d(const float* q, const float* k, const float* v, float* o, int64_t batch, int64_t tq, int64_t tk,
                int64_t d, int64_t dv, float scale, bool k_transposed, cudaStream_t stream) {
  dim3 grid(unsigned(batch), unsigned((tq + kQueriesPerBlock - 1) / kQueriesPerBlock));
  attention_kernel<D><<<grid, kQueriesPerBlock, 0, stream>>>(q, k, v, o, tq, tk, int(d), int(dv), scale, k_transposed);
  TS_CUDA_LAUNCHED("attention");
  return Status::ok();
}

}  // namespace

Status launch_attention(const float* q, const float* k, const float* v, float* o, int64_t batch, int64_t tq,
                        int64_t tk, int64_t d, int64_t dv, float scale, bool k_transposed, cudaStream_t stream) {
  if (batch == 0 || tq == 0 || dv == 0) return Status::ok();
  if (tk == 0) return Status(StatusCode::kInvalidArgument, "attention over zero keys");
  if (batch > 0x7fffffff || (tq + kQueriesPerBlock - 1) / kQueriesPerBlock > 65535) {
    return Status(StatusCode::kInvalidArgument, "attention grid too large: " + std::to_string(batch) + " slices of " +
                                                    std::to_string(tq) + " queries");
  }
  const int64_t dm = d > dv ? d : dv;
  if (dm <= 16) return launch_d<16>(q, k, v, o, batch, tq, tk, d, dv, scale, k_transposed, stream);
  if (dm <= 32) return launch_d<32>(q, k, v, o, batch, tq, tk, d, dv, scale, k_transposed, stream);
  if (dm <= 64) return launch_d<64>(q, k, v, o, batch, tq, tk, d, dv, scale, k_transposed, stream);
  if (dm <= kAttentionMaxHeadDim) return launch_d<128>(q, k, v, o, batch, tq, tk, d, dv, scale, k_transposed, stream);
  return Status(StatusCode::kUnsupported, "attention head dim " + std::to_string(dm) + " is over the cuda backend's " +
                                              std::to_string(kAttentionMaxHeadDim));
}

}  // namespace ts::engine::cuda
