#include "features/feature_engine.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

#include "core/instrument_ref.h"
#include "features/feature_state.h"

namespace ts {

using namespace feature_detail;

FeatureEngine::FeatureEngine(const SymbolTable& symbols, FeatureOptions opts)
    : symbols_(symbols), opts_(opts) {
  opts_.window_rows = std::clamp(opts_.window_rows, 1, FeatureWindow::kMaxRows);
  a_short_ = 1 - std::exp(-1.0 / 30);   // 30 s time constant, per 1 s step
  a_long_ = 1 - std::exp(-1.0 / 600);   // 600 s
  profile_params_.prior_buckets = opts_.profile_prior_buckets;
  profile_params_.bin_memory_buckets = opts_.profile_memory_days * (kProfileBinSeconds / 10);
  profile_params_.level_memory_buckets = opts_.profile_level_buckets;
}

FeatureEngine::~FeatureEngine() = default;

FeatureEngine::State& FeatureEngine::state_for(SymbolId id) {
  if (id >= states_.size()) states_.resize(static_cast<size_t>(id) + 1);
  if (!states_[id]) {
    states_[id] = std::make_unique<State>(opts_.window_rows);
    if (profiles_in_ != nullptr && id < symbols_.size()) {
      if (const VolumeProfile* p = profiles_in_->find(symbols_.name(id))) states_[id]->profile = *p;
    }
  }
  return *states_[id];
}

void FeatureEngine::save_profiles(ProfileStore& out) const {
  for (size_t id = 0; id < states_.size(); ++id) {
    if (states_[id] && id < symbols_.size() && states_[id]->profile.level_n > 0) {
      out.put(symbols_.name(SymbolId(id)), states_[id]->profile);
    }
  }
}

const VolumeProfile* FeatureEngine::profile(SymbolId id) const {
  return id < states_.size() && states_[id] ? &states_[id]->profile : nullptr;
}

void FeatureEngine::prefetch(SymbolId id) const {
  if (id < symbols_.size()) {
    const RefData& r = symbols_.ref(id);
    __builtin_prefetch(&r.tick_size);
    __builtin_prefetch(&r.limit_down);
  }
  if (id >= states_.size() || !states_[id]) return;
  const char* p = reinterpret_cast<const char*>(states_[id].get());
  for (size_t off = 0; off < offsetof(State, row_idx); off += 64) __builtin_prefetch(p + off);
}

namespace {
const FeatureWindow kEmptyWindow(1);
const float kZeroRow[kFeatureCount] = {};
const TradeState kNoTrades{};
const VolumeWindow kNoVolume{};
}  // namespace

const FeatureWindow& FeatureEngine::window(SymbolId id) const {
  return id < states_.size() && states_[id] ? states_[id]->window : kEmptyWindow;
}
const float* FeatureEngine::row(SymbolId id) const {
  return id < states_.size() && states_[id] ? states_[id]->row : kZeroRow;
}
const TradeState& FeatureEngine::trades(SymbolId id) const {
  return id < states_.size() && states_[id] ? states_[id]->trades : kNoTrades;
}
const VolumeWindow& FeatureEngine::volume(SymbolId id) const {
  return id < states_.size() && states_[id] ? states_[id]->volume : kNoVolume;
}

void FeatureEngine::update_book_group(State& st, const BookTop& book) {
  st.book_version = book.levels_version;
  st.book_src = &book;
  const Qty bid1 = book.bids[0].qty, ask1 = book.asks[0].qty;
  Qty bid5 = 0, ask5 = 0, bid10 = 0, ask10 = 0;
  for (int k = 0; k < kBookLevels; ++k) {
    if (k == 5) {
      bid5 = bid10;
      ask5 = ask10;
    }
    bid10 += book.bids[k].qty;
    ask10 += book.asks[k].qty;
  }
  st.cur_depth = double(bid5 + ask5);
  if (!st.have_depth && st.cur_depth > 0) {
    st.have_depth = true;
    st.first_depth = st.cur_depth;
    st.depth_first_sec = st.sec;
    st.inv_depth_ref = 1.0 / st.first_depth;
  }
  float* row = st.row;
  row[kImbalance1] = imbalance(bid1, ask1);
  row[kImbalance5] = imbalance(bid5, ask5);
  row[kImbalance10] = imbalance(bid10, ask10);
  if (book.has_bbo()) {
    const double bp = double(book.bids[0].price), ap = double(book.asks[0].price);
    row[kSpreadTicks] = float(ap - bp);
    const double micro = (bp * double(ask1) + ap * double(bid1)) / double(bid1 + ask1);
    row[kMicropriceDev] = float(micro - 0.5 * (bp + ap));
  } else {
    row[kSpreadTicks] = row[kMicropriceDev] = 0.f;
  }
}

const float* FeatureEngine::on_event(const Event& e, const BookTop& book) {
  State& st = state_for(e.symbol);
  const int64_t ts = e.exch_ts_ns;
  if (!st.started) init_symbol(st, e.symbol, book, ts);

  // Window rows: close every row interval that ended before this event (carry forward).
  if (ts >= st.next_row_ns) {
    const int64_t r = ts / opts_.row_interval_ns;
    const int64_t pushes = std::min<int64_t>(r - st.row_idx, opts_.window_rows);
    for (int64_t k = 0; k < pushes; ++k) st.window.window_push(st.row);
    st.row_idx = r;
    st.next_row_ns = (r + 1) * opts_.row_interval_ns;
  }

  const RefData* ref = e.symbol < symbols_.size() ? &symbols_.ref(e.symbol) : nullptr;
  if (!continuous_phase(book.phase)) return on_pause_event(st, e, book, ref);

  // Session starts: the first continuous event after a pause (auction, lunch, halt, closed), or
  // after a gap without events longer than session_gap_s (feeds without phases).
  const bool rolled = ts >= st.next_sec_ns;
  if (st.paused || st.cont_day == INT64_MIN) {
    start_session(st, ts, false, true);
  } else if (rolled && ts / kSecNs - st.sec > opts_.session_gap_s) {
    // A quiet stretch inside a known continuous phase keeps the returns' history; without phase
    // information the gap may be a lunch break or a night: returns restart.
    start_session(st, ts, true, book.phase == Phase::kUnknown);
  } else if (rolled) {
    // Seconds: close every second that ended before this event.
    const int64_t s_new = ts / kSecNs;
    for (int64_t s = st.sec; s < s_new; ++s) {
      finalize_second(st, s, true, a_short_, a_long_, &profile_params_);
      advance_to(st, s + 1);
    }
    st.sec = s_new;
    st.next_sec_ns = (s_new + 1) * kSecNs;
  }
  if (rolled || !st.row_valid) {
    if (st.have_mid) {
      for (int k = 0; k < 4; ++k) {
        const int64_t s = st.sec - kHorizons[k];
        st.log_ref[k] = s >= st.mid_first_sec ? st.log_close[s & (kCloseRing - 1)] : st.first_log_mid;
      }
    }
    st.vol_short = st.w_s > 0 ? std::sqrt(st.var_s / st.w_s) : 0;
    st.vol_long = st.w_l > 0 ? std::sqrt(st.var_l / st.w_l) : 0;
    if (st.have_depth) {
      const int64_t s = st.sec - 10;
      const double dref = s >= st.depth_first_sec ? st.depth_close[s & (kDepthRing - 1)] : st.first_depth;
      st.inv_depth_ref = dref > 0 ? 1.0 / dref : 0;
    }
    refresh_expectation(st);
  }
  st.last_cont_ns = ts;

  // Mid (one log per change of mid).
  const double mid = book.mid();
  const bool mid_changed = mid > 0 && mid != st.cur_mid;
  if (mid_changed) {
    // PERF NOTE: the mid mostly flips between two values (the touch moving a tick and back);
    // remembering the previous one's log skips about half of the libm calls, same values.
    const double log_mid = mid == st.prev_mid ? st.prev_log_mid : std::log(mid);
    st.prev_mid = st.cur_mid;
    st.prev_log_mid = st.cur_log_mid;
    st.cur_mid = mid;
    st.cur_log_mid = log_mid;
    if (!st.have_mid) {
      st.have_mid = true;
      st.first_log_mid = st.cur_log_mid;
      st.mid_first_sec = st.sec;
      for (double& r : st.log_ref) r = st.first_log_mid;
    }
  }

  // Book shape: only when the levels changed since the last event of this symbol.
  // PERF NOTE: most events (prints, changes deeper than 10 levels, same-level repeats) leave the
  // top 10 as it was; the sums, imbalances, spread and microprice are then the row's values.
  const bool book_changed = !st.row_valid || book.levels_version == 0 || book.levels_version != st.book_version ||
                            &book != st.book_src;
  if (book_changed) update_book_group(st, book);

  // Prints.
  Price print_px = 0;
  Qty print_qty = 0;
  Side aggressor = Side::kNone;
  uint64_t agg_id = 0;
  if (e.kind == EventKind::kTrade) {
    print_px = e.trade.price;
    print_qty = e.trade.qty;
    aggressor = e.trade.aggressor;
    agg_id = aggressor == Side::kBuy ? e.trade.buy_order_id : aggressor == Side::kSell ? e.trade.sell_order_id : 0;
  } else if (e.kind == EventKind::kOrderExecute) {
    print_px = e.order.price;
    print_qty = e.order.qty;
    aggressor = opposite(e.order.side);  // side = the resting order's
  } else if (e.kind == EventKind::kSnapshot && !st.seen_print) {
    // Snapshot-only feeds: volume from the cumulative total, aggressor unknown.
    if (book.cum_volume > st.snap_cum && st.snap_cum > 0) {
      print_px = book.last;
      print_qty = book.cum_volume - st.snap_cum;
    }
    st.snap_cum = book.cum_volume;
  }
  const bool printed = print_qty > 0 && print_px > 0;
  if (printed) {
    if (e.kind != EventKind::kSnapshot) st.seen_print = true;
    const double notional = double(print_px) * (ref ? ref->tick_size : 0.01) * double(print_qty);
    SecBucket& b = st.bucket[st.sec & (kSecRing - 1)];
    b.vol += print_qty;
    b.count += 1;
    st.vol10 += print_qty;
    st.cnt10 += 1;
    st.vol60 += print_qty;
    st.cnt60 += 1;
    if (aggressor == Side::kBuy) {
      b.buy += print_qty;
      st.buy10 += print_qty;
    } else if (aggressor == Side::kSell) {
      b.sell += print_qty;
      st.sell10 += print_qty;
    }
    TradeState& t = st.trades;
    const bool same_order = aggressor != Side::kNone && ts == t.last_ts_ns && aggressor == t.order_side &&
                            agg_id == st.order_id && t.order_qty > 0;
    if (same_order) {
      t.order_qty += print_qty;
      t.order_notional += notional;
    } else {
      t.order_qty = print_qty;
      t.order_notional = notional;
      t.order_side = aggressor;
      st.order_id = agg_id;
      st.order_large = false;
    }
    const bool large = (opts_.large_trade_qty > 0 && t.order_qty >= opts_.large_trade_qty) ||
                       t.order_notional >= opts_.large_trade_notional;
    if (large) {
      const Qty add = st.order_large ? print_qty : t.order_qty;  // the whole order once it is large
      st.order_large = true;
      b.large += add;
      st.large60 += add;
    }
    record_print_state(st, ts, print_px, print_qty, aggressor, notional);
  }

  // The row: each group only when one of its inputs changed (the book group is above).
  float* row = st.row;
  const bool all = rolled || !st.row_valid;
  if (all || mid_changed) {
    for (int k = 0; k < 4; ++k) row[kRet1s + k] = st.have_mid ? float((st.cur_log_mid - st.log_ref[k]) * kBps) : 0.f;
  }
  if (all) {
    row[kVolShort] = float(st.vol_short);
    row[kVolLong] = float(st.vol_long);
    row[kVolRatio] = float(st.vol_short / std::max(st.vol_long, opts_.vol_floor_bps));
  }
  if (all || printed) {
    // Against the symbol's intraday profile (volume_profile.h): what this time of day usually trades.
    // One trading lot in size increments: the board lot, or for a coin the venue's minimum order
    // (core/instrument_ref.h): 10 lots of BTC were 10 × 0.00001 BTC before, no floor at all.
    const double lot = ref ? lot_increments(*ref, mid > 0 ? mid : double(book.last)) : 1.0;
    if (st.expect_ready) {
      const ProfileExpectation& x = st.expect;
      const double floor_v = std::max(opts_.volume_std_floor_lots * lot, opts_.std_floor_frac_of_mean * x.vol_mean);
      row[kVolumeZ] = float((double(st.vol10) - x.vol_mean) / std::max(x.vol_sd, floor_v));
      const double floor_c = std::max(opts_.count_std_floor, opts_.std_floor_frac_of_mean * x.cnt_mean);
      row[kTradeCountZ] = float((double(st.cnt10) - x.cnt_mean) / std::max(x.cnt_sd, floor_c));
      // The 60 s volume as a multiple of the 60 s this time of day usually trades: a burst is
      // volume that lasts, not one block print in a 10 s window (docs/features.md).
      // A multiple counts only when the excess over the expectation is itself worth noting (the
      // z-scores' floors over 60 s): on a symbol that usually trades a print a minute, three
      // prints are not a burst.
      VolumeWindow& w = st.volume;
      w.volume_60s = st.vol60;
      w.expected_60s = std::max(6.0 * x.vol_mean, lot);
      const bool vol_excess = double(st.vol60) - 6.0 * x.vol_mean >= 6.0 * opts_.volume_std_floor_lots * lot;
      w.multiple_60s = vol_excess ? float(double(st.vol60) / w.expected_60s) : 0.f;
      w.count_60s = st.cnt60;
      w.expected_count_60s = std::max(6.0 * x.cnt_mean, 1.0);
      const bool cnt_excess = double(st.cnt60) - 6.0 * x.cnt_mean >= 6.0 * opts_.count_std_floor;
      w.count_multiple_60s = cnt_excess ? float(double(st.cnt60) / w.expected_count_60s) : 0.f;
    } else {
      row[kVolumeZ] = row[kTradeCountZ] = 0.f;
      st.volume = VolumeWindow{};
    }
    row[kTradeFlowImbalance] = imbalance(st.buy10, st.sell10);
    row[kLargeTradeRatio] = st.vol60 > 0 ? float(double(st.large60) / double(st.vol60)) : 0.f;
  }
  if (all || book_changed) {
    row[kDepthChange] = st.cur_depth > 0 && st.inv_depth_ref > 0 ? float(log_near_one(st.cur_depth * st.inv_depth_ref)) : 0.f;
  }
  update_reference_group(st, book, ref, mid);
  st.row_valid = true;
  return row;
}

}  // namespace ts
