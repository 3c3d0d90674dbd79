#pragma once
// The inference engine's public API, shaped like TensorRT's (docs/engine.md):
//   engine::build(onnx bytes, BuildOptions)  → plan bytes   (IBuilder + ONNX parser)
//   Engine::load(plan bytes)                 → shared Engine (deserializeCudaEngine)
//   engine->create_context()                 → ExecutionContext, one per thread/stream
//   context->enqueue(inputs, outputs, done)  → asynchronous run (enqueueV3)
// Backends (cpu now, cuda next, a tensorrt one could plug in) sit behind engine/backend.h.
// Errors are Status values with context ("building model.onnx: node /gru/GRU (GRU): ...").
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/ir/tensor.h"

namespace ts::engine {

enum class Precision : uint8_t { kFP32 = 0, kBF16, kFP16, kINT8 };
const char* precision_name(Precision p);

// Threads the CPU backend may use (oneDNN's OpenMP team) for work the calling thread starts; 0
// keeps the library's default (every core). A server running several engine threads on few cores
// sets 1, so that idle OpenMP threads do not spin on the cores its other threads need.
void set_cpu_threads_for_this_thread(int n);

// min/opt/max dims of one dynamic input, e.g. x: [1,30,32] / [64,60,32] / [1024,120,32].
struct ShapeRange {
  std::vector<int64_t> min, opt, max;
};
struct OptimizationProfile {
  std::map<std::string, ShapeRange> inputs;  // by input name
};

struct BuildOptions {
  std::string backend = "cpu";          // "cpu" | "cuda"
  Precision precision = Precision::kFP32;
  std::vector<OptimizationProfile> profiles;  // empty: one profile from the model's static dims
                                              // and defaults batch 1..1024, seq 1..512
  int64_t workspace_bytes = int64_t(1) << 30; // scratch memory limit per context
  std::string timing_cache_path;        // "" = no cache file; else read and updated
  bool time_tactics = true;             // time candidate implementations at the opt shape
  // FP32 matrix products may run on TF32 tensor cores (cuda backend; like TensorRT's kTF32
  // flag, but off by default here: FP32 plans match the CPU to 1e-5 unless asked). Ignored
  // with FP16. Recorded in the plan.
  bool tf32 = false;
  // INT8 (precision kINT8, cuda backend; quantize.h): calibration windows, an .npy float32
  // [N, T, F] with N ≥ 1000, fed to the model's one input; and/or a calibration cache file,
  // read when it exists and was made for this model (then no windows are needed), else written
  // after calibrating. A layer whose INT8 output error on the calibration windows (relative
  // L2 vs FP32) exceeds int8_max_rel_err runs in FP16.
  std::string calibration_data;
  std::string calibration_cache;
  double int8_max_rel_err = 5e-2;
  // INT8 plans only. false (default, TensorRT's "prefer" precision constraints): where a fused
  // FP16 kernel beats the INT8 layers it replaces (a whole Transformer encoder layer, builder.cpp)
  // the plan runs the fused kernel and inspect says so. true ("obey", trtexec
  // --precisionConstraints=obey): every INT8-eligible GEMM stays its own layer and runs INT8
  // where calibration allows.
  bool int8_obey_precision = false;
};

// A tensor handed to or returned from enqueue: host memory owned by the caller. An output's
// room is `capacity_bytes` when set, else its dims on entry (numel(dims) elements of `dtype`;
// empty dims = a scalar, one element). The engine writes at most that many bytes: a result
// that does not fit is an error naming the output, the result's shape and the buffer's, and
// nothing is written to it. On success `dims` hold the result's shape (which may be smaller
// than the buffer); a view reused for a larger result keeps its room through capacity_bytes.
struct TensorView {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  void* data = nullptr;
  size_t capacity_bytes = 0;   // outputs: bytes at `data`; 0 = numel(dims) × dtype size
  size_t bytes() const;
};

// A device stream owned by the caller, opaque here so that only a device backend includes its
// runtime's headers: on the cuda backend a cudaStream_t (DeviceStream{some_cuda_stream}); a
// null handle is CUDA's legacy default stream. A tensorrt backend would take the same handle.
struct DeviceStream {
  void* handle = nullptr;
};

// The memory one context holds for a batch bucket (a context runs a batch at the smallest
// bucket ≥ it; runtime.h batch_buckets): bytes of device memory (cpu backend: host memory),
// the engine's weights excluded.
struct BucketMemory {
  int64_t batch = 0;  // the bucket's batch
  int64_t bytes = 0;
};

// Description of an engine's input or output binding.
struct BindingInfo {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;   // symbolic dims as in the model
};

class ExecutionContext {
 public:
  virtual ~ExecutionContext() = default;
  // Runs the engine on `inputs` (in binding order) writing `outputs` (in binding order; dims
  // are filled in, data must have room for max-profile sizes or the exact size). Asynchronous:
  // returns once the work is queued; `done(status)` is called exactly once when it finishes,
  // on an engine thread. A shape outside every profile, a wrong dtype or count → error Status
  // returned at once and `done` not called.
  virtual Status enqueue(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                         std::function<void(Status)> done) = 0;
  // Synchronous convenience: enqueue and wait.
  Status execute(std::span<const TensorView> inputs, std::span<TensorView> outputs);
  // The shape of every output (binding order) for these inputs, as the engine's kernels
  // compute it: runs the engine once on `inputs` (after queued work) and reports the shapes
  // instead of copying the results. Size output buffers from it where a binding's shape has
  // dims the inputs do not name (a Reshape to [-1], a Concat along a dynamic axis, a
  // data-dependent ConstantOfShape). Errors as execute(). Default: kUnsupported.
  virtual Result<std::vector<std::vector<int64_t>>> output_dims(std::span<const TensorView> inputs);
  // Asynchronous on the caller's stream (TensorRT's enqueueV3): queues the copy-in, the engine's
  // kernels (a CUDA graph per shape bucket once warm) and the copy-out on `stream` and returns;
  // completion is the caller's to observe (an event recorded on `stream`, a synchronize).
  // Inputs/outputs may be device memory or page-locked host memory (Engine::allocate_host,
  // cudaHostAlloc/cudaHostRegister); pageable host memory → kInvalidArgument (it cannot be
  // copied asynchronously). Output dims are filled in before it returns; output data is valid
  // once `stream` reaches this point. Input memory must stay unchanged, output memory untouched,
  // until then.
  // Ordering: successive calls on one context run in call order on the device whatever their
  // streams (each waits for the previous one: they share the context's buffers); for parallel
  // work use one context per stream. Thread-safety as for every context: one caller at a time.
  // The first calls at a new shape bucket run eagerly (and may block on allocation); graphs are
  // captured on an internal stream and launched on `stream` from then on.
  // A shape outside every profile, a wrong dtype or count, bad memory → error Status, nothing
  // queued. kUnsupported on a backend without device streams (cpu: BackendExecutor's default).
  virtual Status enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                                   DeviceStream stream) = 0;
  // What this context chose at run time, for inspection and logs: on the cuda backend each
  // shape bucket's CUDA graph and its input/output path (mapped zero-copy or pinned copies,
  // with the times measured at capture). "" when there is nothing to say.
  virtual std::string describe() const { return ""; }
  // Memory this context holds now (device memory on a GPU backend): intermediates, scratch,
  // workspace; the engine's weights are not counted (Engine::weight_bytes). It grows with the
  // largest batch (bucket) the context ran, never to the profile's maximum before that runs.
  virtual int64_t memory_bytes() const { return 0; }
  // memory_bytes() after this context's runs at each batch bucket it ran, ascending (what it held
  // once it had run that bucket, the buckets before included: memory only grows); empty where
  // the backend does not track it (cpu) or before the first run. Exact shapes (no buckets): one
  // entry with batch −1.
  virtual std::vector<BucketMemory> memory_bytes_by_bucket() const { return {}; }
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Deserializes a plan. A corrupt, truncated or incompatible plan → error naming why.
  static Result<std::shared_ptr<Engine>> load(std::span<const uint8_t> plan);
  static Result<std::shared_ptr<Engine>> load_file(const std::string& path);

