#include "engine/backends/cuda/cuda_executor.h"

#include "engine/backends/cuda/cuda_block_cache.h"
#include "engine/backends/cuda/cuda_buffer_plan.h"
#include "engine/backends/cuda/cuda_launch.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
// batches), so a choice is measured once per device, model architecture and bucket IO signature —
// the bucket's input shapes and the bytes it moves each way — and reused by every context, of this
// Program or a later one (a new version of a model, same architecture, moves the same bytes
// through the same graph). The one piece of state shared between executors:
// guarded by its mutex, bounded (cleared when full).
struct SharedIoChoice {
  int io = 0;
  double copy_us = 0, mapped_us = 0;
  int chunks = 0;  // pipelining choice (signature "pipe|..."): K, 1 = plain; 0 = not measured
  std::vector<std::pair<int, double>> chunk_us;
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

std::atomic<int> g_forced_chunks{0};  // set_pipeline_chunks_for_testing

// Pipelined path: what chunk k (of `rows` rows) copies of an input whose rows are `rb` bytes,
// for a caller batch of `batch` rows: its caller rows, or for a chunk wholly past them one row
// (the caller's first: finite values into a padding row) since a graph copy node cannot be empty.
struct ChunkCopy {
  size_t dst_off, src_off, bytes;
};
// Rows per chunk when a bucket of `bucket` rows runs in k chunks: ceil(bucket / k), the last
// chunk the rest (fewer where k does not divide the bucket). Chunk k starts at row k · rows.
int64_t chunk_rows(int64_t bucket, int k) { return (bucket + k - 1) / k; }

ChunkCopy chunk_copy(int64_t batch, int64_t rows, int k, size_t rb) {
  const int64_t first = int64_t(k) * rows;
  const int64_t n = std::clamp<int64_t>(batch - first, 0, rows);
  if (n > 0) return {size_t(first) * rb, size_t(first) * rb, size_t(n) * rb};
  return {size_t(first) * rb, 0, rb};
}

// True when `p` is page-locked host memory (what a graph copy node may read).
bool page_locked_host(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

}  // namespace

void set_pipeline_chunks_for_testing(int chunks) { g_forced_chunks.store(chunks); }

CopyInSource copy_in_source(const void* caller_dev, size_t caller_bytes, int elem_bytes, const void* staging_dev,
                            size_t bucket_bytes) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(caller_dev);
  const size_t eb = size_t(elem_bytes > 0 ? elem_bytes : 1);
  if (caller_dev && caller_bytes && caller_bytes <= bucket_bytes && a % eb == 0 && caller_bytes % eb == 0) {
    return CopyInSource{caller_dev, caller_bytes, false};
  }
  return CopyInSource{staging_dev, bucket_bytes, true};
}

std::string CudaExecutor::model_fingerprint() const {
  // Every node's op, tactic and packed weight bytes (FP32 vs 16-bit kernels) and every
  // constant's dims: the same for versions of one model (weights differ, kernels do not),
  // different for another architecture, precision or tactic choice.
  const Graph& g = program_->graph;
  std::string f;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const auto* k = i < program_->kernels.size() ? dynamic_cast<const CudaKernel*>(program_->kernels[i].get()) : nullptr;
    f.append(g.nodes[i].op).append("/").append(g.nodes[i].tactic).append("/");
    f.append(std::to_string(k ? k->weight_bytes() : 0)).append(";");
  }
  for (const Value& v : g.values) {
    if (!v.is_constant) continue;
    for (int64_t d : v.const_dims()) f.append(std::to_string(d)).append(",");
    f.append(";");
  }
  return std::to_string(g.nodes.size()) + ":" + std::to_string(std::hash<std::string>{}(f));
}

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
  for (cudaEvent_t e : chunk_ev_) if (e) cudaEventDestroy(e);
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
  forced_chunks_ = g_forced_chunks.load();
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

void CudaExecutor::destroy_pipe(PipeGraph& p) {
  if (p.exec) cudaGraphExecDestroy(p.exec);
  if (p.graph) cudaGraphDestroy(p.graph);
  p = PipeGraph{};
}

void CudaExecutor::destroy_entry(GraphEntry& e) {
  if (e.exec) cudaGraphExecDestroy(e.exec);
  e.exec = nullptr;
  if (e.copy_in_graph) cudaGraphDestroy(e.copy_in_graph);
  e.copy_in_graph = nullptr;
  e.copy_in.clear();
  destroy_pipe(e.pipe);
}

