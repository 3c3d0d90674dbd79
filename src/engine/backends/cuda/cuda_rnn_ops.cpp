// GRU and LSTM nodes on the device (ONNX semantics as the CPU backend: forward direction,
// layout 0, default activations, GRU linear_before_reset 0 or 1, LSTM peepholes,
// sequence_lens, initial_h/initial_c). PERF NOTE: the input projection of all T steps is ONE
// cuBLASLt GEMM ([T*B, I] · Wᵀ + bias, bias fused as the epilogue) into scratch; then the
// persistent recurrence kernel (cuda_rnn.cu) runs all T steps in one launch.
// FP16 / BF16: W and R are stored in fp16 / bf16 (fp32 accumulate, fp32 gate math and state).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "engine/backends/cuda/cuda_gemm.h"
#include "engine/backends/cuda/cuda_lstm_wave.h"
#include "engine/backends/cuda/cuda_ops.h"
#include "engine/backends/cuda/cuda_rnn.h"
#include "engine/backends/cuda/cuda_rnn_cluster.h"
#include "engine/backends/cuda/cuda_rnn_steps.h"
#include "engine/backends/cuda/cuda_rnn_wave.h"
#include "engine/backends/cuda/cuda_rnn_wave_f32.h"
#include "engine/ir/rnn_weights.h"

namespace ts::engine::cuda {
namespace {

// `bytes` rounded up to the 256-byte alignment of a scratch request.
size_t scratch_round(size_t bytes) { return (bytes + 255) & ~size_t(255); }

// X of a GRU/LSTM (or a GRUStack/LSTMStack): f32 [seq, batch, input].
Status check_rnn_x(const DevTensor* x, int64_t input) {
  if (!x) return bad_input("missing X");
  if (x->dtype != DType::kF32) return bad_input("X must be f32");
  if (x->dims.size() != 3 || x->dims[2] != input) {
    return bad_input("X " + dims_str(x->dims) + " must be [seq, batch, " + std::to_string(input) + "]");
  }
  return Status::ok();
}

// The env a GRUStack/LSTMStack hands one of its layers for "layers:<tactic>": the tensor `placed`
// (layer 1's Y, or layer 2's Y_h for the head) lives at `placed_at`, the layer's own scratch
// requests are handed out one after the other from `region` (the stack's one scratch slot,
// requested at its full size before the layers run, so that no request moves it); other tensors
// come from the parent. PERF NOTE (memory): each request used to take a new parent slot the size
// of layer 1's Y plus the request, and the region was sized for the gates of all steps whether
// a layer used them or not (a fused mma_x layer does not). Sizing both to what is requested cut
// the context's memory at batch 4096 severalfold for the GRU and substantially for the LSTM at
// the same speed (bench/results/engine-cuda-h200-20261130-2334-mem.json; history row 528ddf3).
class StackEnv final : public CudaRunEnv {
 public:
  StackEnv(CudaRunEnv* parent, const DevTensor* placed, void* placed_at, void* region, size_t region_bytes)
      : parent_(parent), region_(static_cast<uint8_t*>(region)), region_bytes_(region_bytes) {
    place(placed, placed_at);
  }
  // One more tensor placed at `at` (the LSTM's time chunks: layer 1's Y and both layers' states).
  void place(const DevTensor* t, void* at) {
    if (t && placed_n_ < kMaxPlaced) placed_[placed_n_++] = {t, at};
  }
  Status alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) override {
    for (size_t i = 0; i < placed_n_; ++i) {
      if (&t != placed_[i].first) continue;
      t.dtype = dtype;
      t.dims.assign(dims.begin(), dims.end());
      t.data = placed_[i].second;
      return Status::ok();
    }
    return parent_->alloc(t, dtype, dims);
  }
  Result<void*> scratch(size_t bytes) override {
    const size_t at = used_;
    used_ += scratch_round(bytes);
    if (used_ > region_bytes_) {
      return Status(StatusCode::kInternal, "rnn stack layer scratch: " + std::to_string(used_) + " bytes requested, " +
                                               std::to_string(region_bytes_) + " reserved");
    }
    return static_cast<void*>(region_ + at);
  }
  size_t lt_workspace_limit() const override { return parent_->lt_workspace_limit(); }
  Result<LtWorkspace> lt_workspace(size_t bytes) override { return parent_->lt_workspace(bytes); }

 private:
  static constexpr size_t kMaxPlaced = 4;
  CudaRunEnv* parent_;
  std::pair<const DevTensor*, void*> placed_[kMaxPlaced] = {};
  size_t placed_n_ = 0;
  uint8_t* region_;
  size_t region_bytes_;
  size_t used_ = 0;
};

class RnnKernel final : public CudaKernel {
 public:
  RnnKernel(bool lstm, bool lbr, int64_t hidden, int64_t input, int max_ks, bool rows1, bool regs, bool mma, bool mma_x,
            bool mma_unroll)
      : lstm_(lstm),
        lbr_(lbr),
        h_(hidden),
        i_(input),
        max_ks_(max_ks),
        rows1_(rows1),
        regs_(regs),
        mma_(mma || mma_x),
        mma_x_(mma_x),
        mma_unroll_(mma_unroll) {}
  // Tactic "gemm_steps" (before init()): GRU linear_before_reset 1 and LSTM, one GEMM h_{t-1}·Rᵀ
  // per step (FP16/BF16: h cast to 16 bits for it, fp32 accumulate) and the cell kernel
  // (cuda_rnn_steps.h); elsewhere (GRU linear_before_reset 0, sequence_lens) the persistent_ks4
  // kernel.
  void use_gemm_steps() { gemm_steps_ = true; }
  // Tactic "cluster<ctas>" (before init()): the recurrence over a cluster of `ctas` CTAs
  // (cuda_rnn_cluster.h) where rnn_cluster_runnable(), else the persistent_ks4 kernel.
  void use_cluster(int ctas) { cluster_ = ctas; }

  // X, sequence_lens, initial_h, initial_c are read on the device; W, R, B, P were packed.
  bool reads_input(size_t i) const override { return i == 0 || i == 4 || i == 5 || i == 6; }
  int64_t weight_bytes() const override {
    return proj_->weight_bytes() +
           int64_t(r_.bytes() + r_mma_.bytes() + w_mma_.bytes() + in_bias_.bytes() + rbh_.bytes() + peep_.bytes() +
                   r_cluster_.bytes()) +
           (r_gemm_ ? r_gemm_->weight_bytes() : 0);
  }

  Status init(const Graph& g, const Node& n, CudaMath p) {
    const int64_t ng = lstm_ ? 4 : 3, h = h_;
    const std::vector<float> bias = rnn_bias(g, n, ng, h);
    const std::vector<float> in_bias = rnn_input_bias(bias, ng, h, lbr_);
    auto proj = LtGemm::create(g.value(n.inputs[1]).as<float>(), i_, ng * h, true, in_bias.data(), CudaAct::kNone, p);
    if (!proj) return proj.status();
    proj_ = std::move(proj).value();
    // Rᵀ as [k pair][gate][unit][2]: thread `unit` reads one pair of consecutive k per load,
    // neighbouring threads neighbouring pairs (cuda_rnn.cu).
    const float* r = g.value(n.inputs[2]).as<float>();
    const int64_t hp = (h + 1) & ~int64_t(1);
    const size_t elems = size_t(hp * ng * h);
    std::vector<float> rt(elems, 0.0f);
    for (int64_t q = 0; q < ng * h; ++q)
      for (int64_t k = 0; k < h; ++k) rt[size_t(((k / 2) * ng * h + q) * 2 + k % 2)] = r[q * h + k];
    r_half_ = p == CudaMath::kFP16;
    if (r_half_) {
      std::vector<__half> rh(elems);
      for (size_t i = 0; i < elems; ++i) rh[i] = __float2half_rn(rt[i]);
      TS_RETURN_IF_ERROR(r_.upload(rh.data(), elems * sizeof(__half)));
    } else if (p == CudaMath::kBF16) {
      r_bf16_ = true;
      std::vector<__nv_bfloat16> rb(elems);
      for (size_t i = 0; i < elems; ++i) rb[i] = __float2bfloat16_rn(rt[i]);
      TS_RETURN_IF_ERROR(r_.upload(rb.data(), elems * sizeof(__nv_bfloat16)));
    } else {
      TS_RETURN_IF_ERROR(r_.upload(rt.data(), elems * sizeof(float)));
    }
    // Tactics "mma" and "regs_b1" (above its batch) run the tensor-core kernel: R packed as its
    // B fragments.
    if ((mma_ || regs_) && rnn_mma_packable(int(h), r_half_ || r_bf16_)) {
      std::vector<uint32_t> frag = rnn_mma_pack(r, int(ng), int(h), int(h), r_bf16_);
      TS_RETURN_IF_ERROR(r_mma_.upload(frag.data(), frag.size() * sizeof(uint32_t)));
      if (mma_x_ && i_ <= kRnnMmaMaxInput) {  // and W, with the input-side bias, for "mma_x"
        std::vector<uint32_t> wf = rnn_mma_pack(g.value(n.inputs[1]).as<float>(), int(ng), int(h), int(i_), r_bf16_);
        TS_RETURN_IF_ERROR(w_mma_.upload(wf.data(), wf.size() * sizeof(uint32_t)));
        TS_RETURN_IF_ERROR(in_bias_.upload(in_bias.data(), in_bias.size() * sizeof(float)));
      }
    }
    if (lbr_) TS_RETURN_IF_ERROR(rbh_.upload(bias.data() + 5 * h, size_t(h) * sizeof(float)));
    if (lstm_ && n.inputs.size() > 7 && n.inputs[7] != kNoValue) {
      TS_RETURN_IF_ERROR(peep_.upload(g.value(n.inputs[7]).as<float>(), size_t(3 * h) * sizeof(float)));
    }
    if (cluster_ > 0 && (lstm_ || lbr_)) {
      // Packed for the most rows per cluster: the slices are the same at every row count.
      const RnnClusterShape cs = rnn_cluster_shape(int(h), int(ng), r_half_ || r_bf16_ ? 2 : 4, cluster_,
                                                   kRnnClusterMaxRows, rnn_cluster_smem_limit());
      if (cs.ctas > 0) {
        std::vector<uint8_t> rc = rnn_cluster_pack(r, int(ng), int(h), cs, r_half_, r_bf16_);
        TS_RETURN_IF_ERROR(r_cluster_.upload(rc.data(), rc.size()));
      }
    }
    if (gemm_steps_ && (lstm_ || lbr_)) {
      auto rg = LtGemm::create(r, h, ng * h, true, nullptr, CudaAct::kNone, p);
      if (!rg) return rg.status();
      r_gemm_ = std::move(rg).value();
    }
    return rnn_prepare_device();
  }

