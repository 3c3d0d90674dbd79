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
// Graph capture, shape buckets and the zero-copy choice: cuda_graph_capture.h. Pipelined copy
// and compute of large buckets: cuda_pipeline.h. The member functions of those jobs are declared
// here (they use the executor's tensors, streams and staging) and defined in their own .cpp.
//
// Caller's stream (enqueue_on_stream): inputs are copied (or read by the copy kernel, in a
// bucket that chose zero-copy) into the device input tensors on the caller's stream, then a
// graph of the kernels alone (captured on the internal stream) is launched there, then the
// outputs are copied out; an event recorded after it orders the next call of this context
// (any stream, or the synchronous run()) after it.
//
// Steady state: once a bucket's graph is captured, run() and enqueue_on_stream() at that bucket
// allocate no host memory (the graph is found by GraphTable::find; tested by
// engine_cuda_alloc_test).
//
// Memory: memory_bytes() is the device memory this context holds (intermediates, scratch,
// cuBLASLt workspace), weights excluded (they belong to the Program). Intermediates whose
// lifetimes do not overlap share grow-only buffers (cuda_buffer_plan.h), re-chosen by the sizes
// seen after a shape's first (eager) run when that needs less (replan_buffers). A bucket that
// pipelines keeps only what its chunks need (shrink_to_pipeline): its plain graph is dropped, a
// call the pipelined graph cannot take (pageable input) runs the chunks eagerly, and
// enqueue_on_stream at that bucket (a kernels-only graph of the whole bucket) grows the buffers
// back until the next run() shrinks them (context + weights at batch 4096 before and after:
// bench/results/mem-h200-20261201-0447-before.json, -after.json).
// Scratch plus the cuBLASLt workspace stay within ExecutorOptions::workspace_bytes.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "engine/backends/cuda/cuda_buffer_plan.h"
#include "engine/backends/cuda/cuda_common.h"
#include "engine/backends/cuda/cuda_graph_capture.h"
#include "engine/backends/cuda/cuda_pipeline.h"

namespace ts::engine::cuda {

// Threading: one caller at a time (the runtime's ContextImpl serializes); the only state shared
// with other executors is io_choice_cache() (thread-safe) and the block cache.
class CudaExecutor final : public BackendExecutor, private CudaRunEnv {
 public:
  static Result<std::unique_ptr<CudaExecutor>> create(std::shared_ptr<const Program> program,
                                                      const ExecutorOptions& options);
  ~CudaExecutor() override;

  // Runs the program on `inputs` (host memory, pageable or page-locked) and waits; the outputs
  // stay in pinned staging until copy_outputs(). An error Status leaves the context usable.
  Status run(std::span<const TensorView> inputs) override;
  Status copy_outputs(std::span<TensorView> outputs) const override;
  std::vector<std::vector<int64_t>> output_dims() const override;
  int64_t memory_bytes() const override;
  int64_t fixed_memory_bytes() const override;
  std::vector<BucketMemory> memory_bytes_by_bucket() const override;
  Result<double> time_node(size_t i, const Kernel& k) override;
  std::vector<std::vector<int64_t>> node_input_dims(size_t i) const override;
  Status enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs, DeviceStream stream) override;
  std::string describe() const override;

  // PERF NOTE: below this an input is memcpy'd into pinned staging (the H2D copy then lives
  // inside the graph: one launch for the whole run); above it the memcpy would cost more than a
  // separate cudaMemcpyAsync call.
  static constexpr size_t kDirectCopyBytes = size_t(256) << 10;

 private:
  CudaExecutor(std::shared_ptr<const Program> program, const ExecutorOptions& options);
  Status init();

