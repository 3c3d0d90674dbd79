#pragma once
// The CUDA backend's BackendExecutor: one per ExecutionContext.
//
// Owns a non-blocking stream, a cuBLASLt handle and workspace, one DevTensor per graph value
// (device storage that only grows), scratch slots, and pinned host staging for the inputs and
// outputs. run(): caller memory → pinned staging (memcpy) → H2D → every kernel → D2H into
// pinned staging, all queued on the stream, then one stream synchronize; copy_outputs() copies
// staging → caller memory. Inputs of kDirectCopyBytes or more skip the staging memcpy: they
// are copied by cudaMemcpyAsync straight from the caller's memory (DMA when it is page-locked,
// Engine::allocate_host), outside the CUDA graph since their address changes per call.
//
// CUDA graphs: the first run at an input shape runs eagerly (it may allocate); the second at
// that shape is captured (copies and kernels) and replayed from then on with one
// cudaGraphLaunch. Any reallocation (a larger shape, a bigger scratch) invalidates every graph
// (their pointers moved). Up to kMaxGraphs graphs are kept; shapes beyond run eagerly.
//
// Shape buckets (ExecutorOptions::batch_buckets): the batch (dim 0 of every input) is rounded
// up to its bucket, so every batch of a bucket replays that bucket's graph: the caller's rows
// are copied, the padding rows hold zeros or an earlier run's rows (finite values; rows are
// independent in the models this is enabled for), and the outputs are trimmed to the caller's
// batch. An output whose dim 0 is not the padded batch turns bucketing off for the context.
//
// Zero-copy (PERF NOTE): for a bucket whose inputs and outputs are at most kZeroCopyMaxBytes,
// the capture makes two graphs, one moving data with DMA copies (pinned staging ↔ device), one
// with a copy kernel reading and writing mapped pinned memory (cudaHostAllocMapped) over the
// bus, times both (median of interleaved launch + synchronize) and keeps the faster; the
// choice and both times are in describe(). Large inputs copied directly from the caller's
// memory are read by the copy kernel too when that memory is page-locked; so are staged inputs of
// kZeroCopyCallerMinBytes or more (the graph's copy-in node re-pointed per call, point_copy_in).
// A GRUStack's fused head writes its output straight into the mapped staging (no copy-out), and
// on sm_90 the copy-in, the GRU wavefront and the copy-out overlap as programmatic dependent
// launches (cuda_launch.h).
//
// Caller's stream (enqueue_on_stream): inputs are copied (or read by the copy kernel, in a
// bucket that chose zero-copy) into the device input tensors on the caller's stream, then a
// graph of the kernels alone (captured on the internal stream) is launched there, then the
// outputs are copied out; an event recorded after it orders the next call of this context
// (any stream, or the synchronous run()) after it.
//
// Pipelined copy and compute (PERF NOTE): a bucket whose inputs are kPipelineMinBytes or more
// (batch 4096 × 60 × 32 fp32 is 31.5 MB, ≈ 600 µs of pinned PCIe copy on the H200, about half
// of a GRU-2x128 run) can run as K chunks of ⌈bucket/K⌉ rows in ONE graph: chunk k+1's H2D copy,
// on a second internal stream, fills its rows of the input tensor while chunk k's kernels run
// on rows already there (the chunk's kernels read the input at a row offset: no extra copy),
// then each chunk's output rows are copied into the pinned output staging. Total ≈ max(copy,
// compute) + one chunk instead of copy + compute. The capture times the plain graph against
// K = 2, 4, 6, 8 (kPipelineChunkCounts; median launch + synchronize, like zero-copy) and keeps
// the fastest, cached by device, IO signature and model (model_fingerprint). Chunks can cost
// more than one big launch: they run the plan's tactics, and a recurrence pays its T sequential
// steps per launch (H200 GRU-2x128 FP16 b4096: plain 1,130 µs, K=2 966, K=4 1,463; Transformer
// 949, K=8 666), which is why K is measured. Used when every input and output follows the batch (buckets on)
// and the caller's large inputs are page-locked (the graph's copy nodes read them; a call with
// other memory runs the plain graph); the copy nodes are re-pointed
// (cudaGraphExecMemcpyNodeSetParams1D) only when the caller's address or batch changes. Rows
// past the caller's batch keep earlier (finite) rows, as the plain path's padding does. No
// extra device memory: the input tensor's own rows receive the chunks.
//
// Memory: memory_bytes() is the device memory this context holds (intermediates, scratch,
// cuBLASLt workspace), weights excluded (they belong to the Program). Intermediates whose
// lifetimes do not overlap share grow-only buffers (cuda_buffer_plan.h), re-chosen by the sizes
// seen after a shape's first (eager) run when that needs less (replan_buffers). A bucket that
// pipelines keeps only what its chunks need (shrink_to_pipeline): its plain graph is dropped, a
// call the pipelined graph cannot take (pageable input) runs the chunks eagerly, and
// enqueue_on_stream at that bucket (a kernels-only graph of the whole bucket) grows the buffers
// back until the next run() shrinks them. H200, batch 4096, T=60, context + weights: LSTM-2x128
// FP16 417 -> 243 MiB, Transformer FP32 1,016 -> 287 (bench/results/mem-h200-20261201-0447-*).
// Scratch plus the cuBLASLt workspace stay within ExecutorOptions::workspace_bytes.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/backends/cuda/cuda_buffer_plan.h"
#include "engine/backends/cuda/cuda_common.h"

