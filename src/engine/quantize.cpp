// INT8 post-training quantization of a graph (see quantize.h for the steps and their source).
#include "engine/quantize.h"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/backend.h"
#include "engine/calibrate.h"
#include "engine/plan.h"
#include "engine/runtime.h"

namespace ts::engine {
namespace {

Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }

// A GEMM layer's geometry: y[M,N] = act(x[M,K] · op(W) + bias).
struct GemmLayer {
  size_t node = 0;
  ValueId x = kNoValue, w = kNoValue, bias = kNoValue;
  bool trans_b = false;  // W stored [N,K]
  int64_t k = 0, n = 0;
  std::string act = "none";
};

bool const_f32(const Graph& g, ValueId v) {
  return v >= 0 && size_t(v) < g.values.size() && g.value(v).is_constant && g.value(v).dtype == DType::kF32;
}

bool gemm_layer(const Graph& g, size_t i, GemmLayer* out) {
  const Node& n = g.nodes[i];
  GemmLayer l;
  l.node = i;
  if (n.op == "FusedGemm") {
    l.trans_b = n.attr_i("trans_b", 0) != 0;
    l.act = n.attr_s("activation", "none");
    if (l.act != "none" && l.act != "relu" && l.act != "sigmoid" && l.act != "tanh" && l.act != "gelu") return false;
  } else if (n.op == "Gemm") {
    if (n.attr_i("transA", 0) || n.attr_f("alpha", 1.0f) != 1.0f || n.attr_f("beta", 1.0f) != 1.0f) return false;
    l.trans_b = n.attr_i("transB", 0) != 0;
  } else if (n.op != "MatMul") {
    return false;
  }
  if (n.inputs.size() < 2 || n.inputs[0] == kNoValue || !const_f32(g, n.inputs[1])) return false;
  if (g.value(n.inputs[0]).is_constant) return false;
  auto wd = g.value(n.inputs[1]).const_dims();
  if (wd.size() != 2) return false;
  l.x = n.inputs[0];
  l.w = n.inputs[1];
  l.k = l.trans_b ? wd[1] : wd[0];
  l.n = l.trans_b ? wd[0] : wd[1];
  if (l.k <= 0 || l.n <= 0) return false;
  if (n.op != "MatMul" && n.inputs.size() > 2 && n.inputs[2] != kNoValue) {
    if (!const_f32(g, n.inputs[2]) || shape_numel(g.value(n.inputs[2]).const_dims()) != l.n) return false;
    l.bias = n.inputs[2];
  }
  if (out) *out = l;
  return true;
}

// W as [N][K] (one output channel per row): the layout per-channel scales and the INT8
// kernels use.
std::vector<float> weights_nk(const Graph& g, const GemmLayer& l) {
  const float* w = g.value(l.w).as<float>();
  std::vector<float> r(size_t(l.n * l.k));
  for (int64_t c = 0; c < l.n; ++c) {
    for (int64_t k = 0; k < l.k; ++k) r[size_t(c * l.k + k)] = l.trans_b ? w[c * l.k + k] : w[k * l.n + c];
  }
  return r;
}

float act_host(float v, const std::string& act) {
  if (act == "relu") return v > 0 ? v : 0;
  if (act == "sigmoid") return 1.0f / (1.0f + std::exp(-v));
  if (act == "tanh") return std::tanh(v);
  if (act == "gelu") return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
  return v;
}

std::string sci(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1e", v);
  return b;
}

constexpr float kClipMultiples[] = {1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 8.0f, 16.0f, 1e30f};

// A tensor whose histogram calibration collects: read at run time as input `slot` of `node`.
struct Tracked {
  std::string name;
  size_t node = 0, slot = 0;
  float max_abs = 0;
};

// Runs the FP32 graph on the CPU backend over the windows in batches; `visit(executor, b0, b)`
// after each batch.
template <typename F>
Status run_windows(const Graph& g, const HostTensor& windows, int64_t batch, F visit) {
  const Backend* cpu = find_backend("cpu");
  if (!cpu) return Status(StatusCode::kInternal, "no cpu backend");
  Graph copy = g;
  for (Node& n : copy.nodes) n.tactic.clear();
  auto program = cpu->prepare(std::move(copy), KernelOptions{});
  if (!program) return program.status().with_context("calibrating on the cpu backend");
  Executor ex(program.value());
  const int64_t n = windows.dims[0], t = windows.dims[1], f = windows.dims[2];
  for (int64_t b0 = 0; b0 < n; b0 += batch) {
    const int64_t b = std::min(batch, n - b0);
    TensorView in{DType::kF32, {b, t, f}, const_cast<float*>(windows.as<float>() + b0 * t * f)};
    Status s = ex.run(std::span<const TensorView>(&in, 1));
    if (!s) return s.with_context("calibrating on the cpu backend, windows " + std::to_string(b0) + ".." + std::to_string(b0 + b - 1));
    TS_RETURN_IF_ERROR(visit(ex, b0, b));
  }
  return Status::ok();
}

// The relative L2 error of the INT8 simulation of layer `l` against FP32 on rows x [rows, K].
double int8_layer_error(const Graph& g, const GemmLayer& l, const std::vector<float>& x, int64_t rows, float in_scale,
                        const std::vector<float>& w_nk, const std::vector<float>& w_scales) {
  const float* bias = l.bias == kNoValue ? nullptr : g.value(l.bias).as<float>();
  std::vector<int8_t> wq(w_nk.size());
  for (int64_t c = 0; c < l.n; ++c) {
    for (int64_t k = 0; k < l.k; ++k) wq[size_t(c * l.k + k)] = quantize_int8(w_nk[size_t(c * l.k + k)], w_scales[size_t(c)]);
  }
  std::vector<int8_t> xq(size_t(l.k));
  double err2 = 0, ref2 = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x.data() + r * l.k;
    for (int64_t k = 0; k < l.k; ++k) xq[size_t(k)] = quantize_int8(xr[k], in_scale);
    for (int64_t c = 0; c < l.n; ++c) {
      const float* wr = w_nk.data() + c * l.k;
      const int8_t* wqr = wq.data() + c * l.k;
      float ref = 0;
      int32_t acc = 0;
      for (int64_t k = 0; k < l.k; ++k) {
        ref += xr[k] * wr[k];
        acc += int32_t(xq[size_t(k)]) * int32_t(wqr[k]);
      }
      const float b = bias ? bias[c] : 0.0f;
      const float y = act_host(ref + b, l.act);
      const float yq = act_host(float(acc) * in_scale * w_scales[size_t(c)] + b, l.act);
      err2 += double(yq - y) * double(yq - y);
      ref2 += double(y) * double(y);
    }
  }
  if (ref2 <= 0) return err2 > 0 ? INFINITY : 0.0;
  return std::sqrt(err2 / ref2);
}

}  // namespace

