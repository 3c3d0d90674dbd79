#pragma once
// Hand-built books, feature rows and events for rule tests.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "book/book_top.h"
#include "core/clock.h"
#include "core/symbol_table.h"
#include "detect/rule_engine.h"

namespace ts::testing {

// 600000.SH, prev close 10.00 (1000 ticks): limit up 1100, limit down 900, lot 100 shares.
class RuleFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    sym = symbols.intern("600000.SH");
    symbols.set_prev_close(sym, 1000);
    ASSERT_EQ(symbols.ref(sym).limit_up, 1100);
    ASSERT_EQ(symbols.ref(sym).limit_down, 900);
  }

  // 2023-02-01 10:00:00 Shanghai time + seconds.
  static int64_t at_s(double s) {
    return midnight_ns(2023, 2, 1, 8) + 10 * 3600 * kNsPerSec + static_cast<int64_t>(s * 1e9);
  }

  static BookTop book(Price bid, Qty bid_qty, Price ask, Qty ask_qty, Price last,
                      Phase phase = Phase::kContinuous) {
    BookTop b;
    if (bid > 0) {
      b.bids[0] = {bid, bid_qty};
      b.bid_levels = 1;
    }
    if (ask > 0) {
      b.asks[0] = {ask, ask_qty};
      b.ask_levels = 1;
    }
    b.last = last;
    b.phase = phase;
    return b;
  }

  Event snapshot(double t_s) {
    Event e = Event::make(EventKind::kSnapshot);
    e.symbol = sym;
    e.seq = ++seq;
    e.exch_ts_ns = at_s(t_s);
    return e;
  }

  Event trade(double t_s, Price price, Qty qty, Side aggressor) {
    Event e = Event::make(EventKind::kTrade);
    e.symbol = sym;
    e.seq = ++seq;
    e.exch_ts_ns = at_s(t_s);
    e.trade.price = price;
    e.trade.qty = qty;
    e.trade.aggressor = aggressor;
    return e;
  }

  Event order_add(double t_s, Price price, Qty qty, Side side) {
    Event e = Event::make(EventKind::kOrderAdd);
    e.symbol = sym;
    e.seq = ++seq;
    e.exch_ts_ns = at_s(t_s);
    e.order = OrderBody{seq, price, qty, side};
    return e;
  }

  // Five levels a side, one tick apart from bid / ask, `qty` shares each.
  static BookTop deep_book(Price bid, Price ask, Qty qty) {
    BookTop b;
    for (int i = 0; i < 5; ++i) {
      b.bids[i] = {bid - i, qty};
      b.asks[i] = {ask + i, qty};
    }
    b.bid_levels = b.ask_levels = 5;
    b.last = bid;
    b.phase = Phase::kContinuous;
    return b;
  }

  std::vector<Alert> eval(RuleEngine& engine, const Event& e, const BookTop& b) {
    Alert out[kAlertTypeCount];
    StageTimes t;
    t.recv_ns = mono_ns();
    t.book_ns = t.recv_ns + 1;
    t.features_ns = t.recv_ns + 2;
    const int n = engine.evaluate(e, b, row, t, out, kAlertTypeCount, &volume);
    return std::vector<Alert>(out, out + n);
  }

  static std::vector<Alert> of_type(const std::vector<Alert>& v, AlertType type) {
    std::vector<Alert> r;
    for (const auto& a : v) {
      if (a.type == type) r.push_back(a);
    }
    return r;
  }

  static const AlertValue* value(const Alert& a, const std::string& name) {
    for (int i = 0; i < a.value_count; ++i) {
      if (name == a.values[i].name) return &a.values[i];
    }
    return nullptr;
  }

  SymbolTable symbols;
  SymbolId sym = 0;
  uint64_t seq = 0;
  float row[kFeatureCount] = {};
  VolumeWindow volume{0.f, 0, 1000.0};  // the last 60 s: nothing traded, 1,000 expected
  // The last 60 s traded `multiple` × the expected volume.
  void set_volume_multiple(float multiple) {
    volume.multiple_60s = multiple;
    volume.volume_60s = Qty(multiple * 1000.f);
  }
};

}  // namespace ts::testing