namespace ts::engine::cuda {

class CudaExecutor final : public BackendExecutor, private CudaRunEnv {
 public:
  static Result<std::unique_ptr<CudaExecutor>> create(std::shared_ptr<const Program> program,
                                                      const ExecutorOptions& options);
  ~CudaExecutor() override;

  Status run(std::span<const TensorView> inputs) override;
  Status copy_outputs(std::span<TensorView> outputs) const override;
  int64_t memory_bytes() const override;
  int64_t fixed_memory_bytes() const override;
  Result<double> time_node(size_t i, const Kernel& k) override;
  std::vector<std::vector<int64_t>> node_input_dims(size_t i) const override;
  Status enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                           DeviceStream stream) override;
  std::string describe() const override;

  static constexpr size_t kMaxGraphs = 32;
  // PERF NOTE: below this an input is memcpy'd into pinned staging (a few µs at most, and the
  // H2D copy then lives inside the graph: one launch for the whole run); above it the memcpy
  // would cost more than a separate cudaMemcpyAsync call (~3 µs).
  static constexpr size_t kDirectCopyBytes = size_t(256) << 10;
  // Buckets whose inputs plus outputs are at most this are timed with zero-copy at capture.
  static constexpr size_t kZeroCopyMaxBytes = size_t(1) << 20;
  // PERF NOTE: a zero-copy graph's copy-in reads the caller's page-locked input directly (no
  // memcpy into the staging) from this many bytes of it: below, the per-call cost of asking where
  // the memory is (cudaPointerGetAttributes) and re-pointing the node when the address changes
  // (cudaGraphExecKernelNodeSetParams) exceeds the memcpy's. H200, GRU-2x128 FP16 T=60, the
  // benchmark's 4 rotating input buffers (bench/results/gru3-h200-20261201-0455.json): batch 1
  // (7.7 KB) 41.4-42.0 us direct vs 40.2-40.6 memcpy'd; batch 16 (123 KB) 51.0 vs 56.3.
  static constexpr size_t kZeroCopyCallerMinBytes = size_t(64) << 10;
  // Buckets whose inputs are at least this are timed with the pipelined path at capture
  // (serving's buckets, ≤ 256 rows × 120 steps × 20 features = 2.5 MB, never are).
  static constexpr size_t kPipelineMinBytes = size_t(4) << 20;
  // The chunk counts K timed (ceil(bucket / K) rows per chunk, the last chunk the rest). PERF
  // NOTE: H200, FP16, T=60, bucket 4096, host-to-host per K (plain / 2 / 4 / 6 / 8 / 12 / 16;
  // bench/results/lead-h200-20261201-0843-chunks.log): GRU-2x128 1,128 / 949 / 923 / 988 / 933 /
  // 1,294 / 1,004 µs, LSTM-2x128 1,257 / 1,053 / 1,090 / 1,039 / 1,308 / 1,145 / 1,474,
  // Transformer 937 / 767 / 690 / 680 / 659 / 734 / 847. 12 (342 rows: one wave of the GRU's
  // 44 three-CTA clusters) was meant for the wavefronts and won nowhere; 6 won the LSTM's.
  static constexpr int kPipelineChunkCounts[] = {2, 4, 6, 8};
  static constexpr int kMaxPipelineChunks = 8;

