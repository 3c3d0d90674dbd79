#pragma once
// Graph capture and the per-bucket choices of a CudaExecutor (cuda_executor.h).
//
// Buckets: the batch (dim 0 of every input) is rounded up to the smallest bucket ≥ it
// (bucket_slot), so every batch of a bucket replays that bucket's graph; the padding rows hold
// zeros or an earlier run's rows (finite values; rows are independent in the models buckets are
// enabled for) and the outputs are trimmed to the caller's batch.
//
// Capture: the first run at a padded shape runs eagerly (it may allocate); the second is
// captured (copies and kernels) and replayed from then on. A GraphTable keeps at most
// kMaxGraphs graphs, found by path and padded input dims without allocating (the steady serving
// path); shapes beyond run eagerly. Any reallocation (a larger shape, a bigger scratch) bumps
// the executor's generation and invalidates every graph (their pointers moved).
//
// Zero-copy (PERF NOTE): for a bucket whose inputs and outputs are at most kZeroCopyMaxBytes, the
// capture makes two graphs, one moving data with DMA copies (pinned staging ↔ device), one with a
// copy kernel reading and writing mapped pinned memory (cudaHostAllocMapped) over the bus, times
// both (median of interleaved launch + synchronize) and keeps the faster; the choice and both
// times are in describe(). Large inputs copied directly from the caller's memory are read by the
// copy kernel too when that memory is page-locked; so are staged inputs of
// kZeroCopyCallerMinBytes or more (the graph's copy-in node re-pointed per call, point_copy_in).
// A GRUStack's fused head writes its output straight into the mapped staging (no copy-out), and
// on sm_90 the copy-in, the GRU wavefront and the copy-out overlap as programmatic dependent
// launches (cuda_launch.h).
//
// The choices are measured once per device, model architecture and IO signature and shared by
// every executor of the process (IoChoiceCache, the one piece of state shared between
// executors). The executor's member functions that capture, choose and re-point are in
// cuda_graph_capture.cpp (declared in cuda_executor.h); this header holds their records and the
// pure functions. A GraphTable and its entries belong to one executor, one caller at a time.
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/backends/cuda/cuda_common.h"
#include "engine/backends/cuda/cuda_pipeline.h"

namespace ts::engine::cuda {

// Graphs one executor keeps (both paths together).
inline constexpr size_t kMaxGraphs = 32;
// Buckets whose inputs plus outputs are at most this are timed with zero-copy at capture.
inline constexpr size_t kZeroCopyMaxBytes = size_t(1) << 20;
// PERF NOTE: a zero-copy graph's copy-in reads the caller's page-locked input directly (no memcpy
// into the staging) from this many bytes of it: below, the per-call cost of asking where the
// memory is (cudaPointerGetAttributes) and re-pointing the node when the address changes
// (cudaGraphExecKernelNodeSetParams) exceeds the memcpy's. Measured with GRU-2x128 FP16 T=60 and
// the benchmark's 4 rotating input buffers: at batch 1 (7.7 KB) direct was slower than the
// memcpy, at batch 16 (123 KB) faster (bench/results/gru3-h200-20261201-0455.json).
inline constexpr size_t kZeroCopyCallerMinBytes = size_t(64) << 10;

// The smallest bucket ≥ batch: its index into `buckets` (ascending), or −1 when there is none
// (no buckets, or batch over the largest; the batch then runs at its own size). Pure.
int bucket_slot(std::span<const int64_t> buckets, int64_t batch);

// How a graph moves data: DMA copies (pinned staging, direct caller memory), the copy kernel on
// mapped memory (zero-copy), or not at all (enqueue_on_stream: kernels only).
enum class Io : uint8_t { kCopy = 0, kMapped, kKernelsOnly };

// Per bucket and path, what the capture measured (describe() prints it).
struct IoChoice {
  Io io = Io::kCopy;
  double copy_us = 0, mapped_us = 0;  // median launch + synchronize, µs; 0 = not measured
  int chunks = 1;                     // pipelined path: K (1 = plain graph)
  bool chunks_forced = false;         // set_pipeline_chunks_for_testing
  std::vector<std::pair<int, double>> chunk_us;  // K → median µs (K = 1: plain); empty = not timed
  int copy_in_nodes = 0;  // zero-copy run(): inputs whose copy-in reads page-locked caller memory
};

// run()'s zero-copy graph (Io::kMapped): each staged input's copy-in kernel node. A call whose
// input is page-locked re-points it at the caller's rows (cudaGraphExecKernelNodeSetParams, only
// when the address or batch changed) instead of memcpy'ing them into the mapped staging, and a
// call with pageable memory points it back at the staging (point_copy_in).
struct CopyInNode {
  cudaGraphNode_t node = nullptr;  // null: this input is always staged
  cudaKernelNodeParams params{};   // as captured (function, grid, block); its kernelParams not kept
  void* dst = nullptr;             // the device input tensor
  int elem_bytes = 0;              // the copy kernel's element size
  const void* src = nullptr;       // what the node reads now (at capture: the staging)
  size_t bytes = 0;                // and how many bytes
};

// One captured bucket of one path. Owns exec, copy_in_graph and pipe (destroy_entry frees them).
struct GraphEntry {
  cudaGraphExec_t exec = nullptr;  // null for a bucket shrunk to its chunks (pipe runs it)
  uint64_t generation = 0;         // the executor's generation at capture
  Io io = Io::kCopy;
  std::vector<std::vector<int64_t>> out_dims;  // at the padded batch
  PipeGraph pipe;                              // run(): the pipelined graph, when chosen
  cudaGraph_t copy_in_graph = nullptr;         // kept while copy_in's nodes are used
  std::vector<CopyInNode> copy_in;             // per input (Io::kMapped); empty: always staged
};
// Destroys e's graphs (none may be in flight) and empties them; e's other fields stay.
void destroy_entry(GraphEntry& e);

// Which executor call a graph serves: run() (copies and kernels on the internal stream) or
// enqueue_on_stream() (kernels only, launched on the caller's stream).
enum class GraphPath : uint8_t { kRun = 0, kOnStream };
// "run" / "enqueue_on_stream": the suffix of an IoChoice's key in describe().
const char* graph_path_name(GraphPath p);

// The captured graphs of one executor: at most kMaxGraphs entries in a small array, each found by
// its path and padded input dims. find() compares the dims in place (no key string, no map, no
// allocation: it runs on every batch); add() and erase() run at capture and invalidation only.
// Indices stay valid until the next add(), erase() or clear(). Not thread-safe (one executor,
// one caller at a time).
class GraphTable {
 public:
  GraphTable() = default;
  GraphTable(const GraphTable&) = delete;
  GraphTable& operator=(const GraphTable&) = delete;
  ~GraphTable() { clear(); }

