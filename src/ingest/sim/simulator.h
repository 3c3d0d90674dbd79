#pragma once
// The market simulator: an A-share-flavoured L3 order-flow source for up to 5,000 symbols with
// labelled injected events (flash crashes, pumps, volume bursts, liquidity withdrawals, spoofing,
// limit-up/limit-down runs). Model, parameters and ground truth: docs/simulator.md.
//
// Stream contract:
// - exch_ts_ns is non-decreasing over all symbols; seq increases by one per event.
// - Order flow is L3: kOrderAdd / kOrderCancel / kOrderExecute always carry order id, price and
//   side; cancels and executes never exceed what rests at that order (and so at that level).
// - An aggressive fill is emitted as kOrderExecute (the resting order, side = resting side)
//   immediately followed by kTrade (same price and size, aggressor set, both order ids): the book
//   needs the execute to reduce the level, features need the print. Consumers must not apply
//   both to the book.
// - The book never crosses, no order rests and no trade prints outside [limit_down, limit_up].
// - kStatus per symbol: kContinuous at the start and at 13:00, kBreak at 11:30, kClosingAuction
//   at 14:57 and kClosed at 15:00, kContinuous at 09:30 of the next weekday.
// - With options.auctions (the default), the call auctions (docs/simulator.md "Phases"): before
//   a day's 09:30 (the first day's when start_ns is before its 09:30) kOpeningAuction at
//   09:15, an indicative kSnapshot every 3 s to 09:24:57 (phase kOpeningAuction, bid[0] = ask[0]
//   = the indicative price with the indicative matched volume, last 0, cum_volume 0, resync 0:
//   never a trade), at 09:25 kBreak (the pause) then the match: one kTrade with aggressor kNone
//   and no order ids, not preceded by an execute and not touching the L3 book. At 14:57
//   kClosingAuction, indicative snapshots every 3 s to 14:59:57, at 15:00 kClosed then the
//   closing match (kTrade, aggressor kNone). Prices inside [limit_down, limit_up].
// - Deterministic: same options, same symbol table state → identical stream and labels,
//   whatever batch sizes next_batch is called with.
// Threading: one thread drives a Simulator. No allocation per event after construction (the
// ground-truth vector grows once per injected event).
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/sim/injected_event.h"
#include "ingest/sim/sim_book.h"
#include "ingest/sim/sim_calendar.h"
#include "ingest/sim/sim_options.h"
#include "ingest/sim/sim_random.h"
#include "ingest/sim/sim_state.h"
#include "ingest/source.h"

namespace ts {

// One stage of a sweep: what every symbol gets at exchange time `exch_ns`.
struct SweepStage {
  enum What : uint8_t { kStatus, kIndicative, kMatch } what = kStatus;
  Phase phase = Phase::kUnknown;  // kStatus: the phase; kMatch: the status emitted before the match
  bool opening = false;           // kIndicative / kMatch: the opening (true) or closing call
  int32_t k = 0, of = 1;          // kIndicative: snapshot k of `of` (k = of - 1 is the last)
  int64_t exch_ns = 0;
};

class Simulator : public Source {
 public:
  // Interns options.symbols names into `symbols` and sets each one's prev_close and ST flag (and
  // so its limit band). Options out of range are clamped (validate() them first to report).
  Simulator(SimOptions options, SymbolTable& symbols);
  // Writes the labels to options.labels_path if set and not yet written.
  ~Simulator() override;
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  size_t next_batch(std::span<Event> out) override;
  // True once duration_s of trading time has been simulated (never for duration_s = 0).
  bool done() const override;
  std::string describe() const override;

  // Ground truth so far: every injected event that has started, in start order.
  const std::vector<InjectedEvent>& injected() const { return injected_; }
  // Writes the ground truth as CSV with a header: symbol,type,start_ns,end_ns,magnitude
  // (symbol by name, type by sim_event_type_name).
  Status write_labels(const std::string& path) const;

  const SimOptions& options() const { return opt_; }
  // Ids of the simulated symbols, in the simulator's order.
  const std::vector<SymbolId>& symbol_ids() const { return ids_; }

 private:
  // simulator.cpp: clock, scheduling, batching
  size_t generate_step(Event* out);
  size_t emit_startup(Event* out);
  size_t emit_sweep(Event* out);
  void begin_boundary_sweep(int64_t boundary);
  // Appends the stages of a call auction (status, indicative snapshots, pause/close status and
  // match) whose call starts at exchange time `call_ns` and lasts `call_s` seconds.
  void add_auction_stages(int64_t call_ns, int64_t call_s, bool opening);
  void emit_auction_event(uint32_t i, const SweepStage& stage, sim::EventWriter& w);
  int64_t exch_ns(int64_t t) const { return calendar_.exch_ns(t); }
  double ushape(int64_t t) const;
  void refresh_next_overlay();
  // sim_flow.cpp: one step of one symbol's order flow
  void step_symbol(uint32_t s, int64_t t, sim::ActiveEvent* overlay, sim::EventWriter& w);
  // sim_inject.cpp: injected events
  void start_injected(int64_t t, sim::EventWriter& w);
  void finish_injected(size_t index);
  double shift_at(const sim::ActiveEvent& a, int64_t t) const;

  SimOptions opt_;
  const SymbolTable* table_;
  std::vector<SymbolId> ids_;
  std::vector<sim::SymbolState> sym_;
  std::vector<sim::HawkesState> hawkes_;
  std::vector<sim::SimBook> books_;
  sim::AliasTable pick_;
  sim::Rng rng_;
  sim::SimCalendar calendar_;
  uint32_t enabled_types_ = 0;  // bit per SimEventType

  uint64_t seq_ = 0;
  int64_t end_t_ = INT64_MAX;   // trading time at which the stream ends
  int64_t t_ = 0;               // trading time of the last step
  int64_t next_base_ = 0;       // next candidate of the base (thinned Hawkes) process
  int64_t next_inject_ = INT64_MAX;
  int64_t next_boundary_ = 0;
  double base_steps_per_s_ = 0; // candidate rate at U-shape 1, all symbols
  double thinning_cap_ = 2.0;   // candidates are accepted with prob min(1+excite, cap)/cap
  double decay_per_ns_ = 0;

  std::vector<sim::ActiveEvent> active_;
  int64_t next_overlay_ = INT64_MAX;
  size_t next_overlay_index_ = 0;
  std::vector<InjectedEvent> injected_;

  // Sweeps (session boundaries and call auctions): stages in exchange-time order, each emitting
  // its events for every symbol in turn.
  uint32_t startup_index_ = 0;  // symbols whose opening events are out; sym_.size() when done
  std::vector<SweepStage> sweep_;
  size_t sweep_stage_ = 0;
  uint32_t sweep_index_ = 0;
  // Call auctions: their own random stream (the continuous flow is the same with or without
  // them) and each symbol's match of the auction in progress.
  sim::Rng auction_rng_;
  std::vector<sim::AuctionState> auction_;
  bool finished_ = false;
  mutable bool labels_written_ = false;

  std::vector<Event> pending_;  // staging (one step) when the caller's batch is smaller than a step
  size_t pending_n_ = 0;
  size_t pending_pos_ = 0;
};

}  // namespace ts
