#include "features/feature_engine.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>

namespace ts {

namespace {

constexpr int64_t kSecNs = 1'000'000'000;
constexpr int kCloseRing = 512;  // seconds of log-mid closes kept (>= 301)
constexpr int kSecRing = 64;     // seconds of trade buckets kept (>= 61)
constexpr int kDepthRing = 16;   // seconds of depth closes kept (>= 11)
constexpr int kHorizons[4] = {1, 10, 60, 300};
constexpr double kBps = 1e4;

struct SecBucket {
  Qty vol = 0, buy = 0, sell = 0, large = 0;
  int64_t count = 0;
};

// Exponentially weighted mean and variance (West's incremental form); the first sample
// initialises the mean.
struct Ewm {
  double mean = 0, var = 0;
  int64_t n = 0;
  void add(double x, double a) {
    if (n == 0) {
      mean = x;
      var = 0;
    } else {
      const double d = x - mean;
      const double inc = a * d;
      mean += inc;
      var = (1 - a) * (var + d * inc);
    }
    ++n;
  }
};

// ln(x) for x near 1 by its series (|x - 1| < 0.1: error < 2e-7), std::log otherwise.
// PERF NOTE: depth changes on most L3 events; the series avoids a libm call on nearly all.
inline double log_near_one(double x) {
  const double r = x - 1.0;
  if (r > -0.1 && r < 0.1) return r - r * r * (0.5 - r * (1.0 / 3 - r * (0.25 - r * 0.2)));
  return std::log(x);
}

inline float imbalance(Qty b, Qty a) { return b + a > 0 ? float(double(b - a) / double(b + a)) : 0.f; }

inline Side opposite(Side s) { return s == Side::kBuy ? Side::kSell : s == Side::kSell ? Side::kBuy : Side::kNone; }

}  // namespace

// PERF NOTE: fields are grouped by how often they are touched. With 1,000 symbols per shard the
// state (mostly the window ring and the per-second rings, ~16 KB) cannot stay in L2; the fields
// read or written on every event come first and fill a few cache lines, so a symbol's event
// touches those lines plus its current trade bucket, not lines spread over 16 KB. With the row
// gating below, on_event went from 16.5% to 15.1% of the throughput profile before prefetching
// (ShardWorker::process); what is left is mostly the first miss on these lines.
struct FeatureEngine::State {
  explicit State(int rows) : window(rows) {}

  // --- Hot: every event. ---
  int64_t next_sec_ns = 0;  // start of the next second
  int64_t next_row_ns = 0;  // start of the next row interval
  int64_t sec = 0;          // current second (exch_ts_ns / 1e9)
  bool started = false;
  bool row_valid = false;   // every row group has been computed at least once
  bool have_mid = false;
  bool have_depth = false;
  uint32_t book_version = 0;        // levels_version of the book the book group was computed from
  const BookTop* book_src = nullptr;  // ... and which book (0 version or another book: recompute)
  double cur_mid = 0, cur_log_mid = 0;
  double prev_mid = 0, prev_log_mid = 0;  // the mid before cur_mid and its log (bid-ask bounce)
  double log_ref[4] = {};
  double cur_depth = 0, inv_depth_ref = 0;
  Price prev_close = -1;    // cached: prev close and limits derived from it
  double inv_prev_close = 0;
  Price limit_up = 0, limit_down = 0;
  float row[kFeatureCount] = {};

  // --- Warm: prints and second rolls. ---
  Qty vol10 = 0, buy10 = 0, sell10 = 0, vol60 = 0, large60 = 0;
  int64_t cnt10 = 0;
  Ewm base_vol, base_cnt;  // over completed, aligned 10 s buckets
  double vol_short = 0, vol_long = 0;
  TradeState trades;
  uint64_t order_id = 0;   // aggressor order number of the current aggressive order
  bool order_large = false;
  bool seen_print = false;
  bool skip_bucket = true; // the first aligned bucket after a start or break is partial
  Qty snap_cum = 0;

