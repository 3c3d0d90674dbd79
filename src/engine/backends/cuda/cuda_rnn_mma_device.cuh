#pragma once
// Device helpers shared by the tensor-core recurrences (cuda_rnn_mma.cu, cuda_rnn_wave.cu,
// cuda_lstm_wave.cu): fast gate activations, fp32 pairs packed as fp16/bf16 registers, and one
// mma.sync m16n8k16 (row.col, fp32 accumulate) in the register layout of the PTX ISA's fragment
// tables; the cluster hand-over primitives (rnn_cluster, sm_90). Included only by .cu files of
// the CUDA backend.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace ts::engine::cuda::rnn_device {

__device__ __forceinline__ float tanh_fast(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float sig_fast(float x) { return fmaf(0.5f, tanh_fast(0.5f * x), 0.5f); }

template <typename T16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  __half2 v = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&v);
}

// d += a · b: a the 16×16 A fragment (4 registers), b0/b1 the 16×8 B fragment.
template <typename T16>
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1) {
  if constexpr (std::is_same_v<T16, __half>) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Host side: two floats as one packed fp16 / bf16 pair (lo in the low half), the order in which
// the A fragments above are packed on the host.
inline uint32_t pack_pair_host(float lo, float hi, bool bf16) {
  uint16_t l, h;
  if (bf16) {
    __nv_bfloat16 a = __float2bfloat16_rn(lo), b = __float2bfloat16_rn(hi);
    l = *reinterpret_cast<uint16_t*>(&a);
    h = *reinterpret_cast<uint16_t*>(&b);
  } else {
    __half a = __float2half_rn(lo), b = __float2half_rn(hi);
    l = *reinterpret_cast<uint16_t*>(&a);
    h = *reinterpret_cast<uint16_t*>(&b);
  }
  return uint32_t(l) | (uint32_t(h) << 16);
}

// The launch of `grid` CTAs of `threads` threads in thread-block clusters of `cluster` CTAs
// along x (the wavefronts: one cluster per group of batch rows, one CTA per role), with
// `smem_bytes` of dynamic shared memory; `attr` holds the attributes cfg points at.
// programmatic: a programmatic dependent launch (cudaLaunchAttributeProgrammaticStreamSerialization):
// the kernel may start while the previous kernel in the stream still runs, once that kernel has
// executed griddepcontrol.launch_dependents in every CTA; it must execute griddepcontrol.wait
// before it reads anything that kernel wrote and before its first global write.
inline cudaLaunchConfig_t cluster_config(unsigned grid, unsigned threads, unsigned cluster, size_t smem_bytes,
                                         cudaStream_t stream, cudaLaunchAttribute (&attr)[2], bool programmatic) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(grid);
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem_bytes;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  attr[1].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[1].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = attr;
  cfg.numAttrs = programmatic ? 2 : 1;
  return cfg;
}

// Launches kernel(p) with cluster_config() and no dynamic shared memory.
template <typename Params>
inline cudaError_t launch_clustered(void (*kernel)(Params), unsigned grid, unsigned threads, unsigned cluster,
                                    cudaStream_t stream, const Params& p, bool programmatic = false) {
  cudaLaunchAttribute attr[2];
  const cudaLaunchConfig_t cfg = cluster_config(grid, threads, cluster, 0, stream, attr, programmatic);
  return cudaLaunchKernelEx(&cfg, kernel, p);
}

}  // namespace ts::engine::cuda::rnn_device

// Hand-over between the CTAs of a thread-block cluster (sm_90; the GRU and LSTM wavefronts,
// cuda_rnn_wave.cu, cuda_lstm_wave.cu): st.async into a peer's shared memory completes bytes on
// the peer's mbarrier (no fence on the producer's path); the consumer arms its barrier with the
// bytes it expects and waits on the phase parity; "slot free" goes back as a remote arrive. A
// namespace of its own, not pulled in with rnn_device. Compiled only for sm_90 and later.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
namespace ts::engine::cuda::rnn_cluster {

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return uint32_t(__cvta_generic_to_shared(p)); }
// The same shared-memory address in cluster CTA `rank`.
__device__ __forceinline__ uint32_t peer_addr(uint32_t a, int rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(a), "r"(rank));
  return r;
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_expect(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_arrive_peer(uint32_t peer_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(peer_bar) : "memory");
}
// CTA-scope wait and remote arrive: the default semantics, as CUTLASS's cluster barriers use
// them; the bytes a peer's st.async completed on the barrier are visible once its phase flips.
// PERF NOTE (GRU wavefront, ncu): the cluster-scope acquire above compiles to an L1
// invalidation (CCTL.IVALL, the top stall) per wait and the release arrive to MEMBAR.ALL.GPU;
// with these the GRU step is shorter (bench/results/archive/rnn-wave-gru1-h200-20261130-2224.txt).
__device__ __forceinline__ void mbar_wait_cta(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
  } while (!done);
}
// Waits for two barrier phases with both polls in flight at once (one round trip when both are
// done): the split wavefronts' layer-2 slot and the partner's half of h.
__device__ __forceinline__ void mbar_wait2_cta(uint32_t bar_a, uint32_t par_a, uint32_t bar_b, uint32_t par_b) {
  uint32_t done = 0;
  do {
    asm volatile(
        "{\n .reg .pred pa, pb;\n mbarrier.try_wait.parity.shared::cta.b64 pa, [%1], %2;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 pb, [%3], %4;\n and.pred pa, pa, pb;\n selp.u32 %0, 1, 0, pa;\n}\n"
        : "=r"(done)
        : "r"(bar_a), "r"(par_a), "r"(bar_b), "r"(par_b)
        : "memory");
  } while (!done);
}
__device__ __forceinline__ void mbar_arrive_peer_cta(uint32_t peer_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(peer_bar) : "memory");
}
__device__ __forceinline__ void st_async(uint32_t peer, uint32_t v, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.b32 [%0], %1, [%2];\n" ::"r"(peer), "r"(v), "r"(peer_bar)
               : "memory");
}
__device__ __forceinline__ void st_async4(uint32_t peer, float a, float b, float c, float d, uint32_t peer_bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(peer), "f"(a),
               "f"(b), "f"(c), "f"(d), "r"(peer_bar)
               : "memory");
}

}  // namespace ts::engine::cuda::rnn_cluster
#endif