void CudaExecutor::drop_graphs() {
  for (auto& [k, e] : graphs_) destroy_entry(e);
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

Result<LtWorkspace> CudaExecutor::lt_workspace() {
  if (!lt_workspace_.get()) {
    size_t ws = kLtWorkspaceBytes;
    if (options_.workspace_bytes > 0) ws = std::min(ws, size_t(options_.workspace_bytes) / 4);
    size_t total = ws;
    for (const DeviceBuffer& b : scratch_slots_) total += b.bytes();
    if (options_.workspace_bytes > 0 && total > size_t(options_.workspace_bytes)) {
      return Status(StatusCode::kOutOfRange, "needs " + std::to_string(total) + " bytes of device workspace, over the " +
                                                 "workspace limit of " + std::to_string(options_.workspace_bytes) +
                                                 " bytes (BuildOptions::workspace_bytes, --memPoolSize)");
    }
    if (capturing_) {  // first GEMM under capture: the capture is redone after an eager run
      realloc_in_capture_ = true;
      return Status(StatusCode::kInternal, "cuBLASLt workspace allocation during graph capture");
    }
    TS_RETURN_IF_ERROR(lt_workspace_.ensure(ws));
  }
  return LtWorkspace{lt_workspace_.get(), lt_workspace_.bytes()};
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

Status CudaExecutor::stage_inputs(std::span<const TensorView> inputs, const std::vector<bool>* staged) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const size_t bytes = padded_[i].bytes();
    direct_[i] = bytes >= kDirectCopyBytes;
    if (direct_[i]) continue;
    TS_RETURN_IF_ERROR(ensure_pinned(in_stage_[i], bytes));
    if (staged && !(*staged)[i]) continue;  // the zero-copy graph's copy-in reads the caller's rows
    const size_t n = inputs[i].bytes();  // the caller's rows; a bucket's padding rows stay
    if (n) std::memcpy(in_stage_[i].p, inputs[i].data, n);
  }
  return Status::ok();
}

void CudaExecutor::find_copy_in(cudaGraph_t graph, GraphEntry* e) const {
  const Graph& g = program_->graph;
  e->copy_in.assign(g.inputs.size(), CopyInNode{});
  size_t n = 0;
  if (cudaGraphGetNodes(graph, nullptr, &n) != cudaSuccess || n == 0) {
    cudaGetLastError();
    e->copy_in.clear();
    return;
  }
  std::vector<cudaGraphNode_t> nodes(n);
  if (cudaGraphGetNodes(graph, nodes.data(), &n) != cudaSuccess) n = 0;
  bool any = false;
  for (size_t k = 0; k < n; ++k) {
    cudaGraphNodeType type = cudaGraphNodeTypeEmpty;
    if (cudaGraphNodeGetType(nodes[k], &type) != cudaSuccess || type != cudaGraphNodeTypeKernel) continue;
    cudaKernelNodeParams kp{};
    if (cudaGraphKernelNodeGetParams(nodes[k], &kp) != cudaSuccess || !kp.kernelParams) continue;
    const int eb = strided_copy_kernel_elem_bytes(kp.func);
    if (!eb) continue;
    const void* src = *static_cast<void* const*>(kp.kernelParams[0]);
    void* dst = *static_cast<void* const*>(kp.kernelParams[1]);
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      if (direct_[i] || !in_stage_[i].dev || src != in_stage_[i].dev || dst != values_[size_t(g.inputs[i])].data) continue;
      if (padded_[i].bytes() < kZeroCopyCallerMinBytes) continue;  // never worth it in this bucket
      CopyInNode& c = e->copy_in[i];
      c.node = nodes[k];
      c.params = kp;
      c.params.kernelParams = nullptr;
      c.params.extra = nullptr;
      c.dst = dst;
      c.elem_bytes = eb;
      c.src = src;
      c.bytes = padded_[i].bytes();
      any = true;
    }
  }
  cudaGetLastError();
  if (!any) e->copy_in.clear();
}

