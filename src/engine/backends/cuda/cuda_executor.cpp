#include "engine/backends/cuda/cuda_executor.h"

#include "engine/backends/cuda/cuda_block_cache.h"
#include "engine/backends/cuda/cuda_buffer_plan.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>

namespace ts::engine::cuda {
namespace {

constexpr size_t kLtWorkspaceBytes = size_t(32) << 20;

std::string dims_key(std::span<const TensorView> inputs) {
  std::string k;
  for (const TensorView& t : inputs) {
    for (int64_t d : t.dims) k += std::to_string(d) + ",";
    k += ";";
  }
  return k;
}

Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }

// PERF NOTE: a bucket's zero-copy measurement costs 2 x 10 graph launch + synchronize (~2.5 ms for
// GRU-2x128 at 124 us each). A server warms up several contexts of every engine it loads, and a
// hot swap's time includes that warm-up (the measurement's launches also compete with the serving
// batches), so a choice is measured once per device and bucket IO signature — the bucket's input
// shapes and the bytes it moves each way — and reused by every context, of this Program or a later
// one (a new version of a model moves the same bytes). Mapped reads and DMA copies differ in how
// the bytes travel, which the signature fixes. The one piece of state shared between executors:
// guarded by its mutex, bounded (cleared when full).
struct SharedIoChoice {
  int io = 0;
  double copy_us = 0, mapped_us = 0;
};

class IoChoiceCache {
 public:
  bool find(const std::string& signature, SharedIoChoice* out) {
    std::lock_guard<std::mutex> lk(mu_);
    auto it = m_.find(signature);
    if (it == m_.end()) return false;
    *out = it->second;
    return true;
  }
  void put(const std::string& signature, const SharedIoChoice& c) {
    std::lock_guard<std::mutex> lk(mu_);
    if (m_.size() >= 4096) m_.clear();
    m_[signature] = c;
  }

 private:
  std::mutex mu_;
  std::map<std::string, SharedIoChoice> m_;
};

IoChoiceCache& io_choice_cache() {
  static IoChoiceCache cache;
  return cache;
}

// Bytes of the first `rows` rows of a tensor whose dims are `dims` (all of it when rows < 0).
size_t row_bytes(const std::vector<int64_t>& dims, DType t, int64_t rows) {
  std::vector<int64_t> d = dims;
  if (rows >= 0 && !d.empty()) d[0] = std::min(d[0], rows);
  return size_t(shape_numel(d)) * dtype_size(t);
}

}  // namespace

CudaExecutor::CudaExecutor(std::shared_ptr<const Program> program, const ExecutorOptions& options)
    : program_(std::move(program)), options_(options) {}

Result<std::unique_ptr<CudaExecutor>> CudaExecutor::create(std::shared_ptr<const Program> program,
                                                           const ExecutorOptions& options) {
  std::unique_ptr<CudaExecutor> ex(new CudaExecutor(std::move(program), options));
  TS_RETURN_IF_ERROR(ex->init());
  return ex;
}

CudaExecutor::~CudaExecutor() {
  if (async_pending_) cudaEventSynchronize(done_ev_);
  if (stream_) cudaStreamSynchronize(stream_);
  drop_graphs();
  // The stream is idle: this context's memory goes to the block cache for the next context (a
  // hot swap's next version) instead of cudaFree / cudaFreeHost, which stall every stream.
  for (auto& b : in_stage_) block_cache_give(BlockKind::kMappedHost, b.p, b.bytes);
  for (auto& b : out_stage_) block_cache_give(BlockKind::kMappedHost, b.p, b.bytes);
  for (auto& v : values_) v.storage.release_to_cache();
  for (auto* bufs : {&pool_, &constants_, &scratch_slots_})
    for (auto& b : *bufs) b.release_to_cache();
  lt_workspace_.release_to_cache();
  if (lt_) cublasLtDestroy(lt_);
  for (cudaEvent_t e : {done_ev_, fork_ev_, join_ev_}) if (e) cudaEventDestroy(e);
  if (stream_) cudaStreamDestroy(stream_);
}

