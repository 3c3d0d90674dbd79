// The CUDA executor proper (cuda_executor.h): creation, device memory, staging, eager runs and
// the steady replay of a bucket's graph. Capture and bucket choice: cuda_graph_capture.cpp;
// pipelined chunks: cuda_pipeline.cpp.
#include "engine/backends/cuda/cuda_executor.h"

#include "engine/backends/cuda/cuda_block_cache.h"
#include "engine/backends/cuda/cuda_buffer_plan.h"
#include "engine/backends/cuda/cuda_launch.h"
#include "engine/bench.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace ts::engine::cuda {
namespace {

Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }

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
  for (cudaEvent_t e : {done_ev_, fork_ev_, join_ev_})
    if (e) cudaEventDestroy(e);
  for (cudaEvent_t e : chunk_ev_)
    if (e) cudaEventDestroy(e);
  if (copy_stream_) cudaStreamDestroy(copy_stream_);
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
  forced_chunks_ = forced_pipeline_chunks();
  graphs_on_ = cuda_graphs_for_this_thread();
  TS_CUBLAS(cublasLtCreate(&lt_));  // its workspace: at the first GEMM (lt_workspace())
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
  plan_ = plan_buffers(g, skip_);
  slot_of_ = plan_.slot;
  pool_.resize(size_t(plan_.slots));
  value_bytes_.assign(g.values.size(), 0);
  is_input_.assign(g.values.size(), false);
  for (ValueId id : g.inputs) is_input_[size_t(id)] = true;
  in_stage_.resize(g.inputs.size());
  direct_.resize(g.inputs.size());
  out_stage_.resize(g.outputs.size());
  in_dev_.resize(g.inputs.size());
  out_dev_.resize(g.outputs.size());
  out_index_.assign(g.values.size(), -1);
  out_direct_ok_.assign(g.outputs.size(), false);
  redirected_.assign(g.outputs.size(), false);
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    const ValueId id = g.outputs[o];
    if (out_index_[size_t(id)] >= 0) {  // the same value twice among the outputs: staged copies
      out_direct_ok_[size_t(out_index_[size_t(id)])] = false;
      continue;
    }
    out_index_[size_t(id)] = int(o);
    bool ok = !g.value(id).is_constant && !is_input_[size_t(id)];
    int producers = 0;
    for (const Node& n : g.nodes) {
      for (ValueId in : n.inputs) ok = ok && in != id;  // read by a later node: keep it on the device
      for (ValueId out : n.outputs) {
        if (out != id) continue;
        ++producers;
        ok = ok && n.op == "GRUStack" && n.outputs.size() == 1 && n.attrs.count("head_activation");  // its fused head
      }
    }
    out_direct_ok_[o] = ok && producers == 1;
  }
  out_dims_.resize(g.outputs.size());
  return Status::ok();
}

