// Pipelined copy and compute (cuda_pipeline.h): the chunk arithmetic and the CudaExecutor's
// member functions that queue, capture, choose and re-point a bucket's chunks.
#include "engine/backends/cuda/cuda_pipeline.h"

#include <algorithm>
#include <atomic>

#include "engine/backends/cuda/cuda_executor.h"

namespace ts::engine::cuda {
namespace {

std::atomic<int> g_forced_chunks{0};  // set_pipeline_chunks_for_testing

}  // namespace

void set_pipeline_chunks_for_testing(int chunks) { g_forced_chunks.store(chunks); }
int forced_pipeline_chunks() { return g_forced_chunks.load(); }

void destroy_pipe(PipeGraph& p) {
  if (p.exec) cudaGraphExecDestroy(p.exec);
  if (p.graph) cudaGraphDestroy(p.graph);
  p = PipeGraph{};
}

int64_t chunk_rows(int64_t bucket, int k) { return (bucket + k - 1) / k; }

ChunkCopy chunk_copy(int64_t batch, int64_t rows, int k, size_t rb) {
  const int64_t first = int64_t(k) * rows;
  const int64_t n = std::clamp<int64_t>(batch - first, 0, rows);
  if (n > 0) return {size_t(first) * rb, size_t(first) * rb, size_t(n) * rb};
  return {size_t(first) * rb, 0, rb};
}

size_t row_bytes(const std::vector<int64_t>& dims, DType t, int64_t rows) {
  // shape_numel of dims with dim 0 capped, without copying them: the serving path calls this per
  // batch (enqueue_on_stream's copy-out, point_pipeline) and must not allocate.
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) n *= i == 0 && rows >= 0 ? std::min(dims[0], rows) : dims[i];
  return size_t(n) * dtype_size(t);
}

bool page_locked_host(const void* p) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return a.type == cudaMemoryTypeHost;
}

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


}  // namespace ts::engine::cuda