  Status launch(const CudaArgs& a) const override {
    const DevTensor* x = a.input(0);
    TS_RETURN_IF_ERROR(check_rnn_x(x, i_));
    const int64_t t_len = x->dims[0], b = x->dims[1], h = h_, gh = (lstm_ ? 4 : 3) * h;
    if (t_len > INT32_MAX || b > INT32_MAX) return bad_input("X is too large");
    const DevTensor* lens = a.input(4);
    const DevTensor* h0 = a.input(5);
    const DevTensor* c0 = lstm_ ? a.input(6) : nullptr;
    if (lens &&
        (lens->dims.size() != 1 || lens->dims[0] != b || (lens->dtype != DType::kI32 && lens->dtype != DType::kI64))) {
      return bad_input("sequence_lens must be int32/int64 [" + std::to_string(b) + "], got " + dims_str(lens->dims));
    }
    auto state_ok = [&](const DevTensor* s, const char* what) -> Status {
      if (!s) return Status::ok();
      if (s->dtype != DType::kF32 || s->dims.size() != 3 || s->dims[0] != 1 || s->dims[1] != b || s->dims[2] != h) {
        return bad_input(std::string(what) + " must be f32 [1, " + std::to_string(b) + ", " + std::to_string(h) + "], got " +
                         dims_str(s->dims));
      }
      return Status::ok();
    };
    TS_RETURN_IF_ERROR(state_ok(h0, "initial_h"));
    TS_RETURN_IF_ERROR(state_ok(c0, "initial_c"));

    RnnStepParams p = params(t_len, b);
    p.h0 = h0 ? h0->as<float>() : nullptr;
    p.c0 = c0 ? c0->as<float>() : nullptr;
    p.lens = lens ? lens->data : nullptr;
    p.lens_i64 = lens && lens->dtype == DType::kI64;
    DevTensor* y = a.out.size() > 0 ? a.out[0] : nullptr;
    DevTensor* yh = a.out.size() > 1 ? a.out[1] : nullptr;
    DevTensor* yc = lstm_ && a.out.size() > 2 ? a.out[2] : nullptr;
    if (y) {
      int64_t yd[4] = {t_len, 1, b, h};
      TS_RETURN_IF_ERROR(a.env->alloc(*y, DType::kF32, yd));
      p.y = y->as<float>();
    }
    int64_t sd[3] = {1, b, h};
    if (yh) {
      TS_RETURN_IF_ERROR(a.env->alloc(*yh, DType::kF32, sd));
      p.yh = yh->as<float>();
    }
    if (yc) {
      TS_RETURN_IF_ERROR(a.env->alloc(*yc, DType::kF32, sd));
      p.yc = yc->as<float>();
    }
    if (r_gemm_ && !lens) return launch_gemm_steps(a, p, x->as<float>(), t_len, b);
    if (fuse_projection(p, x->as<float>())) return launch_rnn_mma(p, a.stream);
    // sequence_lens: the kernels compare each row's length with their own step index, so the
    // steps run in one launch.
    const int64_t tc = lens ? t_len : gate_steps(t_len, b);
    if (tc < t_len) return launch_gate_chunks(a, p, x->as<float>(), t_len, b, tc);
    auto gx = a.env->scratch(size_t(t_len * b * gh) * sizeof(float));
    if (!gx) return gx.status();
    float* gxp = static_cast<float*>(gx.value());
    TS_RETURN_IF_ERROR(proj_->run(a, x->as<float>(), t_len * b, gxp));

    p.gx = gxp;
    return launch_rnn_recurrence(p, a.stream);
  }

  // The scratch launch() requests for X [t_len, b, I] at `x` (only its alignment matters; nullptr
  // for any 256-byte aligned address), each request rounded up to 256 bytes: none where the input projection runs inside the
  // recurrence kernel; else the gates x·Wᵀ + b of all steps (fp32 [t_len·b, G·H]) and, in FP16/BF16, X cast for that GEMM.
  // Above gate_chunk_bytes the steps run in time chunks (launch_gate_chunks; no sequence_lens
  // assumed: a GRUStack/LSTMStack's layers have none).
  size_t scratch_bytes(const float* x, int64_t t_len, int64_t b) const {
    if (r_gemm_) return gemm_steps_scratch(t_len, b);
    RnnStepParams p = params(t_len, b);
    if (fuse_projection(p, x)) return 0;
    const int64_t tc = gate_steps(t_len, b);
    const int64_t m = tc * b;
    const size_t chunk_states = tc < t_len ? 4 * scratch_round(size_t(b * h_) * sizeof(float)) : 0;
    return scratch_round(size_t(m * (lstm_ ? 4 : 3) * h_) * sizeof(float)) + scratch_round(proj_->scratch_bytes(m)) +
           chunk_states;
  }

  // PERF NOTE (memory): the gates x·Wᵀ + b of all T steps (fp32 [T·B, G·H]) are the largest
  // thing a layer holds where the projection is a GEMM (FP32 plans; LSTM layer 2 in FP16): 377
  // MB for a GRU layer and 503 MB for an LSTM layer at batch 4096, T=60, against PyTorch's 285 /
  // 605 MiB for the whole FP32 model. Above this the steps run in equal time chunks: per chunk
  // one GEMM into the same scratch, then the recurrence from the state the previous chunk left
  // (ping-pong state buffers), Y written at the chunk's steps. Each boundary costs one more GEMM
  // and recurrence launch (the recurrence reloads R): a few µs against an FP32 layer's
  // milliseconds at that batch. A GRUStack/LSTMStack sets its own (larger) budget: it chunks its layers itself
  // (kLayersChunkBytes) and a second level of chunks would only cost launches.
  static constexpr size_t kGateChunkBytes = size_t(64) << 20;
  void set_gate_chunk_bytes(size_t bytes) { gate_chunk_bytes_ = bytes; }

  // Steps per chunk for X [t_len, b, ·]: t_len unless the gates of all steps exceed
  // gate_chunk_bytes_, then equal chunks under it (at least one step).
  int64_t gate_steps(int64_t t_len, int64_t b) const {
    const size_t per_step = size_t(b * (lstm_ ? 4 : 3) * h_) * sizeof(float);
    const size_t total = per_step * size_t(t_len);
    if (total <= gate_chunk_bytes_ || t_len <= 1) return t_len;
    const int64_t chunks = int64_t((total + gate_chunk_bytes_ - 1) / gate_chunk_bytes_);
    return std::max<int64_t>(1, (t_len + chunks - 1) / chunks);
  }

 private:
  // The steps in chunks of tc (see kGateChunkBytes); p as launch() set it for all t_len steps
  // (its tensors, and the kernel fuse_projection() chose).
  Status launch_gate_chunks(const CudaArgs& a, const RnnStepParams& p, const float* x, int64_t t_len, int64_t b,
                            int64_t tc) const {
    const int64_t gh = (lstm_ ? 4 : 3) * h_;
    const size_t gx_bytes = scratch_round(size_t(tc * b * gh) * sizeof(float));
    const size_t proj_bytes = scratch_round(proj_->scratch_bytes(tc * b));
    const size_t st_bytes = scratch_round(size_t(b * h_) * sizeof(float));
    auto base = a.env->scratch(gx_bytes + proj_bytes + 4 * st_bytes);  // one request: see StackEnv
    if (!base) return base.status();
    uint8_t* at = static_cast<uint8_t*>(base.value());
    float* gxp = reinterpret_cast<float*>(at);
    uint8_t* proj_region = at + gx_bytes;
    auto state = [&](int c_state, int buf) {
      return reinterpret_cast<float*>(at + gx_bytes + proj_bytes + size_t(c_state * 2 + buf) * st_bytes);
    };
    for (int64_t t0 = 0, c = 0; t0 < t_len; t0 += tc, ++c) {
      const int64_t tl = std::min(tc, t_len - t0);
      const int cur = int(c & 1), prev = cur ^ 1;
      const bool last = t0 + tl == t_len;
      StackEnv env(a.env, nullptr, nullptr, proj_region, proj_bytes);
      CudaArgs ac = a;
      ac.env = &env;
      TS_RETURN_IF_ERROR(proj_->run(ac, x + t0 * b * i_, tl * b, gxp));
      RnnStepParams q = p;
      q.gx = gxp;
      q.t_len = int(tl);
      q.y = p.y ? p.y + t0 * b * h_ : nullptr;
      q.h0 = c == 0 ? p.h0 : state(0, prev);
      q.c0 = c == 0 ? p.c0 : (lstm_ ? state(1, prev) : nullptr);
      q.yh = last ? p.yh : state(0, cur);
      q.yc = last ? p.yc : (lstm_ ? state(1, cur) : nullptr);
      TS_RETURN_IF_ERROR(launch_rnn_recurrence(q, a.stream));
    }
    return Status::ok();
  }

