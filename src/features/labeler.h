#pragma once
// The training label, defined once (docs/labels.md): "an abnormal move starts within the next
// H seconds". A symbol's abnormal-move onsets are found from its per-second series (mid, rolling
// volatility, volume z-score, depth change: the feature engine's own values) and, for the
// simulator, from the injected events; a window ending at t is labelled 1 when an onset falls in
// (t - grace, t + H] (it starts within the next H seconds, or started at most `grace` ago), and
// that onset's time is the event time used for detection lead time.
//
// Offline only (dataset export, tests): allocates, not for the hot path. Threading: pure
// functions, no state.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace ts {

struct LabelOptions {
  double horizon_s = 60;       // H: look-ahead of the label, seconds (also the price-move span)
  double k = 3;                // price move: |H-second mid log return| > k * sigma * sqrt(H)
  double vol_floor_bps = 0.5;  // floor of sigma (vol_long), bps per sqrt(s)
  double min_move_ticks = 2;   // ... and the mid moved at least this many ticks
  // The economic minimum of a price move: |mid change| >= this many spreads (the spread at the
  // start of the H seconds; 0 = off) and |return| >= the floor in bps (0 = off). A move that does
  // not pay a round trip several times over is not an event, however many sigmas it is.
  double min_move_spreads = 4;
  double min_move_bps = 10;
  double volume_z = 10;        // volume shock: volume_z (10 s volume vs baseline) >= this; 0 = off
  double depth_drop = 0.9;     // liquidity shock: top-5 depth fell by >= this fraction in 10 s; 0 = off
  double refractory_s = 0;     // a new onset needs this long without abnormal seconds; 0 = H
  double grace_s = 10;         // a window ending up to this long after an onset is positive too
                               // (the move has started but is young: catching it then still counts)
  // Phases: for settle_s seconds after continuous trading (re)starts (the opening match, the
  // lunch reopen, the end of a halt, the first data after a break) no onset is made; conditions
  // that hold then belong to the reopening (they extend its episode, see refractory), and no
  // price return is taken from a second inside it.
  double settle_s = 60;
  int64_t gap_s = 300;         // a pause longer than this between samples is a break (lunch,
                               // night, halt): no H-second return is taken across it

  double refractory() const { return refractory_s > 0 ? refractory_s : horizon_s; }
  // Ranges: horizon 1..3600 s, k > 0, floors >= 0, volume_z >= 0, depth_drop in [0, 1),
  // grace 0..horizon, settle 0..3600 s.
  Status validate() const;
};

enum class OnsetKind : uint8_t { kPriceMove = 0, kVolumeShock, kLiquidityShock, kInjected };
constexpr int kOnsetKindCount = 4;
// "price_move", "volume_shock", "liquidity_shock", "injected".
const char* onset_kind_name(OnsetKind kind);

// One symbol's state at the close of a row interval (carried forward until the next sample).
struct LabelSample {
  int64_t ts_ns = 0;        // exchange time of the interval's end
  double mid = 0;           // mid (ticks; 0 = no price yet)
  float vol_bps = 0;        // rolling volatility at that time (feature vol_long), bps per sqrt(s)
  float volume_z = 0;       // feature volume_z
  float depth_change = 0;   // feature depth_change (log change of top-5 depth over 10 s)
  bool trading = true;      // continuous trading (or phase unknown); false in auctions, breaks,
                            // halts: no condition is checked there, no return taken from there
  double spread = 0;        // best ask - best bid, ticks (0 = unknown: the spread minimum is off)
};

struct InjectedSpan {
  int64_t start_ns = 0;
  int64_t end_ns = 0;
};

// An onset and its size, in the unit of its kind: price_move the signed H-second mid return in
// bps at the onset; volume_shock the volume z-score; liquidity_shock the fraction of top-5 depth
// lost in 10 s (0.93 = 93 %); injected 0 (the simulator's file has the magnitude).
struct Onset {
  int64_t ts_ns = 0;
  OnsetKind kind = OnsetKind::kPriceMove;
  double size = 0;
};
// "bps", "z", "depth_lost", "-".
const char* onset_size_unit(OnsetKind kind);

// The onsets of one symbol, in time order. `samples` in time order (one per interval end where
// the state may have changed; values carry forward between samples). Conditions are checked
// once per second of exchange time (the price move) or at each sample (the shocks); an onset is
// a second at which a condition holds after at least refractory() seconds without any. Every
// injected start is an onset; other onsets inside an injected span (or within refractory()
// after it) belong to it and are dropped.
std::vector<Onset> label_onsets(std::span<const LabelSample> samples, std::span<const InjectedSpan> injected,
                                const LabelOptions& opts);

struct WindowLabel {
  uint8_t label = 0;
  int64_t event_ts_ns = -1;  // the onset's time, -1 when label is 0
};

// The two tasks, reported separately (docs/labels.md), and the training label that joins them:
//   kDetect    an onset in (end - grace, end]: the move has started in the last seconds;
//   kForecast  an onset in (end, end + H]: strictly ahead, lead time = onset - end > 0;
//   kAny       an onset in (end - grace, end + H] (labels.npy).
enum class LabelTask : uint8_t { kAny = 0, kDetect, kForecast };

// The label of a window ending at end_ts_ns for `task`: the first onset in the task's interval.
// `onsets` sorted by time (as label_onsets returns them).
WindowLabel label_window(std::span<const Onset> onsets, int64_t end_ts_ns, const LabelOptions& opts,
                         LabelTask task = LabelTask::kAny);

}  // namespace ts
