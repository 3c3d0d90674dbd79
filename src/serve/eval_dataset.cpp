#include "serve/eval_dataset.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

namespace ts {

namespace fs = std::filesystem;

Result<EvalDataset> load_eval_dataset(const std::string& dir, const std::string& task) {
  if (task != "any" && task != "detect" && task != "forecast") {
    return Status(StatusCode::kInvalidArgument, "unknown task \"" + task + "\" (any, detect or forecast)");
  }
  EvalDataset d;
  d.dir = dir;
  const fs::path p(dir);
  if (!fs::is_directory(p)) return Status(StatusCode::kNotFound, "--data " + dir + ": not a directory");
  {
    std::ifstream f(p / "manifest.json");
    if (!f) return Status(StatusCode::kNotFound, "--data " + dir + ": no manifest.json (not a `ticksentry features --export` directory)");
    try {
      d.manifest = nlohmann::json::parse(f);
      if (d.manifest.at("format_version").get<int>() != 1) return Status(StatusCode::kUnsupported, "manifest.json: format_version is not 1");
      d.first_ns = d.manifest.at("time_range_ns").at(0).get<int64_t>();
      d.last_ns = d.manifest.at("time_range_ns").at(1).get<int64_t>();
      d.horizon_s = d.manifest.at("label").at("horizon_s").get<double>();
      d.stride_s = double(d.manifest.at("stride").get<int64_t>()) *
                   double(d.manifest.value("row_interval_ns", int64_t(1'000'000'000))) * 1e-9;
    } catch (const std::exception& e) {
      return Status(StatusCode::kParseError, (p / "manifest.json").string() + ": " + e.what());
    }
  }
  struct Want {
    const char* file;
    engine::HostTensor* out;
    engine::DType dtype;
    size_t rank;
  };
  const bool any = task == "any";
  const std::string labels_file = any ? "labels.npy" : "labels_" + task + ".npy";
  const std::string event_file = any ? "event_ts_ns.npy" : "event_ts_" + task + "_ns.npy";
  const Want wants[] = {{"windows.npy", &d.windows, engine::DType::kF32, 3}, {labels_file.c_str(), &d.labels, engine::DType::kU8, 1},
                        {"symbol.npy", &d.symbol, engine::DType::kI32, 1},   {"end_ts_ns.npy", &d.end_ts, engine::DType::kI64, 1},
                        {event_file.c_str(), &d.event_ts, engine::DType::kI64, 1}, {"rule_score.npy", &d.rule, engine::DType::kF32, 1},
                        {"zscore.npy", &d.zscore, engine::DType::kF32, 1}};
  for (const Want& w : wants) {
    auto t = engine::npy_read((p / w.file).string());
    if (!t) return t.status();
    if (t.value().dtype != w.dtype || t.value().dims.size() != w.rank) {
      return Status(StatusCode::kInvalidArgument, (p / w.file).string() + ": expected " + engine::dtype_name(w.dtype) + " of rank " +
                                                      std::to_string(w.rank) + ", got " + engine::dtype_name(t.value().dtype) +
                                                      " of rank " + std::to_string(t.value().dims.size()));
    }
    *w.out = std::move(t).value();
  }
  d.n = d.windows.dims[0];
  d.t = d.windows.dims[1];
  d.f = d.windows.dims[2];
  for (const Want& w : wants) {
    if (w.out->dims[0] != d.n) {
      return Status(StatusCode::kInvalidArgument, std::string(w.file) + " has " + std::to_string(w.out->dims[0]) +
                                                      " rows, windows.npy " + std::to_string(d.n) + ": not one data set");
    }
  }
  const int64_t symbols = int64_t(d.manifest.value("symbols", nlohmann::json::array()).size());
  for (int64_t i = 0; i < d.n; ++i) {
    const int32_t s = d.symbol.as<int32_t>()[i];
    if (s < 0 || s >= symbols) return Status(StatusCode::kInvalidArgument, "symbol.npy: index " + std::to_string(s) + " not in manifest symbols");
    if (i > 0 && d.end_ts.as<int64_t>()[i] < d.end_ts.as<int64_t>()[i - 1])
      return Status(StatusCode::kInvalidArgument, "end_ts_ns.npy: rows are not in time order (row " + std::to_string(i) + ")");
  }
  return d;
}

Result<std::optional<Split>> parse_split(const std::string& name) {
  if (name == "train") return std::optional<Split>(Split::kTrain);
  if (name == "validation") return std::optional<Split>(Split::kValidation);
  if (name == "test") return std::optional<Split>(Split::kTest);
  if (name == "all") return std::optional<Split>();
  return Status(StatusCode::kInvalidArgument, "--split must be test, validation, train or all (got \"" + name + "\")");
}

std::vector<size_t> split_rows(const EvalDataset& d, std::optional<Split> split) {
  std::vector<size_t> rows;
  for (int64_t i = 0; i < d.n; ++i) {
    if (!split || split_of(d.end_ts.as<int64_t>()[i], d.first_ns, d.last_ns) == *split) rows.push_back(size_t(i));
  }
  return rows;
}

std::vector<uint8_t> labels_of(const EvalDataset& d, const std::vector<size_t>& rows) {
  std::vector<uint8_t> out;
  out.reserve(rows.size());
  for (size_t i : rows) out.push_back(d.labels.as<uint8_t>()[i]);
  return out;
}

Result<std::shared_ptr<engine::Engine>> build_window_engine(const std::string& onnx_path, int64_t t, int64_t f,
                                                            int64_t max_batch, const std::string& backend,
                                                            engine::Precision precision, bool time_tactics) {
  engine::BuildOptions bo;
  bo.backend = backend;
  bo.precision = precision;
  bo.time_tactics = time_tactics;
  engine::OptimizationProfile prof;
  prof.inputs["x"] = engine::ShapeRange{{1, t, f}, {max_batch, t, f}, {max_batch, t, f}};
  bo.profiles.push_back(prof);
  auto plan = engine::build_file(onnx_path, bo);
  if (!plan) return plan.status().with_context("building " + onnx_path);
  auto e = engine::Engine::load(plan.value());
  if (!e) return e.status().with_context("loading the plan built from " + onnx_path);
  return e.value();
}

Result<std::shared_ptr<engine::Engine>> load_window_model(const std::string& path, int64_t t, int64_t f, int64_t max_batch) {
  if (fs::path(path).extension() == ".onnx") return build_window_engine(path, t, f, max_batch);
  auto e = engine::Engine::load_file(path);
  if (!e) return e.status().with_context("loading " + path);
  return e.value();
}

Result<std::vector<float>> score_windows(const engine::Engine& eng, const EvalDataset& d, const std::vector<size_t>& rows,
                                         int64_t batch, const std::string& model_name) {
  if (eng.inputs().size() != 1 || eng.inputs()[0].shape.size() != 3) {
    return Status(StatusCode::kInvalidArgument, model_name + ": expected one input x [batch, T, F]");
  }
  const auto& in_shape = eng.inputs()[0].shape;
  if (in_shape[2].is_known() && in_shape[2].value != d.f) {
    return Status(StatusCode::kInvalidArgument, model_name + ": model takes " + std::to_string(in_shape[2].value) +
                                                    " features, the data set has " + std::to_string(d.f));
  }
  if (in_shape[1].is_known() && in_shape[1].value != d.t) {
    return Status(StatusCode::kInvalidArgument, model_name + ": model takes windows of " + std::to_string(in_shape[1].value) +
                                                    " rows, the data set has " + std::to_string(d.t));
  }
  size_t out_index = 0;
  for (size_t i = 0; i < eng.outputs().size(); ++i) {
    if (eng.outputs()[i].name == "prob") out_index = i;
  }
  for (const auto& p : eng.profiles()) {
    auto it = p.inputs.find(eng.inputs()[0].name);
    if (it != p.inputs.end() && it->second.max.size() == 3) batch = std::min(batch, it->second.max[0]);
  }
  batch = std::max<int64_t>(batch, 1);
  auto ctx = eng.create_context();
  if (!ctx) return ctx.status().with_context(model_name);
  const size_t row_floats = size_t(d.t * d.f);
  std::vector<float> out;
  out.reserve(rows.size());
  std::vector<engine::HostTensor> outs;  // sized for batches of outs_batch rows
  int64_t outs_batch = -1;
  for (size_t begin = 0; begin < rows.size(); begin += size_t(batch)) {
    const int64_t b = std::min<int64_t>(batch, int64_t(rows.size() - begin));
    auto x = engine::HostTensor::zeros(engine::DType::kF32, {b, d.t, d.f});
    for (int64_t k = 0; k < b; ++k) {
      std::copy_n(d.windows.as<float>() + rows[begin + size_t(k)] * row_floats, row_floats, x.as<float>() + size_t(k) * row_floats);
    }
    std::vector<engine::TensorView> in_views{x.view()}, out_views;
    if (b != outs_batch) {
      // Output buffers sized from the engine's own shapes for this batch size (never guessed).
      auto out_dims = ctx.value()->output_dims(in_views);
      if (!out_dims) return out_dims.status().with_context("running " + model_name);
      outs.clear();
      for (size_t k = 0; k < eng.outputs().size() && k < out_dims.value().size(); ++k) {
        outs.push_back(engine::HostTensor::zeros(eng.outputs()[k].dtype, out_dims.value()[k]));
      }
      outs_batch = b;
    }
    for (auto& t : outs) out_views.push_back(t.view());
    if (Status st = ctx.value()->execute(in_views, out_views); !st.is_ok()) return st.with_context("running " + model_name);
    const auto& v = out_views[out_index];
    int64_t numel = 1;
    for (int64_t dim : v.dims) numel *= dim;
    if (v.dtype != engine::DType::kF32 || numel != b) {
      return Status(StatusCode::kInvalidArgument, model_name + ": output " + eng.outputs()[out_index].name +
                                                      " must be float32 [batch, 1] (a probability per window)");
    }
    const float* p = static_cast<const float*>(v.data);
    for (int64_t k = 0; k < b; ++k) {
      if (!std::isfinite(p[k])) return Status(StatusCode::kInvalidArgument, model_name + ": output is not finite (NaN or inf)");
      out.push_back(p[k]);
    }
  }
  return out;
}

}  // namespace ts
