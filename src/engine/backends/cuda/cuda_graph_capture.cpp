// Graph capture and bucket choice (cuda_graph_capture.h): the graph table, the process-wide
// choice cache, and the CudaExecutor's member functions that pad to a bucket, capture its graphs,
// measure the zero-copy and pipelined paths and re-point a zero-copy graph's copy-in.
#include "engine/backends/cuda/cuda_graph_capture.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>

#include "engine/backends/cuda/cuda_executor.h"
#include "engine/backends/cuda/cuda_launch.h"

namespace ts::engine::cuda {

int bucket_slot(std::span<const int64_t> buckets, int64_t batch) {
  for (size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i] >= batch) return int(i);
  }
  return -1;
}

const char* graph_path_name(GraphPath p) { return p == GraphPath::kRun ? "run" : "enqueue_on_stream"; }

std::string dims_key(std::span<const TensorView> inputs) {
  std::string k;
  for (const TensorView& t : inputs) {
    for (int64_t d : t.dims) k += std::to_string(d) + ",";
    k += ";";
  }
  return k;
}

namespace {

// True when `key` (per input: rank, dims) names exactly `inputs`' dims.
bool same_dims(const std::vector<int64_t>& key, std::span<const TensorView> inputs) {
  size_t p = 0;
  for (const TensorView& t : inputs) {
    const size_t rank = t.dims.size();
    if (p >= key.size() || key[p] != int64_t(rank) || key.size() - p - 1 < rank) return false;
    ++p;
    if (!std::equal(t.dims.begin(), t.dims.end(), key.begin() + std::ptrdiff_t(p))) return false;
    p += rank;
  }
  return p == key.size();
}

}  // namespace

int GraphTable::find(GraphPath path, std::span<const TensorView> inputs) const {
  for (size_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].path == path && same_dims(slots_[i].dims, inputs)) return int(i);
  }
  return -1;
}

int GraphTable::add(GraphPath path, std::span<const TensorView> inputs, GraphEntry entry) {
  Slot s;
  s.path = path;
  for (const TensorView& t : inputs) {
    s.dims.push_back(int64_t(t.dims.size()));
    s.dims.insert(s.dims.end(), t.dims.begin(), t.dims.end());
  }
  s.entry = std::move(entry);
  slots_.push_back(std::move(s));
  return int(slots_.size()) - 1;
}

void GraphTable::erase(int i) {
  destroy_entry(slots_[size_t(i)].entry);
  slots_.erase(slots_.begin() + i);
}

void GraphTable::clear() {
  for (Slot& s : slots_) destroy_entry(s.entry);
  slots_.clear();
}

void destroy_entry(GraphEntry& e) {
  if (e.exec) cudaGraphExecDestroy(e.exec);
  e.exec = nullptr;
  if (e.copy_in_graph) cudaGraphDestroy(e.copy_in_graph);
  e.copy_in_graph = nullptr;
  e.copy_in.clear();
  destroy_pipe(e.pipe);
}

bool IoChoiceCache::find(const std::string& signature, SharedIoChoice* out) {
  std::lock_guard<std::mutex> lk(mu_);
  auto it = m_.find(signature);
  if (it == m_.end()) return false;
  *out = it->second;
  return true;
}

void IoChoiceCache::put(const std::string& signature, const SharedIoChoice& c) {
  std::lock_guard<std::mutex> lk(mu_);
  if (m_.size() >= 4096) m_.clear();
  m_[signature] = c;
}

IoChoiceCache& io_choice_cache() {
  static IoChoiceCache cache;
  return cache;
}

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

void CudaExecutor::drop_graphs() { graphs_.clear(); }

int64_t CudaExecutor::bucket_of(int64_t batch) const {
  const int slot = bucket_slot(buckets_, batch);
  return slot >= 0 ? buckets_[size_t(slot)] : batch;
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

void CudaExecutor::buckets_off(int64_t bucket) {
  buckets_off_ = "an output's dim 0 is not the padded batch " + std::to_string(bucket);
  buckets_.clear();
  drop_graphs();
  seen_.clear();
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


Status CudaExecutor::capture_run(std::span<const TensorView> inputs, const std::string& shape, bool* ran) {
  *ran = true;  // from here every return but the last is this call's result
  const Graph& g = program_->graph;
  const std::string key = shape + graph_path_name(GraphPath::kRun);
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
      // input and output shapes shared one choice in the first GPU run).
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
    // (in the engine benchmark at 3b210ee, GRU-2x128 FP32's near-tie at batch 16 made the FP16
    // GRU and LSTM take copies where gru3's single-model runs had measured zero-copy faster:
    // bench/results/engine-cuda-h200-20261201-0536-final.json vs gru3-h200-20261201-0455.json).
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
    const GraphEntry& kept = graphs_.at(graphs_.add(GraphPath::kRun, padded_, std::move(entry)));
    if (shrunk) return sync();  // shrink_to_pipeline ran this call's chunks
    if (kept.pipe.exec) {  // its copy nodes read this call's inputs
      TS_CUDA(cudaGraphLaunch(kept.pipe.exec, stream_));
    } else {
      TS_RETURN_IF_ERROR(copy_direct_inputs(inputs, kept.io, stream_));
      TS_CUDA(cudaGraphLaunch(kept.exec, stream_));
    }
    return sync();
  }
  *ran = false;  // a reallocation interrupted the capture: the caller runs eagerly
  return Status::ok();
}

Result<int> CudaExecutor::capture_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                                            const std::string& shape, cudaStream_t caller) {
  const Graph& g = program_->graph;
  cudaGraphExec_t exec = nullptr;
  TS_RETURN_IF_ERROR(capture(Io::kKernelsOnly, inputs, &exec));
  if (!exec) return -1;
  GraphEntry entry{exec, generation_, Io::kCopy, out_dims_};
  size_t io_bytes = 0;
  bool all_mapped = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    io_bytes += padded_[i].bytes();
    all_mapped = all_mapped && (in_dev_[i] || !inputs[i].bytes());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    io_bytes += values_[size_t(g.outputs[i])].bytes();
    all_mapped = all_mapped && out_dev_[i];
  }
  IoChoice c;
  if (io_bytes <= kZeroCopyMaxBytes && all_mapped) {
    // Measured on the internal stream once the caller's queued work is done: copies vs the
    // copy kernel on the caller's memory (it writes the caller's outputs, as the call will).
    TS_CUDA(cudaEventRecord(fork_ev_, caller));
    TS_CUDA(cudaStreamWaitEvent(stream_, fork_ev_));
    bool mismatch = false;
    auto launch = [&](int v) {
      return launch_on_stream(stream_, exec, v ? Io::kMapped : Io::kCopy, inputs, outputs, &mismatch);
    };
    TS_RETURN_IF_ERROR(time_variants(launch, &c.copy_us, &c.mapped_us));
    c.io = c.mapped_us < c.copy_us ? Io::kMapped : Io::kCopy;
    entry.io = c.io;
  }
  io_[shape + graph_path_name(GraphPath::kOnStream)] = c;
  return graphs_.add(GraphPath::kOnStream, padded_, std::move(entry));
}

}  // namespace ts::engine::cuda