 private:
  // How a graph moves data: DMA copies (pinned staging, direct caller memory), the copy kernel
  // on mapped memory (zero-copy), or not at all (enqueue_on_stream: kernels only).
  enum class Io : uint8_t { kCopy = 0, kMapped, kKernelsOnly };
  struct IoChoice {  // per bucket and path, what the capture measured
    Io io = Io::kCopy;
    double copy_us = 0, mapped_us = 0;  // median launch + synchronize; 0 = not measured
    int chunks = 1;                     // pipelined path: K (1 = plain graph)
    bool chunks_forced = false;         // set_pipeline_chunks_for_testing
    std::vector<std::pair<int, double>> chunk_us;  // K → median µs (K = 1: plain); empty = not timed
    int copy_in_nodes = 0;              // zero-copy run(): inputs whose copy-in reads page-locked caller memory
  };
  // A pipelined graph of one bucket (see the PERF NOTE above).
  struct PipeGraph {
    int chunks = 0;                   // K; 0 = none
    cudaGraph_t graph = nullptr;      // kept: its copy nodes are re-pointed per caller address
    cudaGraphExec_t exec = nullptr;
    std::vector<cudaGraphNode_t> in_nodes;  // [input * K + k]; null for staged inputs
    std::vector<const void*> src;     // caller addresses the nodes read now
    int64_t batch = -1;               // caller batch the nodes copy now (−1: re-point)
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
  struct GraphEntry {
    cudaGraphExec_t exec = nullptr;
    uint64_t generation = 0;
    Io io = Io::kCopy;
    std::vector<std::vector<int64_t>> out_dims;  // at the padded batch
    PipeGraph pipe;                              // run(): the pipelined graph, when chosen
    cudaGraph_t copy_in_graph = nullptr;         // kept while copy_in's nodes are used
    std::vector<CopyInNode> copy_in;             // per input (Io::kMapped); empty: always staged
  };
  void destroy_entry(GraphEntry& e);