  // "gemm_steps": one request — the gates of gate_steps() steps, the projection's scratch, h·Rᵀ
  // of one step, h and (LSTM) c ping-pong.
  size_t gemm_steps_scratch(int64_t t_len, int64_t b) const {
    const int64_t gh = (lstm_ ? 4 : 3) * h_, tc = gate_steps(t_len, b);
    return scratch_round(size_t(tc * b * gh) * sizeof(float)) + scratch_round(proj_->scratch_bytes(tc * b)) +
           scratch_round(r_gemm_->scratch_bytes(b)) + scratch_round(size_t(b * gh) * sizeof(float)) +
           4 * scratch_round(size_t(b * h_) * sizeof(float));
  }

  // "gemm_steps": per chunk of gate_steps() steps the input projection (one GEMM), then per step
  // gh = h_{t-1}·Rᵀ (one GEMM over the batch) and the cell (Y, the next h and c). p as launch()
  // set it (tensors; no sequence_lens).
  Status launch_gemm_steps(const CudaArgs& a, const RnnStepParams& p, const float* x, int64_t t_len, int64_t b) const {
    const int64_t gh = (lstm_ ? 4 : 3) * h_, tc = gate_steps(t_len, b);
    const size_t gx_bytes = scratch_round(size_t(tc * b * gh) * sizeof(float));
    // The projection's scratch, then h cast to 16 bits for h·Rᵀ (FP16/BF16; none in FP32), each
    // handed out afresh per GEMM (a StackEnv counts what it hands out).
    const size_t proj_bytes = scratch_round(proj_->scratch_bytes(tc * b)) + scratch_round(r_gemm_->scratch_bytes(b));
    const size_t gh_bytes = scratch_round(size_t(b * gh) * sizeof(float));
    const size_t st_bytes = scratch_round(size_t(b * h_) * sizeof(float));
    auto base = a.env->scratch(gx_bytes + proj_bytes + gh_bytes + 4 * st_bytes);
    if (!base) return base.status();
    uint8_t* at = static_cast<uint8_t*>(base.value());
    float* gxp = reinterpret_cast<float*>(at);
    uint8_t* proj_region = at + gx_bytes;
    float* ghp = reinterpret_cast<float*>(at + gx_bytes + proj_bytes);
    auto state = [&](int c_state, int buf) {
      return reinterpret_cast<float*>(at + gx_bytes + proj_bytes + gh_bytes + size_t(c_state * 2 + buf) * st_bytes);
    };
    if (!p.h0) TS_CUDA(cudaMemsetAsync(state(0, 0), 0, size_t(b * h_) * sizeof(float), a.stream));
    if (lstm_ && !p.c0) TS_CUDA(cudaMemsetAsync(state(1, 0), 0, size_t(b * h_) * sizeof(float), a.stream));
    int cur = 0;
    for (int64_t t0 = 0; t0 < t_len; t0 += tc) {
      const int64_t tl = std::min(tc, t_len - t0);
      StackEnv env(a.env, nullptr, nullptr, proj_region, proj_bytes);
      CudaArgs ac = a;
      ac.env = &env;
      TS_RETURN_IF_ERROR(proj_->run(ac, x + t0 * b * i_, tl * b, gxp));
      for (int64_t s = 0; s < tl; ++s) {
        const int64_t t = t0 + s;
        RnnCellStepParams c;
        c.h_prev = t == 0 && p.h0 ? p.h0 : state(0, cur);
        c.c_prev = lstm_ ? (t == 0 && p.c0 ? p.c0 : state(1, cur)) : nullptr;
        StackEnv step_env(a.env, nullptr, nullptr, proj_region, proj_bytes);
        CudaArgs as = a;
        as.env = &step_env;
        TS_RETURN_IF_ERROR(r_gemm_->run(as, c.h_prev, b, ghp));
        c.gx = gxp + s * b * gh;
        c.gh = ghp;
        c.h_next = state(0, cur ^ 1);
        c.c_next = lstm_ ? state(1, cur ^ 1) : nullptr;
        c.y = p.y ? p.y + t * b * h_ : nullptr;
        c.yh = t + 1 == t_len ? p.yh : nullptr;
        c.yc = t + 1 == t_len ? p.yc : nullptr;
        c.rbh = p.rbh;
        c.peep = p.peep;
        c.batch = int(b);
        c.hidden = int(h_);
        c.lstm = lstm_;
        TS_RETURN_IF_ERROR(launch_rnn_cell_step(c, a.stream));
        cur ^= 1;
      }
    }
    return Status::ok();
  }

  // What decides the kernel, for X [t_len, b, I] (launch() adds the tensors).
  RnnStepParams params(int64_t t_len, int64_t b) const {
    RnnStepParams p;
    p.r = r_.get();
    p.r_half = r_half_;
    p.r_bf16 = r_bf16_;
    p.rbh = lbr_ ? rbh_.as<float>() : nullptr;
    p.peep = peep_.get() ? peep_.as<float>() : nullptr;
    p.t_len = int(t_len);
    p.batch = int(b);
    p.hidden = int(h_);
    p.lstm = lstm_;
    p.lbr = lbr_;
    p.max_ks = max_ks_;
    p.rows1 = rows1_;
    p.regs = regs_;
    p.mma = mma_;
    p.r_mma = r_mma_.get();
    p.cluster = r_cluster_.get() ? cluster_ : 0;
    p.r_cluster = r_cluster_.get();
    return p;
  }

  // Tactics "mma_x"/"mma_x2": true where the input projection runs inside the mma kernel on X at
  // `x` (p set for launch_rnn_mma); at small batch p is switched to the regs_b1 kernel
  // (cuda_rnn.h). False: the projection is a GEMM into scratch first.
  bool fuse_projection(RnnStepParams& p, const float* x) const {
    if (!mma_x_) return false;
    if (rnn_regs_preferred(p)) {
      p.regs = true;
      return false;
    }
    p.x = x;
    p.w_mma = w_mma_.get();
    p.in_bias = in_bias_.get() ? in_bias_.as<float>() : nullptr;
    p.input = int(i_);
    p.mma_unroll = mma_unroll_;
    if (rnn_mma_fused_supported(p)) return true;
    p.x = nullptr;
    return false;
  }