Status CudaExecutor::sync() {
  if (async_pending_) {
    cudaError_t e = cudaEventSynchronize(done_ev_);
    if (e != cudaSuccess)
      return cuda_error(e, "cudaEventSynchronize (work this engine queued on the caller's stream failed)");
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
  if (redirect_outputs_ && id < out_index_.size() && out_index_[id] >= 0 && out_direct_ok_[size_t(out_index_[id])]) {
    const size_t o = size_t(out_index_[id]);
    if (out_stage_[o].dev && need <= out_stage_[o].bytes) {  // sized by the eager run before the capture
      t.on_host = false;
      t.data = out_stage_[o].dev;
      redirected_[o] = true;
      return Status::ok();
    }
  }
  DeviceBuffer& buf = slot >= 0 ? pool_[size_t(slot)] : t.storage;
  if (slot >= 0 && id < value_bytes_.size()) value_bytes_[id] = std::max(value_bytes_[id], need);
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
    for (size_t i = 0; i < scratch_slots_.size(); ++i)
      if (i != slot) total += scratch_slots_[i].bytes();
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

size_t CudaExecutor::lt_workspace_limit() const {
  size_t ws = kLtWorkspaceMaxBytes;
  if (options_.workspace_bytes > 0) ws = std::min(ws, size_t(options_.workspace_bytes) / 4);
  return ws;
}

Result<LtWorkspace> CudaExecutor::lt_workspace(size_t bytes) {
  if (bytes > lt_workspace_.bytes() || (bytes > 0 && !lt_workspace_.get())) {
    size_t total = bytes;
    for (const DeviceBuffer& b : scratch_slots_) total += b.bytes();
    if (options_.workspace_bytes > 0 && total > size_t(options_.workspace_bytes)) {
      return Status(StatusCode::kOutOfRange, "needs " + std::to_string(total) + " bytes of device workspace, over the " +
                                                 "workspace limit of " + std::to_string(options_.workspace_bytes) +
                                                 " bytes (BuildOptions::workspace_bytes, --memPoolSize)");
    }
    if (capturing_) {  // a GEMM needing more under capture: the capture is redone after an eager run
      realloc_in_capture_ = true;
      return Status(StatusCode::kInternal, "cuBLASLt workspace reallocation during graph capture");
    }
    TS_RETURN_IF_ERROR(sync());  // queued GEMMs may still use the old workspace
    TS_RETURN_IF_ERROR(lt_workspace_.ensure(bytes));
    ++generation_;  // graphs captured before hold the old address
  }
  return LtWorkspace{lt_workspace_.get(), lt_workspace_.bytes()};
}

Status CudaExecutor::stage_inputs(std::span<const TensorView> inputs, const std::vector<bool>* staged) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t bytes = padded_[i].bytes();
    direct_[i] = bytes >= kDirectCopyBytes;
    if (direct_[i]) continue;
    TS_RETURN_IF_ERROR(ensure_pinned(in_stage_[i], bytes));
    if (staged && !(*staged)[i]) continue;  // the zero-copy graph's copy-in reads the caller's rows
    const size_t n = inputs[i].bytes();     // the caller's rows; a bucket's padding rows stay
    if (n) std::memcpy(in_stage_[i].p, inputs[i].data, n);
  }
  return Status::ok();
}

Status CudaExecutor::copy_bytes(void* dst, const void* src, size_t bytes, bool kernel, cudaStream_t s, bool dependent) {
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
  return dependent ? launch_strided_copy_dependent(src, dst, d, eb, s) : launch_strided_copy(src, dst, d, eb, s);
}

Status CudaExecutor::check_memory(const void* p, const char* what, const std::string& name, void** dev) const {
  *dev = nullptr;
  cudaPointerAttributes a{};
  cudaError_t e = cudaPointerGetAttributes(&a, p);
  if (e != cudaSuccess) {
    cudaGetLastError();
    return invalid(std::string(what) + " " + name + ": not memory the GPU can reach (" + cudaGetErrorString(e) + ")");
  }
  if (a.type == cudaMemoryTypeUnregistered) {
    return invalid(std::string(what) + " " + name +
                   ": pageable host memory cannot be copied asynchronously; use Engine::allocate_host, " +
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
  // PERF NOTE: in a zero-copy capture the kernel that produces an output once with plain stores
  // (out_direct_ok_: a GRUStack's fused head) writes it straight into the mapped staging, so no
  // copy-out kernel runs after it (batch 1: 4 bytes over the bus from the wavefront's last CTA
  // instead of a dependent kernel's launch, read and write; the batch-1 P50/P99 before and after,
  // interleaved in one call, are in commit 79bcfbe's message: no bench file was kept). The tensor
  // points at its device buffer again right after: every other path (DMA graph, eager runs, the
  // caller's stream) uses it.
  std::fill(redirected_.begin(), redirected_.end(), false);
  redirect_outputs_ = mapped && capturing_;
  Status ls = launch_nodes();
  redirect_outputs_ = false;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    if (!redirected_[i]) continue;
    const size_t id = size_t(g.outputs[i]);
    const int slot = slot_of_[id];
    values_[id].data = slot >= 0 ? pool_[size_t(slot)].get() : values_[id].storage.get();
  }
  TS_RETURN_IF_ERROR(ls);
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const DevTensor& t = values_[size_t(g.outputs[i])];
    out_dims_[i] = t.dims;
    if (io == Io::kKernelsOnly || redirected_[i]) continue;
    TS_RETURN_IF_ERROR(ensure_pinned(out_stage_[i], t.bytes()));
    TS_RETURN_IF_ERROR(copy_bytes(mapped ? out_stage_[i].dev : out_stage_[i].p, t.data, t.bytes(), mapped, stream_,
                                  /*dependent=*/i == 0));
  }
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
    buckets_off(run_bucket_);
    pad_inputs(inputs);
    s = run_padded(inputs);
  }
  if (s) note_bucket_memory();
  return s;
}

