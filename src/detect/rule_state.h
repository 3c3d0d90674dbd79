#pragma once
// Per-symbol rule state: cooldown/hysteresis gates, the recent-high and queue-peak trackers and
// the limit seal flags. Owned by one RuleEngine (one shard thread); no sharing, no locks.
// All times are exchange time (ns since the Unix epoch): replays behave like the live day.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/event.h"
#include "detect/alert.h"

namespace ts {

// Cooldown + hysteresis for one (symbol, alert type).
//  - Never fires twice within cooldown_ns.
//  - After firing, the rule is disarmed; it re-arms once its value ratio (value / threshold,
//    1.0 = at the threshold) falls below rearm_fraction.
//  - A condition that has held continuously since the last alert re-fires once per cooldown
//    (a sustained move is one alert per cooldown period, not one per event). A condition that
//    dropped out and came back without re-arming (flicker around the threshold) stays quiet.
struct RuleGate {
  int64_t last_fire_ns = std::numeric_limits<int64_t>::min() / 2;
  bool armed = true;
  bool held = false;  // condition true on every evaluation since the last alert
  int64_t true_since_ns = kNever;  // start of the current unbroken run of true evaluations
  static constexpr int64_t kNever = std::numeric_limits<int64_t>::min();

  // Call when the condition is false: cheap path.
  void observe_false(double ratio, double rearm_fraction) {
    if (!armed && ratio < rearm_fraction) armed = true;
    held = false;
    true_since_ns = kNever;
  }
  // Call when the condition is true; returns whether to fire now (and records the firing).
  // `hold_ns`: the condition must have been true without a break for this long (persistence:
  // a book that is lopsided for one event is noise, one that stays lopsided is news).
  bool observe_true(int64_t now_ns, int64_t cooldown_ns, int64_t hold_ns = 0) {
    if (true_since_ns == kNever) true_since_ns = now_ns;
    if (now_ns - true_since_ns < hold_ns) return false;
    if (now_ns - last_fire_ns < cooldown_ns) return false;
    if (!armed && !held) return false;
    last_fire_ns = now_ns;
    armed = false;
    held = true;
    return true;
  }
};

// Maximum of a value over a sliding window of exchange time, approximated with kBuckets
// buckets of window/kBuckets each: the max covers between (kBuckets-1)/kBuckets of the window
// and the whole window. O(kBuckets) per max(), O(1) per update(); no allocation.
class WindowMax {
 public:
  static constexpr int kBuckets = 16;
  void reset(int64_t window_ns) {
    width_ns_ = window_ns / kBuckets > 0 ? window_ns / kBuckets : 1;
    for (auto& b : buckets_) b = Bucket{};
  }
  void update(int64_t ts_ns, int64_t value) {
    const int64_t id = ts_ns / width_ns_;
    Bucket& b = buckets_[static_cast<uint64_t>(id) % kBuckets];
    if (b.id != id) {
      b.id = id;
      b.max = value;
    } else if (value > b.max) {
      b.max = value;
    }
  }
  // Max over the buckets within the window ending at ts_ns; 0 when empty.
  int64_t max(int64_t ts_ns) const {
    const int64_t id = ts_ns / width_ns_;
    int64_t m = 0;
    for (const Bucket& b : buckets_) {
      if (b.id > id - kBuckets && b.id <= id && b.max > m) m = b.max;
    }
    return m;
  }

 private:
  struct Bucket {
    int64_t id = std::numeric_limits<int64_t>::min() / 2;
    int64_t max = 0;
  };
  int64_t width_ns_ = 1;
  Bucket buckets_[kBuckets];
};

// A symbol's typical level of a positive quantity (spread, one side's depth, one minute's
// notional flow), with bounded influence: every sample is first clipped to
// [level / clip, level × clip], so one outlier moves the level by at most a factor
// 1 + alpha·(clip − 1), while a lasting shift is learned geometrically at up to that factor per
// step. Every sample counts, alerting or not: a lasting change becomes the new normal.
struct RobustLevel {
  double level = 0;
  int64_t samples = 0;
  int64_t last_ns = std::numeric_limits<int64_t>::min();
  int64_t first_ns = std::numeric_limits<int64_t>::min();  // first add_at() sample