  bool lstm_, lbr_;
  int64_t h_, i_;
  int max_ks_;
  bool rows1_, regs_, mma_, mma_x_, mma_unroll_;
  std::unique_ptr<LtGemm> proj_;
  DeviceBuffer r_, r_mma_, w_mma_, in_bias_, rbh_, peep_;
  bool r_half_ = false;
  bool r_bf16_ = false;
  size_t gate_chunk_bytes_ = kGateChunkBytes;
  bool gemm_steps_ = false;
  std::unique_ptr<LtGemm> r_gemm_;  // "gemm_steps": Rᵀ for h·Rᵀ
  int cluster_ = 0;                 // "cluster<C>": C
  DeviceBuffer r_cluster_;          // "cluster<C>": R packed by rnn_cluster_pack, or empty
};

// The per-layer tactics, each also offered for both layers of a GRUStack/LSTMStack as
// "layers:<tactic>".
const std::vector<std::string>& rnn_tactics() {
  static const std::vector<std::string> t{
      "persistent_ks4", "persistent_ks8", "persistent_ks4_rows1", "persistent_ks8_rows1", "regs_b1", "mma", "mma_x",
      "mma_x2",         "gemm_steps",           "cluster2",             "cluster4",             "cluster8",
      "cluster16"};
  return t;
}
Result<CudaKernelPtr> make_rnn(const Graph& g, const Node& n, bool lstm, CudaMath p, const std::string& tactic);
Status check_rnn(const Graph& g, const Node& n, bool lstm);

// A GRUStack's (LSTMStack's) layers as the GRU (LSTM) nodes they were fused from (X, W, R, B
// each; the X of layers after the first is a placeholder: their input is the previous Y at run time).
std::vector<Node> rnn_stack_layers(const Node& n, bool lstm) {
  const RnnStackLayout lay = rnn_stack_layout(n);
  std::vector<Node> layers(size_t(lay.layers));
  for (size_t l = 0; l < layers.size(); ++l) {
    Node& ln = layers[l];
    ln.op = lstm ? "LSTM" : "GRU";
    ln.name = n.name + "/layer" + std::to_string(l + 1);
    ln.attrs = n.attrs;
    ln.attrs.erase("initial_states");
    const size_t w = lay.w(int64_t(l));
    ln.inputs = {n.inputs[0], n.inputs[w], n.inputs[w + 1], n.inputs[w + 2]};
  }
  return layers;
}

// The hidden size the "wave" tactics run every layer of a stack at: the 16-bit wavefronts' 64 or
// 128, the FP32 wavefront's 128; above 128 the hidden size itself (no wavefront there).
int64_t stack_wave_width(int64_t h, bool half) {
  if (half && h <= 64) return 64;
  return h <= 128 ? 128 : h;
}

// M [G·h][k] (ONNX W or R of one direction) as [G·hp][kp]: row g·hp + u, column j; zeros in the
// added rows and columns.
std::vector<float> pad_gate_matrix(const float* m, int64_t gates, int64_t h, int64_t k, int64_t hp, int64_t kp) {
  std::vector<float> out(size_t(gates * hp * kp), 0.0f);
  for (int64_t q = 0; q < gates; ++q)
    for (int64_t u = 0; u < h; ++u)
      for (int64_t j = 0; j < k; ++j) out[size_t((q * hp + u) * kp + j)] = m[(q * h + u) * k + j];
  return out;
}

// B [2·G·h] (Wb then Rb, per gate) as [2·G·hp], zeros in the added units.
std::vector<float> pad_gate_bias(const std::vector<float>& b, int64_t gates, int64_t h, int64_t hp) {
  std::vector<float> out(size_t(2 * gates * hp), 0.0f);
  for (int64_t blk = 0; blk < 2 * gates; ++blk)
    for (int64_t u = 0; u < h; ++u) out[size_t(blk * hp + u)] = b[size_t(blk * h + u)];
  return out;
}

ValueId add_f32_constant(Graph& g, const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& data) {
  Value v;
  v.name = name;
  v.dtype = DType::kF32;
  v.shape = shape_of(dims);
  v.rank_known = true;
  v.is_constant = true;
  v.data.resize(data.size() * sizeof(float));
  std::memcpy(v.data.data(), data.data(), v.data.size());
  return g.add_value(std::move(v));
}

// GRUStack / LSTMStack (passes/fuse_rnn_stack.cpp): N ≥ 1 GRU (LSTM) layers, each layer's Y
// feeding the next (inputs X, then W, R, B per layer, then the optional head; outputs the last
// layer's Y, Y_h (, Y_c), or the head's [B, N]).
//
// Tactic "wave": the first two layers in one wavefront launch (GRU: cuda_rnn_wave.cu where
// rnn_wave_supported() and batch ≤ kRnnWaveMaxBatch; LSTM: cuda_lstm_wave.cu where
// lstm_wave_supported() and batch ≤ kLstmWaveMaxBatch; FP32: cuda_rnn_wave_f32.cu), the layers
// after them (and all layers where no wavefront runs) one by one with per-layer tactic "mma_x2";
// LSTM "wave3": as "wave" with three CTAs per cluster where lstm_wave3_shape_supported();
// "wave_split": as "wave", each recurrence over two CTAs up to kRnnWaveSplitMaxBatch (GRU) /
// kLstmWaveSplitMaxBatch (LSTM) rows; "layers:<t>": every layer with per-layer tactic t, as the
// graph ran before the fusion.
//
// The wave tactics run every layer at the wavefronts' hidden size (stack_wave_width: 64 or 128),
// the weights zero-padded: a padded unit's gates see zero pre-activations, so from a zero state
// its h stays exactly 0 (GRU: h' = ½·h + ½·tanh(0); LSTM: c' = ½·c + ½·tanh(0), h' = ½·tanh(c')),
// and its zero columns add nothing to the real units — the result is the unpadded stack's. The
// outputs are copied without the padding where the node has them (the head reads the padded h
// with zero weights). PERF NOTE: the wavefronts were tuned at 64 and 128 only; a 3-layer GRU at
// hidden 80 ran its layers one by one (0.95–1.09× PyTorch at batch 1, issue 26,
// bench/results/shape-sweep-h200-20261202-1145.json); the builder's timing still chooses
// "layers:<t>" (unpadded) where that is faster.
class RnnStackKernel final : public CudaKernel {
 public:
  explicit RnnStackKernel(bool lstm) : lstm_(lstm) {}
  // X and the layers' initial states are read on the device; the weights were packed.
  bool reads_input(size_t i) const override {
    return i == 0 || (layout_.states && i >= layout_.initial_h(0) && i < layout_.head_w());
  }
  int64_t weight_bytes() const override {
    int64_t s = int64_t(frags_.bytes() + bias_.bytes() + head_w_.bytes() + head_b_.bytes() + f32_w_.bytes() + f32_bias_.bytes()) +
                (f32_proj_ ? f32_proj_->weight_bytes() : 0);
    for (const auto& l : layers_) s += l->weight_bytes();
    return s;
  }

  Status init(const Graph& g, const Node& n, CudaMath p, const std::string& tactic) {
    layout_ = rnn_stack_layout(n);
    h_ = n.attr_i("hidden_size", 0);
    i_ = g.value(n.inputs[1]).const_dims()[2];
    const bool lbr = n.attr_i("linear_before_reset", 0) != 0;
    wave_ = tactic == "wave" || tactic == "wave3" || tactic == "wave_split";
    wave3_ = tactic == "wave3";
    if (wave3_ && !lstm_) return Status(StatusCode::kInvalidArgument, "GRUStack has no tactic wave3 (LSTMStack only)");
    split_ = tactic == "wave_split";
    hp_ = wave_ ? stack_wave_width(h_, cuda_math_16bit(p)) : h_;
    const std::string per_layer = wave_ ? "mma_x2" : tactic.substr(tactic.find(':') + 1);
    const int64_t ng = lstm_ ? 4 : 3;
    // The layers at width hp_ (their own graph of padded constants; the kernels pack them at init).
    Graph lg;
    Value xv;
    xv.name = "x";
    const ValueId x_id = lg.add_value(std::move(xv));
    std::vector<Node> ln = rnn_stack_layers(n, lstm_);
    for (size_t l = 0; l < ln.size(); ++l) {
      const int64_t k = g.value(ln[l].inputs[1]).const_dims()[2], kp = l == 0 ? k : hp_;
      const std::vector<float> b = rnn_bias(g, ln[l], ng, h_);
      const std::string pre = n.name + "/layer" + std::to_string(l + 1);
      ln[l].attrs["hidden_size"] = hp_;
      ln[l].inputs = {x_id,
                      add_f32_constant(lg, pre + "/W", {1, ng * hp_, kp},
                                       pad_gate_matrix(g.value(ln[l].inputs[1]).as<float>(), ng, h_, k, hp_, kp)),
                      add_f32_constant(lg, pre + "/R", {1, ng * hp_, hp_},
                                       pad_gate_matrix(g.value(ln[l].inputs[2]).as<float>(), ng, h_, h_, hp_, hp_)),
                      add_f32_constant(lg, pre + "/B", {1, 2 * ng * hp_}, pad_gate_bias(b, ng, h_, hp_))};
      auto kl = make_rnn(lg, ln[l], lstm_, p, per_layer);
      if (!kl) return kl.status();
      layers_.emplace_back(static_cast<RnnKernel*>(kl.value().release()));  // make_rnn makes an RnnKernel
      layers_.back()->set_gate_chunk_bytes(kLayersChunkBytes);  // the stack chunks its layers' steps itself
    }
    const bool bf16 = p == CudaMath::kBF16;
    auto w_of = [&](size_t l, int k) { return lg.value(ln[l].inputs[size_t(k)]).as<float>(); };
    if (wave_ && ln.size() >= 2 && lstm_ && cuda_math_16bit(p) && lstm_wave_shape_supported(int(hp_), int(i_))) {
      std::vector<uint32_t> f = lstm_wave_pack(w_of(0, 1), w_of(0, 2), w_of(1, 1), w_of(1, 2), int(hp_), int(i_), bf16);
      TS_RETURN_IF_ERROR(frags_.upload(f.data(), f.size() * sizeof(uint32_t)));
      std::vector<float> b = lstm_wave_bias(rnn_bias(lg, ln[0], 4, hp_), rnn_bias(lg, ln[1], 4, hp_), int(hp_));
      TS_RETURN_IF_ERROR(bias_.upload(b.data(), b.size() * sizeof(float)));
      bf16_ = bf16;
    }
    if (wave_ && ln.size() >= 2 && !lstm_ && cuda_math_16bit(p) && rnn_wave_shape_supported(int(hp_), int(i_), lbr)) {
      std::vector<uint32_t> f = rnn_wave_pack(w_of(0, 1), w_of(0, 2), w_of(1, 1), w_of(1, 2), int(hp_), int(i_), bf16);
      TS_RETURN_IF_ERROR(frags_.upload(f.data(), f.size() * sizeof(uint32_t)));
      std::vector<float> b = rnn_wave_bias(rnn_bias(lg, ln[0], 3, hp_), rnn_bias(lg, ln[1], 3, hp_), int(hp_));
      TS_RETURN_IF_ERROR(bias_.upload(b.data(), b.size() * sizeof(float)));
      bf16_ = bf16;
    }
    // FP32 plans: "wave" is the FP32 wavefront (cuda_rnn_wave_f32.h) where its shape applies: layer
    // 1's input projection as one GEMM (its own, so that X may be read batch-first), R1, W2, R2
    // packed for the six CTAs, layer 2's input bias and both layers' candidate-gate Rb.
    if (tactic == "wave" && ln.size() >= 2 && !cuda_math_16bit(p) && rnn_wave_f32_shape_supported(int(hp_), lstm_, lbr)) {
      const std::vector<float> b1 = rnn_bias(lg, ln[0], ng, hp_), b2 = rnn_bias(lg, ln[1], ng, hp_);
      const std::vector<float> in1 = rnn_input_bias(b1, ng, hp_, lbr), in2 = rnn_input_bias(b2, ng, hp_, lbr);
      auto proj = LtGemm::create(w_of(0, 1), i_, ng * hp_, true, in1.data(), CudaAct::kNone, p);
      if (!proj) return proj.status();
      f32_proj_ = std::move(proj).value();
      std::vector<float> w = rnn_wave_f32_pack(w_of(0, 2), w_of(1, 1), w_of(1, 2), int(ng), int(hp_));
      TS_RETURN_IF_ERROR(f32_w_.upload(w.data(), w.size() * sizeof(float)));
      std::vector<float> bias(in2);  // [G·H] layer 2's input bias, then (GRU) Rb of the candidate gate of each layer
      if (!lstm_) {
        bias.insert(bias.end(), b1.begin() + 5 * hp_, b1.end());
        bias.insert(bias.end(), b2.begin() + 5 * hp_, b2.end());
      }
      TS_RETURN_IF_ERROR(f32_bias_.upload(bias.data(), bias.size() * sizeof(float)));
    }
    return init_stack_io(g, n);
  }