Status CudaExecutor::init() {
  const Graph& g = program_->graph;
  TS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  TS_CUDA(cudaEventCreateWithFlags(&done_ev_, cudaEventDisableTiming));
  TS_CUDA(cudaEventCreateWithFlags(&fork_ev_, cudaEventDisableTiming));
  TS_CUDA(cudaEventCreateWithFlags(&join_ev_, cudaEventDisableTiming));
  buckets_ = options_.batch_buckets;
  std::sort(buckets_.begin(), buckets_.end());
  TS_CUBLAS(cublasLtCreate(&lt_));
  size_t ws = kLtWorkspaceBytes;
  if (options_.workspace_bytes > 0) ws = std::min(ws, size_t(options_.workspace_bytes) / 4);
  TS_RETURN_IF_ERROR(lt_workspace_.ensure(ws));
  values_.resize(g.values.size());
  constants_.resize(g.values.size());
  size_t nn = g.nodes.size();
  ins_.resize(nn);
  outs_.resize(nn);
  skip_.resize(nn);
  auto upload_constant = [&](ValueId id) -> Status {
    if (constants_[size_t(id)].get()) return Status::ok();
    const Value& v = g.value(id);
    TS_RETURN_IF_ERROR(constants_[size_t(id)].upload(v.data.data(), v.data.size()));
    DevTensor& t = values_[size_t(id)];
    t.dtype = v.dtype;
    t.dims = v.const_dims();
    t.data = constants_[size_t(id)].get();
    if (v.dtype == DType::kI64) t.host_i64 = constant_as_i64(v);  // shape arithmetic reads it on the host
    return Status::ok();
  };
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes[i];
    auto* k = dynamic_cast<const CudaKernel*>(program_->kernels[i].get());
    if (!k) return Status(StatusCode::kInternal, "node " + n.name + ": not a cuda kernel");
    bool all_const = true;
    for (ValueId id : n.outputs) {
      outs_[i].push_back(id == kNoValue ? nullptr : &values_[size_t(id)]);
      all_const = all_const && (id == kNoValue || g.value(id).is_constant);
    }
    skip_[i] = all_const;
    for (size_t q = 0; q < n.inputs.size(); ++q) {
      ValueId id = n.inputs[q];
      ins_[i].push_back(id == kNoValue ? nullptr : &values_[size_t(id)]);
      if (!skip_[i] && id != kNoValue && g.value(id).is_constant && k->reads_input(q)) {
        TS_RETURN_IF_ERROR(upload_constant(id).with_context("node " + n.name + ": uploading " + g.value(id).name));
      }
    }
  }
  for (ValueId id : g.outputs) {
    if (g.value(id).is_constant) TS_RETURN_IF_ERROR(upload_constant(id));
  }
  BufferPlan plan = plan_buffers(g, skip_);
  slot_of_ = std::move(plan.slot);
  pool_.resize(size_t(plan.slots));
  is_input_.assign(g.values.size(), false);
  for (ValueId id : g.inputs) is_input_[size_t(id)] = true;
  in_stage_.resize(g.inputs.size());
  direct_.resize(g.inputs.size());
  out_stage_.resize(g.outputs.size());
  in_dev_.resize(g.inputs.size());
  out_dev_.resize(g.outputs.size());
  out_dims_.resize(g.outputs.size());
  return Status::ok();
}

void CudaExecutor::drop_graphs() {
  for (auto& [k, e] : graphs_) if (e.exec) cudaGraphExecDestroy(e.exec);
  graphs_.clear();
}

Status CudaExecutor::sync() {
  if (async_pending_) {
    cudaError_t e = cudaEventSynchronize(done_ev_);
    if (e != cudaSuccess) return cuda_error(e, "cudaEventSynchronize (work this engine queued on the caller's stream failed)");
    async_pending_ = false;
  }
  cudaError_t e = cudaStreamSynchronize(stream_);
  if (e != cudaSuccess) return cuda_error(e, "cudaStreamSynchronize (a kernel of this engine failed on the device)");
  return Status::ok();
}

Status CudaExecutor::ensure_pinned(PinnedBuffer& b, size_t bytes) {
  if (bytes <= b.bytes && b.p) return Status::ok();
  if (capturing_) {
    realloc_in_capture_ = true;
    return Status(StatusCode::kInternal, "staging reallocation during graph capture");
  }
  TS_RETURN_IF_ERROR(sync());
  const bool moved = b.p != nullptr;
  block_cache_give(BlockKind::kMappedHost, b.p, b.bytes);  // idle after sync()
  b.p = b.dev = nullptr;
  b.bytes = 0;
  size_t n = std::max<size_t>(256, (bytes + 255) & ~size_t(255));
  // Mapped: the zero-copy graphs read and write it from the device; DMA copies work the same.
  if (!block_cache_take(BlockKind::kMappedHost, n, &b.p, &n)) TS_CUDA(cudaHostAlloc(&b.p, n, cudaHostAllocMapped));
  std::memset(b.p, 0, n);  // a bucket's padding rows read zeros until a real row lands there
  b.bytes = n;
  TS_CUDA(cudaHostGetDevicePointer(&b.dev, b.p, 0));
  // Only a buffer that moved invalidates the graphs captured before: a first allocation is one
  // no graph can reference (graphs of large inputs copy them directly, without staging). Bumping
  // it anyway made the first small batch after a large one drop every large shape's graph, so
  // those were captured again on the hot path — where a capture fails if another thread frees
  // device memory meanwhile (a hot swap releasing the old engine).
  if (moved) ++generation_;
  return Status::ok();
}

