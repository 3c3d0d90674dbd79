#include "engine/build_memory.h"

#include <chrono>
#include <cstring>
#include <random>

#include "engine/runtime.h"

namespace ts::engine {

std::vector<BucketMemory> measure_bucket_memory(const Backend& be, std::shared_ptr<const Program> program,
                                                const ExecutorOptions& eo, const std::vector<OptimizationProfile>& profiles,
                                                double budget_s, std::vector<std::string>* log) {
  std::vector<BucketMemory> out;
  if (eo.batch_buckets.empty() || profiles.empty()) return out;
  const Graph& g = program->graph;
  auto ex = be.create_executor(program, eo);
  if (!ex) {
    log->push_back("memory per bucket: not measured (" + ex.status().message() + ")");
    return out;
  }
  std::mt19937 rng(43);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<std::vector<uint8_t>> buffers(g.inputs.size());
  std::vector<TensorView> views(g.inputs.size());
  const auto t0 = std::chrono::steady_clock::now();
  for (int64_t bucket : eo.batch_buckets) {
    const double spent = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (spent > budget_s) {
      log->push_back("memory per bucket: buckets from " + std::to_string(bucket) + " not measured (build's " +
                     std::to_string(int(budget_s)) + " s budget for it spent)");
      break;
    }
    for (size_t i = 0; i < g.inputs.size(); ++i) {
      const Value& v = g.value(g.inputs[i]);
      TensorView& tv = views[i];
      tv.dtype = v.dtype;
      auto r = profiles[0].inputs.find(v.name);
      if (r == profiles[0].inputs.end() || r->second.opt.empty()) return out;  // batch_buckets needs both
      tv.dims = r->second.opt;
      tv.dims[0] = bucket;
      buffers[i].assign(tv.bytes(), 0);  // non-float inputs: zeros (a batch row of ids or flags)
      tv.data = buffers[i].data();
      if (v.dtype == DType::kF32) {
        float* f = reinterpret_cast<float*>(buffers[i].data());
        for (size_t k = 0; k < buffers[i].size() / sizeof(float); ++k) f[k] = nd(rng);
      }
    }
    if (!check_inputs(g, profiles, views)) continue;  // below every profile's minimum batch: never run
    Status s;
    for (int r = 0; r < 3 && s; ++r) s = ex.value()->run(views);
    if (!s) {
      log->push_back("memory per bucket: bucket " + std::to_string(bucket) + " and above not measured (" + s.message() +
                     ")");
      break;
    }
    out.push_back(BucketMemory{bucket, ex.value()->memory_bytes()});
  }
  return out;
}

}  // namespace ts::engine
