// engine::build: import → passes → backend support check → profiles → tactic timing (with a
// timing cache file) → plan bytes.
#include "engine/builder.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>

#include "engine/backend.h"
#include "engine/build_memory.h"
#include "engine/calibrate.h"
#include "engine/onnx_import.h"
#include "engine/passes/encoder_region.h"
#include "engine/passes/passes.h"
#include "engine/plan.h"
#include "engine/profile_shapes.h"
#include "engine/quantize.h"
#include "engine/runtime.h"

namespace ts::engine {
namespace {

Status build_error(StatusCode c, const std::string& m) { return Status(c, "building: " + m); }

Status unknown_backend(const std::string& name) {
  std::string have;
  for (const auto& b : backend_names()) {
    if (!have.empty()) have += ", ";
    have += b;
  }
  return build_error(StatusCode::kUnsupported, "unknown backend '" + name + "' (this build has: " + have + ")");
}

// Default profile: batch 1..1024 (opt 1), other symbols 1..512 (opt 64).
OptimizationProfile default_profile(const Graph& g) {
  OptimizationProfile p;
  for (ValueId id : g.inputs) {
    const Value& v = g.value(id);
    if (shape_is_known(v.shape)) continue;
    ShapeRange r;
    for (const Dim& d : v.shape) {
      if (d.is_known()) {
        r.min.push_back(d.value);
        r.opt.push_back(d.value);
        r.max.push_back(d.value);
      } else if (d.symbol == "batch") {
        r.min.push_back(1);
        r.opt.push_back(1);
        r.max.push_back(1024);
      } else {
        r.min.push_back(1);
        r.opt.push_back(64);
        r.max.push_back(512);
      }
    }
    p.inputs[v.name] = r;
  }
  return p;
}

Status check_profile(const Graph& g, const OptimizationProfile& p, size_t idx) {
  for (const auto& [name, r] : p.inputs) {
    ValueId id = g.find_value(name);
    bool is_input = std::find(g.inputs.begin(), g.inputs.end(), id) != g.inputs.end();
    std::string where = "profile " + std::to_string(idx) + " input " + name;
    if (!is_input) return build_error(StatusCode::kInvalidArgument, where + ": the model has no such input");
    const Value& v = g.value(id);
    size_t rank = v.shape.size();
    if (r.min.size() != rank || r.opt.size() != rank || r.max.size() != rank) {
      return build_error(StatusCode::kInvalidArgument,
                         where + ": rank differs from the model's " + shape_to_string(v.shape));
    }
    for (size_t k = 0; k < rank; ++k) {
      if (!(r.min[k] >= 0 && r.min[k] <= r.opt[k] && r.opt[k] <= r.max[k])) {
        return build_error(StatusCode::kInvalidArgument,
                           where + ": needs 0 <= min <= opt <= max on axis " + std::to_string(k));
      }
      if (v.shape[k].is_known() && (r.min[k] != v.shape[k].value || r.max[k] != v.shape[k].value)) {
        return build_error(StatusCode::kInvalidArgument, where + ": axis " + std::to_string(k) + " is fixed at " +
                                                             std::to_string(v.shape[k].value) + " in the model");
      }
    }
  }
  return Status::ok();
}

class TimingCache {
 public:
  explicit TimingCache(std::string path) : path_(std::move(path)) {
    if (path_.empty()) return;
    std::ifstream f(path_);
    std::string line;
    while (std::getline(f, line)) {
      auto tab = line.rfind('\t');
      if (tab == std::string::npos) continue;
      try {
        entries_[line.substr(0, tab)] = std::stod(line.substr(tab + 1));
      } catch (...) {
        // a malformed line is skipped: the cache is only an accelerator
      }
    }
  }
  bool find(const std::string& key, double* ns) const {
    auto it = entries_.find(key);
    if (it == entries_.end()) return false;
    *ns = it->second;
    return true;
  }
  void put(const std::string& key, double ns) {
    entries_[key] = ns;
    dirty_ = true;
  }
  Status save() const {
    if (path_.empty() || !dirty_) return Status::ok();
    std::ofstream f(path_, std::ios::trunc);
    for (const auto& [k, v] : entries_) f << k << '\t' << v << '\n';
    if (!f) return build_error(StatusCode::kIoError, "cannot write timing cache " + path_);
    return Status::ok();
  }
  int hits = 0, misses = 0;

