#pragma once
// Pipelined copy and compute: how a CudaExecutor runs a large bucket as K chunks in one graph.
//
// PERF NOTE: a bucket whose inputs are kPipelineMinBytes or more (batch 4096 × 60 × 32 fp32 is
// 31.5 MB, about half of a GRU-2x128 run spent in the pinned PCIe copy) can run as K chunks of
// ⌈bucket/K⌉ rows in ONE graph: chunk k+1's H2D copy, on a second internal stream, fills its rows
// of the input tensor while chunk k's kernels run on rows already there (the chunk's kernels read
// the input at a row offset: no extra copy), then each chunk's output rows are copied into the
// pinned output staging. Total ≈ max(copy, compute) + one chunk instead of copy + compute. The
// capture times the plain graph against every K of kPipelineChunkCounts (median launch +
// synchronize, like the zero-copy choice) and keeps the fastest, cached by device, IO signature
// and model (cuda_graph_capture.h, IoChoiceCache). Chunks can cost more than one big launch: they
// run the plan's tactics, and a recurrence pays its T sequential steps per launch, which is why K
// is measured (bench/results/lead-h200-20261201-0843-chunks.log, engine-cuda-h200-20261201-0151-pipe.json).
// Used when every input and output follows the batch (buckets on) and the caller's large inputs
// are page-locked (the graph's copy nodes read them; a call with other memory runs the plain
// graph); the copy nodes are re-pointed (cudaGraphExecMemcpyNodeSetParams1D) only when the
// caller's address or batch changes. Rows past the caller's batch keep earlier (finite) rows, as
// the plain path's padding does. No extra device memory: the input tensor's own rows receive the
// chunks.
//
// The executor's member functions that queue, capture, choose and re-point the chunks are in
// cuda_pipeline.cpp (declared in cuda_executor.h: they use its tensors and streams); this header
// holds what they share with the rest of the backend and its tests: the sizes, the graph record
// and the chunk arithmetic. Nothing here is thread-safe beyond what is said; a PipeGraph belongs
// to one executor, used by one caller at a time.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

// Buckets whose inputs are at least this many bytes are timed with the pipelined path at capture
// (serving's buckets, ≤ 256 rows × 120 steps × 20 features = 2.5 MB, never are).
inline constexpr size_t kPipelineMinBytes = size_t(4) << 20;
// The chunk counts K timed (ceil(bucket / K) rows per chunk, the last chunk the rest). PERF NOTE:
// at bucket 4096 (FP16, T=60) K = 12 (one wave of the GRU wavefront's clusters per chunk) won for
// no model and 16 neither; 6 won the LSTM's, 8 the Transformer's, 4 the GRU's; the plain graph and
// every K per model are in bench/results/lead-h200-20261201-0843-chunks.log.
inline constexpr int kPipelineChunkCounts[] = {2, 4, 6, 8};
inline constexpr int kMaxPipelineChunks = 8;

// A pipelined graph of one bucket. Owns graph and exec (destroy_pipe frees them).
struct PipeGraph {
  int chunks = 0;                         // K; 0 = none
  cudaGraph_t graph = nullptr;            // kept: its copy nodes are re-pointed per caller address
  cudaGraphExec_t exec = nullptr;
  std::vector<cudaGraphNode_t> in_nodes;  // [input * K + k]; null for staged inputs; empty: not re-pointable
  std::vector<const void*> src;           // caller addresses the nodes read now
  int64_t batch = -1;                     // caller batch the nodes copy now (−1: re-point)
};
// Destroys p's exec and graph (none may be in flight) and empties it.
void destroy_pipe(PipeGraph& p);

// Rows per chunk when a bucket of `bucket` rows runs in k chunks: ceil(bucket / k), the last
// chunk the rest (fewer where k does not divide the bucket). Chunk k starts at row k · rows.
int64_t chunk_rows(int64_t bucket, int k);

// What chunk k (of `rows` rows) copies of an input whose rows are `rb` bytes, for a caller batch
// of `batch` rows, as byte offsets into the device tensor (dst_off) and the caller's memory
// (src_off): its caller rows, or for a chunk wholly past them one row (the caller's first: finite
// values into a padding row) since a graph copy node cannot be empty.
struct ChunkCopy {
  size_t dst_off, src_off, bytes;
};
ChunkCopy chunk_copy(int64_t batch, int64_t rows, int k, size_t rb);

// Bytes of the first `rows` rows of a tensor whose dims are `dims` (all of it when rows < 0).
// Allocates nothing (it runs per batch).
size_t row_bytes(const std::vector<int64_t>& dims, DType t, int64_t rows);

// True when `p` is page-locked host memory (what a graph copy node may read). Clears the CUDA
// error a foreign pointer leaves.
bool page_locked_host(const void* p);

// Test hook: the pipelined path's chunk count for contexts created after the call. 0 (the
// default): measured at capture for buckets of kPipelineMinBytes or more; 1: never pipelined;
// 2, 4, 6 or 8: always that K where the bucket allows it, whatever its size (no timing).
// Thread-safe (an atomic); read once per context, at creation (forced_pipeline_chunks()).
void set_pipeline_chunks_for_testing(int chunks);
int forced_pipeline_chunks();

}  // namespace ts::engine::cuda