  // One sample with weight alpha in [0, 1]. The first sample sets the level. clip <= 0: no
  // clipping (a quantity that is bounded already); otherwise a level of 0 is re-set by the next
  // sample (a multiplicative clip cannot leave 0).
  void add(double x, double alpha, double clip) {
    if (!(x >= 0)) return;
    if (samples++ == 0 || (clip > 0 && level <= 0)) {
      level = x;
      return;
    }
    const double clipped = clip > 0 ? std::clamp(x, level / clip, level * clip) : x;
    level += alpha * (clipped - level);
  }
  // A quantity that holds over time (a spread, a depth) is sampled at most every kStepNs of
  // exchange time; due() says whether the next add_at() would take a sample.
  // PERF NOTE: a busy book changes every few µs; sampling every 50 ms keeps the quiet path at a
  // few ns (RuleGateTest.QuietEventCost) and changes nothing a tau of a minute can see.
  static constexpr int64_t kStepNs = 50'000'000;
  bool due(int64_t ts_ns) const {
    return last_ns == std::numeric_limits<int64_t>::min() || ts_ns - last_ns >= kStepNs;
  }
  // Its weight is the exchange time since the previous sample: alpha = dt / (tau + dt) (1 − e^(−dt/tau)
  // to first order, and 1 after a long gap). No-op unless due().
  void add_at(int64_t ts_ns, double x, double tau_ns, double clip) {
    if (!due(ts_ns)) return;
    const double dt = last_ns == std::numeric_limits<int64_t>::min() ? 0.0 : double(ts_ns - last_ns);
    if (first_ns == std::numeric_limits<int64_t>::min()) first_ns = ts_ns;
    last_ns = ts_ns;
    add(x, dt / (tau_ns + dt), clip);
  }
  // A break in trading (lunch, halt, overnight): the time it lasted is no time the level held
  // for anyone, so the next sample weighs one step, not the break (before, the first sample at
  // 13:00 weighed 90 minutes: alpha ~1, the typical spread and its dispersion became that one
  // sample, and a stock whose spread routinely strays alerted at 13:00 as if it never did).
  void skip_break(int64_t ts_ns) {
    if (last_ns != std::numeric_limits<int64_t>::min()) last_ns = ts_ns - kStepNs;
  }
  // Trusted once it has `min_samples` samples spread over at least one time constant: in its
  // first minutes a level knows only those minutes (a symbol's opening spread and depth).
  bool trusted(int64_t min_samples, double tau_ns) const {
    return samples >= min_samples && first_ns != std::numeric_limits<int64_t>::min() &&
           double(last_ns - first_ns) >= tau_ns;
  }
};

// A symbol's own spread distribution: the share of recent time its spread spent in each bin
// (one bin per tick up to kExactTicks, then bins 2^(1/4) wide up to ~1e6 ticks), an EWMA of
// one-hot samples taken with the typical spread (RobustLevel::add_at's dt / (tau + dt) weights:
// time-weighted, memory tau). Answers "is this spread wider than the symbol's spread is q of
// the time?" (above()). Fixed size, no allocation; add() is O(kBins) and runs at most every
// 50 ms of exchange time per symbol.
struct SpreadSketch {
  static constexpr int kExactTicks = 32;
  static constexpr int kBins = 96;
  float share[kBins] = {};  // not normalised: the weights sum to 1 − e^(−time seen / tau)