Status CudaExecutor::point_copy_in(GraphEntry& e, std::span<const TensorView> inputs) {
  // TS_CUDA_ZC_DIRECT=0: always memcpy into the staging (the measurement's baseline).
  static const bool enabled = [] {
    const char* v = std::getenv("TS_CUDA_ZC_DIRECT");
    return !(v && std::string(v) == "0");
  }();
  staged_.assign(inputs.size(), true);
  for (size_t i = 0; i < inputs.size() && i < e.copy_in.size(); ++i) {
    CopyInNode& c = e.copy_in[i];
    if (!c.node) continue;
    const size_t n = inputs[i].bytes();  // the caller's rows; a bucket's padding rows keep what the tensor holds
    const void* caller_dev = nullptr;
    if (enabled && n >= kZeroCopyCallerMinBytes) {
      // Asked every call (a cached answer could outlive the caller's buffer): page-locked host
      // memory has a device address the copy kernel can read over the bus.
      cudaPointerAttributes a{};
      if (cudaPointerGetAttributes(&a, inputs[i].data) == cudaSuccess) {
        if (a.type == cudaMemoryTypeHost) caller_dev = a.devicePointer;
      } else {
        cudaGetLastError();
      }
    }
    const CopyInSource from = copy_in_source(caller_dev, n, c.elem_bytes, in_stage_[i].dev, padded_[i].bytes());
    staged_[i] = from.staged;
    const void* want = from.src;
    const size_t bytes = from.bytes;
    if (want == c.src && bytes == c.bytes) continue;
    const void* in = want;
    void* out = c.dst;
    StridedDims d;
    d.rank = 1;
    d.dims[0] = int64_t(bytes) / c.elem_bytes;
    d.strides[0] = 1;
    int32_t count = int32_t(d.dims[0]);
    void* args[4] = {&in, &out, &d, &count};
    cudaKernelNodeParams kp = c.params;
    kp.kernelParams = args;
    kp.extra = nullptr;
    TS_CUDA(cudaGraphExecKernelNodeSetParams(e.exec, c.node, &kp));
    c.src = want;
    c.bytes = bytes;
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
  // PERF NOTE: in a zero-copy capture the kernel that produces an output once with plain stores
  // (out_direct_ok_: a GRUStack's fused head) writes it straight into the mapped staging, so no
  // copy-out kernel runs after it (batch 1: 4 bytes over the bus from the wavefront's last CTA
  // instead of a dependent kernel's launch, read and write). The tensor points at its device
  // buffer again right after: every other path (DMA graph, eager runs, the caller's stream) uses it.
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

Status CudaExecutor::capture(Io io, std::span<const TensorView> inputs, cudaGraphExec_t* exec, GraphEntry* keep) {
  *exec = nullptr;
  TS_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  realloc_in_capture_ = false;
  Status s = enqueue_all(inputs, io, false);
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  capturing_ = false;
  if (s && e == cudaSuccess && graph) e = cudaGraphInstantiate(exec, graph, 0);
  if (s && e == cudaSuccess && *exec && keep && io == Io::kMapped) {
    find_copy_in(graph, keep);
    if (!keep->copy_in.empty()) {
      keep->copy_in_graph = graph;  // its nodes name the copy-in in cudaGraphExecKernelNodeSetParams
      graph = nullptr;
    }
  }
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
  std::vector<double> us;
  TS_RETURN_IF_ERROR(time_variants(launch, 2, &us));
  *us0 = us[0];
  *us1 = us[1];
  return Status::ok();
}

Status CudaExecutor::time_variants(const std::function<Status(int)>& launch, int n, std::vector<double>* us) {
  using clock = std::chrono::steady_clock;
  constexpr int kWarm = 1, kRuns = 9;
  std::vector<std::vector<double>> t(static_cast<size_t>(n));
  for (int r = 0; r < kWarm + kRuns; ++r) {
    for (int v = 0; v < n; ++v) {
      auto t0 = clock::now();
      TS_RETURN_IF_ERROR(launch(v));
      TS_RETURN_IF_ERROR(sync());
      auto t1 = clock::now();
      if (r >= kWarm) t[size_t(v)].push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  us->clear();
  for (auto& v : t) {
    std::sort(v.begin(), v.end());
    us->push_back(v[v.size() / 2]);
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
  const std::string shape = dims_key(padded_);
  const std::string key = shape + "run";
  auto it = graphs_.find(key);
  if (it != graphs_.end() && it->second.generation == generation_ && !it->second.copy_in.empty()) {
    for (size_t i = 0; i < inputs.size(); ++i) direct_[i] = padded_[i].bytes() >= kDirectCopyBytes;
    TS_RETURN_IF_ERROR(point_copy_in(it->second, inputs));
    TS_RETURN_IF_ERROR(stage_inputs(inputs, &staged_));
    if (it->second.generation != generation_) TS_RETURN_IF_ERROR(stage_inputs(inputs));  // staging moved
  } else {
    TS_RETURN_IF_ERROR(stage_inputs(inputs));
  }
  if (it != graphs_.end() && it->second.generation == generation_) {
    bool piped = false;
    if (it->second.pipe.exec) TS_RETURN_IF_ERROR(point_pipeline(it->second.pipe, inputs, &piped));
    if (piped) {
      TS_CUDA(cudaGraphLaunch(it->second.pipe.exec, stream_));
    } else if (it->second.exec) {
      TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, it->second.io, stream_));
      TS_CUDA(cudaGraphLaunch(it->second.exec, stream_));
    } else {
      // A bucket shrunk to its chunks (shrink_to_pipeline) keeps no plain graph: a call its
      // pipelined graph cannot take (pageable input) runs the same chunks eagerly.
      out_dims_ = it->second.out_dims;  // enqueue_pipeline sizes the output staging from the bucket's
      Status es = enqueue_pipeline(inputs, it->second.pipe.chunks);
      if (!es) {
        Status drained = sync();
        (void)drained;
        return es;
      }
    }
    TS_RETURN_IF_ERROR(sync());
    out_dims_ = it->second.out_dims;
    return Status::ok();
  }
  if (it != graphs_.end()) {
    destroy_entry(it->second);
    graphs_.erase(it);
  }
  if (seen_.count(shape) && graphs_.size() < kMaxGraphs) {
    // Pipelining (large buckets): an eager run gives the bucket's outputs (their bytes sign
    // the cached choice), then an eager run of each K left makes its allocations, so the
    // captures that follow allocate nothing.
    std::vector<int> ks = pipeline_candidates(inputs);
    std::string pipe_signature;
    SharedIoChoice pipe_known;
    bool have_pipe_known = false;
    if (!ks.empty()) {
      Status es = enqueue_all(inputs, Io::kCopy, true);
      if (!es) {
        Status drained = sync();
        (void)drained;
        return es;
      }
      TS_RETURN_IF_ERROR(sync());
      if (!outputs_follow_batch(run_bucket_)) {
        ks.clear();
      } else {
        size_t in_b = 0, out_b = 0;
        for (const TensorView& t : padded_) in_b += t.bytes();
        for (size_t i = 0; i < g.outputs.size(); ++i) out_b += row_bytes(out_dims_[i], values_[size_t(g.outputs[i])].dtype, -1);
        int device = 0;
        cudaGetDevice(&device);
        // Unlike the zero-copy choice (how bytes travel), this one depends on the kernels: the
        // signature names the model's architecture and tactics too (two models with the same
        // input and output shapes shared one choice in the first H200 run).
        pipe_signature = "pipe|" + std::to_string(device) + "|" + key + "|" + std::to_string(in_b) + "|" +
                         std::to_string(out_b) + "|" + model_fingerprint();
        if (forced_chunks_ == 0 && io_choice_cache().find(pipe_signature, &pipe_known) && pipe_known.chunks > 0) {
          have_pipe_known = true;  // another context measured this signature: build only its choice
          std::vector<int> keep;
          for (int k : ks) if (k == pipe_known.chunks) keep.push_back(k);
          ks = keep;
        }
        TS_RETURN_IF_ERROR(warm_pipelines(inputs, &ks));
      }
    }
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
      // The model's architecture and tactics are part of it (model_fingerprint(): not its
      // weights, so a new version of a model still reuses the choice in a hot swap): the zero-copy
      // graph differs by model (a fused head writes the mapped staging itself, no copy-out
      // kernel), and with the shapes alone the first model of a process chose for every other
      // (H200 engine benchmark at 3b210ee: GRU-2x128 FP32's near-tie at batch 16, 111.0 vs 110.4
      // us, made the FP16 GRU and LSTM take copies, 61.4 / 77.7 us, where gru3's single-model
      // runs measured zero-copy at 44.3 us for the GRU).
      const std::string signature = std::to_string(device) + "|" + key + "|" + std::to_string(in_bytes) + "|" +
                                    std::to_string(out_bytes) + "|" + model_fingerprint();
      SharedIoChoice known;
      const bool have_known = io_choice_cache().find(signature, &known);
      GraphEntry zc;  // the zero-copy graph's copy-in nodes (capture), moved into entry when it runs
      if (io_bytes <= kZeroCopyMaxBytes && device_outputs && ks.empty() && (!have_known || known.io == int(Io::kMapped))) {
        Status cs = capture(Io::kMapped, inputs, &mapped_exec, &zc);
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
            destroy_entry(zc);
            return ts;
          }
          c.io = c.mapped_us < c.copy_us ? Io::kMapped : Io::kCopy;
          io_choice_cache().put(signature, SharedIoChoice{int(c.io), c.copy_us, c.mapped_us});
        }
        cudaGraphExecDestroy(c.io == Io::kMapped ? copy_exec : mapped_exec);
        entry.exec = c.io == Io::kMapped ? mapped_exec : copy_exec;
        entry.io = c.io;
        if (c.io == Io::kMapped) {
          entry.copy_in_graph = zc.copy_in_graph;
          entry.copy_in = std::move(zc.copy_in);
          zc.copy_in_graph = nullptr;
        }
      }
      destroy_entry(zc);  // its exec is null: the graph of copy-in nodes the choice did not keep
      for (const CopyInNode& n : entry.copy_in) c.copy_in_nodes += n.node ? 1 : 0;
      c.io = entry.io;  // what runs (copies when the zero-copy graph could not be captured)
      if (!ks.empty()) {
        const bool time_them = forced_chunks_ == 0 && !have_pipe_known;
        Status ps = choose_pipeline(inputs, ks, copy_exec, time_them, &entry, &c);
        if (!ps) {
          destroy_entry(entry);
          return ps;
        }
        if (time_them && !c.chunk_us.empty()) {
          SharedIoChoice sc;
          sc.chunks = c.chunks;
          sc.chunk_us = c.chunk_us;
          io_choice_cache().put(pipe_signature, sc);
        }
      }
      if (have_pipe_known) {
        c.chunks = entry.pipe.exec ? entry.pipe.chunks : 1;
        c.chunk_us = pipe_known.chunk_us;
      }
      const bool shrunk = entry.pipe.exec != nullptr;
      if (shrunk) TS_RETURN_IF_ERROR(shrink_to_pipeline(inputs, &entry));
      io_[key] = c;
      graphs_[key] = entry;
      if (shrunk) return sync();  // shrink_to_pipeline ran this call's chunks
      if (entry.pipe.exec) {  // its copy nodes read this call's inputs
        TS_CUDA(cudaGraphLaunch(entry.pipe.exec, stream_));
      } else {
        TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, entry.io, stream_));
        TS_CUDA(cudaGraphLaunch(entry.exec, stream_));
      }
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

// --- pipelined copy and compute (cuda_executor.h, PERF NOTE) --------------------------------

std::vector<int> CudaExecutor::pipeline_candidates(std::span<const TensorView> inputs) const {
  std::vector<int> ks;
  if (forced_chunks_ == 1 || buckets_.empty() || run_bucket_ < 1 || run_batch_ < 1 || padded_.empty()) return ks;
  size_t in_bytes = 0;
  for (const TensorView& t : padded_) in_bytes += t.bytes();
  if (forced_chunks_ == 0 && in_bytes < kPipelineMinBytes) return ks;
  for (size_t i = 0; i < inputs.size(); ++i) {
    // The graph's copy nodes read the caller's large inputs: page-locked host memory only
    // (device memory has no PCIe copy to hide).
    if (direct_[i] && inputs[i].bytes() && !page_locked_host(inputs[i].data)) return ks;
  }
  for (int k : kPipelineChunkCounts) {
    if (forced_chunks_ > 1 && k != forced_chunks_) continue;
    const int64_t rows = chunk_rows(run_bucket_, k);
    if (rows * (k - 1) >= run_bucket_) continue;  // the last chunk would be empty
    bool aligned = true;  // every chunk's input rows start 256-byte aligned, as a tensor's would
    for (const TensorView& t : padded_) aligned = aligned && row_bytes(t.dims, t.dtype, rows) % 256 == 0;
    if (aligned) ks.push_back(k);
  }
  return ks;
}

Status CudaExecutor::ensure_pipe_streams() {
  if (copy_stream_) return Status::ok();
  chunk_ev_.assign(size_t(kMaxPipelineChunks) + 1, nullptr);
  for (cudaEvent_t& e : chunk_ev_) TS_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  TS_CUDA(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking));
  return Status::ok();
}