  virtual const std::vector<BindingInfo>& inputs() const = 0;
  virtual const std::vector<BindingInfo>& outputs() const = 0;
  virtual const std::vector<OptimizationProfile>& profiles() const = 0;
  virtual std::string backend() const = 0;
  // Scratch memory one context needs at the max profile shapes: an estimate, linear in the
  // input size from the build's run at the opt shape (bucket_memory() has measured figures).
  virtual int64_t device_memory_bytes() const = 0;
  // A context's memory per batch bucket, measured at build (Plan::bucket_memory, plan format
  // ≥ 4: after three runs at each bucket, ascending, in one context); empty for older plans,
  // models without batch buckets, and the buckets the build's time budget did not reach.
  virtual std::vector<BucketMemory> bucket_memory() const { return {}; }
  // Bytes of the weights as the backend holds them (device memory on a GPU backend; FP16
  // plans hold half-size matrices), shared by every context.
  virtual int64_t weight_bytes() const { return 0; }
  // Host memory for inputs and outputs, freed when the last copy of the pointer goes:
  // page-locked on the cuda backend (large inputs are copied from it by DMA without staging),
  // 64-byte aligned otherwise. Null when the allocation fails.
  virtual std::shared_ptr<void> allocate_host(size_t bytes) const { (void)bytes; return nullptr; }
  // Human-readable layers, fusions, tactics, precisions, memory (`ticksentry inspect`).
  virtual std::string describe() const = 0;
  virtual Result<std::unique_ptr<ExecutionContext>> create_context() const = 0;
};

// Builds a plan from an ONNX model (bytes of a ModelProto).
Result<std::vector<uint8_t>> build(std::span<const uint8_t> onnx_model, const BuildOptions& options);
Result<std::vector<uint8_t>> build_file(const std::string& onnx_path, const BuildOptions& options);

}  // namespace ts::engine
