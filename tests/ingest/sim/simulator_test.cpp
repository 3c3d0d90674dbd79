// The simulator's stream contract: determinism, ordering, L3 consistency, limit bands,
// sessions, labels, scale and generation rate.
#include "ingest/sim/simulator.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <vector>

#include "stream_checker.h"
#include "test_data.h"

namespace ts {
namespace {

bool same_event(const Event& a, const Event& b) {
  if (a.kind != b.kind || a.symbol != b.symbol || a.seq != b.seq || a.exch_ts_ns != b.exch_ts_ns) return false;
  switch (a.kind) {
    case EventKind::kTrade:
      return a.trade.price == b.trade.price && a.trade.qty == b.trade.qty && a.trade.aggressor == b.trade.aggressor &&
             a.trade.buy_order_id == b.trade.buy_order_id && a.trade.sell_order_id == b.trade.sell_order_id;
    case EventKind::kStatus:
      return a.status.phase == b.status.phase;
    case EventKind::kSnapshot:
      return a.snapshot.phase == b.snapshot.phase && a.snapshot.bids[0].price == b.snapshot.bids[0].price &&
             a.snapshot.bids[0].qty == b.snapshot.bids[0].qty && a.snapshot.asks[0].price == b.snapshot.asks[0].price;
    default:
      return a.order.order_id == b.order.order_id && a.order.price == b.order.price && a.order.qty == b.order.qty &&
             a.order.side == b.order.side;
  }
}

std::vector<Event> take_events(Simulator& sim, size_t count, size_t batch) {
  std::vector<Event> out(count);
  std::vector<Event> buf(batch);
  size_t n = 0;
  while (n < count) {
    const size_t got = sim.next_batch(buf);
    if (got == 0) break;
    const size_t k = std::min(got, count - n);
    std::copy_n(buf.begin(), k, out.begin() + long(n));
    n += k;
    if (k < got) break;
  }
  out.resize(n);
  return out;
}

SimOptions busy_options() {
  SimOptions o;
  o.symbols = 200;
  o.events_per_s = 40000;
  o.anomalies_per_hour = 20;  // many injected events, so their flow is covered too
  return o;
}

TEST(Simulator, SameSeedSameStreamWhateverTheBatchSize) {
  SymbolTable t1, t2, t3;
  SimOptions o = busy_options();
  Simulator a(o, t1), b(o, t2);
  const auto ea = take_events(a, 1'000'000, 4096);
  const auto eb = take_events(b, 1'000'000, 7);  // smaller than one step: exercises staging
  ASSERT_EQ(ea.size(), 1'000'000u);
  ASSERT_EQ(eb.size(), ea.size());
  for (size_t i = 0; i < ea.size(); ++i) {
    ASSERT_TRUE(same_event(ea[i], eb[i])) << "streams differ at event " << i;
  }
  EXPECT_GT(a.injected().size(), 0u);
  ASSERT_EQ(a.injected().size(), b.injected().size());
  for (size_t i = 0; i < a.injected().size(); ++i) {
    EXPECT_EQ(a.injected()[i].start_ns, b.injected()[i].start_ns);
    EXPECT_EQ(a.injected()[i].symbol, b.injected()[i].symbol);
    EXPECT_EQ(a.injected()[i].magnitude, b.injected()[i].magnitude);
  }

  o.seed = 43;
  Simulator c(o, t3);
  const auto ec = take_events(c, 10'000, 4096);
  size_t differ = 0;
  for (size_t i = 0; i < ec.size(); ++i) differ += !same_event(ea[i], ec[i]);
  EXPECT_GT(differ, ec.size() / 2) << "a different seed must give a different stream";
}

TEST(Simulator, EveryEventKeepsTheStreamContract) {
  SymbolTable table;
  SimOptions o = busy_options();
  o.duration_s = 300;  // crosses 11:30 when started at 11:27
  o.start_ns = kSimDefaultStartNs + (117 * 60) * kNsPerSec;
  Simulator sim(o, table);
  testing::StreamChecker check(table);
  std::vector<Event> buf(8192);
  std::set<std::pair<SymbolId, int>> phases_seen;
  int64_t max_gap_ns = 0, prev_ts = 0;
  while (!sim.done()) {
    const size_t n = sim.next_batch(buf);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(check.apply(buf[i])) << check.error();
      if (buf[i].kind == EventKind::kStatus) phases_seen.insert({buf[i].symbol, int(buf[i].status.phase)});
      if (prev_ts) max_gap_ns = std::max(max_gap_ns, buf[i].exch_ts_ns - prev_ts);
      prev_ts = buf[i].exch_ts_ns;
    }
  }
  std::printf("events %llu: adds %llu cancels %llu executes %llu trades %llu status %llu; injected %zu\n",
              (unsigned long long)check.count(), (unsigned long long)check.adds(),
              (unsigned long long)check.cancels(), (unsigned long long)check.executes(),
              (unsigned long long)check.trades(), (unsigned long long)check.statuses(), sim.injected().size());
  EXPECT_GT(check.trades(), check.count() / 20);
  EXPECT_EQ(check.trades(), check.executes());
  EXPECT_GT(check.cancels(), check.count() / 10);
  EXPECT_GT(sim.injected().size(), 10u);
  // Every symbol went through continuous -> break -> continuous.
  for (SymbolId id : sim.symbol_ids()) {
    EXPECT_TRUE(phases_seen.count({id, int(Phase::kBreak)})) << table.name(id);
    EXPECT_TRUE(phases_seen.count({id, int(Phase::kContinuous)})) << table.name(id);
  }
  // The lunch break is skipped: one gap of ~90 minutes, the rest tiny.
  EXPECT_GE(max_gap_ns, 89 * 60 * kNsPerSec);
  EXPECT_LE(max_gap_ns, 91 * 60 * kNsPerSec);
}

// 20 symbols at 2,000 events/s for `duration_s` trading seconds from `start_ns`.
SimOptions small_options(double duration_s, int64_t start_ns) {
  SimOptions o;
  o.symbols = 20;
  o.events_per_s = 2000;
  o.duration_s = duration_s;
  o.start_ns = start_ns;
  return o;
}

TEST(Simulator, RunsAcrossTheCloseIntoTheNextWeekday) {
  SymbolTable table;
  const SimOptions o = small_options(120, midnight_ns(2023, 2, 3, 8) + (14 * 3600 + 56 * 60) * kNsPerSec);  // Fri 14:56
  Simulator sim(o, table);
  testing::StreamChecker check(table);
  std::vector<Event> buf(1024);
  std::vector<Phase> phases_of_first;
  int64_t last_ts = 0;
  while (!sim.done()) {
    const size_t n = sim.next_batch(buf);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(check.apply(buf[i])) << check.error();
      if (buf[i].kind == EventKind::kStatus && buf[i].symbol == sim.symbol_ids()[0]) {
        phases_of_first.push_back(buf[i].status.phase);
      }
      last_ts = buf[i].exch_ts_ns;
    }
  }
  // The closing call, the close, Monday's opening call, its 09:25 match into the pause, 09:30.
  const std::vector<Phase> want = {Phase::kContinuous, Phase::kClosingAuction, Phase::kClosed,
                                   Phase::kOpeningAuction, Phase::kBreak, Phase::kContinuous};
  EXPECT_EQ(phases_of_first, want);
  // One match per symbol and call: Friday's close and Monday's open.
  EXPECT_EQ(check.auction_trades(), 2u * 20);
  EXPECT_EQ(check.indicatives(), (59u + 199u) * 20);
  // Ends on Monday 2023-02-06 around 09:31.
  EXPECT_GT(last_ts, midnight_ns(2023, 2, 6, 8) + (9 * 3600 + 30 * 60) * kNsPerSec);
  EXPECT_LT(last_ts, midnight_ns(2023, 2, 6, 8) + (9 * 3600 + 32 * 60) * kNsPerSec);
}

// The opening call before the first day's 09:30 when the stream starts before it (docs/simulator.md
// "Phases"; the default start, 09:30, opens in continuous trading): a status at 09:15,
// an indicative price/volume snapshot every 3 s that strays early and settles on the match, the
// 09:25 match as one auction trade (no aggressor) after the pause's status, 09:30 continuous.
TEST(Simulator, OpeningCallAuctionWithIndicativePrices) {
  SymbolTable table;
  SimOptions o = small_options(60, kSimOpeningCallStartNs);
  Simulator sim(o, table);
  testing::StreamChecker check(table);
  const SymbolId first = sim.symbol_ids()[0];
  const int64_t midnight = midnight_ns(2023, 2, 1, 8);
  auto at = [&](int h, int m, int sec) { return midnight + (h * 3600 + m * 60 + sec) * kNsPerSec; };
  std::vector<Phase> phases;
  std::vector<Price> indicative;
  std::vector<Qty> indicative_qty;
  std::vector<int64_t> indicative_ts;
  Price match = 0;
  Qty match_qty = 0;
  int64_t match_ts = 0, first_ts = 0, first_continuous_trade_ts = 0;
  std::vector<Event> buf(1024);
  while (!sim.done()) {
    const size_t n = sim.next_batch(buf);
    for (size_t i = 0; i < n; ++i) {
      const Event& e = buf[i];
      ASSERT_TRUE(check.apply(e)) << check.error();
      if (!first_ts) first_ts = e.exch_ts_ns;
      if (e.symbol != first) continue;
      if (e.kind == EventKind::kStatus) phases.push_back(e.status.phase);
      if (e.kind == EventKind::kSnapshot) {
        indicative.push_back(e.snapshot.bids[0].price);
        indicative_qty.push_back(e.snapshot.bids[0].qty);
        indicative_ts.push_back(e.exch_ts_ns);
      }
      if (e.kind == EventKind::kTrade && e.trade.aggressor == Side::kNone) {
        match = e.trade.price, match_qty = e.trade.qty, match_ts = e.exch_ts_ns;
      } else if (e.kind == EventKind::kTrade && !first_continuous_trade_ts) {
        first_continuous_trade_ts = e.exch_ts_ns;
      }
    }
  }
  EXPECT_EQ(first_ts, at(9, 15, 0));
  const std::vector<Phase> want = {Phase::kOpeningAuction, Phase::kBreak, Phase::kContinuous};
  EXPECT_EQ(phases, want);
  ASSERT_EQ(indicative.size(), 199u);
  EXPECT_EQ(indicative_ts.front(), at(9, 15, 3));
  EXPECT_EQ(indicative_ts.back(), at(9, 24, 57));
  EXPECT_EQ(match_ts, at(9, 25, 0));
  EXPECT_GE(first_continuous_trade_ts, at(9, 30, 0));
  EXPECT_EQ(indicative.back(), match);
  EXPECT_GT(match_qty, indicative_qty.front());
  EXPECT_LE(indicative_qty.back(), match_qty);
  // Early indicative prices stray from the match (by more than a few ticks somewhere).
  Price stray = 0;
  for (size_t k = 0; k < 60; ++k) stray = std::max(stray, std::abs(indicative[k] - match));
  EXPECT_GT(stray, 5 * table.ref(first).prev_close / 10000) << "no indicative price strayed 5 bps";
  EXPECT_EQ(check.auction_trades(), 20u);
  EXPECT_EQ(check.indicatives(), 199u * 20);

  // The default start (09:30) opens in continuous trading: no call on the first day.
  SymbolTable t2;
  o.start_ns = kSimDefaultStartNs;
  Simulator at_open(o, t2);
  std::vector<Event> first_batch(64);
  ASSERT_GT(at_open.next_batch(first_batch), 0u);
  EXPECT_EQ(first_batch[0].kind, EventKind::kStatus);
  EXPECT_EQ(first_batch[0].status.phase, Phase::kContinuous);
  EXPECT_EQ(first_batch[0].exch_ts_ns, at(9, 30, 0));
}

// The auctions take no trading time and have their own random stream: the continuous flow is the
// same event for event with or without them.
TEST(Simulator, AuctionsLeaveTheContinuousFlowAsItIs) {
  auto continuous = [](bool auctions) {
    SymbolTable table;
    SimOptions o = busy_options();
    o.duration_s = 10;
    o.start_ns = kSimOpeningCallStartNs;
    o.auctions = auctions;
    Simulator sim(o, table);
    std::vector<Event> out, buf(4096);
    while (!sim.done()) {
      const size_t n = sim.next_batch(buf);
      for (size_t i = 0; i < n; ++i) {
        const Event& e = buf[i];
        if (e.kind == EventKind::kSnapshot || e.kind == EventKind::kStatus) continue;
        if (e.kind == EventKind::kTrade && e.trade.aggressor == Side::kNone) continue;
        out.push_back(e);
      }
    }
    return out;
  };
  const auto with = continuous(true), without = continuous(false);
  ASSERT_GT(without.size(), 100'000u);
  ASSERT_EQ(with.size(), without.size());
  for (size_t i = 0; i < with.size(); ++i) {
    Event a = with[i];
    a.seq = without[i].seq;
    ASSERT_TRUE(same_event(a, without[i])) << "continuous flow differs at event " << i;
  }
}

TEST(Simulator, FiveThousandAShareSymbolsWithTheirBands) {
  SymbolTable table;
  SimOptions o;
  o.symbols = 5000;
  o.events_per_s = 1'000'000;
  Simulator sim(o, table);
  ASSERT_EQ(table.size(), 5000u);
  int st = 0, wide = 0, sh = 0, sz = 0;
  for (SymbolId id : sim.symbol_ids()) {
    const RefData& r = table.ref(id);
    ASSERT_TRUE(r.market == Market::kShanghai || r.market == Market::kShenzhen) << r.name;
    sh += r.market == Market::kShanghai;
    sz += r.market == Market::kShenzhen;
    ASSERT_GE(r.prev_close, 300) << r.name;
    ASSERT_LE(r.prev_close, 30000) << r.name;
    const bool twenty = r.name.starts_with("300") || r.name.starts_with("688");
    if (r.is_st) {
      ++st;
      EXPECT_DOUBLE_EQ(r.limit_pct, 0.05) << r.name;
    } else {
      EXPECT_DOUBLE_EQ(r.limit_pct, twenty ? 0.20 : 0.10) << r.name;
    }
    wide += twenty;
    EXPECT_EQ(r.limit_up, limit_up_price(r.prev_close, r.limit_pct));
    EXPECT_EQ(r.limit_down, limit_down_price(r.prev_close, r.limit_pct));
  }
  EXPECT_GT(st, 20);
  EXPECT_GT(wide, 500);
  EXPECT_GT(sh, 1000);
  EXPECT_GT(sz, 1000);

  testing::StreamChecker check(table);
  std::vector<Event> buf(8192);
  std::set<SymbolId> traded;
  while (check.count() < 3'000'000) {
    const size_t n = sim.next_batch(buf);
    ASSERT_GT(n, 0u);
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(check.apply(buf[i])) << check.error();
      if (buf[i].kind == EventKind::kTrade && buf[i].trade.aggressor != Side::kNone) traded.insert(buf[i].symbol);
    }
  }
  EXPECT_GT(traded.size(), 4900u);
}

TEST(Simulator, WritesParseableLabels) {
  const auto dir = testing::scratch_dir("sim_labels");
  const std::string path = (dir / "labels.csv").string();
  SymbolTable table;
  std::vector<InjectedEvent> truth;
  {
    SimOptions o = busy_options();
    o.duration_s = 200;
    o.labels_path = path;
    Simulator sim(o, table);
    std::vector<Event> buf(8192);
    while (!sim.done()) (void)sim.next_batch(buf);
    truth = sim.injected();
  }
  ASSERT_GT(truth.size(), 5u);
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "symbol,type,start_ns,end_ns,magnitude");
  size_t rows = 0;
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string sym, type, start, end, mag;
    ASSERT_TRUE(std::getline(ss, sym, ',') && std::getline(ss, type, ',') && std::getline(ss, start, ',') &&
                std::getline(ss, end, ',') && std::getline(ss, mag))
        << line;
    ASSERT_LT(rows, truth.size());
    const InjectedEvent& t = truth[rows];
    EXPECT_EQ(table.find(sym).value_or(kInvalidSymbol), t.symbol) << line;
    EXPECT_EQ(sim_event_type_from_name(type), t.type) << line;
    EXPECT_EQ(std::stoll(start), t.start_ns) << line;
    EXPECT_EQ(std::stoll(end), t.end_ns) << line;
    EXPECT_NEAR(std::stod(mag), t.magnitude, 1e-5 * std::abs(t.magnitude)) << line;
    EXPECT_LT(t.start_ns, t.end_ns);
    ++rows;
  }
  EXPECT_EQ(rows, truth.size());
}