Status CudaExecutor::enqueue_pipeline(std::span<const TensorView> inputs, int chunks) {
  const Graph& g = program_->graph;
  TS_RETURN_IF_ERROR(ensure_pipe_streams());
  const int64_t rows = chunk_rows(run_bucket_, chunks);
  const std::vector<std::vector<int64_t>> bucket_out = out_dims_;  // the bucket's, from its plain run
  std::vector<char*> base(inputs.size());
  std::vector<size_t> rb(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    DevTensor& t = values_[size_t(g.inputs[i])];
    TS_RETURN_IF_ERROR(alloc(t, padded_[i].dtype, padded_[i].dims));
    base[i] = static_cast<char*>(t.data);
    rb[i] = row_bytes(padded_[i].dims, padded_[i].dtype, 1);
  }
  for (size_t o = 0; o < g.outputs.size(); ++o) {
    TS_RETURN_IF_ERROR(ensure_pinned(out_stage_[o], row_bytes(bucket_out[o], values_[size_t(g.outputs[o])].dtype, -1)));
  }
  // Copies: chunk after chunk on the copy stream, an event after each.
  TS_CUDA(cudaEventRecord(chunk_ev_[0], stream_));
  TS_CUDA(cudaStreamWaitEvent(copy_stream_, chunk_ev_[0]));
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!direct_[i]) TS_RETURN_IF_ERROR(copy_bytes(base[i], in_stage_[i].p, padded_[i].bytes(), false, copy_stream_));
  }
  for (int k = 0; k < chunks; ++k) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!direct_[i] || !rb[i]) continue;
      const ChunkCopy c = chunk_copy(run_batch_, rows, k, rb[i]);
      TS_RETURN_IF_ERROR(copy_bytes(base[i] + c.dst_off, static_cast<const char*>(inputs[i].data) + c.src_off, c.bytes,
                                    false, copy_stream_));
    }
    TS_CUDA(cudaEventRecord(chunk_ev_[size_t(k) + 1], copy_stream_));
  }
  // Kernels: chunk k on its rows of the inputs once they landed, its output rows to staging.
  Status s;
  for (int k = 0; k < chunks && s; ++k) {
    cudaError_t e = cudaStreamWaitEvent(stream_, chunk_ev_[size_t(k) + 1]);
    if (e != cudaSuccess) {
      s = cuda_error(e, "cudaStreamWaitEvent");
      break;
    }
    const int64_t rk = std::min(rows, run_bucket_ - int64_t(k) * rows);  // this chunk's rows
    for (size_t i = 0; i < inputs.size(); ++i) {
      DevTensor& t = values_[size_t(g.inputs[i])];
      t.dims[0] = rk;
      t.data = base[i] + size_t(k) * size_t(rows) * rb[i];
    }
    s = launch_nodes();
    for (size_t o = 0; o < g.outputs.size() && s; ++o) {
      const DevTensor& t = values_[size_t(g.outputs[o])];
      if (t.dims.empty() || t.dims[0] != rk) {
        s = Status(StatusCode::kUnsupported, "output " + g.value(g.outputs[o]).name + " does not follow the chunk's batch");
        break;
      }
      const size_t orb = row_bytes(t.dims, t.dtype, 1);
      s = copy_bytes(static_cast<char*>(out_stage_[o].p) + size_t(k) * size_t(rows) * orb, t.data, size_t(rk) * orb, false,
                     stream_);
    }
  }
  // Join the copy stream whatever happened (a capture must end joined; eager copies must be
  // done before the inputs are reused), and put the inputs back at the bucket.
  cudaError_t je = cudaStreamWaitEvent(stream_, chunk_ev_[size_t(chunks)]);
  for (size_t i = 0; i < inputs.size(); ++i) {
    DevTensor& t = values_[size_t(g.inputs[i])];
    t.dims = padded_[i].dims;
    t.data = base[i];
  }
  out_dims_ = bucket_out;
  if (s && je != cudaSuccess) s = cuda_error(je, "cudaStreamWaitEvent");
  return s;
}