Status CudaExecutor::alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) {
  t.dtype = dtype;
  t.dims.assign(dims.begin(), dims.end());
  size_t need = t.bytes();
  const size_t id = size_t(&t - values_.data());
  const int slot = id < slot_of_.size() ? slot_of_[id] : -1;
  DeviceBuffer& buf = slot >= 0 ? pool_[size_t(slot)] : t.storage;
  t.on_host = false;
  if (need > buf.bytes() || !buf.get()) {
    if (capturing_) {
      realloc_in_capture_ = true;
      return Status(StatusCode::kInternal, "device reallocation during graph capture");
    }
    TS_RETURN_IF_ERROR(sync());  // the old storage may still be read by queued work
    TS_RETURN_IF_ERROR(buf.ensure(need));
    ++generation_;
    // A bucket's padding rows of an input are read: zeros until a real row lands there.
    if (id < is_input_.size() && is_input_[id]) TS_CUDA(cudaMemsetAsync(buf.get(), 0, buf.bytes(), stream_));
  }
  t.data = buf.get();
  return Status::ok();
}

Result<void*> CudaExecutor::scratch(size_t bytes) {
  size_t slot = scratch_next_++;
  if (slot >= scratch_slots_.size()) scratch_slots_.resize(slot + 1);
  DeviceBuffer& b = scratch_slots_[slot];
  if (bytes > b.bytes() || !b.get()) {
    size_t total = lt_workspace_.bytes() + bytes;
    for (size_t i = 0; i < scratch_slots_.size(); ++i) if (i != slot) total += scratch_slots_[i].bytes();
    if (options_.workspace_bytes > 0 && total > size_t(options_.workspace_bytes)) {
      return Status(StatusCode::kOutOfRange, "needs " + std::to_string(total) + " bytes of device workspace, over the " +
                                                 "workspace limit of " + std::to_string(options_.workspace_bytes) +
                                                 " bytes (BuildOptions::workspace_bytes, --memPoolSize)");
    }
    if (capturing_) {
      realloc_in_capture_ = true;
      return Status(StatusCode::kInternal, "scratch reallocation during graph capture");
    }
    TS_RETURN_IF_ERROR(sync());
    TS_RETURN_IF_ERROR(b.ensure(bytes));
    ++generation_;
  }
  return b.get();
}

int64_t CudaExecutor::bucket_of(int64_t batch) const {
  for (int64_t b : buckets_) {
    if (b >= batch) return b;
  }
  return batch;
}

void CudaExecutor::pad_inputs(std::span<const TensorView> inputs) {
  // Assigned in place: the dims vectors keep their capacity, so a warm run allocates nothing.
  padded_.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    padded_[i].dtype = inputs[i].dtype;
    padded_[i].dims.assign(inputs[i].dims.begin(), inputs[i].dims.end());
    padded_[i].data = inputs[i].data;
  }
  run_batch_ = run_bucket_ = -1;
  if (buckets_.empty() || inputs.empty()) return;
  for (const TensorView& t : inputs) {
    if (t.dims.empty() || t.dims[0] != inputs[0].dims[0]) return;
  }
  run_batch_ = inputs[0].dims[0];
  run_bucket_ = bucket_of(run_batch_);
  for (TensorView& t : padded_) t.dims[0] = run_bucket_;
}

bool CudaExecutor::outputs_follow_batch(int64_t bucket) const {
  for (const auto& d : out_dims_) {
    if (d.empty() || d[0] != bucket) return false;
  }
  return true;
}

Status CudaExecutor::stage_inputs(std::span<const TensorView> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t bytes = padded_[i].bytes();
    direct_[i] = bytes >= kDirectCopyBytes;
    if (direct_[i]) continue;
    TS_RETURN_IF_ERROR(ensure_pinned(in_stage_[i], bytes));
    const size_t n = inputs[i].bytes();  // the caller's rows; a bucket's padding rows stay
    if (n) std::memcpy(in_stage_[i].p, inputs[i].data, n);
  }
  return Status::ok();
}

Status CudaExecutor::copy_bytes(void* dst, const void* src, size_t bytes, bool kernel, cudaStream_t s) {
  if (!bytes) return Status::ok();
  if (!kernel) {
    TS_CUDA(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s));
    return Status::ok();
  }
  const uintptr_t a = reinterpret_cast<uintptr_t>(dst) | reinterpret_cast<uintptr_t>(src) | bytes;
  const int eb = a % 8 == 0 ? 8 : a % 4 == 0 ? 4 : a % 2 == 0 ? 2 : 1;
  StridedDims d;
  d.rank = 1;
  d.dims[0] = int64_t(bytes) / eb;
  d.strides[0] = 1;
  return launch_strided_copy(src, dst, d, eb, s);
}