  CudaExecutor(std::shared_ptr<const Program> program, const ExecutorOptions& options);
  Status init();
  // The batch a run uses: the smallest bucket ≥ batch (batch when none or bucketing is off).
  int64_t bucket_of(int64_t batch) const;
  // inputs with dim 0 rounded up to the bucket, into padded_ (data pointers unchanged).
  void pad_inputs(std::span<const TensorView> inputs);
  // After an eager run at a padded shape: every output's dim 0 must be the padded batch.
  bool outputs_follow_batch(int64_t bucket) const;
  // Queues the input copies (staged ones; direct ones when include_direct), every kernel and
  // the output copies into staging, as `io` says (eager or under capture).
  Status enqueue_all(std::span<const TensorView> inputs, Io io, bool include_direct);
  Status copy_direct_inputs(std::span<const TensorView> inputs, Io io, cudaStream_t s);
  // Queues a device copy of `bytes`: cudaMemcpyAsync, or the copy kernel (mapped memory); with
  // `dependent` the copy kernel is a programmatic dependent launch of the kernel before it
  // (launch_strided_copy_dependent: the copy-out after the last kernel).
  Status copy_bytes(void* dst, const void* src, size_t bytes, bool kernel, cudaStream_t s, bool dependent = false);
  Status launch_nodes();      // every kernel in order on the stream
  Status unshare_buffers();   // before timing a node: own storage for every value, recomputed
  // After an eager run: when the values' sizes seen so far fit slots chosen by size
  // (plan_buffers_by_size) in less than the pool holds, frees the pool and takes that plan (the
  // next run allocates it). Memory, not time: a warm-up step, never on a replay.
  Status replan_buffers();
  // Frees the pool and scratch (synchronized; graphs dropped): the next run allocates what it needs.
  Status release_buffers();
  // Copies the caller's rows of each small input into the staging, except where `staged` (when
  // given) is false: the zero-copy graph's copy-in reads the caller's memory then.
  Status stage_inputs(std::span<const TensorView> inputs, const std::vector<bool>* staged = nullptr);
  // Re-points the copy-in nodes of `e` (a zero-copy graph) at the caller's page-locked inputs, or
  // at the staging; staged_[i] says which inputs still need their staging memcpy.
  Status point_copy_in(GraphEntry& e, std::span<const TensorView> inputs);
  // After a zero-copy capture: finds each staged input's copy-in kernel node in `graph`.
  void find_copy_in(cudaGraph_t graph, GraphEntry* e) const;
  Status sync();              // the internal stream and any caller-stream work of this context
  void drop_graphs();
  // Captures enqueue_all(padded_, io) on the internal stream; null exec when a reallocation
  // interrupted it (the caller then runs eagerly).
  // With `keep` (and io kMapped): the graph is kept in *keep and its copy-in nodes recorded.
  Status capture(Io io, std::span<const TensorView> inputs, cudaGraphExec_t* exec, GraphEntry* keep = nullptr);
  // Median µs of `launch` + synchronize, interleaving two variants (zero-copy choice), or n
  // (pipelining choice).
  Status time_variants(const std::function<Status(int)>& launch, double* us0, double* us1);
  Status time_variants(const std::function<Status(int)>& launch, int n, std::vector<double>* us);
  // Where caller memory is: *dev its device address (null if the device cannot read it directly);
  // pageable host memory → kInvalidArgument.
  Status check_memory(const void* p, const std::string& what, void** dev) const;
  Status run_padded(std::span<const TensorView> inputs);
  // Pipelined path: the K worth trying for this run's bucket (empty: none); the eager runs that
  // make every chunk size's allocations before capture (drops K whose outputs do not follow);
  // queueing the chunks (eager or under capture); capturing one K; re-pointing its copy nodes
  // at the caller's inputs (false in *usable: run the plain graph this call).
  std::vector<int> pipeline_candidates(std::span<const TensorView> inputs) const;
  Status warm_pipelines(std::span<const TensorView> inputs, std::vector<int>* ks);
  Status enqueue_pipeline(std::span<const TensorView> inputs, int chunks);
  Status capture_pipeline(std::span<const TensorView> inputs, int chunks, PipeGraph* p);
  // Captures each K of `ks`, keeps the one to run in entry->pipe (the fastest against `plain`
  // when `time_them`, else the first captured) and records the choice in *c.
  Status choose_pipeline(std::span<const TensorView> inputs, const std::vector<int>& ks, cudaGraphExec_t plain,
                         bool time_them, GraphEntry* entry, IoChoice* c);
  Status point_pipeline(PipeGraph& p, std::span<const TensorView> inputs, bool* usable);
  // Once K > 1 is chosen for a bucket: frees the whole-bucket buffers and the plain graph, runs
  // this call's chunks eagerly (their allocations: chunk-sized) and captures the pipelined graph
  // again; a call that graph cannot take runs the chunks eagerly (see the PERF NOTE).
  Status shrink_to_pipeline(std::span<const TensorView> inputs, GraphEntry* entry);
  Status ensure_pipe_streams();
  // Names the model's architecture and tactics (ops, tactics, constant dims), for the cached
  // pipelining choice: another model with the same IO shapes must measure its own.
  std::string model_fingerprint() const;
  static void destroy_pipe(PipeGraph& p);

  // CudaRunEnv
  Status alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) override;
  Result<void*> scratch(size_t bytes) override;
  Result<LtWorkspace> lt_workspace() override;

  struct PinnedBuffer {
    void* p = nullptr;    // host address
    void* dev = nullptr;  // device address of the mapped memory
    size_t bytes = 0;
  };
  Status ensure_pinned(PinnedBuffer& b, size_t bytes);


