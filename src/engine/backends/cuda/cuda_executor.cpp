#include "engine/backends/cuda/cuda_executor.h"

#include "engine/backends/cuda/cuda_buffer_plan.h"

#include <algorithm>
#include <cstring>

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
  if (stream_) cudaStreamSynchronize(stream_);
  drop_graphs();
  for (auto& b : in_stage_) if (b.p) cudaFreeHost(b.p);
  for (auto& b : out_stage_) if (b.p) cudaFreeHost(b.p);
  if (lt_) cublasLtDestroy(lt_);
  if (stream_) cudaStreamDestroy(stream_);
}

Status CudaExecutor::init() {
  const Graph& g = program_->graph;
  TS_CUDA(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
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
  in_stage_.resize(g.inputs.size());
  direct_.resize(g.inputs.size());
  out_stage_.resize(g.outputs.size());
  out_dims_.resize(g.outputs.size());
  return Status::ok();
}

void CudaExecutor::drop_graphs() {
  for (auto& [k, e] : graphs_) if (e.exec) cudaGraphExecDestroy(e.exec);
  graphs_.clear();
}

Status CudaExecutor::sync() {
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
  if (b.p) cudaFreeHost(b.p);
  b.p = nullptr;
  b.bytes = 0;
  size_t n = std::max<size_t>(256, (bytes + 255) & ~size_t(255));
  TS_CUDA(cudaHostAlloc(&b.p, n, cudaHostAllocDefault));
  b.bytes = n;
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

Status CudaExecutor::stage_inputs(std::span<const TensorView> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    size_t bytes = inputs[i].bytes();
    direct_[i] = bytes >= kDirectCopyBytes;
    if (direct_[i]) continue;
    TS_RETURN_IF_ERROR(ensure_pinned(in_stage_[i], bytes));
    if (bytes) std::memcpy(in_stage_[i].p, inputs[i].data, bytes);
  }
  return Status::ok();
}

Status CudaExecutor::copy_direct_inputs(std::span<const TensorView> inputs) {
  const Graph& g = program_->graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!direct_[i]) continue;
    DevTensor& t = values_[size_t(g.inputs[i])];
    TS_CUDA(cudaMemcpyAsync(t.data, inputs[i].data, inputs[i].bytes(), cudaMemcpyHostToDevice, stream_));
  }
  return Status::ok();
}

Status CudaExecutor::enqueue_all(std::span<const TensorView> inputs, bool include_direct) {
  const Graph& g = program_->graph;
  for (size_t i = 0; i < inputs.size(); ++i) {
    DevTensor& t = values_[size_t(g.inputs[i])];
    TS_RETURN_IF_ERROR(alloc(t, inputs[i].dtype, inputs[i].dims));
    if (!t.bytes()) continue;
    if (!direct_[i]) TS_CUDA(cudaMemcpyAsync(t.data, in_stage_[i].p, t.bytes(), cudaMemcpyHostToDevice, stream_));
    else if (include_direct) TS_CUDA(cudaMemcpyAsync(t.data, inputs[i].data, t.bytes(), cudaMemcpyHostToDevice, stream_));
  }
  TS_RETURN_IF_ERROR(launch_nodes());
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const DevTensor& t = values_[size_t(g.outputs[i])];
    TS_RETURN_IF_ERROR(ensure_pinned(out_stage_[i], t.bytes()));
    if (t.bytes()) TS_CUDA(cudaMemcpyAsync(out_stage_[i].p, t.data, t.bytes(), cudaMemcpyDeviceToHost, stream_));
    out_dims_[i] = t.dims;
  }
  return Status::ok();
}

Status CudaExecutor::run(std::span<const TensorView> inputs) {
  const Graph& g = program_->graph;
  if (inputs.size() != g.inputs.size()) {
    return invalid("expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  TS_RETURN_IF_ERROR(stage_inputs(inputs));
  const std::string key = dims_key(inputs);
  auto it = graphs_.find(key);
  if (it != graphs_.end() && it->second.generation == generation_) {
    TS_RETURN_IF_ERROR(copy_direct_inputs(inputs));
    TS_CUDA(cudaGraphLaunch(it->second.exec, stream_));
    TS_RETURN_IF_ERROR(sync());
    out_dims_ = it->second.out_dims;
    return Status::ok();
  }
  if (it != graphs_.end()) {
    cudaGraphExecDestroy(it->second.exec);
    graphs_.erase(it);
  }
  if (seen_.count(key) && graphs_.size() < kMaxGraphs) {
    capturing_ = true;
    realloc_in_capture_ = false;
    TS_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
    Status s = enqueue_all(inputs, false);
    cudaGraph_t graph = nullptr;
    cudaError_t e = cudaStreamEndCapture(stream_, &graph);
    capturing_ = false;
    cudaGraphExec_t exec = nullptr;
    if (s && e == cudaSuccess && graph) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    if (s && e == cudaSuccess && exec) {
      GraphEntry entry{exec, generation_, out_dims_};
      graphs_[key] = std::move(entry);
      TS_RETURN_IF_ERROR(copy_direct_inputs(inputs));
      TS_CUDA(cudaGraphLaunch(exec, stream_));
      return sync();
    }
    if (exec) cudaGraphExecDestroy(exec);
    cudaGetLastError();  // clear a capture error; the eager run below reports real ones
    if (!s && !realloc_in_capture_) return s;
    if (s && e != cudaSuccess) return cuda_error(e, "capturing a CUDA graph");
  }
  Status s = enqueue_all(inputs, true);
  if (!s) {
    Status drained = sync();
    (void)drained;
    return s;
  }
  TS_RETURN_IF_ERROR(sync());
  seen_[key] = 1;
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
    size_t bytes = size_t(shape_numel(o.dims)) * dtype_size(t.dtype);
    if (bytes && !o.data) return invalid("output " + g.value(g.outputs[i]).name + ": null data");
    if (bytes) std::memcpy(o.data, out_stage_[i].p, bytes);
  }
  return Status::ok();
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
