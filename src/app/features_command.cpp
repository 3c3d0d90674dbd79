#include "app/features_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numeric>

#include "app/first_input_error.h"
#include "app/market_wiring.h"
#include "book/book_set.h"
#include "core/config.h"
#include "core/input_errors.h"
#include "detect/rule_engine.h"
#include "engine/npy.h"
#include "features/feature_engine.h"
#include "core/market_calendars.h"
#include "ingest/open_source.h"
#include "ingest/sim/simulator.h"

namespace ts {

namespace {

namespace fs = std::filesystem;
constexpr int kExitOk = 0;
constexpr int kExitUsage = 2;
constexpr int64_t kSecNs = 1'000'000'000;

Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }

// Per-symbol export state (the FeatureEngine's own state is private: its row clock is mirrored).
struct SymbolExport {
  bool seen = false;
  int64_t row_idx = 0, next_row_ns = 0;  // as FeatureEngine: current row interval and its end
  int64_t rows = 0;                       // rows pushed so far
  double last_mid = 0;                    // mid after the symbol's last event
  double last_spread = 0;                 // ... its spread, ticks (0 = no two-sided book yet)
  bool last_trading = true;               // ... and whether its book was in continuous trading
  int64_t first_ts = 0, last_ts = 0, active_ns = 0;
  int64_t last_alert_ns[kRuleTypeCount];
  std::vector<LabelSample> samples;
  SymbolExport() { std::fill(std::begin(last_alert_ns), std::end(last_alert_ns), INT64_MIN); }
};

struct WindowMeta {
  int64_t end_ts = 0;
  int32_t symbol = 0;
  float rule = 0, zscore = 0;
  uint32_t rule_types = 0;
  int64_t slot = 0;  // position in the temporary window file
};

// Writes a .npy v1 header for a C-order f32 array of `dims`.
std::string npy_f32_header(const std::vector<int64_t>& dims) {
  std::string shape = "(";
  for (size_t i = 0; i < dims.size(); ++i) shape += std::to_string(dims[i]) + (dims.size() == 1 || i + 1 < dims.size() ? "," : "");
  shape += ")";
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  const size_t unpadded = 10 + dict.size() + 1;
  dict.append((64 - unpadded % 64) % 64, ' ');
  dict += '\n';
  std::string h = "\x93NUMPY";
  h += char(1);
  h += char(0);
  const uint16_t len = uint16_t(dict.size());
  h += char(len & 0xff);
  h += char(len >> 8);
  return h + dict;
}

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

template <typename T>
Status write_vector(const fs::path& p, engine::DType dt, const std::vector<T>& v) {
  const int64_t n = int64_t(v.size());
  return engine::npy_write(p.string(), dt, std::span<const int64_t>(&n, 1), v.data());
}

}  // namespace

Status validate_export_options(const ExportOptions& o) {
  if (o.out_dir.empty()) return invalid("--export DIR is required");
  if (o.format == "sim") {
    if (!o.paths.empty()) return invalid("--format sim takes no input paths");
    if (o.symbols && (*o.symbols < 1 || *o.symbols > 5000)) return invalid("--symbols must be in 1..5000");
    if (o.sim_seconds && !(*o.sim_seconds > 0 && *o.sim_seconds <= 30 * 86400.0))
      return invalid("--sim-seconds must be > 0 (a finite run) and at most 30 days");
  } else {
    const auto& known = source_formats();
    if (std::find(known.begin(), known.end(), o.format) == known.end()) {
      std::string list = "sim";
      for (const auto& f : known) list += ", " + f;
      return invalid("unknown --format \"" + o.format + "\" (known: " + list + ")");
    }
    if (o.paths.empty()) return invalid("--format " + o.format + " needs input paths");
    if (o.symbols || o.seed || o.sim_seconds) return invalid("--symbols, --seed and --sim-seconds are for --format sim only");
    for (const auto& p : o.paths) {
      if (!fs::exists(p)) return Status(StatusCode::kNotFound, "input not found: " + p);
    }
  }
  if (o.window < 30 || o.window > 120) return invalid("--window must be in 30..120 feature rows");
  if (o.stride < 1 || o.stride > 3600) return invalid("--stride must be in 1..3600 feature rows");
  if (!(o.rule_lookback_s >= 1 && o.rule_lookback_s <= 3600)) return invalid("--rule-lookback must be in 1..3600 s");
  if (!(o.zscore_vol_floor_bps > 0)) return invalid("--zscore-vol-floor must be > 0");
  return o.label.validate();
}