  Status launch(const CudaArgs& a) const override {
    const DevTensor* x = a.input(0);
    if (x_batch_first_) {
      if (!x || x->dtype != DType::kF32 || x->dims.size() != 3 || x->dims[2] != i_) {
        return bad_input("X " + (x ? dims_str(x->dims) : std::string("(missing)")) + " must be f32 [batch, seq, " +
                         std::to_string(i_) + "]");
      }
    } else {
      TS_RETURN_IF_ERROR(check_rnn_x(x, i_));
    }
    const int64_t t_len = x->dims[x_batch_first_ ? 1 : 0], b = x->dims[x_batch_first_ ? 0 : 1];
    if (t_len > INT32_MAX || b > INT32_MAX) return bad_input("X is too large");
    if (layers_.size() >= 2 && !has_initial_state(a)) {  // the wavefronts start from zeros
      if (f32_proj_ && b <= kRnnWaveF32MaxBatch && rnn_wave_f32_supported(int(hp_), lstm_, true)) {
        return launch_wave(a, *x, t_len, b, Wave::kF32);
      }
      if (wave_ && frags_.get() && lstm_ && b <= kLstmWaveMaxBatch && lstm_wave_supported(int(hp_), int(i_))) {
        return launch_wave(a, *x, t_len, b, Wave::kLstm);
      }
      if (wave_ && frags_.get() && !lstm_ && b <= kRnnWaveMaxBatch && rnn_wave_supported(int(hp_), int(i_), true)) {
        return launch_wave(a, *x, t_len, b, Wave::kGru);
      }
    }
    const LayersInput in{x->as<float>(), i_, x_batch_first_};
    const int64_t tc = chunk_steps(in, 0, t_len, b);
    auto base = a.env->scratch(layers_scratch(in, 0, t_len, b, tc));
    if (!base) return base.status();
    return run_layers(a, static_cast<uint8_t*>(base.value()), in, 0, t_len, b, tc);
  }

 private:
  enum class Wave { kGru, kLstm, kF32 };

  // Layer l's initial_h / initial_c input (null where absent).
  const DevTensor* initial_state(const CudaArgs& a, int64_t l, bool c) const {
    if (!layout_.states) return nullptr;
    return a.input(c ? layout_.initial_c(l) : layout_.initial_h(l));
  }
  bool has_initial_state(const CudaArgs& a) const {
    for (int64_t l = 0; layout_.states && l < layout_.layers; ++l)
      if (initial_state(a, l, false) || (lstm_ && initial_state(a, l, true))) return true;
    return false;
  }
  // Bytes run_layers() takes for the initial states widened to hp_ (zeros in the added units).
  size_t padded_states_bytes(int64_t b) const {
    if (!layout_.states || hp_ == h_) return 0;
    return scratch_round(size_t(b * hp_) * sizeof(float)) * size_t(layout_.layers) * (lstm_ ? 2 : 1);
  }

  // What the layer loop reads: the node's X ([T, B, width], or [B, T, width] when batch_first)
  // or the wavefront's Y ([T, B, hp_]).
  struct LayersInput {
    const float* x;
    int64_t width;
    bool batch_first;
  };

  // The node's outputs (no head): Y [T, 1, B, H], Y_h, Y_c [1, B, H], each null where unused.
  DevTensor* out_y(const CudaArgs& a) const { return head_n_ == 0 && a.out.size() > 0 ? a.out[0] : nullptr; }
  DevTensor* out_yh(const CudaArgs& a) const { return head_n_ == 0 && a.out.size() > 1 ? a.out[1] : nullptr; }
  DevTensor* out_yc(const CudaArgs& a) const { return head_n_ == 0 && lstm_ && a.out.size() > 2 ? a.out[2] : nullptr; }

  // rows × h_ floats at `to` from rows × hp_ at `from` (the padding dropped).
  Status copy_unpadded(const float* from, float* to, int64_t rows, cudaStream_t s) const {
    StridedDims d;
    d.rank = 2;
    d.dims[0] = rows, d.dims[1] = h_;
    d.strides[0] = hp_, d.strides[1] = 1;
    return launch_strided_copy(from, to, d, int(sizeof(float)), s);
  }

  // The wavefront's head: its outputs bound to the node's [B, N].
  template <typename Params>
  Status bind_head(const CudaArgs& a, Params& p, int64_t b) const {
    const int64_t od[2] = {b, head_n_};
    TS_RETURN_IF_ERROR(a.env->alloc(*a.out[0], DType::kF32, od));
    p.head_w = head_w_.as<float>();
    p.head_b = head_b_.as<float>();
    p.head_out = a.out[0]->as<float>();
    p.head_n = int(head_n_);
    p.head_sigmoid = head_sigmoid_;
    return Status::ok();
  }

  // The first two layers as one wavefront, then the layers after them (run_layers) on its Y. The
  // wavefront writes the node's outputs itself where it is the whole stack and either has the
  // head or runs unpadded; else its Y (and states) go to scratch, for the next layers or to be
  // copied out without the padding. One scratch request for all of it.
  Status launch_wave(const CudaArgs& a, const DevTensor& x, int64_t t_len, int64_t b, Wave w) const {
    const bool rest = layers_.size() > 2;
    const bool direct = !rest && (head_n_ > 0 || hp_ == h_);
    DevTensor *y_out = out_y(a), *yh_out = out_yh(a), *yc_out = out_yc(a);
    const int64_t m = t_len * b, gh = (lstm_ ? 4 : 3) * hp_;
    const size_t gx_bytes = w == Wave::kF32 ? scratch_round(size_t(m * gh) * sizeof(float)) : 0;
    const size_t proj_bytes = w == Wave::kF32 ? scratch_round(f32_proj_->scratch_bytes(m)) : 0;
    const size_t y_bytes = rest || (!direct && y_out) ? scratch_round(size_t(m * hp_) * sizeof(float)) : 0;
    const size_t st_bytes = direct || rest ? 0 : scratch_round(size_t(b * hp_) * sizeof(float));
    uint8_t* yb = nullptr;  // the wavefront's Y where it is not the node's
    const LayersInput next{nullptr, hp_, false};
    const int64_t tc = rest ? chunk_steps(next, 2, t_len, b) : 0;
    const size_t layers_bytes = rest ? layers_scratch(next, 2, t_len, b, tc) : 0;
    const size_t total = gx_bytes + proj_bytes + y_bytes + 2 * st_bytes + layers_bytes;
    uint8_t* at = nullptr;
    if (total > 0) {
      auto base = a.env->scratch(total);
      if (!base) return base.status();
      at = static_cast<uint8_t*>(base.value());
    }
    yb = at + gx_bytes + proj_bytes;
    float* st_h = reinterpret_cast<float*>(yb + y_bytes);
    float* st_c = reinterpret_cast<float*>(yb + y_bytes + st_bytes);
    // Binds the wavefront's outputs and launches it.
    auto outputs = [&](auto& p) -> Status {
      if (direct && head_n_ > 0) return bind_head(a, p, b);
      if (direct) {  // unpadded: the node's own outputs
        const int64_t yd[4] = {t_len, 1, b, h_}, sd[3] = {1, b, h_};
        if (y_out) TS_RETURN_IF_ERROR(a.env->alloc(*y_out, DType::kF32, yd));
        if (yh_out) TS_RETURN_IF_ERROR(a.env->alloc(*yh_out, DType::kF32, sd));
        if (yc_out) TS_RETURN_IF_ERROR(a.env->alloc(*yc_out, DType::kF32, sd));
        p.y = y_out ? y_out->as<float>() : nullptr;
        p.yh = yh_out ? yh_out->as<float>() : nullptr;
        if constexpr (requires { p.yc; }) p.yc = yc_out ? yc_out->as<float>() : nullptr;
        return Status::ok();
      }
      p.y = y_bytes > 0 ? reinterpret_cast<float*>(yb) : nullptr;
      p.yh = !rest && yh_out ? st_h : nullptr;
      if constexpr (requires { p.yc; }) p.yc = !rest && yc_out ? st_c : nullptr;
      return Status::ok();
    };
    if (w == Wave::kGru) {
      RnnWaveParams p;
      p.x = x.as<float>();
      p.frags = frags_.as<uint32_t>();
      p.bias = bias_.as<float>();
      p.t_len = int(t_len);
      p.batch = int(b);
      p.hidden = int(hp_);
      p.input = int(i_);
      p.bf16 = bf16_;
      p.split = split_;
      p.x_batch_first = x_batch_first_;
      TS_RETURN_IF_ERROR(outputs(p));
      TS_RETURN_IF_ERROR(launch_rnn_wave(p, a.stream));
    } else if (w == Wave::kLstm) {
      LstmWaveParams p;
      p.x = x.as<float>();
      p.frags = frags_.as<uint32_t>();
      p.bias = bias_.as<float>();
      p.t_len = int(t_len);
      p.batch = int(b);
      p.hidden = int(hp_);
      p.input = int(i_);
      p.bf16 = bf16_;
      p.x_batch_first = x_batch_first_;
      p.three_ctas = wave3_ && lstm_wave3_shape_supported(int(hp_), int(i_));
      p.split = split_;
      TS_RETURN_IF_ERROR(outputs(p));
      TS_RETURN_IF_ERROR(launch_lstm_wave(p, a.stream));
    } else {
      // FP32: layer 1's gates x·W1ᵀ + b of all steps by one GEMM (rows in X's order: batch-first
      // X gives batch-first rows, no transpose), then the wavefront.
      StackEnv env(a.env, nullptr, nullptr, at + gx_bytes, proj_bytes);
      CudaArgs ap = a;
      ap.env = &env;
      TS_RETURN_IF_ERROR(f32_proj_->run(ap, x.as<float>(), m, reinterpret_cast<float*>(at)));
      RnnWaveF32Params p;
      p.gx1 = reinterpret_cast<const float*>(at);
      p.gx1_batch_first = x_batch_first_;
      p.w = f32_w_.as<float>();
      p.b2 = f32_bias_.as<float>();
      if (!lstm_) {
        p.rbh1 = p.b2 + gh;
        p.rbh2 = p.b2 + gh + hp_;
      }
      p.t_len = int(t_len);
      p.batch = int(b);
      p.hidden = int(hp_);
      p.lstm = lstm_;
      TS_RETURN_IF_ERROR(outputs(p));
      TS_RETURN_IF_ERROR(launch_rnn_wave_f32(p, a.stream));
    }
    if (rest) {
      const LayersInput in{reinterpret_cast<const float*>(yb), hp_, false};
      return run_layers(a, yb + y_bytes, in, 2, t_len, b, tc);
    }
    if (direct) return Status::ok();
    const int64_t yd[4] = {t_len, 1, b, h_}, sd[3] = {1, b, h_};
    if (y_out) {
      TS_RETURN_IF_ERROR(a.env->alloc(*y_out, DType::kF32, yd));
      TS_RETURN_IF_ERROR(copy_unpadded(reinterpret_cast<const float*>(yb), y_out->as<float>(), m, a.stream));
    }
    if (yh_out) {
      TS_RETURN_IF_ERROR(a.env->alloc(*yh_out, DType::kF32, sd));
      TS_RETURN_IF_ERROR(copy_unpadded(st_h, yh_out->as<float>(), b, a.stream));
    }
    if (yc_out) {
      TS_RETURN_IF_ERROR(a.env->alloc(*yc_out, DType::kF32, sd));
      TS_RETURN_IF_ERROR(copy_unpadded(st_c, yc_out->as<float>(), b, a.stream));
    }
    return Status::ok();
  }