Status CudaExecutor::warm_pipelines(std::span<const TensorView> inputs, std::vector<int>* ks) {
  std::vector<int> ok;
  for (int k : *ks) {
    Status s = enqueue_pipeline(inputs, k);
    Status synced = sync();
    // This K's outputs do not follow its chunks, or its tactics need more scratch than the
    // workspace limit leaves: the plain graph does without it.
    if (!s && (s.code() == StatusCode::kUnsupported || s.code() == StatusCode::kOutOfRange)) continue;
    TS_RETURN_IF_ERROR(s);
    TS_RETURN_IF_ERROR(synced);
    ok.push_back(k);
  }
  *ks = ok;
  return Status::ok();
}

Status CudaExecutor::capture_pipeline(std::span<const TensorView> inputs, int chunks, PipeGraph* p) {
  const Graph& g = program_->graph;
  *p = PipeGraph{};
  TS_RETURN_IF_ERROR(ensure_pipe_streams());
  TS_CUDA(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  capturing_ = true;
  realloc_in_capture_ = false;
  Status s = enqueue_pipeline(inputs, chunks);
  cudaGraph_t graph = nullptr;
  cudaError_t e = cudaStreamEndCapture(stream_, &graph);
  capturing_ = false;
  cudaGraphExec_t exec = nullptr;
  if (s && e == cudaSuccess && graph) e = cudaGraphInstantiate(&exec, graph, 0);
  if (!s || e != cudaSuccess || !exec) {
    if (exec) cudaGraphExecDestroy(exec);
    if (graph) cudaGraphDestroy(graph);
    cudaGetLastError();
    if (!s && !realloc_in_capture_ && s.code() != StatusCode::kUnsupported) return s;
    if (s && e != cudaSuccess) return cuda_error(e, "capturing a pipelined CUDA graph");
    return Status::ok();  // no graph: this K is not used
  }
  p->chunks = chunks;
  p->graph = graph;
  p->exec = exec;
  p->batch = run_batch_;
  p->src.assign(inputs.size(), nullptr);
  for (size_t i = 0; i < inputs.size(); ++i) p->src[i] = inputs[i].data;
  // The copy node of each (direct input, chunk), found by its destination (fixed: the input
  // tensor's rows), so a later call can re-point its source. Without them the graph runs only
  // for this call's addresses and batch.
  size_t n = 0;
  std::vector<cudaGraphNode_t> nodes;
  if (cudaGraphGetNodes(graph, nullptr, &n) == cudaSuccess && n) {
    nodes.resize(n);
    if (cudaGraphGetNodes(graph, nodes.data(), &n) != cudaSuccess) nodes.clear();
  }
  cudaGetLastError();
  const int64_t rows = chunk_rows(run_bucket_, chunks);
  std::vector<cudaGraphNode_t> found(inputs.size() * size_t(chunks), nullptr);
  size_t want = 0, got = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!direct_[i] || !inputs[i].bytes()) continue;
    const char* base = static_cast<const char*>(values_[size_t(g.inputs[i])].data);
    const size_t rb = row_bytes(padded_[i].dims, padded_[i].dtype, 1);
    for (int k = 0; k < chunks; ++k) {
      ++want;
      const char* dst = base + size_t(k) * size_t(rows) * rb;
      for (cudaGraphNode_t node : nodes) {
        cudaGraphNodeType type{};
        if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeMemcpy) continue;
        cudaMemcpy3DParms prm{};
        if (cudaGraphMemcpyNodeGetParams(node, &prm) != cudaSuccess) continue;
        const char* at = static_cast<const char*>(prm.dstPtr.ptr) + prm.dstPos.x +
                         (prm.dstPos.y + prm.dstPos.z * prm.dstPtr.ysize) * prm.dstPtr.pitch;
        if (at == dst) {
          found[i * size_t(chunks) + size_t(k)] = node;
          ++got;
          break;
        }
      }
    }
  }
  cudaGetLastError();
  if (got == want) p->in_nodes = std::move(found);
  return Status::ok();
}

