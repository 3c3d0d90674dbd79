#include "app/engine_commands.h"

#include "app/build_manifest.h"
#include "app/time_arg.h"

#include <CLI/CLI.hpp>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "engine/bench.h"
#include "engine/engine.h"
#include "engine/npy.h"
#include "engine/plan.h"

namespace ts {
namespace {

using engine::DType;
using engine::HostTensor;

int fail(const char* command, const std::string& message) {
  std::fprintf(stderr, "ticksentry %s: %s\n", command, message.c_str());
  return 2;
}

// "x:1x30x32,h:2x1x64" → {x: [1,30,32], h: [2,1,64]}.
Result<std::map<std::string, std::vector<int64_t>>> parse_shapes(const std::string& spec,
                                                                  const char* flag) {
  std::map<std::string, std::vector<int64_t>> out;
  size_t pos = 0;
  while (pos < spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    const size_t colon = item.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size()) {
      return Status(StatusCode::kInvalidArgument,
                    std::string(flag) + " '" + item + "': expected name:dims, e.g. x:1x30x32");
    }
    std::vector<int64_t> dims;
    const std::string d = item.substr(colon + 1);
    size_t p = 0;
    while (p <= d.size()) {
      size_t q = d.find('x', p);
      if (q == std::string::npos) q = d.size();
      const std::string num = d.substr(p, q - p);
      if (num.empty() || num.find_first_not_of("0123456789") != std::string::npos ||
          num.size() > 12) {
        return Status(StatusCode::kInvalidArgument,
                      std::string(flag) + " '" + item + "': dims must be positive integers joined by 'x'");
      }
      dims.push_back(std::stoll(num));
      p = q + 1;
    }
    out[item.substr(0, colon)] = std::move(dims);
  }
  return out;
}

// "workspace:1024M" → bytes. K, M, G suffixes (powers of 1024); no suffix means MiB as trtexec.
Result<int64_t> parse_mem_pool(const std::string& spec) {
  const std::string prefix = "workspace:";
  if (spec.rfind(prefix, 0) != 0) {
    return Status(StatusCode::kInvalidArgument,
                  "--memPoolSize '" + spec + "': expected workspace:<size>[K|M|G]");
  }
  std::string v = spec.substr(prefix.size());
  int64_t unit = int64_t(1) << 20;
  if (!v.empty() && std::string("KkMmGg").find(v.back()) != std::string::npos) {
    const char u = char(std::toupper(v.back()));
    unit = u == 'K' ? (int64_t(1) << 10) : u == 'M' ? (int64_t(1) << 20) : (int64_t(1) << 30);
    v.pop_back();
  }
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 9) {
    return Status(StatusCode::kInvalidArgument, "--memPoolSize '" + spec + "': bad size");
  }
  return std::stoll(v) * unit;
}

Result<std::shared_ptr<engine::Engine>> load_engine(const std::string& path) {
  if (path.empty()) return Status(StatusCode::kInvalidArgument, "--loadEngine is required");
  auto e = engine::Engine::load_file(path);
  if (!e) return e.status().with_context("loading " + path);
  return e;
}

// Output buffers sized for these inputs: the shapes come from the engine itself (one run of its
// kernels on the inputs), never from a guess over the bindings' symbolic dims (a Reshape to
// [-1] or a Concat along a dynamic axis has dims no input names).
Result<std::vector<HostTensor>> make_outputs(const engine::Engine& e, engine::ExecutionContext& ctx,
                                             std::span<const engine::TensorView> inputs) {
  auto dims = ctx.output_dims(inputs);
  if (!dims) return dims.status();
  std::vector<HostTensor> out;
  for (size_t i = 0; i < e.outputs().size() && i < dims.value().size(); ++i) {
    out.push_back(HostTensor::zeros(e.outputs()[i].dtype, dims.value()[i]));
  }
  return out;
}

}  // namespace