bool int8_eligible(const Graph& g, const Node& n) {
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (&g.nodes[i] == &n) return gemm_layer(g, i, nullptr);
  }
  return false;
}

uint32_t graph_fingerprint(const Graph& g) {
  std::vector<uint8_t> bytes;
  auto put = [&](const void* p, size_t n) {
    auto* b = static_cast<const uint8_t*>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    GemmLayer l;
    if (!gemm_layer(g, i, &l)) continue;
    const Node& n = g.nodes[i];
    put(n.name.data(), n.name.size());
    put(n.op.data(), n.op.size());
    put(g.value(l.w).data.data(), g.value(l.w).data.size());
    if (l.bias != kNoValue) put(g.value(l.bias).data.data(), g.value(l.bias).data.size());
  }
  return crc32(bytes);
}

Status check_calibration_windows(const Graph& g, const HostTensor& w, const CalibrationOptions& o) {
  if (w.dtype != DType::kF32 || w.dims.size() != 3) {
    return invalid("calibration windows must be float32 [N, T, F], got " + std::string(dtype_name(w.dtype)) + " " +
                   dims_str(w.dims));
  }
  if (w.dims[0] < o.min_windows) {
    return invalid("int8 calibration: need ≥ " + std::to_string(o.min_windows) + " windows, got " + std::to_string(w.dims[0]));
  }
  if (g.inputs.size() != 1) {
    return invalid("int8 calibration feeds one input, the model has " + std::to_string(g.inputs.size()));
  }
  const Value& in = g.value(g.inputs[0]);
  if (in.dtype != DType::kF32 || (in.rank_known && in.shape.size() != 3)) {
    return invalid("int8 calibration feeds [N, T, F] float32 windows, the model's input " + in.name + " is " +
                   dtype_name(in.dtype) + shape_to_string(in.shape));
  }
  for (size_t k = 1; k < 3 && in.rank_known; ++k) {
    if (in.shape[k].is_known() && in.shape[k].value != w.dims[k]) {
      return invalid("calibration windows " + dims_str(w.dims) + " do not fit the model's input " + in.name +
                     shape_to_string(in.shape));
    }
  }
  return Status::ok();
}

