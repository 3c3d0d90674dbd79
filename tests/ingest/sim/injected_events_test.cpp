// Every injected event type visibly happens in the data, and quiet periods look quiet.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_set>
#include <vector>

#include "ingest/sim/simulator.h"
#include "stream_checker.h"

namespace ts {
namespace {

// What one labelled window looked like in the stream, measured by an independent book.
struct Observed {
  double start_mid = 0, min_mid = 1e300, max_mid = 0;
  Price max_spread = 0;
  double pre_spread_sum = 0;
  int64_t pre_spread_n = 0;
  int64_t pre_trades = 0, trades = 0;
  int64_t pre_add_qty = 0, pre_adds = 0;
  bool sealed_up = false, sealed_down = false;
  int64_t trades_at_limit = 0;
  std::unordered_set<uint64_t> big_adds;
  int big_cancels = 0;
};

constexpr int64_t kPreNs = 30 * kNsPerSec;

double mid_of(const testing::CheckedBook& b) {
  if (b.has_bbo()) return b.mid();
  if (!b.bids.empty()) return double(b.best_bid());
  if (!b.asks.empty()) return double(b.best_ask());
  return 0;
}

SimOptions labelled_options() {
  SimOptions o;
  o.symbols = 40;
  o.events_per_s = 8000;
  o.duration_s = 600;
  o.anomalies_per_hour = 30;
  o.anomaly_gap_s = 40;
  o.start_ns = kSimDefaultStartNs + 15 * 60 * kNsPerSec;  // 09:45, clear of the lunch break
  return o;
}

TEST(SimInjected, EveryEventTypeShowsInTheData) {
  std::vector<InjectedEvent> labels;
  {
    SymbolTable table;
    Simulator sim(labelled_options(), table);
    std::vector<Event> buf(8192);
    while (!sim.done()) (void)sim.next_batch(buf);
    labels = sim.injected();
  }
  SymbolTable table;
  Simulator sim(labelled_options(), table);  // same options: the same stream again
  testing::StreamChecker check(table);
  std::vector<Observed> obs(labels.size());
  std::map<SymbolId, std::vector<size_t>> by_symbol;
  for (size_t i = 0; i < labels.size(); ++i) by_symbol[labels[i].symbol].push_back(i);
  std::vector<double> last_mid(table.size() + 64, 0);

  std::vector<Event> buf(8192);
  while (!sim.done()) {
    const size_t n = sim.next_batch(buf);
    for (size_t k = 0; k < n; ++k) {
      const Event& e = buf[k];
      const double mid_before = e.symbol < last_mid.size() ? last_mid[e.symbol] : 0;
      const auto before_spread = check.book(e.symbol).has_bbo() ? check.book(e.symbol).spread() : 0;
      (void)before_spread;
      ASSERT_TRUE(check.apply(e)) << check.error();
      const auto& book = check.book(e.symbol);
      const double mid = mid_of(book);
      last_mid[e.symbol] = mid;
      auto it = by_symbol.find(e.symbol);
      if (it == by_symbol.end()) continue;
      const RefData& ref = table.ref(e.symbol);
      for (size_t i : it->second) {
        const InjectedEvent& l = labels[i];
        Observed& o = obs[i];
        if (e.exch_ts_ns >= l.start_ns - kPreNs && e.exch_ts_ns < l.start_ns) {
          if (book.has_bbo()) o.pre_spread_sum += double(book.spread()), ++o.pre_spread_n;
          o.pre_trades += e.kind == EventKind::kTrade;
          if (e.kind == EventKind::kOrderAdd) o.pre_add_qty += e.order.qty, ++o.pre_adds;
        } else if (e.exch_ts_ns >= l.start_ns && e.exch_ts_ns <= l.end_ns) {
          if (o.start_mid == 0) o.start_mid = mid_before;
          if (mid > 0) o.min_mid = std::min(o.min_mid, mid), o.max_mid = std::max(o.max_mid, mid);
          if (book.has_bbo()) o.max_spread = std::max(o.max_spread, book.spread());
          o.trades += e.kind == EventKind::kTrade;
          if (!book.bids.empty() && book.best_bid() == ref.limit_up && book.asks.empty()) o.sealed_up = true;
          if (!book.asks.empty() && book.best_ask() == ref.limit_down && book.bids.empty()) o.sealed_down = true;
          if (e.kind == EventKind::kTrade && (e.trade.price == ref.limit_up || e.trade.price == ref.limit_down)) {
            ++o.trades_at_limit;
          }
          const double mean_add = o.pre_adds ? double(o.pre_add_qty) / double(o.pre_adds) : 1e300;
          if (e.kind == EventKind::kOrderAdd && double(e.order.qty) >= 8 * mean_add) o.big_adds.insert(e.order.order_id);
          if (e.kind == EventKind::kOrderCancel && o.big_adds.count(e.order.order_id)) ++o.big_cancels;
        }
      }
    }
  }

  int count[kSimEventTypeCount] = {};
  for (size_t i = 0; i < labels.size(); ++i) {
    const InjectedEvent& l = labels[i];
    const Observed& o = obs[i];
    const double secs = double(l.end_ns - l.start_ns) / 1e9;
    const std::string what = std::string(sim_event_type_name(l.type)) + " on " + table.name(l.symbol) +
                             " magnitude " + std::to_string(l.magnitude);
    ++count[int(l.type)];
    ASSERT_GT(o.start_mid, 0) << what;
    switch (l.type) {
      case SimEventType::kFlashCrash:
        EXPECT_GE((o.start_mid - o.min_mid) / o.start_mid, 0.8 * l.magnitude) << what;
        break;
      case SimEventType::kPump:
        EXPECT_GE((o.max_mid - o.start_mid) / o.start_mid, 0.8 * l.magnitude) << what;
        break;
      case SimEventType::kVolumeBurst: {
        const double rate = double(o.trades) / secs;
        const double pre_rate = double(std::max<int64_t>(o.pre_trades, 1)) / (kPreNs / 1e9);
        EXPECT_GE(rate, 0.4 * l.magnitude * pre_rate) << what << " trades/s " << rate << " before " << pre_rate;
        EXPECT_LT((o.max_mid - o.min_mid) / o.start_mid, 0.02) << what;
        break;
      }
      case SimEventType::kLiquidityWithdrawal: {
        const double pre_spread = o.pre_spread_n ? o.pre_spread_sum / double(o.pre_spread_n) : 1;
        EXPECT_GE(double(o.max_spread), 0.7 * l.magnitude) << what;
        EXPECT_GE(double(o.max_spread), 4 * pre_spread) << what;
        break;
      }
      case SimEventType::kSpoofing:
        EXPECT_GE(o.big_adds.size(), 3u) << what;
        EXPECT_GE(o.big_cancels, 3) << what;
        break;
      case SimEventType::kLimitUpRun:
        EXPECT_TRUE(o.sealed_up) << what;
        EXPECT_GT(o.trades_at_limit, 0) << what;
        break;
      case SimEventType::kLimitDownRun:
        EXPECT_TRUE(o.sealed_down) << what;
        EXPECT_GT(o.trades_at_limit, 0) << what;
        break;
    }
  }
  for (int k = 0; k < kSimEventTypeCount; ++k) {
    std::printf("%-22s %d injected\n", sim_event_type_name(SimEventType(k)), count[k]);
    EXPECT_GE(count[k], 3) << sim_event_type_name(SimEventType(k));
  }
}

TEST(SimInjected, QuietFlowLooksQuiet) {
  SymbolTable table;
  SimOptions o;
  o.symbols = 100;
  o.events_per_s = 20000;
  o.duration_s = 600;
  o.anomalies_per_hour = 0;
  o.start_ns = kSimDefaultStartNs + 60 * 60 * kNsPerSec;
  Simulator sim(o, table);
  ASSERT_TRUE(sim.injected().empty());
  testing::StreamChecker check(table);
  // Per symbol: mid sampled every second, trades counted per 10 s.
  const size_t n_sym = table.size();
  std::vector<std::vector<double>> mids(n_sym);
  std::vector<std::vector<int>> trades10(n_sym);
  const int64_t t0 = o.start_ns;
  std::vector<Event> buf(8192);
  while (!sim.done()) {
    const size_t n = sim.next_batch(buf);
    for (size_t k = 0; k < n; ++k) {
      const Event& e = buf[k];
      ASSERT_TRUE(check.apply(e)) << check.error();
      const auto sec = size_t((e.exch_ts_ns - t0) / kNsPerSec);
      auto& m = mids[e.symbol];
      const double mid = mid_of(check.book(e.symbol));
      while (m.size() <= sec) m.push_back(mid);
      m[sec] = mid;
      if (e.kind == EventKind::kTrade) {
        auto& tc = trades10[e.symbol];
        if (tc.size() <= sec / 10) tc.resize(sec / 10 + 1, 0);
        ++tc[sec / 10];
      }
    }
  }
  double worst_move = 0, sum_sq = 0, worst_burst = 0;
  int64_t n_ret = 0;
  for (size_t s = 0; s < n_sym; ++s) {
    const auto& m = mids[s];
    for (size_t i = 60; i < m.size(); ++i) {
      if (m[i - 60] > 0 && m[i] > 0) worst_move = std::max(worst_move, std::abs(m[i] / m[i - 60] - 1));
    }
    for (size_t i = 1; i < m.size(); ++i) {
      if (m[i - 1] > 0 && m[i] > 0) sum_sq += std::pow(1e4 * std::log(m[i] / m[i - 1]), 2), ++n_ret;
    }
    auto tc = trades10[s];
    if (tc.size() < 20) continue;
    std::vector<int> sorted = tc;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    if (median >= 20) worst_burst = std::max(worst_burst, double(sorted.back()) / median);
  }
  const double vol_1s = std::sqrt(sum_sq / double(std::max<int64_t>(n_ret, 1)));
  std::printf("quiet: 1 s mid return rms %.1f bps; worst 60 s move %.2f%%; worst 10 s trade count / median %.2f\n",
              vol_1s, 100 * worst_move, worst_burst);
  EXPECT_LT(worst_move, 0.015) << "a quiet minute must not look like a 3% crash or pump";
  EXPECT_LT(worst_burst, 5.0) << "quiet trade counts must not look like a 10x volume burst";
  EXPECT_GT(vol_1s, 0.5);
  EXPECT_LT(vol_1s, 40);
}

}  // namespace
}  // namespace ts