int command_engine_build(const EngineBuildOptions& o) {
  constexpr const char* kCmd = "build";
  if (o.onnx.empty()) return fail(kCmd, "--onnx is required");
  if (o.save_engine.empty()) return fail(kCmd, "--saveEngine is required");
  if (int(o.fp16) + int(o.bf16) + int(o.int8) > 1) {
    return fail(kCmd, "give at most one of --fp16, --bf16, --int8");
  }
  engine::BuildOptions opts;
  opts.backend = o.backend;
  opts.precision = o.fp16   ? engine::Precision::kFP16
                   : o.bf16 ? engine::Precision::kBF16
                   : o.int8 ? engine::Precision::kINT8
                            : engine::Precision::kFP32;
  opts.timing_cache_path = o.timing_cache_file;
  opts.tf32 = o.tf32;
  if (!o.int8 && (!o.calib.empty() || !o.calib_cache.empty())) {
    return fail(kCmd, "--calib and --calibCache are for --int8 builds");
  }
  opts.calibration_data = o.calib;
  opts.calibration_cache = o.calib_cache;
  opts.int8_max_rel_err = o.int8_max_rel_err;
  if (o.precision_constraints != "prefer" && o.precision_constraints != "obey") {
    return fail(kCmd, "--precisionConstraints must be prefer or obey, got " + o.precision_constraints);
  }
  opts.int8_obey_precision = o.precision_constraints == "obey";
  if (!o.mem_pool_size.empty()) {
    auto bytes = parse_mem_pool(o.mem_pool_size);
    if (!bytes) return fail(kCmd, bytes.status().message());
    opts.workspace_bytes = bytes.value();
  }
  auto mins = parse_shapes(o.min_shapes, "--minShapes");
  auto opt_parsed = parse_shapes(o.opt_shapes, "--optShapes");
  auto maxs = parse_shapes(o.max_shapes, "--maxShapes");
  for (auto* r : {&mins, &opt_parsed, &maxs}) {
    if (!*r) return fail(kCmd, r->status().message());
  }
  // Any input named in one of the three gets a range; a missing bound falls back to the others
  // (opt ← max ← min), so --minShapes/--maxShapes alone are enough.
  std::map<std::string, engine::ShapeRange> ranges;
  for (auto* r : {&mins, &opt_parsed, &maxs}) {
    for (auto& [name, dims] : r->value()) ranges[name];
  }
  for (auto& entry : ranges) {
    // Not a structured binding: clang (the fuzz preset) cannot capture one in the lambda below.
    const std::string& name = entry.first;
    engine::ShapeRange& range = entry.second;
    auto get = [&](const Result<std::map<std::string, std::vector<int64_t>>>& m) {
      auto it = m.value().find(name);
      return it == m.value().end() ? std::vector<int64_t>{} : it->second;
    };
    range.min = get(mins);
    range.opt = get(opt_parsed);
    range.max = get(maxs);
    if (range.max.empty()) range.max = !range.opt.empty() ? range.opt : range.min;
    if (range.opt.empty()) range.opt = range.max;
    if (range.min.empty()) range.min = range.opt;
    if (range.min.size() != range.max.size() || range.opt.size() != range.max.size()) {
      return fail(kCmd, "input " + name + ": min/opt/max shapes have different ranks");
    }
    for (size_t k = 0; k < range.max.size(); ++k) {
      if (range.min[k] > range.opt[k] || range.opt[k] > range.max[k]) {
        return fail(kCmd, "input " + name + ": need min <= opt <= max in every dim, got " +
                              engine::dims_x_str(range.min) + " / " + engine::dims_x_str(range.opt) + " / " +
                              engine::dims_x_str(range.max));
      }
    }
  }
  if (!ranges.empty()) {
    engine::OptimizationProfile profile;
    profile.inputs = std::move(ranges);
    opts.profiles.push_back(std::move(profile));
  }

  BuildManifestOptions mo;
  mo.manifest_path = o.manifest;
  if (o.threshold >= 0) mo.threshold = o.threshold;
  if (o.probability_column >= 0) mo.probability_column = o.probability_column;
  mo.none = o.no_manifest;
  std::string why_none;
  auto manifest = make_build_manifest(o.onnx, mo, &why_none);
  if (!manifest) return fail(kCmd, manifest.status().message());
  const auto t0 = std::chrono::steady_clock::now();
  auto built = engine::build_file(o.onnx, opts);
  if (!built) return fail(kCmd, built.status().message());
  if (manifest.value()) {  // T as the plan accepts it (its profiles), not only as the ONNX declares it
    if (Status st = fit_manifest_window(*manifest.value(), built.value()); !st.is_ok()) return fail(kCmd, st.message());
  }
  // The manifest section is added to the builder's plan (engine/plan.h): the builder itself
  // stays the engine's, the manifest is the pipeline's.
  auto plan = engine::with_plan_manifest(built.value(), manifest.value());
  if (!plan) return fail(kCmd, plan.status().message());
  const double build_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::ofstream out(o.save_engine, std::ios::binary | std::ios::trunc);
  if (out) {
    out.write(reinterpret_cast<const char*>(plan.value().data()),
              std::streamsize(plan.value().size()));
  }
  if (!out) return fail(kCmd, "writing " + o.save_engine + ": cannot write file");
  std::printf("built %s → %s: %zu bytes, backend %s, precision %s, %.2f s\n", o.onnx.c_str(),
              o.save_engine.c_str(), plan.value().size(), opts.backend.c_str(),
              engine::precision_name(opts.precision), build_s);
  if (manifest.value()) {
    std::printf("%s", engine::describe_manifest(*manifest.value()).c_str());
  } else {
    std::printf("no model manifest (%s)\n", why_none.c_str());
  }
  return 0;
}