 private:
  std::string path_;
  std::map<std::string, double> entries_;
  bool dirty_ = false;
};

}  // namespace

Result<std::vector<uint8_t>> build_from_graph(Graph graph, const PassLog& log, const BuildOptions& options) {
  const Backend* be = find_backend(options.backend);
  if (!be) return unknown_backend(options.backend);
  TS_RETURN_IF_ERROR(be->available().with_context("building"));
  TS_RETURN_IF_ERROR(be->check_precision(options.precision).with_context("building"));
  for (const Node& n : graph.nodes) {
    Status s = be->check_supported(graph, n);
    if (!s) return Status(s.code(), "building: " + s.message());
  }
  TS_RETURN_IF_ERROR(validate_graph(graph).with_context("building"));

  Plan plan;
  plan.backend = be->name();
  plan.target_arch = be->target_arch();
  plan.precision = options.precision;
  plan.tf32 = options.tf32;
  plan.workspace_bytes = options.workspace_bytes;
  plan.profiles = options.profiles;
  if (plan.profiles.empty()) plan.profiles.push_back(default_profile(graph));
  for (size_t i = 0; i < plan.profiles.size(); ++i) TS_RETURN_IF_ERROR(check_profile(graph, plan.profiles[i], i));
  // Every shape argument computed from the inputs' shapes, evaluated at the user's min, opt and
  // max shapes (the default profile: at its opt shape only, its range being a guess).
  // A graph handed over already fused (GRUStack, LSTMStack, TransformerEncoderLayer) is checked
  // like any other: shape inference knows the fused ops (passes/infer_shapes.cpp).
  {
    Status s = check_profile_dims(graph, plan.profiles, !options.profiles.empty());
    if (!s) return build_error(s.code(), s.message());
  }
  // The graph at profile 0's opt shapes, before the backend's fusions: what reads each input.
  InputDims opt_dims;
  for (const auto& [name, r] : plan.profiles[0].inputs) opt_dims[name] = r.opt;
  auto at_opt = graph_at_dims(graph, opt_dims);
  if (!at_opt) return build_error(at_opt.status().code(), at_opt.status().message());
  plan.pass_log = log.lines;
  if (options.precision == Precision::kINT8) {
    // Calibrate on the FP32 graph and mark each GEMM's precision before tactics are chosen:
    // the backend makes INT8 kernels for the layers marked int8 (quantize.h).
    CalibrationOptions co;
    co.max_rel_err = options.int8_max_rel_err;
    auto table = quantize_graph(graph, options.calibration_data, options.calibration_cache, co, &plan.pass_log);
    if (!table) return table.status().with_context("building");
    for (const auto& [name, th] : table.value().thresholds) plan.activation_scales[name] = int8_scale(th);
  }

  // Stacked GRU (LSTM) layers → GRUStack (LSTMStack) where the backend runs it (the CUDA
  // wavefronts), for every precision (passes/fuse_rnn_stack.cpp). In INT8 plans the recurrences
  // run FP16 either way (no INT8 recurrence), so the stack only takes in the head's Gemm, which
  // then runs fp32 in the kernel. PERF NOTE: an INT8 GRU/LSTM plan run layer by layer (the head's
  // Gemm INT8) was several times slower at batch 1 than the same plan as a stack, which runs as fast
  // as FP16's (bench/results/archive/lead-h200-20261201-0825-mid.log, -0827-int8stack.log).
  {
    PassLog stack_log;
    fuse_rnn_stack(graph, stack_log, [&](const Node& n) { return be->check_supported(graph, n).is_ok(); });
    plan.pass_log.insert(plan.pass_log.end(), stack_log.lines.begin(), stack_log.lines.end());
  }
  // Whole Transformer encoder layers → TransformerEncoderLayer where the backend has that op (the
  // CUDA fused layer: FP16 mma tiles in FP16 and INT8 plans, strict FP32 in FP32 plans without
  // TF32; TF32 and BF16 plans keep the layers) (passes/fuse_encoder.cpp). In an INT8 plan the
  // fused layer runs FP16 and its GEMMs' INT8 marks are dropped, as TensorRT keeps a layer in FP16
  // where that is the faster kernel (BuildOptions::int8_obey_precision keeps the INT8 layers).
  // PERF NOTE: the fused FP16 layer is several times faster than the INT8 layers unfused at every
  // batch (bench/results/engine-cuda-h200-20261201-0940-final.json). The cpu backend runs the
  // layer in FP32 plans (cpu_encoder.cpp). A backend without the op is not asked: the pass proves
  // each match by building the region on the CPU backend, and that build (encoder_region::proving())
  // does not fuse (and recurse) again. max_seq: the largest dim 1 any
  // profile allows any rank-3 input (the backend's limit on T is checked against it).
  Node encoder_probe;
  encoder_probe.op = "TransformerEncoderLayer";
  const bool has_encoder_op = !be->tactics(graph, encoder_probe).empty();
  if (has_encoder_op && !encoder_region::proving() &&
      (options.precision == Precision::kFP16 || (options.precision == Precision::kINT8 && !options.int8_obey_precision) ||
       (options.precision == Precision::kFP32 && !options.tf32))) {
    int64_t max_seq = 0;
    for (const auto& prof : plan.profiles)
      for (const auto& [name, r] : prof.inputs)
        if (r.max.size() == 3) max_seq = std::max(max_seq, r.max[1]);
    for (ValueId id : graph.inputs) {
      const Value& v = graph.value(id);
      if (v.shape.size() == 3 && v.shape[1].is_known()) max_seq = std::max(max_seq, v.shape[1].value);
    }
    PassLog enc_log;
    fuse_encoder(
        graph, enc_log, [&](const Node& n) { return be->check_supported(graph, n).is_ok(); }, max_seq);
    plan.pass_log.insert(plan.pass_log.end(), enc_log.lines.begin(), enc_log.lines.end());
  }

  // 1-D Convs with their TCN glue (input Transpose, causal trim, ReLU, residual add) →
  // FusedConv1d where the backend has it (the CUDA implicit GEMM; passes/fuse_conv1d.cpp).
  {
    PassLog conv_log;
    fuse_conv1d(graph, conv_log, [&](const Node& n) { return be->check_supported(graph, n).is_ok(); });
    plan.pass_log.insert(plan.pass_log.end(), conv_log.lines.begin(), conv_log.lines.end());
  }

  // Inputs at profile 0's opt shape (static inputs at their own shape), random values.
  std::vector<std::vector<uint8_t>> buffers;
  std::vector<TensorView> views;
  std::vector<int64_t> opt_numel_ratio;
  double max_ratio = 1.0;
  std::mt19937 rng(42);
  std::string integer_inputs;  // how the integer inputs were chosen, for the error of a failed run
  for (ValueId id : graph.inputs) {
    const Value& v = graph.value(id);
    TensorView tv;
    tv.dtype = v.dtype;
    auto it = plan.profiles[0].inputs.find(v.name);
    if (it != plan.profiles[0].inputs.end()) {
      tv.dims = it->second.opt;
      double opt = double(std::max<int64_t>(1, shape_numel(it->second.opt)));
      max_ratio = std::max(max_ratio, double(shape_numel(it->second.max)) / opt);
    } else if (shape_is_known(v.shape)) {
      tv.dims = v.const_dims();
    } else {
      return build_error(StatusCode::kInvalidArgument, "input " + v.name + " " + shape_to_string(v.shape) +
                                                           " has dynamic dims but profile 0 does not cover it");
    }
    buffers.emplace_back(tv.bytes() + 1, 0);
    tv.data = buffers.back().data();
    const ValueId at = at_opt.value().find_value(v.name);
    const std::string how = at == kNoValue ? "" : fill_trial_input(at_opt.value(), at, tv, rng);
    if (!how.empty()) integer_inputs += (integer_inputs.empty() ? "" : ", ") + how;
    views.push_back(tv);
  }

  // Default tactics first; run once at the opt shape to have every node's inputs.
  for (Node& n : graph.nodes) {
    auto t = be->tactics(graph, n);
    if (n.tactic.empty() && !t.empty()) n.tactic = t.front();
  }
  KernelOptions ko{options.precision, options.tf32};
  auto program = be->prepare(graph, ko);
  if (!program) return program.status().with_context("building");
  ExecutorOptions eo;
  eo.workspace_bytes = options.workspace_bytes;
  // The runtime's shape buckets: a backend that rounds the batch up to its bucket (cuda) runs
  // the opt batch at that bucket, so its tactics are timed at the shape they will run at (a
  // 1,280-row opt batch runs 2,048 rows; timed at 1,280 the LSTM stack chose a tactic that lost
  // at 2,048).
  eo.batch_buckets = batch_buckets(graph, plan.profiles);
  auto exr = be->create_executor(program.value(), eo);
  if (!exr) return exr.status().with_context("building");
  BackendExecutor& ex = *exr.value();
  Status run = ex.run(views);
  if (!run) {
    return build_error(run.code(), "trial run at profile 0's opt shapes " + input_dims_str(graph, opt_dims) +
                                       (integer_inputs.empty() ? "" : " with " + integer_inputs) + ": " + run.message());
  }

  TimingCache cache(options.timing_cache_path);
  for (size_t i = 0; i < graph.nodes.size() && options.time_tactics; ++i) {
    Node& n = graph.nodes[i];
    auto cands = be->tactics(graph, n);
    if (cands.size() < 2) continue;
    std::string shapes;
    for (const auto& d : ex.node_input_dims(i)) shapes += (d.empty() ? std::string("-") : dims_x_str(d)) + ";";
    double best = -1.0;
    for (const std::string& tac : cands) {
      // The precision is part of the key: an FP16 build must not reuse an FP32 build's times.
      std::string key = be->name() + "|" + be->target_arch() + "|" + precision_name(options.precision) +
                        (options.tf32 ? "+tf32" : "") + "|" + n.op + "|" + shapes + "|" + tac;
      double ns = 0.0;
      if (cache.find(key, &ns)) {
        ++cache.hits;
      } else {
        ++cache.misses;
        auto k = be->make_kernel_for(graph, n, tac, ko);
        if (!k) return k.status().with_context("building node " + n.name);
        auto t = ex.time_node(i, *k.value());
        if (!t && t.status().code() == StatusCode::kUnsupported) break;  // backend keeps its default
        if (!t)
          return build_error(t.status().code(), "timing node " + n.name + " tactic " + tac + ": " + t.status().message());
        ns = t.value();
        cache.put(key, ns);
      }
      if (best < 0 || ns < best) {
        best = ns;
        n.tactic = tac;
      }
    }
    plan.pass_log.push_back("tactic: " + n.name + " (" + n.op + ") → " + n.tactic + " at " + shapes);
  }
  TS_RETURN_IF_ERROR(cache.save());
  plan.pass_log.push_back("timing cache: " + std::to_string(cache.hits) + " hits, " + std::to_string(cache.misses) +
                          " timed");
  // PERF NOTE: an estimate, linear in the input size from the opt-shape run (attention's T² is
  // not modelled); running the max shape at build time would cost seconds for big profiles.
  const int64_t fixed = ex.fixed_memory_bytes();
  plan.device_memory_bytes = fixed + int64_t(double(ex.memory_bytes() - fixed) * max_ratio);
  // Measured per bucket with the tactics chosen above (build_memory.h).
  {
    auto final_program = be->prepare(graph, ko);
    if (!final_program) return final_program.status().with_context("building");
    plan.bucket_memory =
        measure_bucket_memory(*be, final_program.value(), eo, plan.profiles, kBucketMemoryBudgetS, &plan.pass_log);
  }
  plan.graph = std::move(graph);
  return serialize_plan(plan);
}

// INT8's calibration inputs are checked before the backend and the device: a missing or short
// calibration set is the user's to fix on any machine and in any build, with or without a GPU.
static Status check_int8_inputs(const BuildOptions& o) {
  if (o.precision != Precision::kINT8) return Status::ok();
  if (!(o.int8_max_rel_err > 0)) return build_error(StatusCode::kInvalidArgument, "int8 max relative error must be > 0");
  if (!o.calibration_cache.empty() && std::filesystem::exists(o.calibration_cache)) {
    auto c = read_calibration_cache(o.calibration_cache);
    if (!c) return c.status().with_context("building");
    if (o.calibration_data.empty()) return Status::ok();  // the model's fingerprint is checked later
  }
  if (o.calibration_data.empty()) {
    return build_error(StatusCode::kInvalidArgument, "int8 needs calibration data: give --calib windows.npy (≥ " +
                                                         std::to_string(kMinCalibrationWindows) +
                                                         " feature windows, float32 [N, T, F]) or an existing --calibCache");
  }
  auto w = npy_read(o.calibration_data);
  if (!w) return w.status().with_context("building: reading calibration data");
  const HostTensor& t = w.value();
  if (t.dtype != DType::kF32 || t.dims.size() != 3) {
    return build_error(StatusCode::kInvalidArgument, "calibration windows " + o.calibration_data +
                                                         " must be float32 [N, T, F], got " + dtype_name(t.dtype) + " " +
                                                         dims_str(t.dims));
  }
  if (t.dims[0] < kMinCalibrationWindows) {
    return build_error(StatusCode::kInvalidArgument, "int8 calibration: need ≥ " + std::to_string(kMinCalibrationWindows) +
                                                         " windows, got " + std::to_string(t.dims[0]) + " in " +
                                                         o.calibration_data);
  }
  return Status::ok();
}

Result<std::vector<uint8_t>> build(std::span<const uint8_t> onnx_model, const BuildOptions& options) {
  TS_RETURN_IF_ERROR(check_int8_inputs(options));
  const Backend* be = find_backend(options.backend);
  if (!be) return unknown_backend(options.backend);
  TS_RETURN_IF_ERROR(be->available().with_context("building"));
  TS_RETURN_IF_ERROR(be->check_precision(options.precision).with_context("building"));
  auto g = import_onnx(onnx_model);
  if (!g) return g.status().with_context("building");
  PassLog log;
  TS_RETURN_IF_ERROR(run_passes(g.value(), log).with_context("building"));
  return build_from_graph(std::move(g).value(), log, options);
}

Result<std::vector<uint8_t>> build_file(const std::string& onnx_path, const BuildOptions& options) {
  std::ifstream f(onnx_path, std::ios::binary);
  if (!f) return Status(StatusCode::kIoError, "building " + onnx_path + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto r = build(bytes, options);
  if (!r) return Status(r.status().code(), onnx_path + ": " + r.status().message());
  return r;
}

}  // namespace ts::engine