Result<CalibrationTable> calibrate(const Graph& g, const HostTensor& windows, const CalibrationOptions& o) {
  TS_RETURN_IF_ERROR(check_calibration_windows(g, windows, o));
  // Tracked tensors: each eligible layer's input, and its output where a later node reads it.
  std::vector<GemmLayer> layers;
  std::vector<Tracked> tracked;
  std::map<std::string, size_t> index;  // tensor name → tracked
  auto track = [&](ValueId v, size_t node, size_t slot) {
    const std::string& name = g.value(v).name;
    if (index.count(name)) return;
    index[name] = tracked.size();
    tracked.push_back({name, node, slot, 0.0f});
  };
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    GemmLayer l;
    if (!gemm_layer(g, i, &l)) continue;
    layers.push_back(l);
    track(l.x, i, 0);
    const ValueId y = g.nodes[i].outputs[0];
    for (size_t j = i + 1; j < g.nodes.size(); ++j) {
      auto it = std::find(g.nodes[j].inputs.begin(), g.nodes[j].inputs.end(), y);
      if (it != g.nodes[j].inputs.end()) {
        track(y, j, size_t(it - g.nodes[j].inputs.begin()));
        break;
      }
    }
  }
  auto tensor_of = [](Executor& ex, const Tracked& t) -> std::span<const float> {
    const RtTensor* r = ex.node_inputs(t.node)[t.slot];
    if (!r || r->dtype != DType::kF32) return {};
    return {r->as<float>(), size_t(r->numel())};
  };
  // Pass 1: max |x| per tensor, and the rows each layer sees.
  std::vector<int64_t> rows_seen(layers.size(), 0);
  TS_RETURN_IF_ERROR(run_windows(g, windows, o.batch, [&](Executor& ex, int64_t, int64_t) {
    for (Tracked& t : tracked) {
      for (float v : tensor_of(ex, t)) {
        if (std::isfinite(v)) t.max_abs = std::max(t.max_abs, std::fabs(v));
      }
    }
    for (size_t li = 0; li < layers.size(); ++li) {
      rows_seen[li] += int64_t(tensor_of(ex, tracked[index[g.value(layers[li].x).name]]).size()) / layers[li].k;
    }
    return Status::ok();
  }));
  // Pass 2: histograms, and every stride-th input row of each layer for the error check.
  std::vector<EntropyHistogram> hist;
  for (const Tracked& t : tracked) hist.emplace_back(t.max_abs, o.bins);
  std::vector<std::vector<float>> sample(layers.size());
  std::vector<int64_t> stride(layers.size()), row_at(layers.size(), 0);
  for (size_t li = 0; li < layers.size(); ++li) stride[li] = std::max<int64_t>(1, (rows_seen[li] + kErrorRows - 1) / kErrorRows);
  TS_RETURN_IF_ERROR(run_windows(g, windows, o.batch, [&](Executor& ex, int64_t, int64_t) {
    for (size_t ti = 0; ti < tracked.size(); ++ti) hist[ti].add(tensor_of(ex, tracked[ti]));
    for (size_t li = 0; li < layers.size(); ++li) {
      auto x = tensor_of(ex, tracked[index[g.value(layers[li].x).name]]);
      const int64_t k = layers[li].k, rows = int64_t(x.size()) / k;
      for (int64_t r = 0; r < rows; ++r, ++row_at[li]) {
        if (row_at[li] % stride[li] == 0) sample[li].insert(sample[li].end(), x.data() + r * k, x.data() + (r + 1) * k);
      }
    }
    return Status::ok();
  }));
  CalibrationTable t;
  t.fingerprint = graph_fingerprint(g);
  t.windows = windows.dims[0];
  for (size_t ti = 0; ti < tracked.size(); ++ti) t.thresholds[tracked[ti].name] = hist[ti].threshold();
  for (size_t li = 0; li < layers.size(); ++li) {
    const GemmLayer& l = layers[li];
    const auto w = weights_nk(g, l);
    const auto ws = per_channel_weight_scales(w.data(), l.n, l.k);
    const std::string& xname = g.value(l.x).name;
    const float entropy = t.thresholds[xname], max_abs = tracked[index[xname]].max_abs;
    // The entropy threshold first, then wider clips up to max |x|: a layer whose inputs have
    // heavy tails that matter downstream (a normalized feature's rare large values) keeps
    // them at the cost of resolution in the bulk; the measured output error decides.
    double best = INFINITY;
    float best_th = entropy;
    for (float mult : kClipMultiples) {
      const float th = std::min(entropy * mult, max_abs);
      if (mult > 1 && th <= best_th) break;
      const double e = int8_layer_error(g, l, sample[li], int64_t(sample[li].size()) / l.k, int8_scale(th), w, ws);
      if (e < best) {
        best = e;
        best_th = th;
      }
      if (th >= max_abs) break;
    }
    t.layer_rel_err[g.nodes[l.node].name] = best;
    t.layer_in_threshold[g.nodes[l.node].name] = best_th;
  }
  return t;
}