  // --- Cold: second rolls and first values only. ---
  int64_t row_idx = 0;
  double first_log_mid = 0;
  int64_t mid_first_sec = 0;
  // Realized volatility: EWMAs of squared 1 s returns (bps^2) and their weight sums.
  double var_s = 0, w_s = 0, var_l = 0, w_l = 0;
  double first_depth = 0;
  int64_t depth_first_sec = 0;
  // Prints per second; running sums over the last 10 s / 60 s (current second included) above.
  SecBucket bucket[kSecRing] = {};
  // Top-5 depth closes per second.
  double depth_close[kDepthRing] = {};
  // Mid: log closes per second.
  double log_close[kCloseRing] = {};

  FeatureWindow window;
};

FeatureEngine::FeatureEngine(const SymbolTable& symbols, FeatureOptions opts)
    : symbols_(symbols), opts_(opts) {
  opts_.window_rows = std::clamp(opts_.window_rows, 1, FeatureWindow::kMaxRows);
  a_short_ = 1 - std::exp(-1.0 / 30);   // 30 s time constant, per 1 s step
  a_long_ = 1 - std::exp(-1.0 / 600);   // 600 s
  a_base_ = 1 - std::exp(-1.0 / 60);    // 60 buckets of 10 s = 600 s
}

FeatureEngine::~FeatureEngine() = default;

FeatureEngine::State& FeatureEngine::state_for(SymbolId id) {
  if (id >= states_.size()) states_.resize(static_cast<size_t>(id) + 1);
  if (!states_[id]) states_[id] = std::make_unique<State>(opts_.window_rows);
  return *states_[id];
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

namespace {

// Closes second s: records its log mid and depth; with `stats`, feeds the 1 s return to the
// volatility EWMAs and a completed aligned 10 s bucket to the baselines.
void finalize_second(FeatureEngine::State& st, int64_t s, bool stats, double a_s, double a_l, double a_b) {
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
      st.base_vol.add(double(st.vol10), a_b);
      st.base_cnt.add(double(st.cnt10), a_b);
    }
  }
}

// Moves the 10 s / 60 s running sums to the window ending at second t.
void advance_to(FeatureEngine::State& st, int64_t t) {
  const SecBucket& out10 = st.bucket[(t - 10) & (kSecRing - 1)];
  st.vol10 -= out10.vol;
  st.cnt10 -= out10.count;
  st.buy10 -= out10.buy;
  st.sell10 -= out10.sell;
  const SecBucket& out60 = st.bucket[(t - 60) & (kSecRing - 1)];
  st.vol60 -= out60.vol;
  st.large60 -= out60.large;
  st.bucket[t & (kSecRing - 1)] = SecBucket{};
}

}  // namespace