  static int bin_of(double ticks) {
    if (!(ticks >= 1.5)) return 0;
    if (ticks < kExactTicks + 0.5) return int(ticks + 0.5) - 1;
    const int b = kExactTicks + int(4.0 * std::log2(ticks / (kExactTicks + 0.5)));
    return std::min(b, kBins - 1);
  }
  // One sample with weight alpha in (0, 1]: older weight decays by 1 − alpha. Early in a
  // symbol's day the distribution is the time-weighted mix of what it has seen (the weights
  // are normalised when read), not its first sample.
  void add(double ticks, double alpha) {
    const float keep = float(1.0 - alpha);
    for (float& w : share) w *= keep;
    share[bin_of(ticks)] += float(alpha);
  }
  // The bin of the q-quantile (the smallest bin with at least q of the weight at or below it);
  // kBins − 1 before any sample.
  int quantile_bin(double q) const {
    double total = 0;
    for (float w : share) total += w;
    if (!(total > 0)) return kBins - 1;
    const double want = q * total;
    double cum = 0;
    for (int b = 0; b < kBins; ++b) {
      cum += share[b];
      if (cum >= want) return b;
    }
    return kBins - 1;
  }
  // In a bin above the q-quantile's: wider than the symbol's spread is q of the time.
  bool above(double ticks, double q) const { return bin_of(ticks) > quantile_bin(q); }
};

// Notional traded per minute of continuous trading, and its typical level (RobustLevel, one
// sample per completed minute that saw any event).
struct MinuteFlow {
  int64_t minute = std::numeric_limits<int64_t>::min();  // exch_ts_ns / 60 s of `notional`
  double notional = 0;                                   // traded so far in that minute
  RobustLevel typical;
};

// The symbol's volatility as it stood before the move being judged: vol_long (a 600 s EWMA of
// squared 1 s returns) as it was at the end of the 60 s bucket of exchange time before the
// previous one (60..120 s ago; in the first two minutes the oldest value there is), so a 60 s
// move cannot raise its own threshold (a crash in a few large jumps quadruples vol_long within
// seconds and would otherwise hide itself). Never above the current value: a calm that followed
// a busy minute is judged by the calm.
struct PreMoveVol {
  int64_t bucket = std::numeric_limits<int64_t>::min();
  double last = 0;       // the latest value seen
  double end_prev = 0;   // the value at the end of the previous bucket
  double end_prev2 = 0;  // ... of the bucket before that
  double reference(int64_t ts_ns, double now) {
    const int64_t b = ts_ns / 60'000'000'000;
    if (b != bucket) {
      const bool first = bucket == std::numeric_limits<int64_t>::min();
      end_prev2 = first ? 0.0 : (b == bucket + 1 ? end_prev : last);
      end_prev = first ? 0.0 : last;
      bucket = b;
    }
    last = now;
    const double before = end_prev2 > 0 ? end_prev2 : end_prev;
    return before > 0 ? std::min(before, now) : now;
  }
};

struct SymbolRuleState {
  bool initialized = false;
  int64_t day = std::numeric_limits<int64_t>::min();  // UTC day of the last event
  Price day_open = 0;          // first continuous-phase price of the day, ticks
  WindowMax recent_high;       // last price, ticks, over high_dive.lookback_s
  bool up_sealed = false;
  bool down_sealed = false;
  WindowMax seal_peak;         // bid qty at limit-up while sealed, shares
  bool up_touch_armed = true;  // a limit touch re-arms once the price left the limit
  bool down_touch_armed = true;
  RobustLevel spread;          // typical spread_ticks
  RobustLevel spread_dev;      // typical |ln(spread / typical)|: how much the spread strays
  SpreadSketch spread_dist;    // the spread's own distribution (own_quantile)
  RobustLevel bid_depth;       // typical top-5 bid depth, size increments
  RobustLevel ask_depth;       // typical top-5 ask depth
  int64_t last_eval_ns = std::numeric_limits<int64_t>::min();  // the last event judged (continuous)
  MinuteFlow flow;             // notional flow (currency per minute)
  PreMoveVol vol;              // vol_long before the current move (relative move thresholds)
  int64_t wall_ns = std::numeric_limits<int64_t>::min() / 2;  // the last large_order alert (or
                               // the latest re-placement of its wall)
  bool wall_bid = false;       // ... was a bid
  Price wall_price = 0;        // ... at this price, ticks
  Qty wall_qty = 0;            // ... of this size, size increments
  int wall_level = -1;         // ... at this level from the touch (0 = at it)
  // The last print large_buy / large_sell judged large (alerted, or inside their cooldown):
  // volume_burst's volume path does not report the same order again within its 60 s window.
  int64_t large_print_ns = std::numeric_limits<int64_t>::min() / 2;
  RuleGate gates[kRuleTypeCount];
};

}  // namespace ts
