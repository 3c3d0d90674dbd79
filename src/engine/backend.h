#pragma once
// The interface a backend implements (cpu now; cuda and a tensorrt one plug in the same way).
// The builder asks a backend which nodes it supports and which tactics (implementations) it has
// per node; the runtime asks it to prepare a Program (kernels with packed weights, immutable,
// shared by every ExecutionContext) and runs the kernels in node order with per-context tensors
// and scratch memory.
//
// Threading: a Backend and a Program are immutable after creation and shared between threads.
// Kernel::run is const and may run concurrently on different contexts; anything a kernel must
// mutate lives in its per-context KernelState.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/ir/graph.h"

namespace ts::engine {

// A tensor at run time: concrete dims, host memory. Constants and bound inputs point at memory
// owned elsewhere (the Program's graph, the caller); intermediates own `storage`, which only
// grows, so a repeated shape allocates nothing.
struct RtTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  uint8_t* data = nullptr;
  std::vector<uint8_t> storage;
  int64_t numel() const { return shape_numel(dims); }
  size_t bytes() const { return size_t(numel()) * dtype_size(dtype); }
  template <typename T> T* as() { return reinterpret_cast<T*>(data); }
  template <typename T> const T* as() const { return reinterpret_cast<const T*>(data); }
  // Sets dtype/dims and makes room in `storage` (grows only). Never fails for sizes that fit
  // the process; callers bound sizes with the workspace limit beforehand.
  void ensure(DType t, std::span<const int64_t> d);
};

// Per-context scratch memory: one region, reused by every kernel in turn (grows only).
class Scratch {
 public:
  // A 64-byte aligned region of at least `bytes`; valid until the next call.
  void* get(size_t bytes);
  size_t capacity() const { return bytes_; }

 private:
  struct Free { void operator()(uint8_t* p) const; };
  std::unique_ptr<uint8_t, Free> buf_;
  size_t bytes_ = 0;
};

// Mutable per-context state of one kernel (e.g. oneDNN primitives cached per shape).
class KernelState {
 public:
  virtual ~KernelState() = default;
};

struct KernelArgs {
  std::span<const RtTensor* const> in;   // nullptr for an omitted optional input
  std::span<RtTensor* const> out;        // the kernel calls ensure() on each output it writes
  Scratch* scratch = nullptr;
  KernelState* state = nullptr;          // from Kernel::make_state(), may be null
  const RtTensor* input(size_t i) const { return i < in.size() ? in[i] : nullptr; }
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Computes output shapes from the inputs' actual dims (and data for shape tensors) and runs.
  // A shape the op cannot handle → error naming what is wrong (the runtime adds the node name).
  virtual Status run(const KernelArgs& args) const = 0;
  virtual std::unique_ptr<KernelState> make_state() const { return nullptr; }
};

// What a backend prepares from an optimized graph: one kernel per node, in node order.
struct Program {
  Graph graph;
  std::vector<std::unique_ptr<Kernel>> kernels;
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;            // "cpu"
  virtual std::string target_arch() const = 0;     // "x86-64-v3" (AVX2+FMA) or "x86-64"
  // FP32 always; others → kUnsupported with the reason ("bf16 is not supported on this CPU").
  virtual Status check_precision(Precision p) const = 0;
  // An op or attribute combination the backend cannot run → kUnsupported
  // "node <name>: op <op> is not supported by the cpu backend" (or naming the attribute).
  virtual Status check_supported(const Graph& g, const Node& n) const = 0;
  // Candidate implementations for a node; the first is the default. Never empty for a
  // supported node.
  virtual std::vector<std::string> tactics(const Graph& g, const Node& n) const = 0;
  // Creates the kernel for `n` with `tactic` ("" = default), packing constant weights.
  virtual Result<std::unique_ptr<Kernel>> make_kernel(const Graph& g, const Node& n,
                                                      const std::string& tactic) const = 0;
  // Creates every node's kernel with the tactic recorded in Node::tactic.
  Result<std::shared_ptr<const Program>> prepare(Graph graph) const;
};

// The registry: "cpu" → the CPU backend; unknown name → nullptr.
const Backend* find_backend(const std::string& name);
std::vector<std::string> backend_names();

}  // namespace ts::engine