Result<ExportSummary> export_dataset(const ExportOptions& o, const std::atomic<bool>& stop) {
  TS_RETURN_IF_ERROR(validate_export_options(o));
  const auto wall0 = std::chrono::steady_clock::now();
  Config config;
  try {
    if (!o.config_path.empty()) config = Config::load_file(o.config_path);
  } catch (const std::exception& e) {
    return invalid(e.what());
  }
  FeatureOptions fo;
  RuleOptions ro;
  SimOptions so;
  try {
    fo = FeatureOptions::from_config(config.section("features"));
    ro = RuleOptions::from_config(config);
    so = SimOptions::from_config(config.section("sim"));
  } catch (const std::exception& e) {
    return invalid(std::string("config: ") + e.what());
  }
  fo.window_rows = o.window;

  // Source.
  SymbolTable symbols;
  InputErrors errors;  // the books' and calendars' (quiet)
  errors.set_quiet(true);
  // The input's bad records, logged (rate-limited) so that an input with no valid record at all
  // ends with exit 2 and its first error, as replay and record do.
  InputErrors source_errors;
  FirstInputError first_error;
  std::unique_ptr<Source> source;
  Simulator* sim = nullptr;
  OrderTracking tracking = OrderTracking::kAuto;
  if (o.format == "sim") {
    so.symbols = o.symbols.value_or(50);
    so.seed = o.seed.value_or(so.seed);
    so.duration_s = o.sim_seconds.value_or(3600.0);
    // The default flow rate is for 1,000 symbols; keep its per-symbol rate unless configured.
    if (config.section("sim").get("events_per_s", -1.0) < 0) so.events_per_s = 200.0 * so.symbols;
    so.labels_path.clear();
    if (Status st = so.validate(); !st.is_ok()) return st.with_context("sim options");
    auto s = std::make_unique<Simulator>(so, symbols);
    sim = s.get();
    source = std::move(s);
    tracking = OrderTracking::kOff;
  } else {
    auto opened = open_source(o.format, o.paths, symbols, source_errors);
    if (!opened.is_ok()) return opened.status();
    source = std::move(opened).value();
    if (o.format == "lobster") tracking = OrderTracking::kOff;
  }

  // Output directory and the temporary window file (windows arrive in event order; they are
  // written to windows.npy in end-time order at the end).
  std::error_code ec;
  fs::create_directories(o.out_dir, ec);
  if (ec || !fs::is_directory(o.out_dir)) return Status(StatusCode::kIoError, "cannot create --export directory " + o.out_dir);
  const fs::path dir(o.out_dir);
  const fs::path tmp_path = dir / ".windows.tmp";
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> tmp(std::fopen(tmp_path.c_str(), "w+b"), &std::fclose);
  if (!tmp) return Status(StatusCode::kIoError, "cannot write in " + o.out_dir);

  BookSet books(symbols, tracking);
  // Phases as a run resolves them (app/market_wiring.h), so exported rows are the rows served.
  // Without ./config/calendars the built-in calendars: labels are phase-aware wherever it starts.
  MarketCalendars calendars;
  std::string calendar_error;
  const bool have_calendars = load_default_calendars(calendars, errors, calendar_error);
  if (!have_calendars && !calendar_error.empty()) return Status(StatusCode::kInvalidArgument, calendar_error);
  PhaseResolver phases(symbols, have_calendars ? &calendars : nullptr);
  books.set_phase_resolver(&phases);
  FeatureEngine features(symbols, fo);
  RuleEngine rules(symbols, ro);
  const int T = o.window, F = kFeatureCount;
  const int64_t interval = fo.row_interval_ns;
  const double lookback_s = o.rule_lookback_s;
  const int64_t lookback_ns = int64_t(std::llround(lookback_s * 1e9));
  const int64_t gap_ns = o.label.gap_s * kSecNs;
  const double zscore_den = std::sqrt(10.0);

  std::vector<SymbolExport> state;
  std::vector<WindowMeta> meta;
  std::vector<float> buf(size_t(T) * F);
  std::vector<Event> batch(4096);
  Alert fired[kRuleTypeCount];
  ExportSummary sum;
  bool first_event = true;

  while (!stop.load(std::memory_order_relaxed)) {
    const size_t n = source->next_batch(batch);
    if (n == 0) {
      if (source->done()) break;
      continue;
    }
    for (size_t i = 0; i < n; ++i) {
      const Event& e = batch[i];
      ++sum.events;
      if (!books.apply(e, errors)) {
        ++sum.rejected;
        continue;
      }
      if (e.symbol >= state.size()) state.resize(size_t(e.symbol) + 1);
      SymbolExport& s = state[e.symbol];
      const int64_t ts = e.exch_ts_ns;
      if (first_event) sum.first_ts_ns = ts, first_event = false;
      sum.last_ts_ns = std::max(sum.last_ts_ns, ts);
      int64_t pushes = 0;
      if (!s.seen) {
        s.seen = true;
        s.row_idx = ts / interval;
        s.next_row_ns = (s.row_idx + 1) * interval;
        s.first_ts = s.last_ts = ts;
      } else {
        if (ts - s.last_ts <= gap_ns) s.active_ns += std::max<int64_t>(0, ts - s.last_ts);
        s.last_ts = std::max(s.last_ts, ts);
        if (ts >= s.next_row_ns) {
          // Label samples: the state at the first closed interval end and at the latest one
          // (identical values in between: nothing happened).
          const int64_t r = ts / interval;
          const float* prev = features.row(e.symbol);
          LabelSample ls{s.next_row_ns, s.last_mid, prev[kVolLong], prev[kVolumeZ], prev[kDepthChange], s.last_trading,
                        s.last_spread};
          s.samples.push_back(ls);
          if (r * interval != s.next_row_ns) {
            ls.ts_ns = r * interval;
            s.samples.push_back(ls);
          }
          pushes = std::min<int64_t>(r - s.row_idx, T);
          s.row_idx = r;
          s.next_row_ns = (r + 1) * interval;
        }
      }
      const BookTop& top = books.top(e.symbol);
      const float* row = features.on_event(e, top);
      if (top.mid() > 0) s.last_mid = top.mid();
      if (top.has_bbo() && top.best_ask() > top.best_bid()) s.last_spread = double(top.best_ask() - top.best_bid());
      s.last_trading = top.phase == Phase::kContinuous || top.phase == Phase::kUnknown;
      if (pushes > 0) {
        // A window each time the symbol's row count passes a multiple of the stride (a gap
        // that pushes several rows at once gives one window, and the grid stays put).
        const int64_t before = s.rows / o.stride;
        s.rows += pushes;
        const FeatureWindow& w = features.window(e.symbol);
        if (w.window_size() == T && s.rows / o.stride > before) {
          WindowMeta m;
          m.end_ts = s.row_idx * interval;
          m.symbol = int32_t(e.symbol);
          for (int a = 0; a < kRuleTypeCount; ++a) {
            if (s.last_alert_ns[a] != INT64_MIN && s.last_alert_ns[a] > m.end_ts - lookback_ns) m.rule_types |= 1u << a;
          }
          m.rule = m.rule_types ? 1.f : 0.f;
          const float* last = w.window_row(0);
          m.zscore = float(std::abs(double(last[kRet10s])) /
                           (std::max(double(last[kVolLong]), o.zscore_vol_floor_bps) * zscore_den));
          m.slot = int64_t(meta.size());
          w.window_rows(buf.data());
          if (std::fwrite(buf.data(), sizeof(float), buf.size(), tmp.get()) != buf.size())
            return Status(StatusCode::kIoError, "writing windows in " + o.out_dir + " (disk full?)");
          meta.push_back(m);
        }
      }
      const int k = rules.evaluate(e, top, row, StageTimes{}, fired, kRuleTypeCount, &features.volume(e.symbol));
      for (int a = 0; a < k; ++a) s.last_alert_ns[int(fired[a].type)] = ts;
    }
  }
  if (std::fflush(tmp.get()) != 0) return Status(StatusCode::kIoError, "writing windows in " + o.out_dir);
  if (std::string none = first_error.no_valid_record_message(sum.events, source_errors, source->describe());
      !none.empty()) {
    tmp.reset();
    fs::remove(tmp_path, ec);
    return invalid(none);
  }
  errors.merge(source_errors);

  // Labels: onsets per symbol (with the simulator's injected events), then each window.
  std::vector<std::vector<InjectedSpan>> injected(state.size());
  if (sim) {
    for (const auto& ev : sim->injected()) {
      if (ev.symbol < injected.size()) injected[ev.symbol].push_back(InjectedSpan{ev.start_ns, ev.end_ns});
    }
  }
  std::vector<std::vector<Onset>> onsets(state.size());
  {
    // onsets.csv: every labelled event (symbol,kind,ts_ns,size,unit), in time order per symbol.
    std::ofstream f(dir / "onsets.csv");
    f << "symbol,kind,ts_ns,size,unit\n";
    for (size_t id = 0; id < state.size(); ++id) {
      onsets[id] = label_onsets(state[id].samples, injected[id], o.label);
      for (const auto& x : onsets[id]) {
        ++sum.onsets_by_kind[onset_kind_name(x.kind)];
        char size[32];
        std::snprintf(size, sizeof size, "%.4g", x.size);
        f << symbols.name(SymbolId(id)) << ',' << onset_kind_name(x.kind) << ',' << x.ts_ns << ',' << size << ','
          << onset_size_unit(x.kind) << '\n';
      }
    }
    if (!f) return Status(StatusCode::kIoError, "cannot write " + (dir / "onsets.csv").string());
  }

  // Symbols in the manifest: those with at least one event, in id order.
  std::vector<int32_t> sym_index(state.size(), -1);
  nlohmann::json hours = nlohmann::json::object();
  for (size_t id = 0; id < state.size(); ++id) {
    if (!state[id].seen) continue;
    sym_index[id] = int32_t(sum.symbols.size());
    sum.symbols.push_back(symbols.name(SymbolId(id)));
    hours[sum.symbols.back()] = double(state[id].active_ns) / 3.6e12;
  }

  std::stable_sort(meta.begin(), meta.end(), [](const WindowMeta& a, const WindowMeta& b) {
    return a.end_ts != b.end_ts ? a.end_ts < b.end_ts : a.symbol < b.symbol;
  });
  const size_t N = meta.size();
  std::vector<uint8_t> labels(N), detect(N), forecast(N);
  std::vector<int32_t> sym(N);
  std::vector<int64_t> end_ts(N), event_ts(N), detect_ts(N), forecast_ts(N);
  std::vector<float> rule(N), zscore(N);
  std::vector<uint32_t> rule_types(N);
  for (size_t i = 0; i < N; ++i) {
    const WindowMeta& m = meta[i];
    const WindowLabel l = label_window(onsets[size_t(m.symbol)], m.end_ts, o.label);
    labels[i] = l.label;
    event_ts[i] = l.event_ts_ns;
    const WindowLabel d = label_window(onsets[size_t(m.symbol)], m.end_ts, o.label, LabelTask::kDetect);
    const WindowLabel f = label_window(onsets[size_t(m.symbol)], m.end_ts, o.label, LabelTask::kForecast);
    detect[i] = d.label, detect_ts[i] = d.event_ts_ns;
    forecast[i] = f.label, forecast_ts[i] = f.event_ts_ns;
    sum.positives += l.label;
    sym[i] = sym_index[size_t(m.symbol)];
    end_ts[i] = m.end_ts;
    rule[i] = m.rule;
    zscore[i] = m.zscore;
    rule_types[i] = m.rule_types;
  }
  sum.windows = int64_t(N);

  // windows.npy: header, then the windows in end-time order from the temporary file.
  {
    const size_t wbytes = size_t(T) * F * sizeof(float);
    const fs::path wpath = dir / "windows.npy";
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> out(std::fopen(wpath.c_str(), "wb"), &std::fclose);
    if (!out) return Status(StatusCode::kIoError, "cannot write " + wpath.string());
    const std::string header = npy_f32_header({int64_t(N), T, F});
    bool ok = std::fwrite(header.data(), 1, header.size(), out.get()) == header.size();
    if (N > 0 && ok) {
      void* map = mmap(nullptr, N * wbytes, PROT_READ, MAP_PRIVATE, fileno(tmp.get()), 0);
      if (map == MAP_FAILED) return Status(StatusCode::kIoError, "cannot map the temporary window file");
      const char* base = static_cast<const char*>(map);
      for (size_t i = 0; i < N && ok; ++i) ok = std::fwrite(base + size_t(meta[i].slot) * wbytes, 1, wbytes, out.get()) == wbytes;
      munmap(map, N * wbytes);
    }
    if (!ok || std::fflush(out.get()) != 0) return Status(StatusCode::kIoError, "writing " + wpath.string() + " (disk full?)");
  }
  tmp.reset();
  fs::remove(tmp_path, ec);

  using engine::DType;
  TS_RETURN_IF_ERROR(write_vector(dir / "labels.npy", DType::kU8, labels));
  TS_RETURN_IF_ERROR(write_vector(dir / "symbol.npy", DType::kI32, sym));
  TS_RETURN_IF_ERROR(write_vector(dir / "end_ts_ns.npy", DType::kI64, end_ts));
  TS_RETURN_IF_ERROR(write_vector(dir / "event_ts_ns.npy", DType::kI64, event_ts));
  // The two tasks of docs/labels.md: detection (onset in the last `grace` s) and forecast
  // (onset strictly ahead, within H).
  TS_RETURN_IF_ERROR(write_vector(dir / "labels_detect.npy", DType::kU8, detect));
  TS_RETURN_IF_ERROR(write_vector(dir / "event_ts_detect_ns.npy", DType::kI64, detect_ts));
  TS_RETURN_IF_ERROR(write_vector(dir / "labels_forecast.npy", DType::kU8, forecast));
  TS_RETURN_IF_ERROR(write_vector(dir / "event_ts_forecast_ns.npy", DType::kI64, forecast_ts));
  TS_RETURN_IF_ERROR(write_vector(dir / "rule_score.npy", DType::kF32, rule));
  TS_RETURN_IF_ERROR(write_vector(dir / "zscore.npy", DType::kF32, zscore));
  {
    // rule_types.npy: bit a set = alert type a (manifest "rule_detectors" order) fired within R.
    std::vector<int32_t> bits(rule_types.begin(), rule_types.end());
    TS_RETURN_IF_ERROR(write_vector(dir / "rule_types.npy", DType::kI32, bits));
  }

  if (sim) {
    // The simulator's ground truth (symbol,type,start_ns,end_ns,magnitude), for per-type analysis.
    if (Status st = sim->write_labels((dir / "injected_events.csv").string()); !st.is_ok()) return st;
  }

  nlohmann::json m;
  m["format_version"] = 1;
  nlohmann::json src = {{"format", o.format}, {"paths", o.paths}};
  if (sim) {
    src["sim"] = {{"symbols", so.symbols}, {"seed", so.seed}, {"duration_s", so.duration_s},
                  {"events_per_s", so.events_per_s}, {"anomalies_per_hour", so.anomalies_per_hour},
                  {"anomaly_types", so.anomaly_types}, {"injected_events", sim->injected().size()}};
  } else if (o.format == "lobster") {
    src["date_assumed"] = "the date in each file name, New York local time (LOBSTER times are seconds after midnight)";
  } else if (o.format == "sse-l2") {
    src["date_assumed"] = "the date in each day folder's name, Shanghai time (UTC+8)";
  }
  src["events"] = sum.events;
  src["rejected_events"] = sum.rejected;
  src["input_errors"] = errors.by_kind();
  m["source"] = src;
  m["symbols"] = sum.symbols;
  m["time_range_ns"] = {sum.first_ts_ns, sum.last_ts_ns};
  std::vector<std::string> names;
  for (int f = 0; f < kFeatureCount; ++f) names.push_back(feature_name(f));
  m["feature_names"] = names;
  m["window"] = T;
  m["stride"] = o.stride;
  m["row_interval_ns"] = interval;
  nlohmann::json label = {{"definition", "docs/labels.md"},
                          {"horizon_s", o.label.horizon_s},
                          {"k", o.label.k},
                          {"vol_floor_bps", o.label.vol_floor_bps},
                          {"min_move_ticks", o.label.min_move_ticks},
                          {"min_move_spreads", o.label.min_move_spreads},
                          {"min_move_bps", o.label.min_move_bps},
                          {"settle_s", o.label.settle_s},
                          {"tasks", {{"detect", "onset in (end - grace, end]"}, {"forecast", "onset in (end, end + H]"}}},
                          {"volume_z", o.label.volume_z},
                          {"depth_drop", o.label.depth_drop},
                          {"refractory_s", o.label.refractory()},
                          {"grace_s", o.label.grace_s},
                          {"gap_s", o.label.gap_s},
                          {"injected_events", sim != nullptr},
                          {"onsets", sum.onsets_by_kind}};
  m["label"] = label;
  m["count"] = sum.windows;
  m["positives"] = sum.positives;
  m["symbol_hours"] = hours;
  std::vector<std::string> rule_names;
  for (int a = 0; a < kRuleTypeCount; ++a) rule_names.push_back(alert_type_name(AlertType(a)));
  m["rule_detectors"] = rule_names;
  m["rule_lookback_s"] = lookback_s;
  m["zscore"] = {{"definition", "|ret_10s_bps| / (max(vol_long_bps, floor) * sqrt(10)) of the window's last row"},
                 {"vol_floor_bps", o.zscore_vol_floor_bps}};
  m["split"] = {{"by", "end_ts_ns within time_range_ns"}, {"train", 0.70}, {"validation", 0.15}, {"test", 0.15}};
  m["created"] = iso_now();
  {
    std::ofstream f(dir / "manifest.json");
    f << m.dump(2) << "\n";
    if (!f) return Status(StatusCode::kIoError, "cannot write " + (dir / "manifest.json").string());
  }
  sum.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return sum;
}

