#pragma once
// Runs a loaded engine the way a careless caller would, for the fuzz targets (plan_fuzz,
// onnx_fuzz) and their ctest smoke runs: inputs inside profile 0 (a random shape between its
// min and max, capped in size) with random values, outputs sized from the engine's own shapes
// (ExecutionContext::output_dims), then once more into buffers one value too small. Any error
// Status is fine; what must never happen is a crash, a write past a buffer (ASan), a result
// whose shape differs from the one the engine reported, or a too-small buffer accepted —
// those end the process through __builtin_trap(), which libFuzzer reports as a finding.
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "engine/engine.h"
#include "engine/npy.h"

namespace ts::fuzz {

struct ExerciseStats {
  int runs = 0;      // engines run with a result
  int refused = 0;   // engines that returned an error Status (input, shape or kernel)
  int skipped = 0;   // engines not run: no usable input shape in profile 0, or a result too large
};

// What a fuzzing run did with the engines it made, so that a run shows that it executed them,
// not only loaded them: one line on stderr, "engine_exercise: inputs N engines E ran R refused F
// skipped S", after 2^k inputs and at exit. bench/fuzz.sh copies the last one into its JSON.
class ExerciseTally {
 public:
  static ExerciseTally& get() {
    static ExerciseTally tally;
    return tally;
  }
  ExerciseStats* stats() { return &stats_; }
  // Call once per input; `engine` = the input gave an engine (loaded or built).
  void input_done(bool engine) {
    ++inputs_;
    engines_ += engine ? 1 : 0;
    if ((inputs_ & (inputs_ - 1)) == 0) print();
  }
  void print() const {
    std::fprintf(stderr, "engine_exercise: inputs %llu engines %llu ran %d refused %d skipped %d\n",
                 static_cast<unsigned long long>(inputs_), static_cast<unsigned long long>(engines_), stats_.runs,
                 stats_.refused, stats_.skipped);
  }
  ~ExerciseTally() { print(); }

 private:
  ExerciseStats stats_;
  uint64_t inputs_ = 0;
  uint64_t engines_ = 0;
};

// Elements allowed per input and bytes per output: keeps one execution in the milliseconds and
// the process inside libFuzzer's memory limit.
constexpr int64_t kMaxInputElems = int64_t(1) << 14;
constexpr int64_t kMaxOutputBytes = int64_t(1) << 26;

inline bool fits(const std::vector<int64_t>& dims, int64_t limit) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > limit / d)) return false;
    n *= d;
  }
  return n <= limit;
}

// Dims for input `b` from profile 0 (or its static shape); false when none is usable.
inline bool pick_dims(const engine::Engine& e, const engine::BindingInfo& b, std::mt19937& rng, std::vector<int64_t>* dims) {
  dims->clear();
  const engine::ShapeRange* r = nullptr;
  if (!e.profiles().empty()) {
    auto it = e.profiles()[0].inputs.find(b.name);
    if (it != e.profiles()[0].inputs.end()) r = &it->second;
  }
  for (size_t k = 0; k < b.shape.size(); ++k) {
    if (b.shape[k].is_known()) {
      dims->push_back(b.shape[k].value);
    } else if (r && k < r->min.size() && k < r->max.size() && r->min[k] <= r->max[k]) {
      const int64_t lo = r->min[k], hi = std::min(r->max[k], lo + 16);
      dims->push_back(lo + int64_t(rng() % uint64_t(hi - lo + 1)));
    } else {
      return false;
    }
  }
  return fits(*dims, kMaxInputElems);
}

inline void fill(engine::HostTensor& t, std::mt19937& rng) {
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype) {
      case engine::DType::kF32: t.as<float>()[i] = float(int(rng() % 2001) - 1000) / 500.f; break;
      case engine::DType::kI64: t.as<int64_t>()[i] = int64_t(rng() % 4); break;
      case engine::DType::kI32: t.as<int32_t>()[i] = int32_t(rng() % 4); break;
      case engine::DType::kBool:
      case engine::DType::kU8:
      case engine::DType::kI8: t.data[size_t(i)] = uint8_t(rng() % 2); break;
      default: break;  // zeros
    }
  }
}

inline void exercise(const engine::Engine& e, uint32_t seed, ExerciseStats* stats) {
  std::mt19937 rng(seed);
  std::vector<engine::HostTensor> inputs;
  for (const auto& b : e.inputs()) {
    std::vector<int64_t> dims;
    if (!pick_dims(e, b, rng, &dims)) {
      if (stats) ++stats->skipped;
      return;
    }
    inputs.push_back(engine::HostTensor::zeros(b.dtype, dims));
    fill(inputs.back(), rng);
  }
  auto ctx = e.create_context();
  if (!ctx) return;
  std::vector<engine::TensorView> in;
  for (auto& t : inputs) in.push_back(t.view());
  auto want = ctx.value()->output_dims(in);
  if (!want || want.value().size() != e.outputs().size()) {
    if (stats) ++stats->refused;
    return;
  }
  std::vector<engine::HostTensor> outs;
  for (size_t i = 0; i < e.outputs().size(); ++i) {
    if (!fits(want.value()[i], kMaxOutputBytes / 8)) {
      if (stats) ++stats->skipped;
      return;
    }
    outs.push_back(engine::HostTensor::zeros(e.outputs()[i].dtype, want.value()[i]));
  }
  std::vector<engine::TensorView> out;
  for (auto& t : outs) out.push_back(t.view());
  Status st = ctx.value()->execute(in, out);
  if (!st) {
    if (stats) ++stats->refused;
    return;
  }
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].dims != want.value()[i]) __builtin_trap();  // output_dims lied about this run
  }
  if (stats) ++stats->runs;
  // One value too small: an error, and nothing written past the buffer (ASan watches).
  for (size_t i = 0; i < outs.size(); ++i) {
    const int64_t n = outs[i].numel();
    if (n < 1) continue;
    std::vector<uint8_t> small(size_t(n - 1) * engine::dtype_size(outs[i].dtype));
    std::vector<engine::TensorView> views;
    for (auto& t : outs) views.push_back(t.view());
    views[i] = engine::TensorView{outs[i].dtype, {n - 1}, small.data()};
    if (ctx.value()->execute(in, views).is_ok()) __builtin_trap();  // a too-small buffer accepted
  }
}

}  // namespace ts::fuzz