  // --- the executor proper (cuda_executor.cpp) ---------------------------------------------
  // run()'s three branches: replay the bucket's graph; capture it (second run at the shape;
  // *ran false when the capture was interrupted, then the eager branch runs); run eagerly.
  Status run_padded(std::span<const TensorView> inputs);
  Status replay(GraphEntry& e, std::span<const TensorView> inputs);
  Status run_eager(std::span<const TensorView> inputs, const std::string& shape);
  // Copies the caller's rows of each small input into the staging, except where `staged` (when
  // given) is false: the zero-copy graph's copy-in reads the caller's memory then.
  Status stage_inputs(std::span<const TensorView> inputs, const std::vector<bool>* staged = nullptr);
  // Queues the input copies (staged ones; direct ones when include_direct), every kernel and
  // the output copies into staging, as `io` says (eager or under capture).
  Status enqueue_all(std::span<const TensorView> inputs, Io io, bool include_direct);
  Status copy_direct_inputs(std::span<const TensorView> inputs, Io io, cudaStream_t s);
  // Queues a device copy of `bytes`: cudaMemcpyAsync, or the copy kernel (mapped memory); with
  // `dependent` the copy kernel is a programmatic dependent launch of the kernel before it
  // (launch_strided_copy_dependent: the copy-out after the last kernel).
  Status copy_bytes(void* dst, const void* src, size_t bytes, bool kernel, cudaStream_t s, bool dependent = false);
  // enqueue_on_stream: queues the copy-in, `exec` (null: the kernels, eagerly) and the copy-out
  // on `on`, with the caller's device addresses in in_dev_/out_dev_. *mismatch is set when an
  // eager run finds an output that does not follow the padded batch.
  Status launch_on_stream(cudaStream_t on, cudaGraphExec_t exec, Io io, std::span<const TensorView> inputs,
                          std::span<TensorView> outputs, bool* mismatch);
  Status launch_nodes();     // every kernel in order on the stream
  Status unshare_buffers();  // before timing a node: own storage for every value, recomputed
  // After an eager run: when the values' sizes seen so far fit slots chosen by size
  // (plan_buffers_by_size) in less than the pool holds, frees the pool and takes that plan (the
  // next run allocates it). Memory, not time: a warm-up step, never on a replay.
  Status replan_buffers();
  // Frees the pool and scratch (synchronized; graphs dropped): the next run allocates what it needs.
  Status release_buffers();
  // Where caller memory is: *dev its device address (null if the device cannot read it directly);
  // pageable host memory → kInvalidArgument naming `what` and `name` (the string is built only
  // for the error).
  Status check_memory(const void* p, const char* what, const std::string& name, void** dev) const;
  Status sync();  // the internal stream and any caller-stream work of this context

