#pragma once
// Recurrent weights of GRU/LSTM packed for the per-step h·Rᵀ ("avx2_blocked" tactic).
//
// Layout: the hidden units are split into blocks of U units (U = 8·⌊12/G⌋ for G gates: GRU 32,
// LSTM 24, GRU lbr=0's z,r pair 48, a single gate 96), so one block's outputs for all G gates
// are at most 12 AVX2 vectors (12 accumulators + 1 broadcast + loads fit the 16 registers).
// A block stores its columns gate-interleaved (column g·u_pad + u = gate g, unit u0 + u; u_pad
// = units rounded up to 8, zero padded) and k-major ([H][G·u_pad]), so one block is ONE
// contiguous buffer streamed front to back, and the gate math for its units can run right
// after its GEMV while the pre-activations are still in L1.
//
// Batch 1 (a GEMV) uses a 1×V kernel (V ≤ 12 independent FMA chains); batch > 1 uses 4×3
// (4 rows × 24 columns) register blocks, i.e. a small GEMM per block.
#include <cstdint>
#include <vector>

namespace ts::engine::cpu {

struct RnnBlock {
  int64_t u0 = 0;       // first hidden unit
  int64_t units = 0;    // units in this block (≤ U)
  int64_t u_pad = 0;    // units rounded up to 8
  int64_t offset = 0;   // floats from PackedRnnR::data's start
};

struct PackedRnnR {
  int64_t hidden = 0, gates = 0;
  int64_t max_cols = 0;            // widest block: G·u_pad ≤ 96
  std::vector<RnnBlock> blocks;
  std::vector<float> data;         // blocks back to back, each [hidden][G·u_pad]
};

// Packs R given as ONNX lays it out: [gates·hidden, hidden] row-major (row = gate·H + unit),
// i.e. out = h · Rᵀ.
PackedRnnR pack_rnn_r(const float* r, int64_t gates, int64_t hidden);

// out[i][c] (row stride ldo, c < G·u_pad of the block) = Σ_k h[i·ldh + k] · R[block col c][k]
// for rows i < rows. reverse_k runs k from H-1 down to 0 (batch-1 path only; it lets successive
// steps traverse the weights in alternating order so the tail of one step's stream is still in
// L1 when the next step starts). AVX2+FMA only: call when cpu_has_avx2_fma().
void rnn_block_gemm(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p, const RnnBlock& blk,
                    bool reverse_k, float* out, int64_t ldo);

// Portable reference of rnn_block_gemm (no AVX2), same contract (reverse_k ignored).
void rnn_block_gemm_scalar(const float* h, int64_t ldh, int64_t rows, const PackedRnnR& p,
                           const RnnBlock& blk, float* out, int64_t ldo);

}  // namespace ts::engine::cpu