const float* FeatureEngine::on_event(const Event& e, const BookTop& book) {
  State& st = state_for(e.symbol);
  const int64_t ts = e.exch_ts_ns;
  if (!st.started) {
    st.started = true;
    st.sec = ts / kSecNs;
    st.next_sec_ns = (st.sec + 1) * kSecNs;
    st.row_idx = ts / opts_.row_interval_ns;
    st.next_row_ns = (st.row_idx + 1) * opts_.row_interval_ns;
  }

  // Window rows: close every row interval that ended before this event (carry forward).
  if (ts >= st.next_row_ns) {
    const int64_t r = ts / opts_.row_interval_ns;
    const int64_t pushes = std::min<int64_t>(r - st.row_idx, opts_.window_rows);
    for (int64_t k = 0; k < pushes; ++k) st.window.window_push(st.row);
    st.row_idx = r;
    st.next_row_ns = (r + 1) * opts_.row_interval_ns;
  }

  // Seconds: close every second that ended before this event.
  const bool rolled = ts >= st.next_sec_ns;
  if (rolled) {
    const int64_t s_new = ts / kSecNs;
    const int64_t gap = s_new - st.sec;
    if (gap > opts_.session_gap_s) {
      // A break (lunch, halt, feed gap): carry the closes, restart the flow windows.
      finalize_second(st, st.sec, true, a_short_, a_long_, a_base_);
      for (int64_t s = std::max(st.sec + 1, s_new - kCloseRing); s < s_new; ++s) {
        finalize_second(st, s, false, a_short_, a_long_, a_base_);
      }
      std::fill(std::begin(st.bucket), std::end(st.bucket), SecBucket{});
      st.vol10 = st.buy10 = st.sell10 = st.vol60 = st.large60 = 0;
      st.cnt10 = 0;
      st.skip_bucket = true;
    } else {
      for (int64_t s = st.sec; s < s_new; ++s) {
        finalize_second(st, s, true, a_short_, a_long_, a_base_);
        advance_to(st, s + 1);
      }
    }
    st.sec = s_new;
    st.next_sec_ns = (s_new + 1) * kSecNs;
    if (st.have_mid) {
      for (int k = 0; k < 4; ++k) {
        const int64_t s = s_new - kHorizons[k];
        st.log_ref[k] = s >= st.mid_first_sec ? st.log_close[s & (kCloseRing - 1)] : st.first_log_mid;
      }
    }
    st.vol_short = st.w_s > 0 ? std::sqrt(st.var_s / st.w_s) : 0;
    st.vol_long = st.w_l > 0 ? std::sqrt(st.var_l / st.w_l) : 0;
    if (st.have_depth) {
      const int64_t s = s_new - 10;
      const double ref = s >= st.depth_first_sec ? st.depth_close[s & (kDepthRing - 1)] : st.first_depth;
      st.inv_depth_ref = ref > 0 ? 1.0 / ref : 0;
    }
  }

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
  if (book_changed) {
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

  // Prints.
  const RefData* ref = e.symbol < symbols_.size() ? &symbols_.ref(e.symbol) : nullptr;
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
    t.last_price = print_px;
    t.last_qty = print_qty;
    t.last_side = aggressor;
    t.last_notional = notional;
    t.last_ts_ns = ts;
    if (t.day_high == 0 || print_px > t.day_high) t.day_high = print_px;
    if (t.day_low == 0 || print_px < t.day_low) t.day_low = print_px;
  }

  // Reference prices.
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
    const double lot = ref ? double(ref->lot_size) : 1.0;
    if (st.base_vol.n >= opts_.baseline_min_buckets) {
      const double floor_v = std::max(opts_.volume_std_floor_lots * lot, opts_.std_floor_frac_of_mean * st.base_vol.mean);
      row[kVolumeZ] = float((double(st.vol10) - st.base_vol.mean) / std::max(std::sqrt(st.base_vol.var), floor_v));
      const double floor_c = std::max(opts_.count_std_floor, opts_.std_floor_frac_of_mean * st.base_cnt.mean);
      row[kTradeCountZ] = float((double(st.cnt10) - st.base_cnt.mean) / std::max(std::sqrt(st.base_cnt.var), floor_c));
    } else {
      row[kVolumeZ] = row[kTradeCountZ] = 0.f;
    }
    row[kTradeFlowImbalance] = imbalance(st.buy10, st.sell10);
    row[kLargeTradeRatio] = st.vol60 > 0 ? float(double(st.large60) / double(st.vol60)) : 0.f;
  }
  if (all || book_changed) {
    row[kDepthChange] = st.cur_depth > 0 && st.inv_depth_ref > 0 ? float(log_near_one(st.cur_depth * st.inv_depth_ref)) : 0.f;
  }
  const double last = book.last > 0 ? double(book.last) : mid;
  if (st.prev_close > 0 && last > 0) {
    row[kDistLimitUp] = st.limit_up > 0 ? float((double(st.limit_up) - last) * st.inv_prev_close) : 0.f;
    row[kDistLimitDown] = st.limit_down > 0 ? float((last - double(st.limit_down)) * st.inv_prev_close) : 0.f;
    row[kRetFromPrevClose] = float(last * st.inv_prev_close - 1.0);
  } else {
    row[kDistLimitUp] = row[kDistLimitDown] = row[kRetFromPrevClose] = 0.f;
  }
  st.row_valid = true;
  return row;
}

}  // namespace ts