Status CudaExecutor::check_memory(const void* p, const std::string& what, void** dev) const {
  *dev = nullptr;
  cudaPointerAttributes a{};
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return invalid(what + ": not memory the GPU can reach (" + cudaGetErrorString(e) + ")");
  }
  if (a.type == cudaMemoryTypeUnregistered) {
    return invalid(what + ": pageable host memory cannot be copied asynchronously; use Engine::allocate_host, " +
                   "page-locked (cudaHostAlloc, cudaHostRegister) or device memory");
  }
  *dev = a.devicePointer;
  return Status::ok();
}

Status CudaExecutor::copy_direct_inputs(std::span<const TensorView> inputs, Io io, cudaStream_t s) {
  const Graph& g = program_->graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!direct_[i]) continue;
    DevTensor& t = values_[size_t(g.inputs[i])];
    const void* src = inputs[i].data;
    bool kernel = false;
    if (io == Io::kMapped) {  // the copy kernel reads the caller's memory when it is page-locked
      cudaPointerAttributes a{};
      if (cudaPointerGetAttributes(&a, src) == cudaSuccess && a.type == cudaMemoryTypeHost && a.devicePointer) {
        src = a.devicePointer;
        kernel = true;
      }
      cudaGetLastError();
    }
    TS_RETURN_IF_ERROR(copy_bytes(t.data, src, inputs[i].bytes(), kernel, s));
  }
  return Status::ok();
}

Status CudaExecutor::enqueue_all(std::span<const TensorView> inputs, Io io, bool include_direct) {
  const Graph& g = program_->graph;
  const bool mapped = io == Io::kMapped;
  for (size_t i = 0; i < inputs.size(); ++i) {
    DevTensor& t = values_[size_t(g.inputs[i])];
    TS_RETURN_IF_ERROR(alloc(t, padded_[i].dtype, padded_[i].dims));
    if (!t.bytes() || io == Io::kKernelsOnly) continue;
    if (!direct_[i]) {
      TS_RETURN_IF_ERROR(copy_bytes(t.data, mapped ? in_stage_[i].dev : in_stage_[i].p, t.bytes(), mapped, stream_));
    }
  }
  if (include_direct && io != Io::kKernelsOnly) TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, io, stream_));
  TS_RETURN_IF_ERROR(launch_nodes());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const DevTensor& t = values_[size_t(g.outputs[i])];
    out_dims_[i] = t.dims;
    if (io == Io::kKernelsOnly) continue;
    TS_RETURN_IF_ERROR(ensure_pinned(out_stage_[i], t.bytes()));
    TS_RETURN_IF_ERROR(copy_bytes(mapped ? out_stage_[i].dev : out_stage_[i].p, t.data, t.bytes(), mapped, stream_));
  }
  return Status::ok();
}

Status CudaExecutor::capture(Io io, std::span<const TensorView> inputs, cudaGraphExec_t* exec) {
  *exec = nullptr;
  TS_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  realloc_in_capture_ = false;
  Status s = enqueue_all(inputs, io, false);
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  capturing_ = false;
  if (s && e == cudaSuccess && graph) e = cudaGraphInstantiate(exec, graph, 0);
  if (graph) cudaGraphDestroy(graph);
  if (s && e == cudaSuccess && *exec) return Status::ok();
  if (*exec) cudaGraphExecDestroy(*exec);
  *exec = nullptr;
  cudaGetLastError();  // clear a capture error; the eager run that follows reports real ones
  if (!s && !realloc_in_capture_) return s;
  if (s && e != cudaSuccess) return cuda_error(e, "capturing a CUDA graph");
  return Status::ok();
}