FeaturesCommand::FeaturesCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("features", "export a training data set: feature windows, labels, baselines");
  ExportOptions& o = opts_;
  cmd_->add_option("--export", o.out_dir, "output directory (windows.npy, labels.npy, ..., manifest.json)")->required();
  cmd_->add_option("--format", o.format, "sim | lobster | sse-l2 | csv")->required();
  cmd_->add_option("paths", o.paths, "message files, day folders or CSV files (none for sim)");
  cmd_->add_option("--config", o.config_path, "TOML config ([features], [rules.*], [sim])");
  cmd_->add_option("--symbols", o.symbols, "sim: symbols (default 50)");
  cmd_->add_option("--seed", o.seed, "sim: seed (default 42)");
  cmd_->add_option("--sim-seconds", o.sim_seconds, "sim: trading seconds to simulate (default 3600)");
  cmd_->add_option("--window", o.window, "T: feature rows per window, 30..120 (default 60)");
  cmd_->add_option("--stride", o.stride, "a window every this many feature rows per symbol (default 5)");
  cmd_->add_option("--horizon", o.label.horizon_s, "label horizon H, seconds (default 60)");
  cmd_->add_option("--k", o.label.k, "label: price move > k * sigma * sqrt(H) (default 3)");
  cmd_->add_option("--vol-floor", o.label.vol_floor_bps, "label: sigma floor, bps/sqrt(s) (default 0.5)");
  cmd_->add_option("--min-move-ticks", o.label.min_move_ticks, "label: price move at least this many ticks (default 2)");
  cmd_->add_option("--min-move-spreads", o.label.min_move_spreads, "label: price move at least this many spreads (default 4, 0 = off)");
  cmd_->add_option("--min-move-bps", o.label.min_move_bps, "label: price move at least this many bps (default 10, 0 = off)");
  cmd_->add_option("--settle", o.label.settle_s, "label: no onset this many seconds after trading (re)starts (default 60)");
  cmd_->add_option("--volume-z", o.label.volume_z, "label: volume shock at volume_z >= this (default 10, 0 = off)");
  cmd_->add_option("--depth-drop", o.label.depth_drop, "label: liquidity shock at a top-5 depth fall >= this fraction in 10 s (default 0.9, 0 = off)");
  cmd_->add_option("--refractory", o.label.refractory_s, "label: quiet seconds before a new onset (default H)");
  cmd_->add_option("--grace", o.label.grace_s, "label: a window up to this many seconds after an onset is positive (default 10)");
  cmd_->add_option("--rule-lookback", o.rule_lookback_s, "rule score: 1 if a rule fired in the last R seconds (default 10)");
}

std::optional<int> FeaturesCommand::run(const std::atomic<bool>& stop) const {
  if (!cmd_->parsed()) return std::nullopt;
  auto r = export_dataset(opts_, stop);
  if (!r.is_ok()) {
    std::fprintf(stderr, "ticksentry features: %s\n", r.status().to_string().c_str());
    return r.status().code() == StatusCode::kInternal ? 1 : kExitUsage;
  }
  const ExportSummary& s = r.value();
  std::string kinds;
  for (const auto& [k, v] : s.onsets_by_kind) kinds += (kinds.empty() ? "" : ", ") + k + " " + std::to_string(v);
  std::fprintf(stderr,
               "exported %lld windows (%lld positive, %.2f%%) of %zu symbols from %lld events in %.1f s (%.2f M events/s) to %s\n"
               "onsets: %s\n",
               (long long)s.windows, (long long)s.positives, s.windows ? 100.0 * double(s.positives) / double(s.windows) : 0.0,
               s.symbols.size(), (long long)s.events, s.seconds, s.seconds > 0 ? double(s.events) / s.seconds / 1e6 : 0.0,
               opts_.out_dir.c_str(), kinds.empty() ? "none" : kinds.c_str());
  return kExitOk;
}

}  // namespace ts