  // PERF NOTE (memory): the stacks' layer-by-layer path (above kLstmWaveMaxBatch / kRnnWaveMaxBatch,
  // and FP32's layers:<t>) runs in time chunks when the intermediates of all T steps would exceed
  // this. GRU FP32 `layers:gemm_steps` at batch 4096, T=60: X transposed 30 MiB + layer 1's Y 120 MiB
  // + the step GEMMs' gates (64 MiB) held more than PyTorch alone
  // (bench/results/mem-h200-20261201-0447-after.json), in chunks of 8 steps about half. LSTM: layer 2's input
  // projection (the gates of every step, fp32 [T·B, 4H]: its W does not fit the mma kernel next
  // to R) alone was 480 MiB at batch 4096, T=60, and layer 1's Y 120 MiB more. Each chunk
  // boundary costs a few tens of µs (five more launches; the recurrences reload their weights).
  // For LSTM-2x128 FP16 at batch 4096 the chunk size trades node time against device memory;
  // 192 MiB (4 chunks) kept both near PyTorch's CUDA graphs, 128 MiB cost more time for little
  // memory (bench/results/engine-cuda-h200-20261201-0145-lstm2*.json, -0157-lstm2*.json).
  static constexpr size_t kLayersChunkBytes = size_t(192) << 20;

  // Y buffers the layers from `first` need: one per layer whose Y feeds the next (two at most,
  // ping-pong), and one for the last layer's Y where it is padded and the node outputs it.
  size_t y_buffers(size_t first, bool y_padded_out) const {
    const size_t feeding = layers_.size() - first - 1;
    return std::min<size_t>(2, feeding + (y_padded_out ? 1 : 0));
  }
  bool y_padded_out(const CudaArgs* a) const { return hp_ != h_ && head_n_ == 0 && (!a || out_y(*a)); }

  // The largest scratch any layer from `first` asks for at tc steps (the first reads `in`).
  size_t layer_region(const LayersInput& in, size_t first, int64_t tc, int64_t b) const {
    size_t r = 0;
    for (size_t l = first; l < layers_.size(); ++l) {
      r = std::max(r, layers_[l]->scratch_bytes(l == first && !in.batch_first ? in.x : nullptr, tc, b));
    }
    return r;
  }

  // Steps per time chunk of the layer loop: t_len (one chunk) unless the per-step scratch of all
  // steps — the Y buffers, X transposed, the largest layer scratch — exceeds kLayersChunkBytes;
  // then equal chunks below it.
  int64_t chunk_steps(const LayersInput& in, size_t first, int64_t t_len, int64_t b) const {
    const size_t per_step = y_buffers(first, y_padded_out(nullptr)) * size_t(b * hp_) * sizeof(float) +
                            (in.batch_first ? size_t(b * in.width) * sizeof(float) : 0) + layer_region(in, first, 1, b);
    const size_t total = per_step * size_t(t_len);
    if (total <= kLayersChunkBytes) return t_len;
    const int64_t chunks = int64_t((total + kLayersChunkBytes - 1) / kLayersChunkBytes);
    // A multiple of 4 steps: every chunk of a time-major X then starts 16-byte aligned as the
    // first does (the mma_x kernels' float4 loads; layer_region() sized the scratch for that).
    return std::min(t_len, (std::max<int64_t>(1, (t_len + chunks - 1) / chunks) + 3) & ~int64_t(3));
  }

  // The one scratch request of run_layers(): X's chunk transposed (batch-first), the Y buffers,
  // the states (h, c; ping-pong per layer when in chunks, else the last layer's), the layers'
  // region.
  size_t layers_scratch(const LayersInput& in, size_t first, int64_t t_len, int64_t b, int64_t tc) const {
    const size_t xc = in.batch_first ? scratch_round(size_t(tc * b * in.width) * sizeof(float)) : 0;
    const size_t y = scratch_round(size_t(tc * b * hp_) * sizeof(float)) * y_buffers(first, y_padded_out(nullptr));
    const size_t states = scratch_round(size_t(b * hp_) * sizeof(float)) * 4 * (tc < t_len ? layers_.size() - first : 1);
    return xc + y + states + padded_states_bytes(b) + layer_region(in, first, tc, b);
  }

