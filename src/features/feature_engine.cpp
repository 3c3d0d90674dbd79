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

constexpr int64_t kDaySec = 86400;

inline int64_t floor_div_i(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

inline bool continuous_phase(Phase p) { return p == Phase::kContinuous || p == Phase::kUnknown; }

struct SecBucket {
  Qty vol = 0, buy = 0, sell = 0, large = 0;
  int64_t count = 0;
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
  ProfileExpectation expect;  // of the current second's profile bin
  bool expect_ready = false;  // enough buckets learned for z-scores
  double vol_short = 0, vol_long = 0;
  TradeState trades;
  uint64_t order_id = 0;   // aggressor order number of the current aggressive order
  bool order_large = false;
  bool seen_print = false;
  bool skip_bucket = true; // the first aligned bucket after a start or break is partial
  Qty snap_cum = 0;

  // --- Phases: session starts and breaks (docs/features.md). ---
  bool paused = false;      // in a stretch outside continuous trading
  bool has_local = false;   // the symbol's exchange-local offset is known
  int32_t offset_s = 0;     // exchange-local time - UTC, s
  Price auction_px = 0;     // the last print outside continuous trading (the auction match)
  int64_t cont_day = INT64_MIN;  // local day of the current session
  int64_t last_cont_ns = 0;      // exchange time of the last continuous event
  int64_t trade_day = INT64_MIN; // local day of day_high / day_low

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
  VolumeProfile profile;
};

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

// The profile bin of UTC second s.
inline int profile_bin(const FeatureEngine::State& st, int64_t s) {
  const int64_t local = s + st.offset_s;
  return int((local - floor_div_i(local, kDaySec) * kDaySec) / kProfileBinSeconds);
}

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

void clear_flow(FeatureEngine::State& st) {
  std::fill(std::begin(st.bucket), std::end(st.bucket), SecBucket{});
  st.vol10 = st.buy10 = st.sell10 = st.vol60 = st.large60 = 0;
  st.cnt10 = 0;
  st.skip_bucket = true;
}

}  // namespace

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
  st.row_valid = false;  // the first continuous event recomputes every group
  return row;
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
    const double lot = ref ? double(ref->lot_size) : 1.0;
    if (st.expect_ready) {
      const ProfileExpectation& x = st.expect;
      const double floor_v = std::max(opts_.volume_std_floor_lots * lot, opts_.std_floor_frac_of_mean * x.vol_mean);
      row[kVolumeZ] = float((double(st.vol10) - x.vol_mean) / std::max(x.vol_sd, floor_v));
      const double floor_c = std::max(opts_.count_std_floor, opts_.std_floor_frac_of_mean * x.cnt_mean);
      row[kTradeCountZ] = float((double(st.cnt10) - x.cnt_mean) / std::max(x.cnt_sd, floor_c));
    } else {
      row[kVolumeZ] = row[kTradeCountZ] = 0.f;
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