Status CudaExecutor::time_variants(const std::function<Status(int)>& launch, double* us0, double* us1) {
  using clock = std::chrono::steady_clock;
  constexpr int kWarm = 1, kRuns = 9;
  std::vector<double> t[2];
  for (int r = 0; r < kWarm + kRuns; ++r) {
    for (int v = 0; v < 2; ++v) {
      auto t0 = clock::now();
      TS_RETURN_IF_ERROR(launch(v));
      TS_RETURN_IF_ERROR(sync());
      auto t1 = clock::now();
      if (r >= kWarm) t[v].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  for (auto& v : t) std::sort(v.begin(), v.end());
  *us0 = t[0][t[0].size() / 2];
  *us1 = t[1][t[1].size() / 2];
  return Status::ok();
}

Status CudaExecutor::run(std::span<const TensorView> inputs) {
  const Graph& g = program_->graph;
  if (inputs.size() != g.inputs.size()) {
    return invalid("expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  // After an enqueue_on_stream: the device buffers are shared, so this run starts after it.
  if (async_pending_) TS_CUDA(cudaStreamWaitEvent(stream_, done_ev_));
  pad_inputs(inputs);
  Status s = run_padded(inputs);
  if (s && run_bucket_ != run_batch_ && !outputs_follow_batch(run_bucket_)) {
    buckets_off_ = "an output's dim 0 is not the padded batch " + std::to_string(run_bucket_);
    buckets_.clear();
    drop_graphs();
    seen_.clear();
    pad_inputs(inputs);
    return run_padded(inputs);
  }
  return s;
}

Status CudaExecutor::run_padded(std::span<const TensorView> inputs) {
  const Graph& g = program_->graph;
  TS_RETURN_IF_ERROR(stage_inputs(inputs));
  const std::string shape = dims_key(padded_);
  const std::string key = shape + "run";
  auto it = graphs_.find(key);
  if (it != graphs_.end() && it->second.generation == generation_) {
    TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, it->second.io, stream_));
    TS_CUDA(cudaGraphLaunch(it->second.exec, stream_));
    TS_RETURN_IF_ERROR(sync());
    out_dims_ = it->second.out_dims;
    return Status::ok();
  }
  if (it != graphs_.end()) {
    cudaGraphExecDestroy(it->second.exec);
    graphs_.erase(it);
  }
  if (seen_.count(shape) && graphs_.size() < kMaxGraphs) {
    cudaGraphExec_t copy_exec = nullptr, mapped_exec = nullptr;
    TS_RETURN_IF_ERROR(capture(Io::kCopy, inputs, &copy_exec));
    if (copy_exec) {
      GraphEntry entry{copy_exec, generation_, Io::kCopy, out_dims_};
      size_t in_bytes = 0, out_bytes = 0;
      bool device_outputs = true;
      for (const TensorView& t : padded_) in_bytes += t.bytes();
      for (ValueId id : g.outputs) {
        out_bytes += values_[size_t(id)].bytes();
        device_outputs = device_outputs && !values_[size_t(id)].on_host;
      }
      const size_t io_bytes = in_bytes + out_bytes;
      int device = 0;
      cudaGetDevice(&device);
      const std::string signature =
          std::to_string(device) + "|" + key + "|" + std::to_string(in_bytes) + "|" + std::to_string(out_bytes);
      SharedIoChoice known;
      const bool have_known = io_choice_cache().find(signature, &known);
      if (io_bytes <= kZeroCopyMaxBytes && device_outputs && (!have_known || known.io == int(Io::kMapped))) {
        Status cs = capture(Io::kMapped, inputs, &mapped_exec);
        if (!cs) {
          cudaGraphExecDestroy(copy_exec);
          return cs;
        }
      }
      IoChoice c;
      if (have_known) {  // another context measured this signature
        c.io = Io(known.io);
        c.copy_us = known.copy_us;
        c.mapped_us = known.mapped_us;
      }
      if (mapped_exec) {
        auto launch = [&](int v) -> Status {
          TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, v ? Io::kMapped : Io::kCopy, stream_));
          TS_CUDA(cudaGraphLaunch(v ? mapped_exec : copy_exec, stream_));
          return Status::ok();
        };
        if (!have_known) {
          Status ts = time_variants(launch, &c.copy_us, &c.mapped_us);
          if (!ts) {
            cudaGraphExecDestroy(copy_exec);
            cudaGraphExecDestroy(mapped_exec);
            return ts;
          }
          c.io = c.mapped_us < c.copy_us ? Io::kMapped : Io::kCopy;
          io_choice_cache().put(signature, SharedIoChoice{int(c.io), c.copy_us, c.mapped_us});
        }
        cudaGraphExecDestroy(c.io == Io::kMapped ? copy_exec : mapped_exec);
        entry.exec = c.io == Io::kMapped ? mapped_exec : copy_exec;
        entry.io = c.io;
      }
      c.io = entry.io;  // what runs (copies when the zero-copy graph could not be captured)
      io_[key] = c;
      graphs_[key] = entry;
      TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, entry.io, stream_));
      TS_CUDA(cudaGraphLaunch(entry.exec, stream_));
      return sync();
    }
  }
  Status s = enqueue_all(inputs, Io::kCopy, true);
  if (!s) {
    Status drained = sync();
    (void)drained;
    return s;
  }
  TS_RETURN_IF_ERROR(sync());
  seen_[shape] = 1;
  return Status::ok();
}