  // The layers from `first` one by one over `in`, in time chunks of tc steps: per chunk the
  // input's steps (transposed into scratch when batch-first), each layer from its state after the
  // previous chunk (ping-pong state buffers), its Y the next layer's input. The last layer's Y
  // goes to the node's Y (without the padding), its last state to Y_h / Y_c or the head.
  Status run_layers(const CudaArgs& a, uint8_t* at, const LayersInput& in, size_t first, int64_t t_len, int64_t b,
                    int64_t tc) const {
    const size_t n = layers_.size();
    const bool padded = hp_ != h_, chunked = tc < t_len;
    const size_t xc_bytes = in.batch_first ? scratch_round(size_t(tc * b * in.width) * sizeof(float)) : 0;
    const size_t yb_bytes = scratch_round(size_t(tc * b * hp_) * sizeof(float));
    const size_t nyb = y_buffers(first, y_padded_out(nullptr));
    const size_t st_bytes = scratch_round(size_t(b * hp_) * sizeof(float));
    const size_t nst = 4 * (chunked ? n - first : 1);
    uint8_t* xc = at;
    uint8_t* ybuf[2] = {at + xc_bytes, at + xc_bytes + (nyb > 1 ? yb_bytes : 0)};
    uint8_t* st0 = at + xc_bytes + nyb * yb_bytes;
    auto state = [&](size_t layer, int c_state, int buf) {
      const size_t li = chunked ? layer - first : 0;
      return reinterpret_cast<float*>(st0 + ((li * 2 + size_t(c_state)) * 2 + size_t(buf)) * st_bytes);
    };
    uint8_t* init0 = st0 + nst * st_bytes;
    uint8_t* region = init0 + padded_states_bytes(b);
    const size_t region_bytes = layer_region(in, first, tc, b);
    // Each layer's initial_h / initial_c (first == 0: the wavefronts never run with them) as the
    // layer reads it: the input itself, or widened to hp_ in scratch.
    DevTensor init[2][kMaxLayers];
    for (int64_t l = 0; layout_.states && l < layout_.layers && l < kMaxLayers; ++l) {
      for (int c = 0; c < (lstm_ ? 2 : 1); ++c) {
        const DevTensor* s0 = initial_state(a, l, c == 1);
        if (!s0) continue;
        if (s0->dtype != DType::kF32 || s0->dims.size() != 3 || s0->dims[0] != 1 || s0->dims[1] != b || s0->dims[2] != h_) {
          return bad_input(std::string(c ? "initial_c" : "initial_h") + " of layer " + std::to_string(l + 1) +
                           " must be f32 [1, " + std::to_string(b) + ", " + std::to_string(h_) + "], got " + dims_str(s0->dims));
        }
        TS_RETURN_IF_ERROR(need_device(s0, c ? "initial_c" : "initial_h"));
        DevTensor& t = init[c][l];
        t.dtype = DType::kF32;
        t.dims = {1, b, hp_};
        if (hp_ == h_) {
          t.data = s0->data;
          continue;
        }
        const size_t row = size_t(hp_) * sizeof(float), sz = scratch_round(size_t(b) * row);
        t.data = init0 + (size_t(c) * size_t(layout_.layers) + size_t(l)) * sz;
        TS_CUDA(cudaMemsetAsync(t.data, 0, size_t(b) * row, a.stream));
        TS_CUDA(cudaMemcpy2DAsync(t.data, row, s0->data, size_t(h_) * sizeof(float), size_t(h_) * sizeof(float), size_t(b),
                                  cudaMemcpyDeviceToDevice, a.stream));
      }
    }

    DevTensor *y_out = out_y(a), *yh_out = out_yh(a), *yc_out = out_yc(a);
    const int64_t yd[4] = {t_len, 1, b, h_}, sd[3] = {1, b, h_};
    if (y_out) TS_RETURN_IF_ERROR(a.env->alloc(*y_out, DType::kF32, yd));
    if (yh_out) TS_RETURN_IF_ERROR(a.env->alloc(*yh_out, DType::kF32, sd));
    if (yc_out) TS_RETURN_IF_ERROR(a.env->alloc(*yc_out, DType::kF32, sd));
    auto state_tensor = [&](float* data) {
      DevTensor t;
      t.dtype = DType::kF32;
      t.dims = {1, b, hp_};
      t.data = data;
      return t;
    };
    int last_cur = 0;
    for (int64_t t0 = 0, c = 0; t0 < t_len; t0 += tc, ++c) {
      const int64_t tl = std::min(tc, t_len - t0);
      const int cur = int(c & 1), prev = cur ^ 1;
      const bool last = t0 + tl == t_len;
      last_cur = cur;
      DevTensor xin;  // this chunk of the input as [tl, B, width]
      xin.dtype = DType::kF32;
      xin.dims = {tl, b, in.width};
      if (in.batch_first) {
        StridedDims d;
        d.rank = 3;
        d.dims[0] = tl, d.dims[1] = b, d.dims[2] = in.width;
        d.strides[0] = in.width, d.strides[1] = t_len * in.width, d.strides[2] = 1;
        TS_RETURN_IF_ERROR(launch_strided_copy(in.x + t0 * in.width, xc, d, int(sizeof(float)), a.stream));
        xin.data = xc;
      } else {
        xin.data = const_cast<float*>(in.x + t0 * b * in.width);
      }
      DevTensor yv;  // the previous layer's Y as [tl, B, hp_]
      const DevTensor* layer_in = &xin;
      int in_buf = -1;
      for (size_t l = first; l < n; ++l) {
        const bool final = l + 1 == n;
        const int out_buf = in_buf == 0 ? 1 : 0;
        void* y_at = nullptr;
        if (!final || (y_out && padded)) y_at = ybuf[out_buf];
        else if (y_out) y_at = y_out->as<float>() + t0 * b * h_;
        const bool need_h = !last || (final && (head_n_ > 0 || yh_out));
        const bool need_c = lstm_ && (!last || (final && yc_out));
        void* h_at = last && final && yh_out && !padded ? yh_out->data : state(l, 0, cur);
        void* c_at = last && final && yc_out && !padded ? yc_out->data : state(l, 1, cur);
        DevTensor yl, hn, cn;
        StackEnv env(a.env, y_at ? &yl : nullptr, y_at, region, region_bytes);
        env.place(&hn, h_at);
        env.place(&cn, c_at);
        DevTensor h0 = state_tensor(state(l, 0, prev)), c0 = state_tensor(state(l, 1, prev));
        DevTensor* h_first = l < size_t(kMaxLayers) && init[0][l].data ? &init[0][l] : nullptr;
        DevTensor* c_first = l < size_t(kMaxLayers) && init[1][l].data ? &init[1][l] : nullptr;
        DevTensor* ins[7] = {const_cast<DevTensor*>(layer_in), nullptr, nullptr,         nullptr,
                             nullptr,                          c > 0 ? &h0 : h_first, c > 0 && lstm_ ? &c0 : c_first};
        DevTensor* outs[3] = {y_at ? &yl : nullptr, need_h ? &hn : nullptr, need_c ? &cn : nullptr};
        CudaArgs al = a;
        al.env = &env;
        al.in = ins;
        al.out = outs;
        TS_RETURN_IF_ERROR(layers_[l]->launch(al));
        if (!final) {
          yv.dtype = DType::kF32;
          yv.dims = {tl, b, hp_};
          yv.data = y_at;
          layer_in = &yv;
          in_buf = out_buf;
        } else if (y_out && padded) {
          TS_RETURN_IF_ERROR(copy_unpadded(static_cast<const float*>(y_at), y_out->as<float>() + t0 * b * h_, tl * b, a.stream));
        }
      }
    }
    float* h_last = state(n - 1, 0, last_cur);
    if (head_n_ > 0) {
      const int64_t od[2] = {b, head_n_};
      TS_RETURN_IF_ERROR(a.env->alloc(*a.out[0], DType::kF32, od));
      return launch_rnn_head(h_last, head_w_.as<float>(), head_b_.as<float>(), a.out[0]->as<float>(), int(b), int(hp_),
                             int(head_n_), head_sigmoid_, a.stream);
    }
    if (padded && yh_out) TS_RETURN_IF_ERROR(copy_unpadded(h_last, yh_out->as<float>(), b, a.stream));
    if (padded && yc_out) TS_RETURN_IF_ERROR(copy_unpadded(state(n - 1, 1, last_cur), yc_out->as<float>(), b, a.stream));
    return Status::ok();
  }

  // passes/fuse_rnn_stack.cpp, fuse_rnn_stack_io: X read batch-first (attribute x_batch_first:
  // the model's input Transpose absorbed) and the head (the two inputs after the layers': the last
  // step's h → Gemm → optional Sigmoid) computed by the node, whose one output is then the head's
  // [B, N]. The head's W is stored [N][hp_], zeros in the padded units.
  Status init_stack_io(const Graph& g, const Node& n) {
    x_batch_first_ = n.attr_i("x_batch_first", 0) != 0;
    if (!layout_.head) return Status::ok();
    const ValueId wi = n.inputs[layout_.head_w()], bi = n.inputs[layout_.head_w() + 1];
    const Value& w = g.value(wi);
    const auto d = w.const_dims();
    const bool trans_b = n.attr_i("head_trans_b", 1) != 0;
    head_n_ = trans_b ? d[0] : d[1];
    std::vector<float> hw(size_t(head_n_ * hp_), 0.0f), hb(size_t(head_n_), 0.0f);
    const float* src = w.as<float>();
    for (int64_t j = 0; j < head_n_; ++j)
      for (int64_t u = 0; u < h_; ++u) hw[size_t(j * hp_ + u)] = trans_b ? src[j * h_ + u] : src[u * head_n_ + j];
    if (bi != kNoValue) {
      const float* bsrc = g.value(bi).as<float>();
      std::copy(bsrc, bsrc + head_n_, hb.begin());
    }
    TS_RETURN_IF_ERROR(head_w_.upload(hw.data(), hw.size() * sizeof(float)));
    TS_RETURN_IF_ERROR(head_b_.upload(hb.data(), hb.size() * sizeof(float)));
    head_sigmoid_ = n.attr_s("head_activation", "none") == "sigmoid";
    return Status::ok();
  }

