#pragma once
// Runtime internals shared by the Engine implementation and the builder (which times tactics
// with the same executor). Not part of the public API; use engine.h.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/backend.h"
#include "engine/plan.h"

namespace ts::engine {

// Checks a graph read from a plan before any kernel sees it: every node input is a constant,
// a graph input or an earlier node's output; every value is produced at most once; node
// output 0 exists; graph outputs are produced.
Status validate_graph(const Graph& g);

// Checks `inputs` against the graph's input bindings (count, dtype, rank, static dims, one
// value per symbol) and against the profiles (some profile must contain every input):
// "input x: shape [2000,60,32] is outside profile 0 (min [1,1,32], max [1024,512,32])".
Status check_inputs(const Graph& g, const std::vector<OptimizationProfile>& profiles,
                    std::span<const TensorView> inputs);

// Shape buckets for the executor (ExecutorOptions::batch_buckets): powers of two below the
// largest batch every profile allows, and that batch itself (ModelServer pads to the same
// sizes) — only when dim 0 of every input and every output is one and the same symbol (the
// models' "batch": rows are independent there, so padding rows change no real row's result).
// Capped at the smallest profile maximum so that a padded shape stays inside the profile that
// accepted the real one. Empty otherwise. The builder times tactics with the same buckets, so
// a node is timed at the shape it will run at.
std::vector<int64_t> batch_buckets(const Graph& g, const std::vector<OptimizationProfile>& profiles);

// One line for Engine::describe() and `ticksentry inspect`: the per-bucket memory a plan
// recorded at build (Plan::bucket_memory), "bucket: N MiB" each; "" when there is none.
std::string describe_bucket_memory(const std::vector<BucketMemory>& m);

// The host executor (every backend's default BackendExecutor): runs a Program's kernels on
// host RtTensors: one RtTensor per value (intermediates own storage that only grows, so a
// repeated shape allocates nothing), one scratch region, per-kernel state. Single-threaded:
// one Executor per ExecutionContext.
class Executor final : public BackendExecutor {
 public:
  explicit Executor(std::shared_ptr<const Program> program);
  // Binds inputs (referenced, not copied; in graph input order) and runs every node.
  // Errors name the node: "node /gru/GRU (GRU): ...".
  Status run(std::span<const TensorView> inputs) override;
  // Copies the graph outputs into `outputs` (in graph output order), filling in dims.
  Status copy_outputs(std::span<TensorView> outputs) const override;
  std::vector<std::vector<int64_t>> output_dims() const override;
  // Runs node i alone on the tensors of the last run (tactic timing).
  Status run_node(size_t i, const Kernel& k, KernelState* state);
  // Median of up to 15 timed run_node calls after a warm-up (≤ ~200 ms), in ns.
  Result<double> time_node(size_t i, const Kernel& k) override;
  const std::vector<const RtTensor*>& node_inputs(size_t i) const { return ins_[i]; }
  std::vector<std::vector<int64_t>> node_input_dims(size_t i) const override;
  int64_t memory_bytes() const override;   // intermediates + scratch held now
  const Program& program() const { return *program_; }

 private:
  std::shared_ptr<const Program> program_;
  std::vector<RtTensor> values_;
  std::vector<std::unique_ptr<KernelState>> states_;
  std::vector<std::vector<const RtTensor*>> ins_;
  std::vector<std::vector<RtTensor*>> outs_;
  std::vector<bool> skip_;          // nodes whose outputs are all constants
  Scratch scratch_;
};

// The engine built from a plan (implemented in runtime.cpp).
Result<std::shared_ptr<Engine>> make_engine(Plan plan);

}  // namespace ts::engine