  std::shared_ptr<const Program> program_;
  ExecutorOptions options_;
  cudaStream_t stream_ = nullptr;               // internal: eager runs, captures, run()
  cudaEvent_t done_ev_ = nullptr;               // after the last enqueue_on_stream
  cudaEvent_t fork_ev_ = nullptr, join_ev_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;          // pipelined path: the chunks' H2D copies
  std::vector<cudaEvent_t> chunk_ev_;           // pipelined path: [0] fork, [1 + k] chunk k copied
  int forced_chunks_ = 0;                       // set_pipeline_chunks_for_testing at creation
  bool async_pending_ = false;                  // done_ev_ recorded since the last sync()
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer lt_workspace_;
  std::vector<DevTensor> values_;
  std::vector<int> slot_of_;                    // per value: index into pool_, or −1 (own storage)
  BufferPlan plan_;                             // node-order plan: lifetimes, the first slots
  std::vector<size_t> value_bytes_;             // per value with a slot: the most it took so far
  size_t replanned_from_ = 0, replanned_to_ = 0;  // pool bytes before/after the last replan_buffers()
  int64_t shrunk_bucket_ = -1;                  // last bucket whose buffers shrank to its chunks
  size_t shrunk_from_ = 0, shrunk_to_ = 0;      // its pool + scratch bytes before/after
  std::vector<bool> is_input_;                  // per value: a graph input (zeroed when allocated)
  std::vector<DeviceBuffer> pool_;              // shared intermediate buffers
  std::vector<DeviceBuffer> constants_;        // uploaded constants kernels read, by value
  std::vector<std::vector<DevTensor*>> ins_, outs_;
  std::vector<bool> skip_;
  std::vector<DeviceBuffer> scratch_slots_;
  size_t scratch_next_ = 0;                     // slot index within the current kernel
  std::vector<PinnedBuffer> in_stage_, out_stage_;
  std::vector<bool> direct_;                    // per input: copied from caller memory
  std::vector<bool> staged_;                    // per input: this run memcpy's it into the staging
  // Zero-copy outputs (PERF NOTE in enqueue_all): per graph output, whether its producer may write
  // it straight into the mapped staging (a GRUStack node's fused head: written once, plain
  // stores); while redirect_outputs_ (a zero-copy capture's kernels), alloc() gives such an output
  // the staging's device address and sets redirected_.
  std::vector<bool> out_direct_ok_, redirected_;
  std::vector<int> out_index_;                  // per value: its graph output index, or −1
  bool redirect_outputs_ = false;
  std::vector<TensorView> padded_;              // this run's inputs at the bucket's batch
  std::vector<void*> in_dev_, out_dev_;         // enqueue_on_stream: caller memory's device addresses
  int64_t run_batch_ = -1, run_bucket_ = -1;    // this run's batch and bucket (−1: no batch dim)
  std::vector<std::vector<int64_t>> out_dims_;  // outputs of the last run (padded batch)
  std::vector<int64_t> buckets_;                // ascending; empty = exact shapes
  std::string buckets_off_;                     // why bucketing was turned off, if it was
  std::map<std::string, GraphEntry> graphs_;    // by input dims + path
  std::map<std::string, IoChoice> io_;          // by input dims + path
  std::map<std::string, int> seen_;             // shapes run eagerly once
  uint64_t generation_ = 1;                     // bumped by every reallocation
  bool capturing_ = false;
  bool realloc_in_capture_ = false;
};

// Where run()'s zero-copy copy-in of one input reads in a call (point_copy_in): the caller's
// memory when the device can read it (caller_dev, from cudaPointerGetAttributes of page-locked
// host memory; null for pageable memory) at the copy kernel's alignment — then only the caller's
// caller_bytes, never a bucket's padding rows past its buffer — else the staging's whole bucket
// (staged: the caller's rows are memcpy'd there first).
struct CopyInSource {
  const void* src = nullptr;
  size_t bytes = 0;
  bool staged = true;
};
CopyInSource copy_in_source(const void* caller_dev, size_t caller_bytes, int elem_bytes, const void* staging_dev,
                            size_t bucket_bytes);

// Test hook: the pipelined path's chunk count for contexts created after the call. 0 (the
// default): measured at capture for buckets of kPipelineMinBytes or more; 1: never pipelined;
// 2, 4 or 8: always that K where the bucket allows it, whatever its size (no timing).
void set_pipeline_chunks_for_testing(int chunks);

}  // namespace ts::engine::cuda