int command_engine_inspect(const EngineInspectOptions& o) {
  constexpr const char* kCmd = "inspect";
  auto e = load_engine(o.plan);
  if (!e) return fail(kCmd, e.status().message());
  const auto& eng = *e.value();
  const auto buckets = eng.bucket_memory();
  if (buckets.empty()) {  // a plan before format 4, or a model without batch buckets
    std::printf("plan %s: backend %s, context memory up to %lld bytes (estimate at the profile's max shapes; "
                "a context takes what the shapes it runs need)\n",
                o.plan.c_str(), eng.backend().c_str(), static_cast<long long>(eng.device_memory_bytes()));
  } else {
    std::printf("plan %s: backend %s, context memory %lld bytes at batch %lld .. %lld bytes at batch %lld (measured at "
                "build per bucket, below; a context holds the figure of the largest bucket it ran)\n",
                o.plan.c_str(), eng.backend().c_str(), static_cast<long long>(buckets.front().bytes),
                static_cast<long long>(buckets.front().batch), static_cast<long long>(buckets.back().bytes),
                static_cast<long long>(buckets.back().batch));
  }
  auto manifest = engine::read_plan_manifest_file(o.plan);
  if (!manifest) return fail(kCmd, manifest.status().message());
  if (manifest.value()) {
    std::printf("%s", engine::describe_manifest(*manifest.value()).c_str());
  } else {
    std::printf("manifest: none (a plan built before plan format 3, or with --noManifest)\n");
  }
  for (const auto& b : eng.inputs()) {
    std::printf("input  %s %s %s\n", b.name.c_str(), engine::dtype_name(b.dtype),
                engine::shape_to_string(b.shape).c_str());
  }
  for (const auto& b : eng.outputs()) {
    std::printf("output %s %s %s\n", b.name.c_str(), engine::dtype_name(b.dtype),
                engine::shape_to_string(b.shape).c_str());
  }
  for (size_t p = 0; p < eng.profiles().size(); ++p) {
    for (const auto& [name, r] : eng.profiles()[p].inputs) {
      std::printf("profile %zu %s: min %s opt %s max %s\n", p, name.c_str(),
                  engine::dims_x_str(r.min).c_str(), engine::dims_x_str(r.opt).c_str(), engine::dims_x_str(r.max).c_str());
    }
  }
  std::printf("%s", eng.describe().c_str());
  if (!eng.describe().empty() && eng.describe().back() != '\n') std::printf("\n");
  return 0;
}

