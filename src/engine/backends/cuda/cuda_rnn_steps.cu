// The cell of tactic "gemm_steps" (contract in cuda_rnn_steps.h): one thread per (row, unit).
#include <string>

#include "engine/backends/cuda/cuda_rnn_steps.h"

namespace ts::engine::cuda {
namespace {

__device__ __forceinline__ float sigm(float x) { return 1.0f / (1.0f + expf(-x)); }

template <bool kLstm>
__global__ void rnn_cell_step_kernel(RnnCellStepParams p) {
  const int H = p.hidden, G = kLstm ? 4 : 3;
  const int64_t n = int64_t(p.batch) * H;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t b = i / H;
    const int j = int(i - b * H);
    const float* gx = p.gx + b * G * H + j;
    const float* gh = p.gh + b * G * H + j;
    float h;
    if constexpr (kLstm) {
      const float c = p.c_prev[i];
      const float pi = p.peep ? p.peep[j] : 0.0f, po = p.peep ? p.peep[H + j] : 0.0f, pf = p.peep ? p.peep[2 * H + j] : 0.0f;
      const float ig = sigm(gx[0] + gh[0] + pi * c);
      const float fg = sigm(gx[2 * H] + gh[2 * H] + pf * c);
      const float cc = tanhf(gx[3 * H] + gh[3 * H]);
      const float cn = fg * c + ig * cc;
      const float og = sigm(gx[H] + gh[H] + po * cn);
      h = og * tanhf(cn);
      p.c_next[i] = cn;
      if (p.yc) p.yc[i] = cn;
    } else {
      const float z = sigm(gx[0] + gh[0]);
      const float r = sigm(gx[H] + gh[H]);
      const float nn = tanhf(gx[2 * H] + r * (gh[2 * H] + (p.rbh ? p.rbh[j] : 0.0f)));
      h = nn + z * (p.h_prev[i] - nn);
    }
    p.h_next[i] = h;
    if (p.y) p.y[i] = h;
    if (p.yh) p.yh[i] = h;
  }
}

}  // namespace

Status launch_rnn_cell_step(const RnnCellStepParams& p, cudaStream_t stream) {
  if (!p.gx || !p.gh || !p.h_prev || !p.h_next || (p.lstm && (!p.c_prev || !p.c_next))) {
    return Status(StatusCode::kInvalidArgument, "rnn cell step: missing gates or state");
  }
  const int64_t n = int64_t(p.batch) * p.hidden;
  if (n <= 0) return Status::ok();
  const int threads = 256;
  const int blocks = int(std::min<int64_t>((n + threads - 1) / threads, 65535));
  if (p.lstm) rnn_cell_step_kernel<true><<<blocks, threads, 0, stream>>>(p);
  else rnn_cell_step_kernel<false><<<blocks, threads, 0, stream>>>(p);
  TS_CUDA_LAUNCHED("rnn cell step (gemm_steps)");
  return Status::ok();
}

}  // namespace ts::engine::cuda