  static constexpr int64_t kMaxLayers = 8;  // initial states are taken for this many layers (the pass's kMaxStackLayers)
  bool lstm_;
  RnnStackLayout layout_;
  int64_t h_ = 0, i_ = 0;
  int64_t hp_ = 0;  // the hidden size every layer runs at: h_, or the wavefronts' (stack_wave_width)
  bool wave_ = false, wave3_ = false, split_ = false, bf16_ = false;  // wave3_: LSTM "wave3", split_: "wave_split"
  std::vector<std::unique_ptr<RnnKernel>> layers_;
  DeviceBuffer frags_, bias_;
  bool x_batch_first_ = false, head_sigmoid_ = false;  // the absorbed input Transpose and head
  int64_t head_n_ = 0;
  DeviceBuffer head_w_, head_b_;  // [head_n][hp_], [head_n]
  // FP32 "wave" (cuda_rnn_wave_f32.h): layer 1's projection, the packed R1/W2/R2, the biases.
  std::unique_ptr<LtGemm> f32_proj_;
  DeviceBuffer f32_w_, f32_bias_;
};

// A GRUStack's or LSTMStack's head (the last two inputs; fuse_rnn_stack_io): W constant f32 [N, H]
// (head_trans_b 1, as Gemm transB / PyTorch Linear store it) or [H, N], N ≤ kRnnWaveMaxHead; bias
// absent or N constants; activation none or sigmoid; one output.
Status check_stack_head(const Graph& g, const Node& n) {
  const size_t at = rnn_stack_layout(n).head_w();
  const ValueId wi = n.inputs[at], bi = n.inputs[at + 1];
  if (!const_f32(g, wi)) return unsupported(n, "needs a constant f32 head weight");
  const auto d = g.value(wi).const_dims();
  const int64_t h = n.attr_i("hidden_size", 0), trans_b = n.attr_i("head_trans_b", 1);
  if (d.size() != 2 || d[trans_b ? 1 : 0] != h)
    return unsupported(n, "has a head weight " + dims_str(d) + " that does not match hidden_size");
  const int64_t outs = d[trans_b ? 0 : 1];
  if (outs < 1 || outs > kRnnWaveMaxHead) {
    return unsupported(
        n, "has " + std::to_string(outs) + " head outputs (1.." + std::to_string(kRnnWaveMaxHead) + " supported)");
  }
  if (bi != kNoValue && (!const_f32(g, bi) || shape_numel(g.value(bi).const_dims()) != outs)) {
    return unsupported(n, "needs a constant f32 head bias of " + std::to_string(outs) + " elements");
  }
  const std::string act = n.attr_s("head_activation", "none");
  if (act != "none" && act != "sigmoid") return unsupported(n, "head activation " + act + " (none or sigmoid supported)");
  if (n.outputs.size() != 1) return unsupported(n, "with a head has one output");
  return Status::ok();
}

Status check_rnn_stack(const Graph& g, const Node& n, bool lstm) {
  const RnnStackLayout lay = rnn_stack_layout(n);
  if (lay.layers < 1 || n.outputs.empty()) return unsupported(n, "needs X, then W, R, B per layer, and an output");
  if (lay.layers > 8) return unsupported(n, "has " + std::to_string(lay.layers) + " layers (8 at most)");
  if (lay.head) TS_RETURN_IF_ERROR(check_stack_head(g, n));
  const int64_t h = n.attr_i("hidden_size", 0);
  const std::vector<Node> ls = rnn_stack_layers(n, lstm);
  for (size_t l = 0; l < ls.size(); ++l) {
    for (size_t i : {size_t(1), size_t(2)}) {
      if (!const_f32(g, ls[l].inputs[i])) return unsupported(n, "needs constant f32 weights (" + ls[l].name + ")");
    }
    TS_RETURN_IF_ERROR(check_rnn(g, ls[l], lstm));
    if (l > 0 && g.value(ls[l].inputs[1]).const_dims()[2] != h) {
      return unsupported(n, ls[l].name + "'s W does not take the previous layer's hidden size " + std::to_string(h));
    }
  }
  return Status::ok();
}

Result<CudaKernelPtr> make_rnn_stack(const Graph& g, const Node& n, CudaMath p, const std::string& tactic, bool lstm) {
  auto k = std::make_unique<RnnStackKernel>(lstm);
  TS_RETURN_IF_ERROR(k->init(g, n, p, tactic));
  return CudaKernelPtr(std::move(k));
}

Status check_rnn(const Graph& g, const Node& n, bool lstm) {
  std::string dir = n.attr_s("direction", "forward");
  if (dir != "forward") return unsupported(n, "direction=" + dir + " is not supported by the cuda backend (forward only)");
  if (n.attr_i("layout", 0) != 0) return unsupported(n, "layout=1 is not supported by the cuda backend");
  if (n.has_attr("clip")) return unsupported(n, "clip is not supported by the cuda backend");
  if (lstm && n.attr_i("input_forget", 0) != 0) return unsupported(n, "input_forget=1 is not supported by the cuda backend");
  if (n.has_attr("activations")) {
    auto it = n.attrs.find("activations");
    auto* v = std::get_if<std::string>(&it->second);
    std::string want = lstm ? "Sigmoid,Tanh,Tanh" : "Sigmoid,Tanh";
    if (!v || *v != want) return unsupported(n, "non-default activations are not supported by the cuda backend");
  }
  if (n.inputs.size() < 3) return unsupported(n, "needs X, W and R");
  for (size_t i : {size_t(1), size_t(2), size_t(3), size_t(7)}) {
    if (i < n.inputs.size() && n.inputs[i] != kNoValue && !const_f32(g, n.inputs[i])) {
      return unsupported(n, "needs constant f32 weights (input " + std::to_string(i) + ") on the cuda backend");
    }
  }
  int64_t hs = n.attr_i("hidden_size", 0);
  auto wd = g.value(n.inputs[1]).const_dims();
  auto rd = g.value(n.inputs[2]).const_dims();
  int64_t ng = lstm ? 4 : 3;
  if (wd.size() != 3 || rd.size() != 3 || wd[0] != 1 || rd[0] != 1 || wd[1] != ng * hs || rd[1] != ng * hs || rd[2] != hs ||
      hs <= 0) {
    return unsupported(n, "has weight shapes inconsistent with hidden_size " + std::to_string(hs));
  }
  if (hs > 512) return unsupported(n, "hidden_size " + std::to_string(hs) + " is above the cuda backend's 512");
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue && shape_numel(g.value(n.inputs[3]).const_dims()) != 2 * ng * hs) {
    return unsupported(n, "has a bias of the wrong size");
  }
  if (lstm && n.inputs.size() > 7 && n.inputs[7] != kNoValue && shape_numel(g.value(n.inputs[7]).const_dims()) != 3 * hs) {
    return unsupported(n, "has peepholes of the wrong size");
  }
  return Status::ok();
}

Result<CudaKernelPtr> make_rnn(const Graph& g, const Node& n, bool lstm, CudaMath p, const std::string& tactic) {
  int64_t h = n.attr_i("hidden_size", 0);
  bool lbr = !lstm && n.attr_i("linear_before_reset", 0) != 0;
  const bool regs = tactic == "regs_b1", mma = tactic == "mma", mma_x2 = tactic == "mma_x2",
             mma_x = tactic == "mma_x" || mma_x2;
  auto k = std::make_unique<RnnKernel>(
      lstm, lbr, h, g.value(n.inputs[1]).const_dims()[2], tactic.rfind("persistent_ks8", 0) == 0 ? 8 : 4,
      tactic.size() > 6 && tactic.compare(tactic.size() - 6, 6, "_rows1") == 0, regs, mma, mma_x, mma_x2);
  if (tactic == "gemm_steps") k->use_gemm_steps();
  if (tactic.rfind("cluster", 0) == 0) k->use_cluster(std::atoi(tactic.c_str() + 7));
  TS_RETURN_IF_ERROR(k->init(g, n, p));
  return CudaKernelPtr(std::move(k));
}

}  // namespace

void add_rnn_ops(std::vector<CudaOpInfo>& ops) {
  // Tactics: the most k-slices per hidden unit in the one-row-per-CTA configuration (batch ≤
  // 2 × SMs): 4 (512 threads at H=128) or 8 (1024 threads, shorter FMA chains, one more level
  // of partial sums); "_rows1": one row per CTA at every batch (more CTAs resident per SM
  // instead of 4 rows per CTA); "regs_b1": R in registers, one barrier per step, for H ≤ 128
  // and batch ≤ 2 × SMs (cuda_rnn_regs.cu; above it the "mma" kernel where that applies, else
  // the persistent_ks4_rows1 kernel); "mma": tensor-core tiles for FP16/BF16, H ≤ 128, H % 8 = 0
  // (cuda_rnn_mma.cu; elsewhere the persistent_ks4 kernel); "mma_x": the same with the input
  // projection inside the kernel where W fits next to R (else as "mma"), and the regs_b1 kernel
  // where that one applies (batch ≤ 2 × SMs, not BF16: faster there, so that one tactic serves
  // a dynamic profile whose opt shape is large); "mma_x2": "mma_x" with the k-tile loops unrolled
  // by 2; "gemm_steps": per step one GEMM h·Rᵀ over the whole batch and a cell kernel
  // (cuda_rnn_steps.h; GRU linear_before_reset 0 and sequence_lens as persistent_ks4);
  // "cluster2/4/8/16": the hidden units split over a cluster of that many CTAs, R resident in
  // their shared memory (cuda_rnn_cluster.h; where it does not fit or run, as persistent_ks4).
  // Timed by the builder at the profile's opt shape.
  const std::vector<std::string>& tactics = rnn_tactics();
  ops.push_back({"GRU", [](const Graph& g, const Node& n) { return check_rnn(g, n, false); },
                 [](const Graph& g, const Node& n, CudaMath p, const std::string& t) { return make_rnn(g, n, false, p, t); },
                 tactics});
  ops.push_back({"LSTM", [](const Graph& g, const Node& n) { return check_rnn(g, n, true); },
                 [](const Graph& g, const Node& n, CudaMath p, const std::string& t) { return make_rnn(g, n, true, p, t); },
                 tactics});
  // GRUStack / LSTMStack: "layers:<t>" for every per-layer tactic t (the first is the default, as
  // for one layer), "wave" (cuda_rnn_wave.h, cuda_lstm_wave.h), "wave_split" (each recurrence
  // over two CTAs) and, LSTMStack only, "wave3".
  std::vector<std::string> stack;
  for (const std::string& t : tactics) stack.push_back("layers:" + t);
  stack.push_back("wave");
  for (const bool lstm : {false, true}) {
    std::vector<std::string> st = stack;
    if (lstm) st.push_back("wave3");  // LSTM: three CTAs per cluster (cuda_lstm_wave.h)
    st.push_back("wave_split");
    ops.push_back({lstm ? "LSTMStack" : "GRUStack",
                   [lstm](const Graph& g, const Node& n) { return check_rnn_stack(g, n, lstm); },
                   [lstm](const Graph& g, const Node& n, CudaMath p, const std::string& t) {
                     return make_rnn_stack(g, n, p, t, lstm);
                   },
                   st});
  }
}

}  // namespace ts::engine::cuda