int command_engine_infer(const EngineInferOptions& o) {
  constexpr const char* kCmd = "infer";
  auto e = load_engine(o.load_engine);
  if (!e) return fail(kCmd, e.status().message());
  const auto& eng = *e.value();
  std::map<std::string, std::string> in_files;
  for (const auto& spec : o.inputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return fail(kCmd, "--input '" + spec + "': expected name=file.npy");
    }
    in_files[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::vector<HostTensor> inputs;
  for (const auto& b : eng.inputs()) {
    auto it = in_files.find(b.name);
    if (it == in_files.end()) return fail(kCmd, "no --input for the engine's input " + b.name);
    // A bf16 input reads numpy's '<u2' bit patterns as bf16 (npy.h).
    auto t = engine::npy_read(it->second, engine::NpyOptions{.u2_as_bf16 = b.dtype == engine::DType::kBF16});
    if (!t) return fail(kCmd, t.status().message());
    inputs.push_back(std::move(t.value()));
    in_files.erase(it);
  }
  if (!in_files.empty()) {
    return fail(kCmd, "the engine has no input named " + in_files.begin()->first);
  }
  if (o.outputs.empty()) return fail(kCmd, "--output is required");
  std::map<std::string, std::string> out_files;
  for (const auto& spec : o.outputs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos) {
      out_files[eng.outputs().at(0).name] = spec;
    } else {
      out_files[spec.substr(0, eq)] = spec.substr(eq + 1);
    }
  }
  for (const auto& [name, file] : out_files) {
    bool found = false;
    for (const auto& b : eng.outputs()) found = found || b.name == name;
    if (!found) return fail(kCmd, "the engine has no output named " + name);
  }

  std::vector<engine::TensorView> in_views, out_views;
  for (auto& t : inputs) in_views.push_back(t.view());
  auto ctx = eng.create_context();
  if (!ctx) return fail(kCmd, ctx.status().message());
  auto outputs = make_outputs(eng, *ctx.value(), in_views);
  if (!outputs) return fail(kCmd, outputs.status().message());
  for (auto& t : outputs.value()) out_views.push_back(t.view());
  const Status st = ctx.value()->execute(in_views, out_views);
  if (!st) return fail(kCmd, st.message());
  for (size_t i = 0; i < eng.outputs().size(); ++i) {
    auto it = out_files.find(eng.outputs()[i].name);
    if (it == out_files.end()) continue;
    const auto& v = out_views[i];
    const Status w = engine::npy_write(it->second, v.dtype, v.dims, v.data);
    if (!w) return fail(kCmd, w.message());
    std::printf("wrote %s %s (%s) to %s\n", eng.outputs()[i].name.c_str(),
                engine::dtype_name(v.dtype), engine::dims_x_str(v.dims).c_str(), it->second.c_str());
  }
  return 0;
}

// "90,95,99" → {90, 95, 99}; each in [0, 100].
Result<std::vector<double>> parse_percentiles(const std::string& spec) {
  std::vector<double> out;
  size_t pos = 0;
  while (pos <= spec.size()) {
    size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    pos = end + 1;
    char* stop = nullptr;
    const double p = item.empty() ? -1 : std::strtod(item.c_str(), &stop);
    if (item.empty() || *stop != '\0' || !(p >= 0 && p <= 100)) {
      return Status(StatusCode::kInvalidArgument,
                    "--percentile '" + spec + "': expected numbers in [0, 100] joined by commas, e.g. 90,95,99");
    }
    out.push_back(p);
  }
  return out;
}

std::string pct_label(double p) {
  char b[32];
  std::snprintf(b, sizeof b, "P%g", p);
  return b;
}

nlohmann::json stats_json(const engine::LatencyStats& s) {
  nlohmann::json p = nlohmann::json::object();
  for (const auto& [q, us] : s.percentiles) p[pct_label(q).substr(1)] = us;
  return {{"count", s.count}, {"min_us", s.min_us},       {"max_us", s.max_us},
          {"mean_us", s.mean_us}, {"median_us", s.median_us}, {"percentiles_us", p}};
}

void print_stats(const char* what, const engine::LatencyStats& s) {
  std::printf("  %-22s min %9.1f  mean %9.1f  median %9.1f", what, s.min_us, s.mean_us, s.median_us);
  for (const auto& [q, us] : s.percentiles) std::printf("  %s %9.1f", pct_label(q).c_str(), us);
  std::printf("  max %9.1f\n", s.max_us);
}