Result<std::vector<LayerQuant>> choose_layer_precisions(const Graph& g, const CalibrationTable& t,
                                                        const CalibrationOptions& o) {
  std::vector<LayerQuant> out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    GemmLayer l;
    if (!gemm_layer(g, i, &l)) continue;
    const Node& n = g.nodes[i];
    LayerQuant q;
    q.node = n.name;
    auto th = t.thresholds.find(g.value(l.x).name);
    auto er = t.layer_rel_err.find(n.name);
    if (th == t.thresholds.end() || er == t.layer_rel_err.end()) {
      return invalid("the calibration table has no entry for layer " + n.name + " (input " + g.value(l.x).name +
                     "): recalibrate");
    }
    auto lt = t.layer_in_threshold.find(n.name);
    const float in_th = lt != t.layer_in_threshold.end() ? lt->second : th->second;
    q.in_scale = int8_scale(in_th);
    const auto w = weights_nk(g, l);
    q.w_scales = per_channel_weight_scales(w.data(), l.n, l.k);
    q.rel_err = er->second;
    q.int8 = std::isfinite(q.rel_err) && q.rel_err <= o.max_rel_err;
    char clip[48] = "";
    if (th->second > 0 && in_th > th->second * 1.001f) std::snprintf(clip, sizeof clip, ", clip %.3g = %.3gx entropy", in_th, in_th / th->second);
    q.reason = q.int8 ? "rel err " + sci(q.rel_err) + " <= " + sci(o.max_rel_err) + clip
                      : "fallback: rel err " + sci(q.rel_err) + " > " + sci(o.max_rel_err);
    out.push_back(std::move(q));
  }
  return out;
}

void apply_layer_precisions(Graph& g, const std::vector<LayerQuant>& layers) {
  std::map<std::string, const LayerQuant*> by_name;
  for (const auto& l : layers) by_name[l.node] = &l;
  for (Node& n : g.nodes) {
    auto it = by_name.find(n.name);
    if (it == by_name.end()) continue;
    const LayerQuant& q = *it->second;
    n.attrs[kAttrQPrecision] = std::string(q.int8 ? "int8" : "fp16");
    n.attrs[kAttrQReason] = q.reason;
    n.attrs[kAttrQInScale] = q.in_scale;
    n.attrs[kAttrQWScales] = q.w_scales;
    n.attrs[kAttrQRelErr] = float(q.rel_err);
  }
}

// Cache file, text:
//   ticksentry-int8-calibration 1
//   fingerprint <8 hex digits>
//   windows <N>
//   tensor <threshold as a C hex float> <tensor name>
//   layer <rel err as a C hex float> <input threshold as a C hex float> <node name>
// Names run to the end of the line (they may hold spaces); hex floats round-trip exactly.
Status write_calibration_cache(const std::string& path, const CalibrationTable& t) {
  std::ofstream f(path, std::ios::trunc);
  char buf[64];
  f << "ticksentry-int8-calibration 1\n";
  std::snprintf(buf, sizeof buf, "%08" PRIx32, t.fingerprint);
  f << "fingerprint " << buf << "\nwindows " << t.windows << "\n";
  for (const auto& [name, th] : t.thresholds) {
    std::snprintf(buf, sizeof buf, "%a", double(th));
    f << "tensor " << buf << " " << name << "\n";
  }
  for (const auto& [name, e] : t.layer_rel_err) {
    auto th = t.layer_in_threshold.find(name);
    char tb[32];
    std::snprintf(buf, sizeof buf, "%a", e);
    std::snprintf(tb, sizeof tb, "%a", th == t.layer_in_threshold.end() ? 0.0 : double(th->second));
    f << "layer " << buf << " " << tb << " " << name << "\n";
  }
  if (!f) return Status(StatusCode::kIoError, "cannot write calibration cache " + path);
  return Status::ok();
}