TEST(Simulator, OptionsFromConfigAndValidation) {
  Config cfg = Config::parse("[sim]\nsymbols = 300\nseed = 7\nevents_per_s = 5000.0\nanomaly_types = \"pump, spoofing\"\n");
  const SimOptions o = SimOptions::from_config(cfg.section("sim"));
  EXPECT_EQ(o.symbols, 300);
  EXPECT_EQ(o.seed, 7u);
  EXPECT_TRUE(o.auctions);
  EXPECT_FALSE(SimOptions::from_config(Config::parse("[sim]\nauctions = false\n").section("sim")).auctions);
  EXPECT_THROW(SimOptions::from_config(Config::parse("[sim]\nauctions = 3\n").section("sim")), ConfigError);
  EXPECT_DOUBLE_EQ(o.events_per_s, 5000.0);
  EXPECT_TRUE(cfg.unread_keys().empty());
  EXPECT_THROW(SimOptions::from_config(Config::parse("[sim]\nsymbols = 9000\n").section("sim")), ConfigError);
  EXPECT_THROW(SimOptions::from_config(Config::parse("[sim]\nanomaly_types = \"crash\"\n").section("sim")),
               ConfigError);
  EXPECT_TRUE(SimOptions{}.validate().is_ok());
}

TEST(Simulator, GenerationRate) {
  SymbolTable table;
  SimOptions o;  // the benchmark's shape: 1000 symbols
  Simulator sim(o, table);
  std::vector<Event> buf(4096);
  for (int i = 0; i < 100; ++i) (void)sim.next_batch(buf);  // past the opening book
  const size_t target = 10'000'000;
  size_t n = 0;
  uint64_t trades = 0;
  const auto t0 = std::chrono::steady_clock::now();
  while (n < target) {
    const size_t got = sim.next_batch(buf);
    for (size_t i = 0; i < got; ++i) trades += buf[i].kind == EventKind::kTrade;
    n += got;
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("generation: %zu events in %.3f s = %.2f M events/s (1000 symbols; %.1f%% trades)\n", n, s,
              double(n) / s / 1e6, 100.0 * double(trades) / double(n));
  EXPECT_GT(n, 0u);
}

}  // namespace
}  // namespace ts