Status CudaExecutor::point_pipeline(PipeGraph& p, std::span<const TensorView> inputs, bool* usable) {
  const Graph& g = program_->graph;
  *usable = false;
  if (run_batch_ < 1) return Status::ok();
  bool same = p.batch == run_batch_;
  for (size_t i = 0; i < inputs.size() && same; ++i) same = !direct_[i] || p.src[i] == inputs[i].data;
  if (same) {
    *usable = true;
    return Status::ok();
  }
  if (p.in_nodes.empty()) return Status::ok();  // a graph for its capture's addresses only
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (direct_[i] && inputs[i].bytes() && !page_locked_host(inputs[i].data)) return Status::ok();
  }
  const int64_t rows = chunk_rows(run_bucket_, p.chunks);
  p.batch = -1;  // until every node points at this call's rows
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!direct_[i] || !inputs[i].bytes()) continue;
    char* base = static_cast<char*>(values_[size_t(g.inputs[i])].data);
    const size_t rb = row_bytes(padded_[i].dims, padded_[i].dtype, 1);
    for (int k = 0; k < p.chunks; ++k) {
      const ChunkCopy c = chunk_copy(run_batch_, rows, k, rb);
      cudaError_t e = cudaGraphExecMemcpyNodeSetParams1D(p.exec, p.in_nodes[i * size_t(p.chunks) + size_t(k)], base + c.dst_off,
                                                         static_cast<const char*>(inputs[i].data) + c.src_off, c.bytes,
                                                         cudaMemcpyDefault);
      if (e != cudaSuccess) {  // the plain graph runs this call
        cudaGetLastError();
        return Status::ok();
      }
    }
    p.src[i] = inputs[i].data;
  }
  p.batch = run_batch_;
  *usable = true;
  return Status::ok();
}

