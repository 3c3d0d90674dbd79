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
// (their pointers moved). Up to kMaxGraphs shapes are kept.
//
// Memory: memory_bytes() is the device memory this context holds (intermediates, scratch,
// cuBLASLt workspace), weights excluded (they belong to the Program). Intermediates whose
// lifetimes do not overlap share grow-only buffers (cuda_buffer_plan.h). Scratch plus the
// cuBLASLt workspace stay within ExecutorOptions::workspace_bytes.
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

  static constexpr size_t kMaxGraphs = 32;
  // PERF NOTE: below this an input is memcpy'd into pinned staging (a few µs at most, and the
  // H2D copy then lives inside the graph: one launch for the whole run); above it the memcpy
  // would cost more than a separate cudaMemcpyAsync call (~3 µs).
  static constexpr size_t kDirectCopyBytes = size_t(256) << 10;

 private:
  CudaExecutor(std::shared_ptr<const Program> program, const ExecutorOptions& options);
  Status init();
  // Queues H2D copies, every kernel and the D2H copies (eager or under capture).
  // include_direct: also queue the direct (large) input copies; false under capture.
  Status enqueue_all(std::span<const TensorView> inputs, bool include_direct);
  Status copy_direct_inputs(std::span<const TensorView> inputs);
  Status launch_nodes();      // every kernel in order on the stream
  Status unshare_buffers();   // before timing a node: own storage for every value, recomputed
  Status stage_inputs(std::span<const TensorView> inputs);
  Status sync();
  void drop_graphs();

  // CudaRunEnv
  Status alloc(DevTensor& t, DType dtype, std::span<const int64_t> dims) override;
  Result<void*> scratch(size_t bytes) override;

  struct PinnedBuffer {
    void* p = nullptr;
    size_t bytes = 0;
  };
  Status ensure_pinned(PinnedBuffer& b, size_t bytes);

  struct GraphEntry {
    cudaGraphExec_t exec = nullptr;
    uint64_t generation = 0;
    std::vector<std::vector<int64_t>> out_dims;
  };

  std::shared_ptr<const Program> program_;
  ExecutorOptions options_;
  const std::vector<DType>* dtypes_ = nullptr;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  DeviceBuffer lt_workspace_;
  std::vector<DevTensor> values_;
  std::vector<int> slot_of_;                    // per value: index into pool_, or −1 (own storage)
  std::vector<DeviceBuffer> pool_;              // shared intermediate buffers
  std::vector<DeviceBuffer> constants_;        // uploaded constants kernels read, by value
  std::vector<std::vector<DevTensor*>> ins_, outs_;
  std::vector<bool> skip_;
  std::vector<DeviceBuffer> scratch_slots_;
  size_t scratch_next_ = 0;                     // slot index within the current kernel
  std::vector<PinnedBuffer> in_stage_, out_stage_;
  std::vector<bool> direct_;                    // per input: copied from caller memory
  std::vector<std::vector<int64_t>> out_dims_;  // outputs of the last run
  std::map<std::string, GraphEntry> graphs_;    // by input dims
  std::map<std::string, int> seen_;             // shapes run eagerly once
  uint64_t generation_ = 1;                     // bumped by every reallocation
  bool capturing_ = false;
  bool realloc_in_capture_ = false;
};

}  // namespace ts::engine::cuda
