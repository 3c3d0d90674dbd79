#pragma once
// Options of the market simulator (config section "sim"). Every field has a default, so
// `ticksentry run` works with no config file; all take effect when a Simulator is constructed.
#include <cstdint>
#include <string>

#include "core/clock.h"
#include "core/config.h"
#include "core/status.h"

namespace ts {

// 2023-02-01 09:30:00 Asia/Shanghai (UTC+8), ns since the Unix epoch.
constexpr int64_t kSimDefaultStartNs = midnight_ns(2023, 2, 1, 8) + (9 * 3600 + 30 * 60) * kNsPerSec;
// 2023-02-01 09:15:00: a stream that starts with the opening call auction.
constexpr int64_t kSimOpeningCallStartNs = kSimDefaultStartNs - 15 * 60 * kNsPerSec;

struct SimOptions {
  // Number of simulated symbols, 1..5000. Names look like A-shares (600xxx.SH, 000xxx.SZ,
  // 300xxx.SZ, 688xxx.SH); the universe (names, prev_close, ST flags, activity) depends only on
  // this count, not on the seed.
  int symbols = 1000;
  // Seed of the order flow and of the injected events: same options, identical stream and labels.
  uint64_t seed = 42;
  // Trading-time seconds to simulate (the lunch break and nights are skipped and do not count);
  // 0 = endless (continues day after day, weekdays only, reusing day one's reference data).
  double duration_s = 0;
  // Average events per trading second over all symbols (before the intraday U-shape, which has
  // mean 1). Injected events add their own flow on top.
  double events_per_s = 200000;
  // Exchange time of the first event. Times outside continuous trading move to the next
  // continuous session (09:30-11:30, 13:00-14:57 Asia/Shanghai, Monday to Friday); with
  // `auctions`, a time before a day's 09:30 starts with that day's opening call at 09:15.
  int64_t start_ns = kSimDefaultStartNs;
  // Injected events per symbol per trading hour. At the default, 1000 symbols see about eight
  // events start in a 20 s run (after the warm-up below).
  double anomalies_per_hour = 2.0;
  // No injected event starts within this many trading seconds of the start (lets rolling
  // baselines fill).
  double anomaly_warmup_s = 5;
  // Quiet trading seconds kept on a symbol between the end of one injected event and the start
  // of the next, so that ground-truth windows never overlap on a symbol.
  double anomaly_gap_s = 60;
  // Comma-separated sim_event_type_name()s that may be injected, "all", or "" for none.
  std::string anomaly_types = "all";
  // "" = do not write; else the ground truth is written there as CSV
  // (symbol,type,start_ns,end_ns,magnitude) when the stream ends or the simulator is destroyed.
  std::string labels_path;
  // Quiet volatility of the fair price, basis points per sqrt(second).
  double vol_bps = 2.0;
  // Self-excitation of order flow: each event adds intensity that decays with this time constant
  // (seconds); `hawkes_branching` = expected extra events caused by one event (0..0.8).
  double hawkes_branching = 0.25;
  double hawkes_decay_s = 2.0;
  // Fraction of symbols flagged ST (±5% price band).
  double st_fraction = 0.02;
  // The A-share call auctions (docs/simulator.md "Phases"): each trading day after the first,
  // and the first when start_ns is before its 09:30 (e.g. 09:15; the default start is 09:30, so
  // a live run opens in continuous trading), is preceded by the opening call (09:15-09:25: indicative
  // price/volume snapshots every 3 s, never trades), the 09:25 match (one auction trade, no
  // aggressor) and the 09:25-09:30 pause; each 14:57 ends in the closing call (14:57-15:00,
  // indicative snapshots) and the 15:00 match. They take no trading time and do not change the
  // continuous order flow (their own random stream). false: continuous trading only.
  bool auctions = true;

  // Reads section "sim" (keys as the field names). Throws ConfigError on invalid values
  // (start-up only).
  static SimOptions from_config(const ConfigSection& section);
  // Range checks; also checks that anomaly_types names known types.
  Status validate() const;
};

}  // namespace ts