Result<CalibrationTable> read_calibration_cache(const std::string& path) {
  std::ifstream f(path);
  if (!f) return Status(StatusCode::kIoError, "cannot open calibration cache " + path);
  auto bad = [&](int line, const std::string& why) {
    return Status(StatusCode::kParseError, "calibration cache " + path + " line " + std::to_string(line) + ": " + why);
  };
  std::string line;
  int no = 0;
  if (!std::getline(f, line) || line != "ticksentry-int8-calibration 1") {
    return bad(1, "not a ticksentry calibration cache (expected 'ticksentry-int8-calibration 1')");
  }
  ++no;
  CalibrationTable t;
  bool have_fp = false;
  while (std::getline(f, line)) {
    ++no;
    if (line.empty()) continue;
    const size_t sp = line.find(' ');
    const std::string key = line.substr(0, sp);
    const std::string rest = sp == std::string::npos ? "" : line.substr(sp + 1);
    char* end = nullptr;
    if (key == "fingerprint") {
      t.fingerprint = uint32_t(std::strtoul(rest.c_str(), &end, 16));
      if (end == rest.c_str() || *end) return bad(no, "bad fingerprint");
      have_fp = true;
    } else if (key == "windows") {
      t.windows = std::strtoll(rest.c_str(), &end, 10);
      if (end == rest.c_str() || *end) return bad(no, "bad window count");
    } else if (key == "tensor" || key == "layer") {
      // tensor <threshold> <name> | layer <rel err> <input threshold> <name>
      std::string r = rest;
      double v[2] = {0, 0};
      for (int i = 0; i < (key == "layer" ? 2 : 1); ++i) {
        const size_t sp2 = r.find(' ');
        if (sp2 == std::string::npos || sp2 + 1 >= r.size()) {
          return bad(no, key == "layer" ? "expected 'layer <rel err> <threshold> <name>'" : "expected 'tensor <threshold> <name>'");
        }
        const std::string num = r.substr(0, sp2);
        v[i] = std::strtod(num.c_str(), &end);
        if (end == num.c_str() || *end || std::isnan(v[i]) || v[i] < 0) return bad(no, "bad value '" + num + "'");
        r = r.substr(sp2 + 1);
      }
      if (key == "tensor") {
        t.thresholds[r] = float(v[0]);
      } else {
        t.layer_rel_err[r] = v[0];
        if (v[1] > 0) t.layer_in_threshold[r] = float(v[1]);
      }
    } else {
      return bad(no, "unknown entry '" + key + "'");
    }
  }
  if (!have_fp) return bad(no, "no fingerprint line");
  return t;
}

Result<CalibrationTable> quantize_graph(Graph& g, const std::string& calib_path, const std::string& cache_path,
                                        const CalibrationOptions& o, std::vector<std::string>* log) {
  CalibrationTable table;
  bool have = false;
  const uint32_t fp = graph_fingerprint(g);
  if (!cache_path.empty() && std::filesystem::exists(cache_path)) {
    auto c = read_calibration_cache(cache_path);
    if (!c) return c.status();
    if (c.value().fingerprint == fp) {
      table = std::move(c).value();
      have = true;
      if (log) log->push_back("int8: calibration read from cache " + cache_path + " (" + std::to_string(table.windows) + " windows)");
    } else if (calib_path.empty()) {
      char b[96];
      std::snprintf(b, sizeof b, "fingerprint %08" PRIx32 ", this model %08" PRIx32, c.value().fingerprint, fp);
      return invalid("calibration cache " + cache_path + " was made for another model (" + b +
                     "): give --calib to recalibrate");
    }
  }
  if (!have) {
    if (calib_path.empty()) {
      return invalid("int8 needs calibration data: give --calib windows.npy (≥ " + std::to_string(o.min_windows) +
                     " feature windows, float32 [N, T, F]) or an existing --calibCache");
    }
    auto w = npy_read(calib_path);
    if (!w) return w.status().with_context("reading calibration data");
    auto t = calibrate(g, w.value(), o);
    if (!t) return t.status().with_context("calibrating on " + calib_path);
    table = std::move(t).value();
    if (log) log->push_back("int8: calibrated on " + std::to_string(table.windows) + " windows of " + calib_path);
    if (!cache_path.empty()) {
      TS_RETURN_IF_ERROR(write_calibration_cache(cache_path, table));
      if (log) log->push_back("int8: calibration cache written to " + cache_path);
    }
  }
  auto layers = choose_layer_precisions(g, table, o);
  if (!layers) return layers.status();
  apply_layer_precisions(g, layers.value());
  if (log) {
    for (const auto& l : layers.value()) log->push_back("int8: " + l.node + " → " + (l.int8 ? "int8 (" : "fp16 (") + l.reason + ")");
  }
  return table;
}

}  // namespace ts::engine