int command_engine_bench(const EngineBenchOptions& o) {
  constexpr const char* kCmd = "bench";
  if (o.iterations <= 0) return fail(kCmd, "--iterations must be positive");
  if (!(o.warm_up_ms >= 0)) return fail(kCmd, "--warmUp must be >= 0");
  if (!(o.duration_s >= 0)) return fail(kCmd, "--duration must be >= 0");
  auto pct = parse_percentiles(o.percentiles);
  if (!pct) return fail(kCmd, pct.status().message());
  auto e = load_engine(o.load_engine);
  if (!e) return fail(kCmd, e.status().message());
  const auto& eng = *e.value();
  auto shapes = parse_shapes(o.shapes, "--shapes");
  if (!shapes) return fail(kCmd, shapes.status().message());
  if (eng.backend() != "cuda" && (o.use_cuda_graph || o.pageable)) {
    return fail(kCmd, std::string(o.use_cuda_graph ? "--useCudaGraph" : "--pageable") + " is for cuda plans; " +
                          o.load_engine + " is a " + eng.backend() + " plan");
  }
  engine::BenchOptions bo;
  bo.shapes = shapes.value();
  bo.iterations = o.iterations;
  bo.warm_up_ms = o.warm_up_ms;
  bo.duration_s = o.duration_s;
  bo.pageable = o.pageable;
  bo.use_cuda_graph = o.use_cuda_graph;
  bo.device_phase = !o.no_device_phase;
  bo.percentiles = pct.value();
  auto rep = engine::run_bench(eng, bo);
  if (!rep) return fail(kCmd, rep.status().message());
  const engine::BenchReport& r = rep.value();
  std::string shape_list;
  for (const auto& [name, dims] : r.inputs) {
    shape_list += (shape_list.empty() ? "" : ",") + name + ":" + engine::dims_x_str(dims);
  }
  const bool cuda = r.backend == "cuda";
  const char* host_mem = !cuda ? "host" : r.pageable ? "pageable" : "page-locked";
  std::printf("bench %s (%s) backend %s, precision %s, device %s%s%s\n", o.load_engine.c_str(), shape_list.c_str(),
              r.backend.c_str(), r.precision.c_str(), r.device.c_str(), r.driver.empty() ? "" : ", driver ",
              r.driver.c_str());
  if (cuda) {
    std::printf("  %s; host buffers %s; CUDA graphs %s\n", r.runtime.c_str(), host_mem,
                r.use_cuda_graph ? "replayed (--useCudaGraph)" : "off (kernels launched one by one; --useCudaGraph replays them)");
  }
  std::printf("host-to-host (execute, %s memory in and out): %lld iterations in %.2f s after %d warm-up runs\n", host_mem,
              static_cast<long long>(r.host_to_host.count), r.wall_s, r.warm_up_calls);
  print_stats("latency us:", r.host_to_host);
  std::printf("  throughput: %.1f inferences/s, %.1f samples/s (batch %lld)\n", r.throughput_per_s,
              r.throughput_per_s * double(r.batch), static_cast<long long>(r.batch));
  if (r.device_timed) {
    std::printf("device (enqueue_on_stream on device buffers, CUDA events): %lld iterations in %.2f s\n",
                static_cast<long long>(r.compute.count), r.device_wall_s);
    print_stats("H2D us:", r.h2d);
    print_stats("compute us:", r.compute);
    print_stats("D2H us:", r.d2h);
    print_stats("H2D+compute+D2H us:", r.host_latency);
    print_stats("enqueue (host) us:", r.enqueue);
    std::printf("  throughput: %.1f inferences/s, %.1f samples/s\n", r.device_throughput_per_s,
                r.device_throughput_per_s * double(r.batch));
  } else {
    std::printf("device: %s\n", r.device_note.c_str());
  }
  auto mib = [](int64_t b) { return double(b) / double(1 << 20); };
  std::printf("memory: context %.1f MiB at this shape, weights %.1f MiB (plan's estimate at max shapes %.1f MiB)\n",
              mib(r.context_memory_bytes), mib(r.weight_bytes), mib(r.plan_scratch_max_bytes));
  std::printf("layers (%zu):\n", r.layers.size());
  for (const auto& l : r.layers) {
    std::printf("  [%d] %s %s tactic=%s precision=%s\n", l.index, l.op.c_str(), l.name.c_str(), l.tactic.c_str(),
                l.precision.c_str());
  }
  if (!o.json.empty()) {
    nlohmann::json j;
    nlohmann::json ins = nlohmann::json::object();
    for (const auto& [name, dims] : r.inputs) ins[name] = dims;
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : r.layers) {
      layers.push_back({{"index", l.index}, {"op", l.op}, {"name", l.name}, {"tactic", l.tactic}, {"precision", l.precision}});
    }
    nlohmann::json h2h = stats_json(r.host_to_host);
    h2h["warm_up_runs"] = r.warm_up_calls;
    h2h["wall_s"] = r.wall_s;
    h2h["inferences_per_s"] = r.throughput_per_s;
    h2h["samples_per_s"] = r.throughput_per_s * double(r.batch);
    j = {{"benchmark", "ticksentry-bench"},
         {"date", format_utc_ns(int64_t(std::time(nullptr)) * 1000000000)},
         {"engine", o.load_engine},
         {"backend", r.backend},
         {"precision", r.precision},
         {"device", r.device},
         {"driver", r.driver},
         {"runtime", r.runtime},
         {"inputs", ins},
         {"batch", r.batch},
         {"host_memory", host_mem},
         {"cuda_graph", r.use_cuda_graph},
         {"settings",
          {{"warm_up_ms", r.warm_up_ms}, {"duration_s", r.duration_s}, {"iterations", r.iterations_asked},
           {"percentiles", bo.percentiles}}},
         {"host_to_host", h2h},
         {"memory",
          {{"context_bytes", r.context_memory_bytes}, {"weight_bytes", r.weight_bytes},
           {"plan_scratch_max_bytes", r.plan_scratch_max_bytes}}},
         {"context", r.context},
         {"layers", layers}};
    if (r.device_timed) {
      j["device_resident"] = {{"h2d", stats_json(r.h2d)},
                              {"compute", stats_json(r.compute)},
                              {"d2h", stats_json(r.d2h)},
                              {"h2d_compute_d2h", stats_json(r.host_latency)},
                              {"enqueue_host", stats_json(r.enqueue)},
                              {"wall_s", r.device_wall_s},
                              {"inferences_per_s", r.device_throughput_per_s}};
    } else {
      j["device_resident"] = nullptr;
      j["device_note"] = r.device_note;
    }
    std::ofstream f(o.json);
    if (!f) return fail(kCmd, "writing " + o.json + ": cannot open file");
    f << j.dump(1) << "\n";
    if (!f) return fail(kCmd, "writing " + o.json + ": write failed");
  }
  return 0;
}

