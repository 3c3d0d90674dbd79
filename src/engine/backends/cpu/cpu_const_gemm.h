#pragma once
// Internal to the CPU backend: C = act(A · W + bias) for a constant W, through ticksentry's AVX2
// panels ("avx2") or a oneDNN matmul ("onednn", one primitive per row count in the per-context
// DnnlGemmState). Used by FusedGemm/Gemm/MatMul (cpu_gemm_ops.cpp) and the fused encoder layer
// (cpu_encoder.cpp).
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <unordered_map>
#include <vector>

#include "engine/backends/cpu/cpu_gemm.h"
#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {

inline const dnnl::engine& dnnl_cpu() {
  static const dnnl::engine eng(dnnl::engine::kind::cpu, 0);
  return eng;
}

inline bool dnnl_alg(Act act, dnnl::algorithm* alg) {
  switch (act) {
    case Act::kRelu: *alg = dnnl::algorithm::eltwise_relu; return true;
    case Act::kSigmoid: *alg = dnnl::algorithm::eltwise_logistic; return true;
    case Act::kTanh: *alg = dnnl::algorithm::eltwise_tanh; return true;
    case Act::kGelu: *alg = dnnl::algorithm::eltwise_gelu_erf; return true;
    case Act::kNone: return false;
  }
  return false;
}

// Per-context oneDNN state: one primitive (and bound memories) per row count M.
struct DnnlGemmState final : KernelState {
  struct Entry {
    dnnl::matmul prim;
    dnnl::memory src, wei, bias, dst;
    std::unordered_map<int, dnnl::memory> args;
  };
  dnnl::stream stream{dnnl_cpu()};
  std::map<int64_t, Entry> by_m;
  // W reordered into the layout the primitives chose (format_tag::any), once per layout: row
  // counts whose primitives want the same layout share one copy.
  std::vector<dnnl::memory> packed_w;
};

// C[m,n] = act(A[m,k] · W + bias) with W constant.
class ConstGemm {
 public:
  ConstGemm(const float* w, int64_t k, int64_t n, bool trans_b, const float* bias, Act act, bool onednn)
      : k_(k), n_(n), act_(act), onednn_(onednn) {
    if (onednn_) {
      w_.resize(size_t(k * n));
      for (int64_t kk = 0; kk < k; ++kk)
        for (int64_t j = 0; j < n; ++j) w_[size_t(kk * n + j)] = trans_b ? w[j * k + kk] : w[kk * n + j];
      if (bias) bias_.assign(bias, bias + n);
    } else {
      packed_ = pack_b(w, k, n, trans_b, bias);
    }
  }
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  bool onednn() const { return onednn_; }

  Status run(const float* a, int64_t m, float* c, KernelState* state) const {
    if (m == 0) return Status::ok();
    if (!onednn_) {
      gemm_packed(a, k_, m, packed_, c, n_, act_);
      return Status::ok();
    }
    auto* st = static_cast<DnnlGemmState*>(state);
    try {
      auto it = st->by_m.find(m);
      if (it == st->by_m.end()) it = st->by_m.emplace(m, make_entry(m, st)).first;
      auto& e = it->second;
      e.src.set_data_handle(const_cast<float*>(a));
      e.dst.set_data_handle(c);
      e.prim.execute(st->stream, e.args);
      st->stream.wait();
    } catch (const dnnl::error& err) {
      return Status(StatusCode::kInternal, std::string("oneDNN matmul: ") + err.what());
    }
    return Status::ok();
  }

 private:
  // PERF NOTE: W in plain layout (tag::ab) leaves the layout to the call; reordered once into
  // the primitive's own (tag::any), sweep case 26 at batch 1 (3 encoder layers on the onednn
  // tactic, the same plan file) ran at P50 1,102-1,180 µs against 1,255-1,283 µs before, 3 runs
  // each alternating on one core (bench/results/archive/cpu-onednn-prepack-cpu2-20261203-0704-cpx8.txt).
  DnnlGemmState::Entry make_entry(int64_t m, DnnlGemmState* st) const {
    using tag = dnnl::memory::format_tag;
    using dt = dnnl::memory::data_type;
    dnnl::memory::desc src_md({m, k_}, dt::f32, tag::ab), wei_md({k_, n_}, dt::f32, tag::ab),
        dst_md({m, n_}, dt::f32, tag::ab), bias_md({1, n_}, dt::f32, tag::ab), wei_any({k_, n_}, dt::f32, tag::any);
    dnnl::primitive_attr attr;
    dnnl::algorithm alg;
    if (dnnl_alg(act_, &alg)) {
      dnnl::post_ops po;
      po.append_eltwise(1.0f, alg, 0.0f, 0.0f);
      attr.set_post_ops(po);
    }
    bool has_bias = !bias_.empty();
    auto desc =
        has_bias ? dnnl::matmul::desc(src_md, wei_any, bias_md, dst_md) : dnnl::matmul::desc(src_md, wei_any, dst_md);
    dnnl::matmul::primitive_desc pd(desc, attr, dnnl_cpu());
    DnnlGemmState::Entry e;
    e.prim = dnnl::matmul(pd);
    e.src = dnnl::memory(src_md, dnnl_cpu(), DNNL_MEMORY_NONE);
    e.dst = dnnl::memory(dst_md, dnnl_cpu(), DNNL_MEMORY_NONE);
    dnnl::memory plain(wei_md, dnnl_cpu(), const_cast<float*>(w_.data()));
    if (pd.weights_desc() == wei_md) {
      e.wei = plain;
    } else {
      for (const dnnl::memory& w : st->packed_w)
        if (w.get_desc() == pd.weights_desc()) e.wei = w;
      if (!e.wei) {
        e.wei = dnnl::memory(pd.weights_desc(), dnnl_cpu());
        dnnl::reorder(plain, e.wei).execute(st->stream, plain, e.wei);
        st->stream.wait();
        st->packed_w.push_back(e.wei);
      }
    }
    e.args = {{DNNL_ARG_SRC, e.src}, {DNNL_ARG_WEIGHTS, e.wei}, {DNNL_ARG_DST, e.dst}};
    if (has_bias) {
      e.bias = dnnl::memory(bias_md, dnnl_cpu(), const_cast<float*>(bias_.data()));
      e.args[DNNL_ARG_BIAS] = e.bias;
    }
    return e;
  }

  int64_t k_, n_;
  Act act_;
  bool onednn_;
  PackedB packed_;
  std::vector<float> w_, bias_;
};

}  // namespace ts::engine::cpu
