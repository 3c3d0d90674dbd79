#pragma once
// Private to the feature engine's .cpp files (feature_engine.cpp: the per-event path and the book
// group; feature_sessions.cpp: session starts, pauses, the second clock and reference prices):
// the per-symbol State and the helpers both use. Not part of the features API.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "features/feature_engine.h"

namespace ts {
namespace feature_detail {

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

}  // namespace feature_detail

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
  int64_t cnt10 = 0, cnt60 = 0;
  ProfileExpectation expect;  // of the current second's profile bin
  bool expect_ready = false;  // enough buckets learned for z-scores
  VolumeWindow volume;        // the last 60 s against the profile (volume_burst)
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
  feature_detail::SecBucket bucket[feature_detail::kSecRing] = {};
  // Top-5 depth closes per second.
  double depth_close[feature_detail::kDepthRing] = {};
  // Mid: log closes per second.
  double log_close[feature_detail::kCloseRing] = {};

  FeatureWindow window;
  VolumeProfile profile;
};

namespace feature_detail {

// The profile bin of UTC second s.
inline int profile_bin(const FeatureEngine::State& st, int64_t s) {
  const int64_t local = s + st.offset_s;
  return int((local - floor_div_i(local, kDaySec) * kDaySec) / kProfileBinSeconds);
}

// Closes second s: records its log mid and depth; with `stats`, feeds the 1 s return to the
// volatility EWMAs and a completed aligned 10 s bucket to the volume profile.
void finalize_second(FeatureEngine::State& st, int64_t s, bool stats, double a_s, double a_l, const ProfileParams* pp);
// Moves the second to s_new without feeding any statistics (closes and depth carried).
void carry_to(FeatureEngine::State& st, int64_t s_new);
// Moves the 10 s / 60 s running sums to the window ending at second t.
inline void advance_to(FeatureEngine::State& st, int64_t t) {
  const SecBucket& out10 = st.bucket[(t - 10) & (kSecRing - 1)];
  st.vol10 -= out10.vol;
  st.cnt10 -= out10.count;
  st.buy10 -= out10.buy;
  st.sell10 -= out10.sell;
  const SecBucket& out60 = st.bucket[(t - 60) & (kSecRing - 1)];
  st.vol60 -= out60.vol;
  st.large60 -= out60.large;
  st.cnt60 -= out60.count;
  st.bucket[t & (kSecRing - 1)] = SecBucket{};
}

void clear_flow(FeatureEngine::State& st);

}  // namespace feature_detail
}  // namespace ts
