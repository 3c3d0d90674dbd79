#pragma once
// The interface a backend implements (cpu, cuda; a tensorrt one plugs in the same way).
// The builder asks a backend which nodes it supports and which tactics (implementations) it has
// per node; the runtime asks it to prepare a Program (kernels with packed weights, immutable,
// shared by every ExecutionContext) and, per context, to create a BackendExecutor that owns
// execution on the backend's device: the host Executor (runtime.h) runs kernels on host
// RtTensors; a device backend keeps its own device tensors, stream and staging buffers and
// only meets the runtime at host TensorViews (inputs in, outputs out).
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

// What a kernel is built for: the plan's precision and flags.
struct KernelOptions {
  Precision precision = Precision::kFP32;
  bool tf32 = false;   // FP32 matrix products may use TF32 tensor cores (BuildOptions::tf32)
};

// Per-context execution of a Program on a backend's device. One per ExecutionContext, used by
// one thread at a time (the context serializes calls).
struct ExecutorOptions {
  // Scratch/workspace limit in bytes (BuildOptions::workspace_bytes, recorded in the plan);
  // a run that needs more fails with kOutOfRange naming both numbers. 0 = no limit.
  int64_t workspace_bytes = 0;
  // Shape buckets over the batch (dim 0 of every input; the runtime sets them only when every
  // input and output has the same symbolic dim 0, the models' "batch"): a run's batch is rounded
  // up to the smallest bucket ≥ it (padding rows, outputs trimmed), so a device backend replays
  // one CUDA graph per bucket instead of capturing every batch size. Ascending; empty = exact
  // shapes. The builder's timing executor gets the same buckets. Backends without graphs may
  // ignore it.
  std::vector<int64_t> batch_buckets;
};

class BackendExecutor {
 public:
  virtual ~BackendExecutor() = default;
  // Runs every node on `inputs` (host memory, in graph input order, already checked against
  // the bindings and profiles). The inputs are read before run() returns; the results stay in
  // the executor until the next run. Errors name the node: "node /gru/GRU (GRU): ...".
  virtual Status run(std::span<const TensorView> inputs) = 0;
  // Copies the graph outputs of the last run into `outputs` (host memory, graph output order),
  // filling in dims. Each output's room is its dims on entry (TensorView); a result that does
  // not fit → kInvalidArgument from check_output_room, nothing copied for it.
  virtual Status copy_outputs(std::span<TensorView> outputs) const = 0;
  // Dims of every graph output of the last run (as copy_outputs would fill them in).
  virtual std::vector<std::vector<int64_t>> output_dims() const = 0;
  // Memory held now for this context (host backends: host bytes; device backends: device bytes
  // of intermediates, scratch and staging), not counting the Program's weights.
  virtual int64_t memory_bytes() const = 0;
  // The part of memory_bytes() that does not grow with the input shapes (a fixed library
  // workspace, uploaded constants): the builder scales only the rest to the max profile.
  virtual int64_t fixed_memory_bytes() const { return 0; }
  // ExecutionContext::memory_bytes_by_bucket (default: not tracked, empty).
  virtual std::vector<BucketMemory> memory_bytes_by_bucket() const { return {}; }
  // Median time of node i run alone with kernel `k` on the tensors of the last run, in ns
  // (builder tactic timing). kUnsupported where the backend cannot time one node.
  virtual Result<double> time_node(size_t i, const Kernel& k) = 0;
  // Dims of node i's inputs in the last run ({} for an omitted input): timing-cache keys.
  virtual std::vector<std::vector<int64_t>> node_input_dims(size_t i) const = 0;
  // ExecutionContext::enqueue_on_stream (inputs already checked against bindings and profiles;
  // output dims filled in here). Default: kUnsupported.
  virtual Status enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                                   DeviceStream stream) {
    (void)inputs;
    (void)outputs;
    (void)stream;
    return Status(StatusCode::kUnsupported, "this backend has no device streams: enqueue_on_stream needs the cuda backend");
  }
  // ExecutionContext::describe(). Default: "".
  virtual std::string describe() const { return ""; }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;            // "cpu"
  // ok when the backend can run on this machine; else why not ("no CUDA device: ...").
  // Build and load check it first, so the other calls may assume a usable device.
  virtual Status available() const { return Status::ok(); }
  virtual std::string target_arch() const = 0;     // "x86-64-v3" (AVX2+FMA) or "x86-64"; "sm_90"
  // Whether a plan built for `plan_arch` runs here. Default: equal names, or a baseline
  // "x86-64" plan on an "x86-64-v3" machine.
  virtual bool arch_compatible(const std::string& plan_arch) const {
    std::string here = target_arch();
    return plan_arch == here || (plan_arch == "x86-64" && here == "x86-64-v3");
  }
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
  // Creates one context's executor for a prepared Program. Default: the host Executor of runtime.h, running Kernel::run on host tensors.
  virtual Result<std::unique_ptr<BackendExecutor>> create_executor(std::shared_ptr<const Program> program,
                                                                   const ExecutorOptions& options) const;
  // Like make_kernel, knowing the plan's precision flags (a backend with per-precision
  // kernels, e.g. FP16 weights, overrides it). Default: make_kernel.
  virtual Result<std::unique_ptr<Kernel>> make_kernel_for(const Graph& g, const Node& n, const std::string& tactic,
                                                          const KernelOptions& options) const {
    (void)options;
    return make_kernel(g, n, tactic);
  }
  // The precision node i of a prepared Program computes in, as `inspect` shows it (a plan's
  // precision is a permission: a backend may keep a layer at higher precision where that is
  // faster or more accurate). Default: the plan's precision for every node.
  virtual std::string layer_precision(const Program& program, size_t i, Precision plan) const {
    (void)program;
    (void)i;
    return precision_name(plan);
  }
  // Weight bytes of a prepared Program as this backend holds them. Default: the graph's
  // constants.
  virtual int64_t weight_bytes(const Program& program) const;
  // Host memory for engine inputs/outputs (Engine::allocate_host). Default: 64-byte aligned.
  virtual std::shared_ptr<void> allocate_host(size_t bytes) const;
  // prepare() with precision flags (make_kernel_for per node).
  Result<std::shared_ptr<const Program>> prepare(Graph graph, const KernelOptions& options) const;
};

// Whether a result of `dims` × `dtype` fits the caller's buffer `out` (its dims on entry, see
// TensorView): ok, or kInvalidArgument "output y: the result is [4500] (4500 values), the
// buffer is [5,45] (225 values)". Every backend checks it before copying into a caller's
// buffer.
Status check_output_room(const std::string& name, const TensorView& out, std::span<const int64_t> dims, DType dtype);

// The registry: "cpu" → the CPU backend, "cuda" → the CUDA backend in builds with CUDA
// (TICKSENTRY_HAVE_CUDA; it reports available() = error on a machine without a GPU);
// unknown name → nullptr.
const Backend* find_backend(const std::string& name);
std::vector<std::string> backend_names();

}  // namespace ts::engine