Status CudaExecutor::copy_outputs(std::span<TensorView> outputs) const {
  const Graph& g = program_->graph;
  if (outputs.size() != g.outputs.size()) {
    return invalid("expected " + std::to_string(g.outputs.size()) + " outputs, got " + std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const DevTensor& t = values_[size_t(g.outputs[i])];
    TensorView& o = outputs[i];
    if (o.dtype != t.dtype) {
      return invalid("output " + g.value(g.outputs[i]).name + ": dtype " + dtype_name(o.dtype) + ", engine produces " +
                     dtype_name(t.dtype));
    }
    o.dims = out_dims_[i];
    if (run_bucket_ >= 0 && !o.dims.empty()) o.dims[0] = run_batch_;  // trimmed to the caller's batch
    size_t bytes = size_t(shape_numel(o.dims)) * dtype_size(t.dtype);
    if (bytes && !o.data) return invalid("output " + g.value(g.outputs[i]).name + ": null data");
    if (bytes) std::memcpy(o.data, out_stage_[i].p, bytes);
  }
  return Status::ok();
}

Status CudaExecutor::enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                                       DeviceStream stream) {
  const Graph& g = program_->graph;
  if (inputs.size() != g.inputs.size()) {
    return invalid("expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  if (outputs.size() != g.outputs.size()) {
    return invalid("expected " + std::to_string(g.outputs.size()) + " outputs, got " + std::to_string(outputs.size()));
  }
  cudaStream_t s = static_cast<cudaStream_t>(stream.handle);
  // Where the caller's memory is: device addresses the copy kernel may use (zero-copy), and a
  // clear error for pageable memory, before anything is queued.
  std::vector<void*>& in_dev = in_dev_;
  std::vector<void*>& out_dev = out_dev_;
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_dev[i] = nullptr;
    if (!inputs[i].bytes()) continue;
    TS_RETURN_IF_ERROR(check_memory(inputs[i].data, "input " + g.value(g.inputs[i]).name, &in_dev[i]));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = g.value(g.outputs[i]);
    if (outputs[i].dtype != v.dtype) {
      return invalid("output " + v.name + ": dtype " + dtype_name(outputs[i].dtype) + ", engine produces " + dtype_name(v.dtype));
    }
    if (!outputs[i].data) return invalid("output " + v.name + ": null data");
    TS_RETURN_IF_ERROR(check_memory(outputs[i].data, "output " + v.name, &out_dev[i]));
  }
  pad_inputs(inputs);
  const int64_t batch = run_batch_, bucket = run_bucket_;
  bool bucket_mismatch = false;  // an eager run found an output that does not follow the batch
  // Queues the copy-in, `exec` (null: the kernels, eagerly) and the copy-out on `on`.
  auto launch = [&](cudaStream_t on, cudaGraphExec_t exec, Io io) -> Status {
    for (size_t i = 0; i < inputs.size(); ++i) {
      DevTensor& t = values_[size_t(g.inputs[i])];
      if (!exec) TS_RETURN_IF_ERROR(alloc(t, padded_[i].dtype, padded_[i].dims));
      const bool k = io == Io::kMapped && in_dev[i];
      TS_RETURN_IF_ERROR(copy_bytes(t.data, k ? in_dev[i] : inputs[i].data, inputs[i].bytes(), k, on));
    }
    if (exec) {
      TS_CUDA(cudaGraphLaunch(exec, on));
    } else {
      TS_RETURN_IF_ERROR(enqueue_all(inputs, Io::kKernelsOnly, false));
      if (bucket != batch && !outputs_follow_batch(bucket)) {
        bucket_mismatch = true;
        return Status(StatusCode::kInternal, "output dims do not follow the padded batch");
      }
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      const DevTensor& t = values_[size_t(g.outputs[i])];
      const bool k = io == Io::kMapped && out_dev[i];
      const size_t bytes = row_bytes(out_dims_[i], t.dtype, bucket >= 0 ? batch : -1);
      TS_RETURN_IF_ERROR(copy_bytes(k ? out_dev[i] : outputs[i].data, t.data, bytes, k, on));
    }
    return Status::ok();
  };
  if (async_pending_) TS_CUDA(cudaStreamWaitEvent(s, done_ev_));  // the previous call of this context
  const std::string shape = dims_key(padded_);
  const std::string key = shape + "enqueue_on_stream";
  auto it = graphs_.find(key);
  if (it != graphs_.end() && it->second.generation != generation_) {
    cudaGraphExecDestroy(it->second.exec);
    graphs_.erase(it);
    it = graphs_.end();
  }
  if (it == graphs_.end() && seen_.count(shape) && graphs_.size() < kMaxGraphs) {
    cudaGraphExec_t exec = nullptr;
    TS_RETURN_IF_ERROR(capture(Io::kKernelsOnly, inputs, &exec));
    if (exec) {
      GraphEntry entry{exec, generation_, Io::kCopy, out_dims_};
      size_t io_bytes = 0;
      bool all_mapped = true;
      for (size_t i = 0; i < inputs.size(); ++i) {
        io_bytes += padded_[i].bytes();
        all_mapped = all_mapped && (in_dev[i] || !inputs[i].bytes());
      }
      for (size_t i = 0; i < outputs.size(); ++i) {
        io_bytes += values_[size_t(g.outputs[i])].bytes();
        all_mapped = all_mapped && out_dev[i];
      }
      IoChoice c;
      if (io_bytes <= kZeroCopyMaxBytes && all_mapped) {
        // Measured on the internal stream once the caller's queued work is done: copies vs the
        // copy kernel on the caller's memory (it writes the caller's outputs, as the call will).
        TS_CUDA(cudaEventRecord(fork_ev_, s));
        TS_CUDA(cudaStreamWaitEvent(stream_, fork_ev_));
        TS_RETURN_IF_ERROR(time_variants([&](int v) { return launch(stream_, exec, v ? Io::kMapped : Io::kCopy); },
                                         &c.copy_us, &c.mapped_us));
        c.io = c.mapped_us < c.copy_us ? Io::kMapped : Io::kCopy;
        entry.io = c.io;
      }
      io_[key] = c;
      it = graphs_.emplace(key, std::move(entry)).first;
    }
  }
  if (it != graphs_.end()) {
    out_dims_ = it->second.out_dims;
    TS_RETURN_IF_ERROR(launch(s, it->second.exec, it->second.io));
  } else {
    // Eager, on the internal stream after the caller's queued work; the caller's stream waits
    // for it. Allocation here may block until the device is idle.
    TS_CUDA(cudaEventRecord(fork_ev_, s));
    TS_CUDA(cudaStreamWaitEvent(stream_, fork_ev_));
    Status ls = launch(stream_, nullptr, Io::kCopy);
    if (!ls) {
      Status drained = sync();
      (void)drained;
      if (bucket_mismatch) {
        buckets_off_ = "an output's dim 0 is not the padded batch " + std::to_string(bucket);
        buckets_.clear();
        drop_graphs();
        seen_.clear();
        return enqueue_on_stream(inputs, outputs, stream);
      }
      return ls;
    }
    TS_CUDA(cudaEventRecord(join_ev_, stream_));
    TS_CUDA(cudaStreamWaitEvent(s, join_ev_));
    seen_[shape] = 1;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].dims = out_dims_[i];
    if (bucket >= 0 && !outputs[i].dims.empty()) outputs[i].dims[0] = batch;
  }
  TS_CUDA(cudaEventRecord(done_ev_, s));
  async_pending_ = true;
  return Status::ok();
}