void CudaExecutor::note_bucket_memory() {
  // The map's node exists after a bucket's first run: replays neither allocate nor sum.
  auto it = bucket_memory_.find(run_bucket_);
  if (it != bucket_memory_.end() && memory_generation_ == generation_) return;
  const int64_t held = memory_bytes();
  if (it == bucket_memory_.end()) {
    bucket_memory_.emplace(run_bucket_, held);
  } else {
    it->second = std::max(it->second, held);
  }
  memory_generation_ = generation_;
}

Status CudaExecutor::run_padded(std::span<const TensorView> inputs) {
  const int found = graphs_.find(GraphPath::kRun, padded_);
  GraphEntry* e = found >= 0 ? &graphs_.at(found) : nullptr;
  if (e && e->generation == generation_ && !e->copy_in.empty()) {
    for (size_t i = 0; i < inputs.size(); ++i) direct_[i] = padded_[i].bytes() >= kDirectCopyBytes;
    TS_RETURN_IF_ERROR(point_copy_in(*e, inputs));
    TS_RETURN_IF_ERROR(stage_inputs(inputs, &staged_));
    if (e->generation != generation_) TS_RETURN_IF_ERROR(stage_inputs(inputs));  // staging moved
  } else {
    TS_RETURN_IF_ERROR(stage_inputs(inputs));
  }
  // Replay: the bucket's graph is current (staging above may have moved a buffer: then not).
  if (e && e->generation == generation_) return replay(*e, inputs);
  if (e) graphs_.erase(found);
  // Capture: the second run at this shape.
  const std::string shape = dims_key(padded_);
  if (graphs_on_ && seen_.count(shape) && graphs_.size() < kMaxGraphs) {
    bool ran = false;
    Status s = capture_run(inputs, shape, &ran);
    if (ran) return s;
  }
  // Eager: the first run at this shape, a capture a reallocation interrupted, or no room left.
  return run_eager(inputs, shape);
}

Status CudaExecutor::replay(GraphEntry& e, std::span<const TensorView> inputs) {
  bool piped = false;
  if (e.pipe.exec) TS_RETURN_IF_ERROR(point_pipeline(e.pipe, inputs, &piped));
  if (piped) {
    TS_CUDA(cudaGraphLaunch(e.pipe.exec, stream_));
  } else if (e.exec) {
    TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, e.io, stream_));
    TS_CUDA(cudaGraphLaunch(e.exec, stream_));
  } else {
    // A bucket shrunk to its chunks (shrink_to_pipeline) keeps no plain graph: a call its
    // pipelined graph cannot take (pageable input) runs the same chunks eagerly.
    out_dims_ = e.out_dims;  // enqueue_pipeline sizes the output staging from the bucket's
    Status es = enqueue_pipeline(inputs, e.pipe.chunks);
    if (!es) {
      Status drained = sync();
      (void)drained;
      return es;
    }
  }
  TS_RETURN_IF_ERROR(sync());
  out_dims_ = e.out_dims;
  return Status::ok();
}

