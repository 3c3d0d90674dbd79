#pragma once
// Internal state of the simulator, per symbol and per active injected event. Not part of the
// public API (include ingest/sim/simulator.h).
#include <cstdint>

#include "core/event.h"
#include "ingest/sim/injected_event.h"

namespace ts::sim {

struct SymbolState {
  SymbolId id = kInvalidSymbol;
  Price prev_close = 0;   // ticks
  Price limit_up = 0;     // ticks
  Price limit_down = 0;   // ticks
  Price step = 1;         // ticks between the price levels this symbol's orders use
  double half_spread = 0; // ticks: quiet target distance of the touch from the fair price
  double sigma = 0;       // fair-price volatility, ticks per sqrt(s)
  double anchor = 0;      // ticks: the fair price mean-reverts (slowly) to this
  double base = 0;        // ticks: random-walk part of the fair price
  int64_t fair_ns = 0;    // trading time of the last fair-price update
  double rate = 0;        // base steps per second at U-shape 1
  int32_t size_mult = 1;  // order sizes in lots are multiplied by this
  int32_t anomaly = -1;   // index into Simulator::active_, or -1
  int64_t free_after_ns = 0;  // trading time before which no injected event may start here
};

// A symbol's call auction in progress: the match it converges to (price in ticks, volume in
// shares), drawn when the call starts.
struct AuctionState {
  Price match_px = 0;
  Qty match_qty = 0;
};

// Hawkes state of a symbol, read for every candidate event: kept apart from SymbolState so that
// the candidates the thinning rejects touch 24 bytes (1000 symbols: 24 KB, cache-resident).
struct HawkesState {
  double excite = 0;      // excitation, as a multiple of the symbol's base rate
  int64_t excite_ns = 0;  // trading time `excite` refers to
  double alpha = 0;       // excitation added per event (at U-shape 1)
};

// Phases of an injected event in trading time: [t0, t1) the move, [t1, t2) the hold,
// [t2, t3) the recovery/refill; it ends at t3.
struct ActiveEvent {
  uint32_t sym = 0;        // symbol index
  SimEventType type = SimEventType::kFlashCrash;
  int64_t t0 = 0, t1 = 0, t2 = 0, t3 = 0;
  double shift_peak = 0;   // fair-price shift reached at t1 and held to t2, ticks
  double shift_final = 0;  // shift at t3 (folded into the random walk when the event ends)
  double rate = 0;         // extra events per second on this symbol (0: scheduled, spoofing)
  int64_t next_ns = 0;     // trading time of this event's next extra step
  double wide_half_spread = 0;  // liquidity withdrawal: ticks
  int target_orders = 0;        // liquidity withdrawal: cancel down to this many orders
  // spoofing
  Side spoof_side = Side::kNone;
  uint64_t spoof_id = 0;   // live spoof order, 0 if none
  Qty spoof_qty = 0;
  int spoof_cycle = 0;
  int spoof_cycles = 0;
  int64_t spoof_times[16] = {};  // place, cancel, place, cancel, ... (trading time)
  size_t label = 0;        // index into Simulator::injected_
};

}  // namespace ts::sim