  // Index of the entry of `path` at `inputs`' dims, or −1. Allocates nothing.
  int find(GraphPath path, std::span<const TensorView> inputs) const;
  // Takes ownership of `entry`'s graphs; returns its index. The caller checked size() < kMaxGraphs
  // and that find() was −1.
  int add(GraphPath path, std::span<const TensorView> inputs, GraphEntry entry);
  GraphEntry& at(int i) { return slots_[size_t(i)].entry; }
  const GraphEntry& at(int i) const { return slots_[size_t(i)].entry; }
  // Destroys entry i's graphs and removes it (later indices move down by one).
  void erase(int i);
  // Destroys every graph.
  void clear();
  size_t size() const { return slots_.size(); }

 private:
  struct Slot {
    GraphPath path = GraphPath::kRun;
    std::vector<int64_t> dims;  // per input: its rank, then its dims
    GraphEntry entry;
  };
  std::vector<Slot> slots_;
};

// "d0,d1,...,;" per input: the shape part of an IoChoice's key (describe()) and of the eager-run
// record. Allocates: capture and eager runs only, never a replay.
std::string dims_key(std::span<const TensorView> inputs);

// A measured choice as the process-wide cache keeps it.
struct SharedIoChoice {
  int io = 0;
  double copy_us = 0, mapped_us = 0;
  int chunks = 0;  // pipelining choice (signature "pipe|..."): K, 1 = plain; 0 = not measured
  std::vector<std::pair<int, double>> chunk_us;
};

// PERF NOTE: a bucket's zero-copy measurement costs 2 × 10 graph launches + synchronize (a few ms
// for a recurrent model). A server warms up several contexts of every engine it loads, and a hot
// swap's time includes that warm-up (the measurement's launches also compete with the serving
// batches), so a choice is measured once per device, model architecture and bucket IO signature —
// the bucket's input shapes and the bytes it moves each way — and reused by every context, of
// this Program or a later one (a new version of a model, same architecture, moves the same bytes
// through the same graph). The one piece of state shared between executors: guarded by its
// mutex, bounded (cleared when full at 4,096 signatures). Thread-safe.
class IoChoiceCache {
 public:
  // Copies the choice measured for `signature` into *out; false when none was.
  bool find(const std::string& signature, SharedIoChoice* out);
  void put(const std::string& signature, const SharedIoChoice& c);

 private:
  std::mutex mu_;
  std::map<std::string, SharedIoChoice> m_;
};
IoChoiceCache& io_choice_cache();  // the process's

// Where run()'s zero-copy copy-in of one input reads in a call (point_copy_in): the caller's
// memory when the device can read it (caller_dev, from cudaPointerGetAttributes of page-locked
// host memory; null for pageable memory) at the copy kernel's alignment — then only the caller's
// caller_bytes, never a bucket's padding rows past its buffer — else the staging's whole bucket
// (staged: the caller's rows are memcpy'd there first). Pure.
struct CopyInSource {
  const void* src = nullptr;
  size_t bytes = 0;
  bool staged = true;
};
CopyInSource copy_in_source(const void* caller_dev, size_t caller_bytes, int elem_bytes, const void* staging_dev,
                            size_t bucket_bytes);

}  // namespace ts::engine::cuda