std::string CudaExecutor::describe() const {
  std::string o = "cuda context: ";
  if (buckets_.empty()) {
    o += "exact shapes (no batch buckets";
    if (!buckets_off_.empty()) o.append(": ").append(buckets_off_);
    o += ")";
  } else {
    o += "batch buckets";
    for (size_t i = 0; i < buckets_.size(); ++i) o.append(i ? "," : " ").append(std::to_string(buckets_[i]));
    o += " (a batch runs at the smallest bucket >= it, padding rows, outputs trimmed)";
  }
  o.append("; ").append(std::to_string(graphs_.size())).append(" CUDA graphs (at most ");
  o.append(std::to_string(kMaxGraphs)).append(")\n");
  char buf[160];
  for (const auto& [key, c] : io_) {
    // key: "d0,d1,...,;" per input, then the path ("run" or "enqueue_on_stream")
    const size_t cut = key.rfind(';') + 1;
    std::string dims = "[";
    for (size_t i = 0; i < cut; ++i) {
      const bool end_of_input = key[i] == ',' && i + 1 < cut && key[i + 1] == ';';
      if (end_of_input) continue;
      if (key[i] == ';') {
        if (i + 1 < cut) dims += ';';
        continue;
      }
      dims += key[i];
    }
    dims += "]";
    const bool on_stream = key.compare(cut, std::string::npos, "run") != 0;
    if (c.copy_us > 0 && !on_stream) {
      std::snprintf(buf, sizeof buf, "zero-copy (mapped) %.1f us vs pinned copies %.1f us -> %s", c.mapped_us, c.copy_us,
                    c.io == Io::kMapped ? "zero-copy" : "copies");
    } else if (c.copy_us > 0) {
      std::snprintf(buf, sizeof buf, "copy kernel on the caller's memory %.1f us vs cudaMemcpyAsync %.1f us -> %s",
                    c.mapped_us, c.copy_us, c.io == Io::kMapped ? "copy kernel" : "cudaMemcpyAsync");
    } else {
      std::snprintf(buf, sizeof buf, "copies (zero-copy not tried: over %zu bytes or memory not mapped)", kZeroCopyMaxBytes);
    }
    o.append("  ").append(key, cut, std::string::npos).append(" ").append(dims).append(": ").append(buf).append("\n");
  }
  return o;
}

