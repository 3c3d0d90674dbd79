// `ticksentry features --export` as a user runs it: the files of the dataset contract
// (docs/labels.md), labels that line up with the simulator's injected events, real LOBSTER
// data, determinism, and clear errors (exit 2).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "dataset_test_util.h"
#include "engine/npy.h"
#include "test_data.h"

namespace ts {
namespace {

namespace fs = std::filesystem;
using engine::HostTensor;
using testing::npy;
using testing::read_json;
using testing::run_bin;
constexpr int64_t kSec = 1'000'000'000;

// The whole data set, checked against the contract's shapes and types.
struct Data {
  nlohmann::json manifest;
  HostTensor windows, labels, symbol, end_ts, event_ts, rule, zscore;
  int64_t n = 0;
};

Data load(const fs::path& dir, int window) {
  Data d;
  d.manifest = read_json(dir / "manifest.json");
  d.windows = npy(dir / "windows.npy");
  d.labels = npy(dir / "labels.npy");
  d.symbol = npy(dir / "symbol.npy");
  d.end_ts = npy(dir / "end_ts_ns.npy");
  d.event_ts = npy(dir / "event_ts_ns.npy");
  d.rule = npy(dir / "rule_score.npy");
  d.zscore = npy(dir / "zscore.npy");
  d.n = d.manifest["count"].get<int64_t>();
  EXPECT_EQ(d.windows.dtype, engine::DType::kF32);
  EXPECT_EQ(d.windows.dims, (std::vector<int64_t>{d.n, window, 20}));
  EXPECT_EQ(d.labels.dtype, engine::DType::kU8);
  EXPECT_EQ(d.symbol.dtype, engine::DType::kI32);
  EXPECT_EQ(d.end_ts.dtype, engine::DType::kI64);
  EXPECT_EQ(d.event_ts.dtype, engine::DType::kI64);
  EXPECT_EQ(d.rule.dtype, engine::DType::kF32);
  EXPECT_EQ(d.zscore.dtype, engine::DType::kF32);
  for (auto* t : {&d.labels, &d.symbol, &d.end_ts, &d.event_ts, &d.rule, &d.zscore}) {
    EXPECT_EQ(t->dims, std::vector<int64_t>{d.n});
  }
  return d;
}

// Contract invariants every export must hold.
void check_invariants(const Data& d, double horizon_s, double grace_s) {
  const auto* lab = d.labels.as<uint8_t>();
  const auto* end = d.end_ts.as<int64_t>();
  const auto* ev = d.event_ts.as<int64_t>();
  int64_t pos = 0;
  const int64_t first = d.manifest["time_range_ns"][0], last = d.manifest["time_range_ns"][1];
  const auto nsym = int32_t(d.manifest["symbols"].size());
  for (int64_t i = 0; i < d.n; ++i) {
    pos += lab[i];
    if (i > 0) {
      ASSERT_LE(end[i - 1], end[i]) << "rows not in end_ts order at " << i;
    }
    ASSERT_GE(end[i], first);
    ASSERT_LE(end[i], last);
    ASSERT_GE(d.symbol.as<int32_t>()[i], 0);
    ASSERT_LT(d.symbol.as<int32_t>()[i], nsym);
    if (lab[i]) {
      ASSERT_GT(ev[i], end[i] - int64_t(grace_s * 1e9));
      ASSERT_LE(ev[i], end[i] + int64_t(horizon_s * 1e9));
    } else {
      ASSERT_EQ(ev[i], -1);
    }
    const float r = d.rule.as<float>()[i];
    ASSERT_TRUE(r == 0.f || r == 1.f);
    ASSERT_GE(d.zscore.as<float>()[i], 0.f);
  }
  EXPECT_EQ(pos, d.manifest["positives"].get<int64_t>());
}

struct Injected {
  std::string symbol, type;
  int64_t start = 0, end = 0;
};

std::vector<Injected> read_injected(const fs::path& p) {
  std::ifstream f(p);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "symbol,type,start_ns,end_ns,magnitude");
  std::vector<Injected> v;
  while (std::getline(f, line)) {
    std::stringstream ss(line);
    Injected x;
    std::string a, b;
    std::getline(ss, x.symbol, ',');
    std::getline(ss, x.type, ',');
    std::getline(ss, a, ',');
    std::getline(ss, b, ',');
    x.start = std::stoll(a);
    x.end = std::stoll(b);
    v.push_back(x);
  }
  return v;
}

TEST(DatasetCli, SimulatorExportFollowsTheContractAndLabelsInjectedEvents) {
  auto dir = testing::scratch_dir("dataset_sim");
  auto o = run_bin({"features", "--export", "out", "--format", "sim", "--symbols", "20", "--sim-seconds", "900", "--seed",
                    "7", "--window", "30", "--stride", "5"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("exported"), std::string::npos) << o.err;
  const Data d = load(dir / "out", 30);
  const auto& m = d.manifest;
  EXPECT_EQ(m["format_version"], 1);
  EXPECT_EQ(m["source"]["format"], "sim");
  EXPECT_EQ(m["symbols"].size(), 20u);
  EXPECT_EQ(m["window"], 30);
  EXPECT_EQ(m["stride"], 5);
  ASSERT_EQ(m["feature_names"].size(), 20u);
  EXPECT_EQ(m["feature_names"][0], "ret_1s_bps");
  EXPECT_EQ(m["feature_names"][19], "large_trade_ratio");
  const double H = m["label"]["horizon_s"];
  for (const char* k : {"horizon_s", "k", "vol_floor_bps", "volume_z", "depth_drop", "refractory_s", "grace_s"}) {
    EXPECT_TRUE(m["label"][k].is_number()) << k;
  }
  // Every rule alert type: 14, plus limit_up_touched, limit_down_touched and
  // limit_down_queue_shrink (issue 22).
  EXPECT_EQ(m["rule_detectors"].size(), 17u);
  EXPECT_EQ(m["symbol_hours"].size(), 20u);
  for (auto& [sym, h] : m["symbol_hours"].items()) EXPECT_NEAR(h.get<double>(), 0.25, 0.02) << sym;
  // 20 symbols x (900 s - 30 s of warm-up) / 5 s, give or take a window per symbol.
  EXPECT_NEAR(double(d.n), 20 * 870 / 5, 40);
  check_invariants(d, H, m["label"]["grace_s"]);

  // Consecutive windows of a symbol 5 s apart overlap by 25 rows; the z-score is the last row's.
  std::map<int32_t, int64_t> prev;
  int overlaps = 0;
  const float* w = d.windows.as<float>();
  for (int64_t i = 0; i < d.n; ++i) {
    const int32_t s = d.symbol.as<int32_t>()[i];
    const float* last = w + (i * 30 + 29) * 20;
    const double z = std::abs(last[1]) / (std::max(double(last[5]), 1.0) * std::sqrt(10.0));
    ASSERT_NEAR(d.zscore.as<float>()[i], z, 1e-4 * (1 + z)) << i;
    if (auto it = prev.find(s);
        it != prev.end() && d.end_ts.as<int64_t>()[i] - d.end_ts.as<int64_t>()[it->second] == 5 * kSec) {
      const float* a = w + it->second * 30 * 20;
      const float* b = w + i * 30 * 20;
      for (int r = 0; r < 25 * 20; ++r) ASSERT_EQ(b[r], a[r + 5 * 20]) << "window " << i;
      ++overlaps;
    }
    prev[s] = i;
  }
  EXPECT_GT(overlaps, d.n / 2);

  // Every injected event is an onset: the windows of its symbol ending in [start - H,
  // start + grace) are positive, and (no other onset in between) point at it.
  const double G = m["label"]["grace_s"];
  const auto inj = read_injected(dir / "out" / "injected_events.csv");
  ASSERT_GE(inj.size(), 5u) << "the simulator should inject ~2 events per symbol-hour";
  std::map<std::string, int32_t> sym_index;
  for (size_t k = 0; k < m["symbols"].size(); ++k) sym_index[m["symbols"][k]] = int32_t(k);
  int events_with_windows = 0, pointing = 0;
  for (const auto& e : inj) {
    bool any = false, points = false;
    for (int64_t i = 0; i < d.n; ++i) {
      if (d.symbol.as<int32_t>()[i] != sym_index[e.symbol]) continue;
      const int64_t end = d.end_ts.as<int64_t>()[i];
      if (end >= e.start - int64_t(H * 1e9) && end < e.start + int64_t(G * 1e9)) {
        any = any || end < e.start;
        ASSERT_EQ(d.labels.as<uint8_t>()[i], 1) << e.type << " at " << e.start << ", window ending " << end;
        ASSERT_LE(d.event_ts.as<int64_t>()[i], e.start);
        points = points || (end < e.start && d.event_ts.as<int64_t>()[i] == e.start);
      }
    }
    events_with_windows += any;
    pointing += points;
  }
  EXPECT_GE(events_with_windows, int(inj.size()) - 2);
  EXPECT_EQ(pointing, events_with_windows);
  const int64_t injected_onsets = m["label"]["onsets"]["injected"];
  EXPECT_EQ(injected_onsets, int64_t(inj.size()));
  // The rules fire somewhere in a run with injected crashes, pumps and bursts.
  double rule_sum = 0;
  for (int64_t i = 0; i < d.n; ++i) rule_sum += d.rule.as<float>()[i];
  EXPECT_GT(rule_sum, 0);
}

TEST(DatasetCli, SameOptionsSameDataSet) {
  auto dir = testing::scratch_dir("dataset_determinism");
  for (const char* out : {"a", "b"}) {
    auto o = run_bin({"features", "--export", out, "--format", "sim", "--symbols", "5", "--sim-seconds", "300"}, dir);
    ASSERT_EQ(o.exit_code, 0) << o.err;
  }
  for (const char* f : {"windows.npy", "labels.npy", "event_ts_ns.npy", "rule_score.npy", "zscore.npy"}) {
    std::ifstream a(dir / "a" / f, std::ios::binary), b(dir / "b" / f, std::ios::binary);
    std::string sa((std::istreambuf_iterator<char>(a)), {}), sb((std::istreambuf_iterator<char>(b)), {});
    EXPECT_FALSE(sa.empty());
    EXPECT_EQ(sa, sb) << f;
  }
}

TEST(DatasetCli, LobsterExportOfARealDay) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("AAPL", "message", 1));
  auto dir = testing::scratch_dir("dataset_lobster");
  const auto aapl = testing::lobster_file("AAPL", "message", 1);
  auto o = run_bin({"features", "--export", "out", "--format", "lobster", aapl.string()}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const Data d = load(dir / "out", 60);
  const auto& m = d.manifest;
  ASSERT_EQ(m["symbols"], nlohmann::json::array({"AAPL"}));
  EXPECT_NE(m["source"]["date_assumed"].get<std::string>().find("New York"), std::string::npos);
  // 2012-06-21 09:30-16:00 New York = 13:30-20:00 UTC.
  const int64_t open_ns = 1340285400LL * kSec;
  EXPECT_GE(m["time_range_ns"][0].get<int64_t>(), open_ns);
  EXPECT_LE(m["time_range_ns"][1].get<int64_t>(), open_ns + 23400 * kSec);
  EXPECT_NEAR(m["symbol_hours"]["AAPL"].get<double>(), 6.5, 0.1);
  // A window every 5 rows of a 6.5 h day after a 60 s warm-up; a quiet spell that pushes rows
  // across several multiples of 5 at once gives one window (AAPL has a few).
  EXPECT_LE(d.n, (23400 - 60) / 5 + 1);
  EXPECT_GE(d.n, 0.95 * (23400 - 60) / 5);
  check_invariants(d, m["label"]["horizon_s"], m["label"]["grace_s"]);
  const double rate = double(m["positives"].get<int64_t>()) / double(d.n);
  EXPECT_GT(rate, 0.005) << "a real day has abnormal moves";
  EXPECT_LT(rate, 0.30) << "but most minutes are normal";

  // The two tasks (docs/labels.md): detection (onset in (t - G, t]) and forecast (in (t, t + H]),
  // each with its onsets; labels.npy is their union.
  auto det = engine::npy_read((dir / "out" / "labels_detect.npy").string());
  auto fc = engine::npy_read((dir / "out" / "labels_forecast.npy").string());
  auto fts = engine::npy_read((dir / "out" / "event_ts_forecast_ns.npy").string());
  ASSERT_TRUE(det.is_ok() && fc.is_ok() && fts.is_ok());
  int64_t n_det = 0, n_fc = 0;
  for (int64_t i = 0; i < d.n; ++i) {
    const uint8_t a = det.value().as<uint8_t>()[i], f = fc.value().as<uint8_t>()[i];
    n_det += a, n_fc += f;
    EXPECT_EQ(d.labels.as<uint8_t>()[i], uint8_t(a | f)) << i;
    if (f) {
      EXPECT_GT(fts.value().as<int64_t>()[i], d.end_ts.as<int64_t>()[i]) << "forecast onsets lie ahead";
    }
  }
  EXPECT_GT(n_det, 0);
  EXPECT_GT(n_fc, n_det);
  // Every onset has its size and unit, none in the opening minute (the settle after the open),
  // and price moves reach the economic minimum of 10 bps.
  std::ifstream on(dir / "out" / "onsets.csv");
  std::string line;
  std::getline(on, line);
  EXPECT_EQ(line, "symbol,kind,ts_ns,size,unit");
  int onsets = 0;
  while (std::getline(on, line)) {
    std::stringstream ss(line);
    std::string sym, kind, ts, size, unit;
    std::getline(ss, sym, ',');
    std::getline(ss, kind, ',');
    std::getline(ss, ts, ',');
    std::getline(ss, size, ',');
    std::getline(ss, unit, ',');
    ++onsets;
    EXPECT_GE(std::stoll(ts), open_ns + 60 * kSec) << line;
    if (kind == "price_move") {
      EXPECT_EQ(unit, "bps") << line;
      EXPECT_GE(std::abs(std::stod(size)), 10.0) << line;
    }
  }
  EXPECT_GT(onsets, 3);
}

TEST(DatasetCli, BadArgumentsAreClearErrors) {
  auto dir = testing::scratch_dir("dataset_errors");
  const auto aapl = testing::lobster_file("AAPL", "message", 1).string();
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const Case cases[] = {
      {{"features", "--export", "o", "--format", "sim", "--window", "20"}, "--window must be in 30..120"},
      {{"features", "--export", "o", "--format", "sim", "--window", "121"}, "--window must be in 30..120"},
      {{"features", "--export", "o", "--format", "sim", "--stride", "0"}, "--stride"},
      {{"features", "--export", "o", "--format", "nasdaq"}, "unknown --format \"nasdaq\""},
      {{"features", "--export", "o", "--format", "lobster"}, "needs input paths"},
      {{"features", "--export", "o", "--format", "lobster", "/nonexistent/x_message_1.csv.gz"},
       "/nonexistent/x_message_1.csv.gz"},
      {{"features", "--export", "o", "--format", "sim", aapl}, "takes no input paths"},
      {{"features", "--export", "o", "--format", "lobster", aapl, "--symbols", "3"}, "for --format sim only"},
      {{"features", "--export", "o", "--format", "sim", "--symbols", "0"}, "--symbols must be in 1..5000"},
      {{"features", "--export", "o", "--format", "sim", "--k", "-1"}, "k must be > 0"},
      {{"features", "--export", "o", "--format", "sim", "--horizon", "0"}, "horizon"},
      {{"features", "--export", "o", "--format", "sim", "--depth-drop", "1.5"}, "depth drop"},
      {{"features", "--format", "sim"}, "--export"},
      {{"features", "--export", "stdout.txt/sub", "--format", "sim", "--sim-seconds", "5"},
       "cannot create --export directory"},
  };
  for (const auto& c : cases) {
    auto o = run_bin(c.args, dir);
    std::string joined;
    for (const auto& a : c.args) joined += a + " ";
    EXPECT_EQ(o.exit_code, 2) << joined << "\n" << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << joined << "\nstderr: " << o.err;
  }
  EXPECT_FALSE(fs::exists(dir / "o")) << "a refused export writes nothing";
}

}  // namespace
}  // namespace ts