Status CudaExecutor::shrink_to_pipeline(std::span<const TensorView> inputs, GraphEntry* entry) {
  const int chunks = entry->pipe.chunks;
  size_t before = 0;
  for (const DeviceBuffer& b : pool_) before += b.bytes();
  for (const DeviceBuffer& b : scratch_slots_) before += b.bytes();
  destroy_entry(*entry);  // both graphs point at the buffers about to be freed
  out_dims_ = entry->out_dims;  // the bucket's (enqueue_pipeline sizes the output staging from them)
  TS_RETURN_IF_ERROR(release_buffers());
  // This call's chunks, eagerly: their allocations (chunk-sized), and this call's outputs.
  Status s = enqueue_pipeline(inputs, chunks);
  Status synced = sync();
  TS_RETURN_IF_ERROR(s);
  TS_RETURN_IF_ERROR(synced);
  entry->pipe.chunks = chunks;  // the eager fallback's K, should no graph be captured below
  PipeGraph p;
  TS_RETURN_IF_ERROR(capture_pipeline(inputs, chunks, &p));
  if (p.exec && p.in_nodes.empty()) destroy_pipe(p);  // usable for this call's addresses only
  if (p.exec) {
    p.batch = run_batch_;  // its copy nodes read this call's inputs (not launched: already ran)
    entry->pipe = std::move(p);
  }
  entry->exec = nullptr;
  entry->generation = generation_;
  size_t after = 0;
  for (const DeviceBuffer& b : pool_) after += b.bytes();
  for (const DeviceBuffer& b : scratch_slots_) after += b.bytes();
  shrunk_bucket_ = run_bucket_;
  shrunk_from_ = before;
  shrunk_to_ = after;
  return Status::ok();
}