int64_t CudaExecutor::memory_bytes() const {
  int64_t b = int64_t(lt_workspace_.bytes());
  for (const DevTensor& t : values_) b += int64_t(t.storage.bytes());
  for (const DeviceBuffer& p : pool_) b += int64_t(p.bytes());
  for (const DeviceBuffer& c : constants_) b += int64_t(c.bytes());
  for (const DeviceBuffer& s : scratch_slots_) b += int64_t(s.bytes());
  return b;
}

int64_t CudaExecutor::fixed_memory_bytes() const {
  int64_t b = int64_t(lt_workspace_.bytes());
  for (const DeviceBuffer& c : constants_) b += int64_t(c.bytes());
  return b;
}

Status CudaExecutor::launch_nodes() {
  const Graph& g = program_->graph;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (skip_[i]) continue;
    scratch_next_ = 0;
    CudaArgs a;
    a.in = ins_[i];
    a.out = outs_[i];
    a.stream = stream_;
    a.lt = lt_;
    a.lt_workspace = lt_workspace_.get();
    a.lt_workspace_bytes = lt_workspace_.bytes();
    a.env = this;
    Status s = static_cast<const CudaKernel*>(program_->kernels[i].get())->launch(a);
    if (!s) return Status(s.code(), "node " + g.nodes[i].name + " (" + g.nodes[i].op + "): " + s.message());
  }
  return Status::ok();
}

// The builder times a node on the inputs the last run left; with shared buffers those are
// overwritten (or freed, when a later value grew the buffer). So the first time_node() call
// gives every value its own storage and recomputes them all from the graph inputs (still on
// the device in their own buffers). Only the builder's timing executors pay this.
Status CudaExecutor::unshare_buffers() {
  if (pool_.empty()) return Status::ok();
  TS_RETURN_IF_ERROR(sync());
  std::fill(slot_of_.begin(), slot_of_.end(), -1);
  drop_graphs();
  ++generation_;
  TS_RETURN_IF_ERROR(launch_nodes());
  TS_RETURN_IF_ERROR(sync());
  pool_.clear();
  return Status::ok();
}

Result<double> CudaExecutor::time_node(size_t i, const Kernel& k) {
  auto* ck = dynamic_cast<const CudaKernel*>(&k);
  if (!ck || i >= ins_.size()) return Status(StatusCode::kInternal, "time_node: not a cuda kernel");
  TS_RETURN_IF_ERROR(unshare_buffers().with_context("time_node"));
  CudaArgs a;
  a.in = ins_[i];
  a.out = outs_[i];
  a.stream = stream_;
  a.lt = lt_;
  a.lt_workspace = lt_workspace_.get();
  a.lt_workspace_bytes = lt_workspace_.bytes();
  a.env = this;
  drop_graphs();  // the candidate may reallocate this node's outputs
  for (int w = 0; w < 3; ++w) {
    scratch_next_ = 0;
    TS_RETURN_IF_ERROR(ck->launch(a));
  }
  TS_RETURN_IF_ERROR(sync());
  constexpr int kRuns = 15;
  cudaEvent_t ev[kRuns + 1];
  int made = 0;
  Status s;
  for (; made <= kRuns; ++made) {
    cudaError_t e = cudaEventCreate(&ev[made]);
    if (e != cudaSuccess) {
      s = cuda_error(e, "cudaEventCreate");
      break;
    }
  }
  std::vector<float> ms;
  if (s) {
    // Back-to-back launches, an event between each: median of the gaps (device time).
    cudaEventRecord(ev[0], stream_);
    for (int r = 0; r < kRuns && s; ++r) {
      scratch_next_ = 0;
      s = ck->launch(a);
      if (s) cudaEventRecord(ev[r + 1], stream_);
    }
    if (s) s = sync();
    for (int r = 0; r < kRuns && s; ++r) {
      float t = 0;
      cudaError_t e = cudaEventElapsedTime(&t, ev[r], ev[r + 1]);
      if (e != cudaSuccess) s = cuda_error(e, "cudaEventElapsedTime");
      ms.push_back(t);
    }
  }
  for (int q = 0; q < made; ++q) cudaEventDestroy(ev[q]);
  if (!s) return s;
  std::sort(ms.begin(), ms.end());
  return double(ms[ms.size() / 2]) * 1e6;
}

std::vector<std::vector<int64_t>> CudaExecutor::node_input_dims(size_t i) const {
  std::vector<std::vector<int64_t>> d;
  for (const DevTensor* t : ins_[i]) d.push_back(t ? t->dims : std::vector<int64_t>{});
  return d;
}

}  // namespace ts::engine::cuda