EngineCommands::EngineCommands(CLI::App& app) {
  build_cmd_ = app.add_subcommand("build", "build an engine plan from an ONNX model (like trtexec)");
  build_cmd_->add_option("--onnx", build_.onnx, "ONNX model file")->required();
  build_cmd_->add_option("--saveEngine", build_.save_engine, "plan file to write")->required();
  build_cmd_->add_option("--backend", build_.backend, "cpu | cuda (default cpu)");
  build_cmd_->add_option("--minShapes", build_.min_shapes, "profile minimum, e.g. x:1x30x32");
  build_cmd_->add_option("--optShapes", build_.opt_shapes, "profile optimum (tactics timed here)");
  build_cmd_->add_option("--maxShapes", build_.max_shapes, "profile maximum, e.g. x:1024x120x32");
  build_cmd_->add_flag("--fp16", build_.fp16, "FP16 precision");
  build_cmd_->add_flag("--bf16", build_.bf16, "BF16 precision");
  build_cmd_->add_flag("--int8", build_.int8, "INT8 precision (cuda; needs --calib or --calibCache)");
  build_cmd_->add_flag("--tf32", build_.tf32, "FP32 matrix products on TF32 tensor cores (cuda)");
  build_cmd_->add_option("--calib", build_.calib,
                         "int8 calibration windows: .npy float32 [N,T,F], N >= 1000 (e.g. TS_AUC_DATA's windows.npy)");
  build_cmd_->add_option("--calibCache", build_.calib_cache,
                         "int8 calibration cache: read if made for this model, else written");
  build_cmd_->add_option("--int8MaxRelErr", build_.int8_max_rel_err,
                         "int8: a layer whose output error on the calibration set exceeds this runs in fp16 (default 0.05)");
  build_cmd_->add_option("--precisionConstraints", build_.precision_constraints,
                         "int8: prefer (default: a fused fp16 kernel where it beats the int8 layers it replaces) | "
                         "obey (every int8-eligible layer stays int8 where calibration allows)");
  build_cmd_->add_option("--timingCacheFile", build_.timing_cache_file, "tactic timing cache");
  build_cmd_->add_option("--memPoolSize", build_.mem_pool_size, "workspace:<size>[K|M|G]");
  build_cmd_->add_option("--manifest", build_.manifest,
                         "model manifest JSON (default: <model>.manifest.json beside the ONNX, if present)");
  build_cmd_->add_option("--threshold", build_.threshold, "manifest: the decision threshold the model was evaluated at")
      ->check(CLI::Range(0.0, 1.0));
  build_cmd_->add_option("--probabilityColumn", build_.probability_column,
                         "manifest: which output column is the probability (default 0)")
      ->check(CLI::NonNegativeNumber);
  build_cmd_->add_flag("--noManifest", build_.no_manifest, "write no model manifest into the plan");

  bench_cmd_ = app.add_subcommand("bench", "latency and throughput of a plan on random inputs (like trtexec)");
  bench_cmd_->add_option("--loadEngine", bench_.load_engine, "plan file")->required();
  bench_cmd_->add_option("--shapes", bench_.shapes, "input shapes, e.g. x:1x60x32");
  bench_cmd_->add_option("--iterations", bench_.iterations, "run at least this many timed calls (default 10)");
  bench_cmd_->add_option("--duration", bench_.duration_s, "and for at least this many seconds (default 3)");
  bench_cmd_->add_option("--warmUp", bench_.warm_up_ms, "warm-up time in ms (default 200)");
  bench_cmd_->add_option("--percentile", bench_.percentiles, "latency percentiles to report, e.g. 90,95,99 (the default)");
  bench_cmd_->add_flag("--pageable", bench_.pageable,
                       "cuda: host inputs/outputs in pageable memory (default: page-locked, Engine::allocate_host)");
  bench_cmd_->add_flag("--useCudaGraph", bench_.use_cuda_graph,
                       "cuda: replay the engine's CUDA graph per shape bucket, as serving does (default: launch kernels one by one)");
  bench_cmd_->add_flag("--noDeviceResident", bench_.no_device_phase, "cuda: skip the device-resident H2D/compute/D2H phase");
  bench_cmd_->add_option("--json", bench_.json, "also write the results as JSON (device, driver, precision, tactics)");

  inspect_cmd_ = app.add_subcommand("inspect", "layers, fusions, tactics, precisions, memory of a plan");
  inspect_cmd_->add_option("plan", inspect_.plan, "plan file")->required();

  infer_cmd_ = app.add_subcommand("infer", "run a plan on .npy inputs, write .npy outputs");
  infer_cmd_->add_option("--loadEngine", infer_.load_engine, "plan file")->required();
  // Not required: a model may have no inputs (ONNX's test_constant); one the engine has and the
  // command line lacks is refused by name.
  infer_cmd_->add_option("--input", infer_.inputs, "name=file.npy (repeat per input)");
  infer_cmd_->add_option("--output", infer_.outputs, "file.npy (first output) or name=file.npy")
      ->required();
}

std::optional<int> EngineCommands::run() const {
  if (*build_cmd_) return command_engine_build(build_);
  if (*bench_cmd_) return command_engine_bench(bench_);
  if (*inspect_cmd_) return command_engine_inspect(inspect_);
  if (*infer_cmd_) return command_engine_infer(infer_);
  return std::nullopt;
}

}  // namespace ts