Status CudaExecutor::run_eager(std::span<const TensorView> inputs, const std::string& shape) {
  Status s = enqueue_all(inputs, Io::kCopy, true);
  if (!s) {
    Status drained = sync();
    (void)drained;
    return s;
  }
  TS_RETURN_IF_ERROR(sync());
  seen_[shape] = 1;
  return replan_buffers();
}

// --- memory (cuda_buffer_plan.h) --------------------------------------------------------------

Status CudaExecutor::release_buffers() {
  TS_RETURN_IF_ERROR(sync());
  drop_graphs();
  // cudaFree, not the block cache: the point is to give the memory back.
  for (DeviceBuffer& b : pool_) b.reset();
  for (DeviceBuffer& b : scratch_slots_) b.reset();
  ++generation_;
  return Status::ok();
}

Status CudaExecutor::replan_buffers() {
  if (pool_.empty() || plan_.slots == 0) return Status::ok();  // unshared (builder timing) or nothing pooled
  size_t held = 0;
  for (const DeviceBuffer& b : pool_) held += b.bytes();
  BufferPlan by_size = plan_buffers_by_size(plan_, value_bytes_);
  const size_t need = plan_buffers_bytes(by_size, value_bytes_);
  // Only for a real gain (≥ 1 MiB and ≥ 1/16 of what is held): each change frees the pool and
  // drops the graphs, which the next runs re-capture.
  if (need + (size_t(1) << 20) > held || need + held / 16 > held) return Status::ok();
  TS_RETURN_IF_ERROR(release_buffers());
  replanned_from_ = held;
  replanned_to_ = need;
  slot_of_ = by_size.slot;
  pool_.clear();
  pool_.resize(size_t(by_size.slots));
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
    // Reused scratch, not a fresh vector: steady runs allocate nothing (cuda_alloc_test).
    scratch_dims_.assign(out_dims_[i].begin(), out_dims_[i].end());
    if (run_bucket_ >= 0 && !scratch_dims_.empty()) scratch_dims_[0] = run_batch_;  // trimmed to the caller's batch
    TS_RETURN_IF_ERROR(check_output_room(g.value(g.outputs[i]).name, o, scratch_dims_, t.dtype));
    o.dims.assign(scratch_dims_.begin(), scratch_dims_.end());
    size_t bytes = size_t(shape_numel(o.dims)) * dtype_size(t.dtype);
    if (bytes) std::memcpy(o.data, out_stage_[i].p, bytes);
  }
  return Status::ok();
}

std::vector<std::vector<int64_t>> CudaExecutor::output_dims() const {
  std::vector<std::vector<int64_t>> d = out_dims_;
  for (auto& dims : d) {
    if (run_bucket_ >= 0 && !dims.empty()) dims[0] = run_batch_;
  }
  return d;
}

