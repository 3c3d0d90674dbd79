#pragma once
// Internal to the CPU backend: the op table each kernel family contributes to, and helpers the
// kernels share (fixed-capacity dims so shape arithmetic allocates nothing, axis handling,
// numpy broadcasting).
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/backend.h"

namespace ts::engine::cpu {

constexpr int kMaxRank = 8;

// Dims on the stack (rank ≤ kMaxRank): shape arithmetic in kernels without allocation.
struct Dims {
  std::array<int64_t, kMaxRank> d{};
  int n = 0;
  int64_t& operator[](int i) { return d[size_t(i)]; }
  int64_t operator[](int i) const { return d[size_t(i)]; }
  void push(int64_t v) { d[size_t(n++)] = v; }
  std::span<const int64_t> span() const { return {d.data(), size_t(n)}; }
  int64_t numel() const {
    int64_t p = 1;
    for (int i = 0; i < n; ++i) p *= d[size_t(i)];
    return p;
  }
  static Dims of(std::span<const int64_t> s) {
    Dims r;
    for (auto v : s) r.push(v);
    return r;
  }
};

using KernelPtr = std::unique_ptr<Kernel>;

// A kernel from a callable: Status(const KernelArgs&).
template <typename F>
class FnKernel final : public Kernel {
 public:
  explicit FnKernel(F f) : f_(std::move(f)) {}
  Status run(const KernelArgs& a) const override { return f_(a); }

 private:
  F f_;
};
template <typename F>
Result<KernelPtr> make_fn_kernel(F f) {
  return KernelPtr(new FnKernel<F>(std::move(f)));
}

struct OpInfo {
  std::string op;
  // Extra checks beyond the op name (attributes, constant weights); null = none.
  std::function<Status(const Graph&, const Node&)> check;
  std::vector<std::string> tactics;   // first = default
  std::function<Result<KernelPtr>(const Graph&, const Node&, const std::string&)> make;
  // Per-node candidates when they depend on the node (Conv: 1-D has "direct"); null = tactics.
  std::function<std::vector<std::string>(const Graph&, const Node&)> tactics_for = nullptr;
};

void add_elementwise_ops(std::vector<OpInfo>& ops);
void add_gemm_ops(std::vector<OpInfo>& ops);
void add_norm_ops(std::vector<OpInfo>& ops);
void add_conv_ops(std::vector<OpInfo>& ops);
void add_shape_ops(std::vector<OpInfo>& ops);
void add_rnn_ops(std::vector<OpInfo>& ops);
void add_attention_ops(std::vector<OpInfo>& ops);
void add_compare_ops(std::vector<OpInfo>& ops);
void add_fused_conv_ops(std::vector<OpInfo>& ops);     // cpu_fused_conv.cpp
void add_encoder_ops(std::vector<OpInfo>& ops);        // cpu_encoder.cpp

// "node <name>: op <op> <what>" as kUnsupported.
Status unsupported(const Node& n, const std::string& what);
Status bad_input(const std::string& what);  // kInvalidArgument, message as given

// Negative axis → axis + rank; error when out of range.
Result<int> norm_axis(int64_t axis, int rank);
bool rank_ok(const RtTensor& t);
inline Dims dims_of(const RtTensor& t) { return Dims::of(t.dims); }

// Numpy broadcasting of a and b into out; false when incompatible.
bool broadcast_dims(const Dims& a, const Dims& b, Dims* out);
// Strides (in elements) of `in` viewed as broadcast to `out` (0 on broadcast axes).
Dims broadcast_strides(const Dims& in, const Dims& out);

// Reads an int64 (or int32) tensor's values; false when more than kMaxRank values.
bool read_ints(const RtTensor& t, Dims* out);
bool is_const(const Graph& g, ValueId v);
// Copies input 0 to output 0 (dtype and dims kept).
Status run_noop(const KernelArgs& a);

}  // namespace ts::engine::cpu