  // --- graph capture and bucket choice (cuda_graph_capture.cpp) ----------------------------
  // The batch a run uses: the smallest bucket ≥ batch (batch when none or bucketing is off).
  int64_t bucket_of(int64_t batch) const;
  // inputs with dim 0 rounded up to the bucket, into padded_ (data pointers unchanged).
  void pad_inputs(std::span<const TensorView> inputs);
  // After an eager run at a padded shape: every output's dim 0 must be the padded batch.
  bool outputs_follow_batch(int64_t bucket) const;
  // Turns bucketing off for this context (an output does not follow the batch), saying why.
  void buckets_off(int64_t bucket);
  // run(): captures the bucket at padded_ (copies, zero-copy, pipelined: measured or known
  // choices), records it in graphs_ and io_, and runs this call with it. *ran false when the
  // capture was interrupted by a reallocation (nothing recorded: the caller runs eagerly).
  Status capture_run(std::span<const TensorView> inputs, const std::string& shape, bool* ran);
  // enqueue_on_stream(): captures the kernels-only graph at padded_ and measures the caller-memory
  // path; returns its graphs_ index, or −1 when the capture was interrupted.
  Result<int> capture_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs, const std::string& shape,
                                cudaStream_t caller);
  // Captures enqueue_all(padded_, io) on the internal stream; null exec when a reallocation
  // interrupted it (the caller then runs eagerly).
  // With `keep` (and io kMapped): the graph is kept in *keep and its copy-in nodes recorded.
  Status capture(Io io, std::span<const TensorView> inputs, cudaGraphExec_t* exec, GraphEntry* keep = nullptr);
  // Median µs of `launch` + synchronize, interleaving two variants (zero-copy choice), or n
  // (pipelining choice).
  Status time_variants(const std::function<Status(int)>& launch, double* us0, double* us1);
  Status time_variants(const std::function<Status(int)>& launch, int n, std::vector<double>* us);
  // Re-points the copy-in nodes of `e` (a zero-copy graph) at the caller's page-locked inputs, or
  // at the staging; staged_[i] says which inputs still need their staging memcpy.
  Status point_copy_in(GraphEntry& e, std::span<const TensorView> inputs);
  // After a zero-copy capture: finds each staged input's copy-in kernel node in `graph`.
  void find_copy_in(cudaGraph_t graph, GraphEntry* e) const;
  void drop_graphs();
  // Names the model's architecture and tactics (ops, tactics, constant dims), for the cached
  // choices: another model with the same IO shapes must measure its own.
  std::string model_fingerprint() const;

  // --- pipelined copy and compute (cuda_pipeline.cpp) --------------------------------------
  // The K worth trying for this run's bucket (empty: none); the eager runs that make every
  // chunk size's allocations before capture (drops K whose outputs do not follow); queueing the
  // chunks (eager or under capture); capturing one K; re-pointing its copy nodes at the
  // caller's inputs (false in *usable: run the plain graph this call).
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
  // again; a call that graph cannot take runs the chunks eagerly (cuda_pipeline.h).
  Status shrink_to_pipeline(std::span<const TensorView> inputs, GraphEntry* entry);
  Status ensure_pipe_streams();

  // CudaRunEnv
  Status alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) override;
  Result<void*> scratch(size_t bytes) override;
  size_t lt_workspace_limit() const override;
  Result<LtWorkspace> lt_workspace(size_t bytes) override;

  struct PinnedBuffer {
    void* p = nullptr;    // host address
    void* dev = nullptr;  // device address of the mapped memory
    size_t bytes = 0;
  };
  Status ensure_pinned(PinnedBuffer& b, size_t bytes);

  std::shared_ptr<const Program> program_;
  ExecutorOptions options_;
  cudaStream_t stream_ = nullptr;  // internal: eager runs, captures, run()
  cudaEvent_t done_ev_ = nullptr;  // after the last enqueue_on_stream
  cudaEvent_t fork_ev_ = nullptr, join_ev_ = nullptr;
  cudaStream_t copy_stream_ = nullptr;  // pipelined path: the chunks' H2D copies
  std::vector<cudaEvent_t> chunk_ev_;   // pipelined path: [0] fork, [1 + k] chunk k copied
  int forced_chunks_ = 0;               // set_pipeline_chunks_for_testing at creation
  bool async_pending_ = false;          // done_ev_ recorded since the last sync()
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer lt_workspace_;
  std::vector<DevTensor> values_;
  std::vector<int> slot_of_;                      // per value: index into pool_, or −1 (own storage)
  BufferPlan plan_;                               // node-order plan: lifetimes, the first slots
  std::vector<size_t> value_bytes_;               // per value with a slot: the most it took so far
  size_t replanned_from_ = 0, replanned_to_ = 0;  // pool bytes before/after the last replan_buffers()
  int64_t shrunk_bucket_ = -1;                    // last bucket whose buffers shrank to its chunks
  size_t shrunk_from_ = 0, shrunk_to_ = 0;        // its pool + scratch bytes before/after
  std::vector<bool> is_input_;                    // per value: a graph input (zeroed when allocated)
  std::vector<DeviceBuffer> pool_;                // shared intermediate buffers
  std::vector<DeviceBuffer> constants_;           // uploaded constants kernels read, by value
  std::vector<std::vector<DevTensor*>> ins_, outs_;
  std::vector<bool> skip_;
  std::vector<DeviceBuffer> scratch_slots_;
  size_t scratch_next_ = 0;  // slot index within the current kernel
  std::vector<PinnedBuffer> in_stage_, out_stage_;
  std::vector<bool> direct_;  // per input: copied from caller memory
  std::vector<bool> staged_;  // per input: this run memcpy's it into the staging
  // Zero-copy outputs (PERF NOTE in enqueue_all): per graph output, whether its producer may write
  // it straight into the mapped staging (a GRUStack node's fused head: written once, plain
  // stores); while redirect_outputs_ (a zero-copy capture's kernels), alloc() gives such an output
  // the staging's device address and sets redirected_.
  std::vector<bool> out_direct_ok_, redirected_;
  std::vector<int> out_index_;  // per value: its graph output index, or −1
  bool redirect_outputs_ = false;
  std::vector<TensorView> padded_;              // this run's inputs at the bucket's batch
  std::vector<void*> in_dev_, out_dev_;         // enqueue_on_stream: caller memory's device addresses
  int64_t run_batch_ = -1, run_bucket_ = -1;    // this run's batch and bucket (−1: no batch dim)
  std::vector<std::vector<int64_t>> out_dims_;  // outputs of the last run (padded batch)
  mutable std::vector<int64_t> scratch_dims_;  // an output's real dims per call (kept: no allocation)
  std::vector<int64_t> buckets_;                // ascending; empty = exact shapes
  std::string buckets_off_;                     // why bucketing was turned off, if it was
  GraphTable graphs_;                           // by path + padded input dims (at most kMaxGraphs)
  std::map<std::string, IoChoice> io_;          // by dims_key + path name (describe(); written at capture)
  std::map<std::string, int> seen_;             // dims_key of shapes run eagerly once
  uint64_t generation_ = 1;                     // bumped by every reallocation
  bool capturing_ = false;
  bool realloc_in_capture_ = false;
  // Whether this context captures and replays CUDA graphs (engine/bench.h's
  // cuda_graphs_for_this_thread() when it was created; `ticksentry bench` without
  // --useCudaGraph turns them off): off, every call launches the kernels one by one.
  bool graphs_on_ = true;
  // Device memory this context held after its runs at each batch bucket (run() and
  // enqueue_on_stream; −1: no bucketing), updated when an allocation happened since
  // (generation_): describe() lists it, so a user sees what each bucket costs.
  std::map<int64_t, int64_t> bucket_memory_;
  uint64_t memory_generation_ = 0;
  void note_bucket_memory();
};

}  // namespace ts::engine::cuda
