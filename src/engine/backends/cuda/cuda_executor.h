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
// memory are read by the copy kernel too when that memory is page-locked.
//
// Caller's stream (enqueue_on_stream): inputs are copied (or read by the copy kernel, in a
// bucket that chose zero-copy) into the device input tensors on the caller's stream, then a
// graph of the kernels alone (captured on the internal stream) is launched there, then the
// outputs are copied out; an event recorded after it orders the next call of this context
// (any stream, or the synchronous run()) after it.
//
// Memory: memory_bytes() is the device memory this context holds (intermediates, scratch,
// cuBLASLt workspace), weights excluded (they belong to the Program). Intermediates whose
// lifetimes do not overlap share grow-only buffers (cuda_buffer_plan.h). Scratch plus the
// cuBLASLt workspace stay within ExecutorOptions::workspace_bytes.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

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

 private:
  // How a graph moves data: DMA copies (pinned staging, direct caller memory), the copy kernel
  // on mapped memory (zero-copy), or not at all (enqueue_on_stream: kernels only).
  enum class Io : uint8_t { kCopy = 0, kMapped, kKernelsOnly };
  struct IoChoice {  // per bucket and path, what the capture measured
    Io io = Io::kCopy;
    double copy_us = 0, mapped_us = 0;  // median launch + synchronize; 0 = not measured
  };

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
  // Queues a device copy of `bytes`: cudaMemcpyAsync, or the copy kernel (mapped memory).
  Status copy_bytes(void* dst, const void* src, size_t bytes, bool kernel, cudaStream_t s);
  Status launch_nodes();      // every kernel in order on the stream
  Status unshare_buffers();   // before timing a node: own storage for every value, recomputed
  Status stage_inputs(std::span<const TensorView> inputs);
  Status sync();              // the internal stream and any caller-stream work of this context
  void drop_graphs();
  // Captures enqueue_all(padded_, io) on the internal stream; null exec when a reallocation
  // interrupted it (the caller then runs eagerly).
  Status capture(Io io, std::span<const TensorView> inputs, cudaGraphExec_t* exec);
  // Median µs of `launch` + synchronize, interleaving two variants (zero-copy choice).
  Status time_variants(const std::function<Status(int)>& launch, double* us0, double* us1);
  // Where caller memory is: *dev its device address (null if the device cannot read it directly);
  // pageable host memory → kInvalidArgument.
  Status check_memory(const void* p, const std::string& what, void** dev) const;
  Status run_padded(std::span<const TensorView> inputs);

  // CudaRunEnv
  Status alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) override;
  Result<void*> scratch(size_t bytes) override;

  struct PinnedBuffer {
    void* p = nullptr;    // host address
    void* dev = nullptr;  // device address of the mapped memory
    size_t bytes = 0;
  };
  Status ensure_pinned(PinnedBuffer& b, size_t bytes);

  struct GraphEntry {
    cudaGraphExec_t exec = nullptr;
    uint64_t generation = 0;
    Io io = Io::kCopy;
    std::vector<std::vector<int64_t>> out_dims;  // at the padded batch
  };

  std::shared_ptr<const Program> program_;
  ExecutorOptions options_;
  cudaStream_t stream_ = nullptr;               // internal: eager runs, captures, run()
  cudaEvent_t done_ev_ = nullptr;               // after the last enqueue_on_stream
  cudaEvent_t fork_ev_ = nullptr, join_ev_ = nullptr;
  bool async_pending_ = false;                  // done_ev_ recorded since the last sync()
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer lt_workspace_;
  std::vector<DevTensor> values_;
  std::vector<int> slot_of_;                    // per value: index into pool_, or −1 (own storage)
  std::vector<bool> is_input_;                  // per value: a graph input (zeroed when allocated)
  std::vector<DeviceBuffer> pool_;              // shared intermediate buffers
  std::vector<DeviceBuffer> constants_;        // uploaded constants kernels read, by value
  std::vector<std::vector<DevTensor*>> ins_, outs_;
  std::vector<bool> skip_;
  std::vector<DeviceBuffer> scratch_slots_;
  size_t scratch_next_ = 0;                     // slot index within the current kernel
  std::vector<PinnedBuffer> in_stage_, out_stage_;
  std::vector<bool> direct_;                    // per input: copied from caller memory
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

}  // namespace ts::engine::cuda
