// The feature engine's session handling (docs/features.md "Phases"): a symbol's first event,
// session starts after auctions, breaks and gaps, events outside continuous trading, the second
// clock that feeds volatility and the volume profile, and the reference prices.
#include <algorithm>
#include <cmath>

#include "features/feature_state.h"

namespace ts {

namespace feature_detail {

// Closes second s: records its log mid and depth; with `stats`, feeds the 1 s return to the
// volatility EWMAs and a completed aligned 10 s bucket to the volume profile.
void finalize_second(FeatureEngine::State& st, int64_t s, bool stats, double a_s, double a_l,
                     const ProfileParams* pp) {
  st.log_close[s & (kCloseRing - 1)] = st.cur_log_mid;
  st.depth_close[s & (kDepthRing - 1)] = st.cur_depth;
  if (!stats) return;
  if (st.have_mid && s - 1 >= st.mid_first_sec) {
    const double r = (st.log_close[s & (kCloseRing - 1)] - st.log_close[(s - 1) & (kCloseRing - 1)]) * kBps;
    st.var_s = (1 - a_s) * st.var_s + a_s * r * r;
    st.w_s = (1 - a_s) * st.w_s + a_s;
    st.var_l = (1 - a_l) * st.var_l + a_l * r * r;
    st.w_l = (1 - a_l) * st.w_l + a_l;
  }
  if ((s + 1) % 10 == 0) {
    if (st.skip_bucket) {
      st.skip_bucket = false;
    } else {
      st.profile.add(profile_bin(st, s - 9), double(st.vol10), double(st.cnt10), *pp);
    }
  }
}

// Moves the second to s_new without feeding any statistics (closes and depth carried).
void carry_to(FeatureEngine::State& st, int64_t s_new) {
  for (int64_t s = std::max(st.sec, s_new - kCloseRing); s < s_new; ++s) finalize_second(st, s, false, 0, 0, nullptr);
  st.sec = s_new;
  st.next_sec_ns = (s_new + 1) * kSecNs;
}

void clear_flow(FeatureEngine::State& st) {
  std::fill(std::begin(st.bucket), std::end(st.bucket), SecBucket{});
  st.vol10 = st.buy10 = st.sell10 = st.vol60 = st.large60 = 0;
  st.cnt10 = st.cnt60 = 0;
  st.skip_bucket = true;
}


}  // namespace feature_detail

using namespace feature_detail;

void FeatureEngine::refresh_expectation(State& st) const {
  const int bin = profile_bin(st, st.sec);
  st.expect = st.profile.expect(bin, profile_params_);
  const uint64_t need = uint64_t(std::max(opts_.baseline_min_buckets, 0));
  st.expect_ready = st.profile.level_n >= need && st.profile.level_n > 0;
}

void FeatureEngine::init_symbol(State& st, SymbolId id, const BookTop& book, int64_t ts) {
  st.started = true;
  st.sec = ts / kSecNs;
  st.next_sec_ns = (st.sec + 1) * kSecNs;
  st.row_idx = ts / opts_.row_interval_ns;
  st.next_row_ns = (st.row_idx + 1) * opts_.row_interval_ns;
  MarketKind market = MarketKind::kUnknown;
  if (book.schedule_market != 0) {
    market = MarketKind(book.schedule_market);
    st.offset_s = book.local_offset_s;
    st.has_local = true;
  } else if (id < symbols_.size()) {
    const Market m = symbols_.ref(id).market;
    if (m == Market::kShanghai || m == Market::kShenzhen || m == Market::kBeijing) {
      market = MarketKind::kChinaA;
      st.offset_s = 8 * 3600;  // Asia/Shanghai has no DST
      st.has_local = true;
    }
  }
  if (st.profile.level_n == 0 || st.profile.market == MarketKind::kUnknown) st.profile.market = market;
  refresh_expectation(st);
}

void FeatureEngine::start_session(State& st, int64_t ts, bool from_continuous, bool restart_returns) {
  const int64_t s_new = ts / kSecNs;
  if (from_continuous) finalize_second(st, st.sec, true, a_short_, a_long_, &profile_params_);
  if (s_new > st.sec) carry_to(st, s_new);
  const int64_t day = floor_div_i(s_new + st.offset_s, kDaySec);
  const bool new_day = st.cont_day == INT64_MIN ||
                       (st.has_local ? day != st.cont_day : ts - st.last_cont_ns > opts_.day_gap_s * kSecNs);
  st.cont_day = day;
  clear_flow(st);
  if (new_day) {
    st.var_s = st.w_s = st.var_l = st.w_l = 0;
    st.vol_short = st.vol_long = 0;
  }
  // Returns restart here: measured from the auction match when one was printed since the last
  // continuous event (the opening), else from the session's first mid (lunch, halts, gaps).
  if (restart_returns) {
    st.have_mid = false;
    st.cur_mid = st.prev_mid = 0;
  }
  if (restart_returns && st.auction_px > 0) {
    st.have_mid = true;
    st.first_log_mid = std::log(double(st.auction_px));
    st.cur_log_mid = st.prev_log_mid = st.first_log_mid;
    st.mid_first_sec = s_new;
    for (double& r : st.log_ref) r = st.first_log_mid;
  }
  st.auction_px = 0;
  st.paused = false;
  st.row_valid = false;
}

void FeatureEngine::update_reference_group(State& st, const BookTop& book, const RefData* ref, double mid) {
  const Price pc = book.prev_close > 0 ? book.prev_close : (ref ? ref->prev_close : 0);
  if (pc != st.prev_close) {
    st.prev_close = pc;
    st.inv_prev_close = pc > 0 ? 1.0 / double(pc) : 0;
    if (pc > 0 && ref && ref->prev_close == pc && ref->limit_up > 0) {
      st.limit_up = ref->limit_up;
      st.limit_down = ref->limit_down;
    } else {
      const double pct = ref ? ref->limit_pct : 0;
      st.limit_up = limit_up_price(pc, pct);
      st.limit_down = limit_down_price(pc, pct);
    }
  }
  float* row = st.row;
  const double last = book.last > 0 ? double(book.last) : mid;
  if (st.prev_close > 0 && last > 0) {
    row[kDistLimitUp] = st.limit_up > 0 ? float((double(st.limit_up) - last) * st.inv_prev_close) : 0.f;
    row[kDistLimitDown] = st.limit_down > 0 ? float((last - double(st.limit_down)) * st.inv_prev_close) : 0.f;
    row[kRetFromPrevClose] = float(last * st.inv_prev_close - 1.0);
  } else {
    row[kDistLimitUp] = row[kDistLimitDown] = row[kRetFromPrevClose] = 0.f;
  }
}

void FeatureEngine::record_print_state(State& st, int64_t ts, Price px, Qty qty, Side aggressor, double notional) {
  TradeState& t = st.trades;
  t.last_price = px;
  t.last_qty = qty;
  t.last_side = aggressor;
  t.last_notional = notional;
  t.last_ts_ns = ts;
  // A new exchange-local day starts a new high and low (the auction match is the day's first).
  const int64_t day = floor_div_i(ts / kSecNs + st.offset_s, kDaySec);
  if (day != st.trade_day) {
    st.trade_day = day;
    t.day_high = t.day_low = 0;
  }
  if (t.day_high == 0 || px > t.day_high) t.day_high = px;
  if (t.day_low == 0 || px < t.day_low) t.day_low = px;
}

// Outside continuous trading (auctions, the 09:25 pause, lunch, closed, halted): the book shape
// and the reference prices follow the book; prints (auction matches) set the trade state and the
// auction price but are never volume; the indicative mid is never a return.
const float* FeatureEngine::on_pause_event(State& st, const Event& e, const BookTop& book, const RefData* ref) {
  const int64_t ts = e.exch_ts_ns;
  if (!st.paused && st.cont_day != INT64_MIN && ts >= st.next_sec_ns) {
    finalize_second(st, st.sec, true, a_short_, a_long_, &profile_params_);  // the session's last second
  }
  st.paused = true;
  if (ts >= st.next_sec_ns) carry_to(st, ts / kSecNs);
  const bool book_changed = !st.row_valid || book.levels_version == 0 || book.levels_version != st.book_version ||
                            &book != st.book_src;
  if (book_changed) update_book_group(st, book);
  Price px = 0;
  Qty qty = 0;
  Side aggressor = Side::kNone;
  if (e.kind == EventKind::kTrade) {
    px = e.trade.price;
    qty = e.trade.qty;
    aggressor = e.trade.aggressor;
  } else if (e.kind == EventKind::kOrderExecute) {
    px = e.order.price;
    qty = e.order.qty;
    aggressor = opposite(e.order.side);
  } else if (e.kind == EventKind::kSnapshot && !st.seen_print) {
    if (book.cum_volume > st.snap_cum && book.last > 0) {
      px = book.last;
      qty = book.cum_volume - st.snap_cum;
    }
    st.snap_cum = book.cum_volume;  // the auction's volume never shows up as a later print
  }
  if (px > 0 && qty > 0) {
    if (e.kind != EventKind::kSnapshot) st.seen_print = true;
    st.auction_px = px;
    record_print_state(st, ts, px, qty, aggressor, double(px) * (ref ? ref->tick_size : 0.01) * double(qty));
  }
  update_reference_group(st, book, ref, book.mid());
  float* row = st.row;
  for (int k = 0; k < 4; ++k) row[kRet1s + k] = 0.f;
  row[kVolumeZ] = row[kTradeCountZ] = row[kTradeFlowImbalance] = row[kLargeTradeRatio] = 0.f;
  row[kDepthChange] = 0.f;
  st.volume = VolumeWindow{};
  st.row_valid = false;  // the first continuous event recomputes every group
  return row;
}

}  // namespace ts