Status CudaExecutor::choose_pipeline(std::span<const TensorView> inputs, const std::vector<int>& ks, cudaGraphExec_t plain,
                                     bool time_them, GraphEntry* entry, IoChoice* c) {
  std::vector<PipeGraph> pg;
  const uint64_t generation = generation_;
  Status s;
  for (int k : ks) {
    PipeGraph p;
    s = capture_pipeline(inputs, k, &p);
    if (!s) break;
    if (p.exec) pg.push_back(std::move(p));
  }
  auto drop_all = [&] {
    for (PipeGraph& p : pg) destroy_pipe(p);
  };
  if (!s || generation != generation_) {  // an error, or a capture reallocated: plain graph
    drop_all();
    return s;
  }
  // Only graphs whose copy nodes can follow the caller's address and batch are kept.
  for (PipeGraph& p : pg) {
    bool usable = false;
    p.batch = -1;
    Status ps = p.in_nodes.empty() ? Status::ok() : point_pipeline(p, inputs, &usable);
    if (!ps) {
      drop_all();
      return ps;
    }
    if (!usable) destroy_pipe(p);
  }
  pg.erase(std::remove_if(pg.begin(), pg.end(), [](const PipeGraph& p) { return !p.exec; }), pg.end());
  if (pg.empty()) return Status::ok();
  size_t best = 0;  // index into pg; pg.size() = the plain graph
  if (time_them) {
    std::vector<double> us;
    auto launch = [&](int v) -> Status {
      if (v == 0) {
        TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, Io::kCopy, stream_));
        TS_CUDA(cudaGraphLaunch(plain, stream_));
      } else {
        // Re-pointed as if the caller's address changed (the engine benchmark rotates 4
        // buffers; a server its staging): the measurement includes the node updates.
        PipeGraph& p = pg[size_t(v) - 1];
        bool usable = false;
        p.batch = -1;
        TS_RETURN_IF_ERROR(point_pipeline(p, inputs, &usable));
        TS_CUDA(cudaGraphLaunch(usable ? p.exec : plain, stream_));
      }
      return Status::ok();
    };
    Status ts = time_variants(launch, int(pg.size()) + 1, &us);
    if (!ts) {
      drop_all();
      return ts;
    }
    c->chunk_us.clear();
    c->chunk_us.emplace_back(1, us[0]);
    best = pg.size();
    double best_us = us[0];
    for (size_t j = 0; j < pg.size(); ++j) {
      c->chunk_us.emplace_back(pg[j].chunks, us[j + 1]);
      if (us[j + 1] < best_us) {
        best_us = us[j + 1];
        best = j;
      }
    }
  }
  c->chunks = best < pg.size() ? pg[best].chunks : 1;
  c->chunks_forced = forced_chunks_ > 1;
  for (size_t j = 0; j < pg.size(); ++j) {
    if (j == best) {
      entry->pipe = std::move(pg[j]);
      pg[j] = PipeGraph{};
    } else {
      destroy_pipe(pg[j]);
    }
  }
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
    destroy_entry(it->second);
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