Status CudaExecutor::launch_on_stream(cudaStream_t on, cudaGraphExec_t exec, Io io, std::span<const TensorView> inputs,
                                      std::span<TensorView> outputs, bool* mismatch) {
  const Graph& g = program_->graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    DevTensor& t = values_[size_t(g.inputs[i])];
    if (!exec) TS_RETURN_IF_ERROR(alloc(t, padded_[i].dtype, padded_[i].dims));
    const bool k = io == Io::kMapped && in_dev_[i];
    TS_RETURN_IF_ERROR(copy_bytes(t.data, k ? in_dev_[i] : inputs[i].data, inputs[i].bytes(), k, on));
  }
  if (exec) {
    TS_CUDA(cudaGraphLaunch(exec, on));
  } else {
    TS_RETURN_IF_ERROR(enqueue_all(inputs, Io::kKernelsOnly, false));
    if (run_bucket_ != run_batch_ && !outputs_follow_batch(run_bucket_)) {
      *mismatch = true;
      return Status(StatusCode::kInternal, "output dims do not follow the padded batch");
    }
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const DevTensor& t = values_[size_t(g.outputs[i])];
    const bool k = io == Io::kMapped && out_dev_[i];
    scratch_dims_.assign(out_dims_[i].begin(), out_dims_[i].end());
    if (run_bucket_ >= 0 && !scratch_dims_.empty()) scratch_dims_[0] = run_batch_;
    TS_RETURN_IF_ERROR(check_output_room(g.value(g.outputs[i]).name, outputs[i], scratch_dims_, t.dtype));
    const size_t bytes = row_bytes(out_dims_[i], t.dtype, run_bucket_ >= 0 ? run_batch_ : -1);
    TS_RETURN_IF_ERROR(copy_bytes(k ? out_dev_[i] : outputs[i].data, t.data, bytes, k, on));
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
  for (size_t i = 0; i < inputs.size(); ++i) {
    in_dev_[i] = nullptr;
    if (!inputs[i].bytes()) continue;
    TS_RETURN_IF_ERROR(check_memory(inputs[i].data, "input", g.value(g.inputs[i]).name, &in_dev_[i]));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& v = g.value(g.outputs[i]);
    if (outputs[i].dtype != v.dtype) {
      return invalid("output " + v.name + ": dtype " + dtype_name(outputs[i].dtype) + ", engine produces " +
                     dtype_name(v.dtype));
    }
    if (!outputs[i].data) return invalid("output " + v.name + ": null data");
    TS_RETURN_IF_ERROR(check_memory(outputs[i].data, "output", v.name, &out_dev_[i]));
  }
  pad_inputs(inputs);
  const int64_t batch = run_batch_, bucket = run_bucket_;
  if (async_pending_) TS_CUDA(cudaStreamWaitEvent(s, done_ev_));  // the previous call of this context
  int found = graphs_.find(GraphPath::kOnStream, padded_);
  if (found >= 0 && graphs_.at(found).generation != generation_) {
    graphs_.erase(found);
    found = -1;
  }
  if (found < 0) {  // the key string is built only off the replay path
    const std::string shape = dims_key(padded_);
    if (graphs_on_ && seen_.count(shape) && graphs_.size() < kMaxGraphs) {
      Result<int> captured = capture_on_stream(inputs, outputs, shape, s);
      if (!captured) return captured.status();
      found = captured.value();
    }
    if (found < 0) {
      // Eager, on the internal stream after the caller's queued work; the caller's stream waits
      // for it. Allocation here may block until the device is idle.
      TS_CUDA(cudaEventRecord(fork_ev_, s));
      TS_CUDA(cudaStreamWaitEvent(stream_, fork_ev_));
      bool bucket_mismatch = false;  // the eager run found an output that does not follow the batch
      Status ls = launch_on_stream(stream_, nullptr, Io::kCopy, inputs, outputs, &bucket_mismatch);
      if (!ls) {
        Status drained = sync();
        (void)drained;
        if (bucket_mismatch) {
          buckets_off(bucket);
          return enqueue_on_stream(inputs, outputs, stream);
        }
        return ls;
      }
      TS_CUDA(cudaEventRecord(join_ev_, stream_));
      TS_CUDA(cudaStreamWaitEvent(s, join_ev_));
      seen_[shape] = 1;
    }
  }
  if (found >= 0) {  // replay: the bucket's kernels-only graph between the caller's copies
    const GraphEntry& e = graphs_.at(found);
    out_dims_ = e.out_dims;
    bool unused = false;
    TS_RETURN_IF_ERROR(launch_on_stream(s, e.exec, e.io, inputs, outputs, &unused));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].dims = out_dims_[i];
    if (bucket >= 0 && !outputs[i].dims.empty()) outputs[i].dims[0] = batch;
  }
  TS_CUDA(cudaEventRecord(done_ev_, s));
  async_pending_ = true;
  note_bucket_memory();
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
  o.append(std::to_string(kMaxGraphs)).append(graphs_on_ ? ")\n" : "; graphs off: kernels launched one by one)\n");
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
    o.append("  ").append(key, cut, std::string::npos).append(" ").append(dims).append(": ").append(buf);
    if (!on_stream && c.io == Io::kMapped && c.copy_in_nodes > 0) {
      std::snprintf(buf, sizeof buf, "; copy-in reads page-locked caller inputs directly (%d re-pointable, from %zu bytes)",
                    c.copy_in_nodes, kZeroCopyCallerMinBytes);
      o.append(buf);
    }
    if (!on_stream && c.chunks > 1) {
      std::snprintf(buf, sizeof buf, "; pipelined in %d chunks%s", c.chunks,
                    c.chunks_forced ? " (forced)" : " (copy-in of chunk k+1 under chunk k's kernels)");
      o.append(buf);
    }
    if (!on_stream && !c.chunk_us.empty()) {
      o.append(c.chunks > 1 ? ", measured" : "; pipelining measured, plain kept");
      for (const auto& [k, us] : c.chunk_us) {
        std::snprintf(buf, sizeof buf, " %s%.1f us", k == 1 ? "plain " : "", us);
        if (k > 1) std::snprintf(buf, sizeof buf, " %d chunks %.1f us", k, us);
        o.append(buf);
      }
    }
    o.append("\n");
  }
  // Where memory_bytes() goes (MiB).
  auto mib = [](size_t b) { return double(b) / double(1 << 20); };
  size_t pool = 0, scratch = 0, own = 0, consts = 0;
  for (const DeviceBuffer& p : pool_) pool += p.bytes();
  for (const DeviceBuffer& p : scratch_slots_) scratch += p.bytes();
  for (const DevTensor& t : values_) own += t.storage.bytes();
  for (const DeviceBuffer& c : constants_) consts += c.bytes();
  std::snprintf(buf, sizeof buf, "  memory %.1f MiB: intermediates %.1f in %zu shared buffers, scratch %.1f in %zu, ",
                mib(pool + scratch + own + consts + lt_workspace_.bytes()), mib(pool), pool_.size(), mib(scratch),
                scratch_slots_.size());
  o.append(buf);
  std::snprintf(buf, sizeof buf, "own storage %.1f (inputs, outputs), constants %.1f, cuBLASLt workspace %.1f", mib(own),
                mib(consts), mib(lt_workspace_.bytes()));
  o.append(buf);
  if (replanned_from_ > 0) {
    std::snprintf(buf, sizeof buf, "; buffers chosen by size: %.1f -> %.1f", mib(replanned_from_), mib(replanned_to_));
    o.append(buf);
  }
  if (!bucket_memory_.empty()) {
    o.append("; held after runs at ");
    bool first = true;
    for (const auto& [bucket, bytes] : bucket_memory_) {
      std::snprintf(buf, sizeof buf, "%s%s %lld: %.1f", first ? "" : ", ", bucket < 0 ? "exact shapes" : "bucket",
                    (long long)bucket, mib(size_t(bytes)));
      if (bucket < 0) std::snprintf(buf, sizeof buf, "%sexact shapes: %.1f", first ? "" : ", ", mib(size_t(bytes)));
      o.append(buf);
      first = false;
    }
  }
  if (shrunk_bucket_ > 0) {
    std::snprintf(buf, sizeof buf, "; bucket %lld kept its chunks' buffers only: %.1f -> %.1f", (long long)shrunk_bucket_,
                  mib(shrunk_from_), mib(shrunk_to_));
    o.append(buf);
  }
  o.append("\n");
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

std::vector<BucketMemory> CudaExecutor::memory_bytes_by_bucket() const {
  std::vector<BucketMemory> v;
  for (const auto& [bucket, bytes] : bucket_memory_) v.push_back(BucketMemory{bucket, bytes});
  return v;
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
