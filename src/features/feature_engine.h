#pragma once
// FeatureEngine: per-symbol rolling state, updated incrementally per event (O(1): one-second
// buckets, running sums and EWMAs; history is never re-scanned), producing the kFeatureCount
// features of feature_set.h (formulas, units, windows: docs/features.md) and a window of the
// last T rows per symbol. Time is the event's exchange time (exch_ts_ns).
//
// Threading: one shard thread owns a FeatureEngine and calls on_event() for its symbols, in
// exchange-time order per symbol (an earlier time is treated as the current second).
// Cost: ~100-150 ns per event; no allocation per event (per-symbol state is allocated when a
// symbol id is first seen).
#include <cstdint>
#include <memory>
#include <vector>

#include "book/book_top.h"
#include "core/event.h"
#include "core/symbol_table.h"
#include "features/feature_options.h"
#include "features/feature_set.h"
#include "features/feature_window.h"
#include "features/volume_profile.h"

namespace ts {

// Trade state the rules need besides the feature row (read-only view).
struct TradeState {
  Price day_high = 0;           // highest print of the day, ticks; 0 before the first print
  Price day_low = 0;            // lowest print, ticks
  Price last_price = 0;         // last print, ticks
  Qty last_qty = 0;             // last print, shares
  Side last_side = Side::kNone; // aggressor of the last print
  double last_notional = 0;     // last print, currency
  // The last aggressive order: consecutive prints at one exchange time with the same aggressor
  // side and aggressor order number (SSE) summed -- one market order sweeping the book.
  Qty order_qty = 0;
  double order_notional = 0;
  Side order_side = Side::kNone;
  int64_t last_ts_ns = 0;       // exchange time of the last print
};

// The last 60 s of traded volume and prints against what the symbol's intraday profile expects
// for 60 s at this time of day (volume_profile.h): the volume_burst rule's quantities. Not a feature column
// (the row's volume_z is the 10 s z-score). Zeros outside continuous trading and until the
// profile is ready (FeatureOptions::baseline_min_buckets).
// A multiple is 0 unless the excess over the expectation reaches the z-scores' floors over 60 s
// (6 × volume_std_floor_lots lots, 6 × count_std_floor prints): a few prints on a symbol that
// rarely trades are not a burst.
struct VolumeWindow {
  float multiple_60s = 0;   // volume_60s / expected_60s
  Qty volume_60s = 0;       // size increments traded in the last 60 s of the session
  double expected_60s = 0;  // 6 × the profile's expected 10 s volume (at least one lot)
  // The same for the number of prints: many small trades are a burst too.
  float count_multiple_60s = 0;    // count_60s / expected_count_60s
  int64_t count_60s = 0;           // prints in the last 60 s of the session
  double expected_count_60s = 0;   // 6 × the profile's expected 10 s count (at least 1)
};

class FeatureEngine {
 public:
  FeatureEngine(const SymbolTable& symbols, FeatureOptions opts);
  ~FeatureEngine();
  FeatureEngine(const FeatureEngine&) = delete;
  FeatureEngine& operator=(const FeatureEngine&) = delete;

  // Call after BookSet::apply(e) with the symbol's updated book. Returns the symbol's current
  // feature row (kFeatureCount floats, FeatureId order), valid until the next call.
  // The book-derived features (imbalances, spread, microprice, top-5 depth) are recomputed only
  // when `book` is another object than last time for this symbol or its levels_version changed
  // (or is 0, as in books made by hand): a caller that edits a BookTop in place must leave
  // levels_version at 0 or change it.
  const float* on_event(const Event& e, const BookTop& book);

  // The last T completed rows of the symbol (one per row interval, carried forward through
  // intervals without events); an empty window for a symbol never seen.
  const FeatureWindow& window(SymbolId id) const;
  // The symbol's current row (zeros for a symbol never seen).
  const float* row(SymbolId id) const;
  const TradeState& trades(SymbolId id) const;
  const VolumeWindow& volume(SymbolId id) const;
  const FeatureOptions& options() const { return opts_; }

  // Volume profiles (volume_profile.h): a symbol seen for the first time starts from its
  // profile in `initial` (by name; may be null: the market's default shape). Before the first
  // on_event(); `initial` must outlive the engine.
  void set_profile_store(const ProfileStore* initial) { profiles_in_ = initial; }
  // Copies every symbol's profile that has learned something into `out` (after the run).
  void save_profiles(ProfileStore& out) const;
  // The symbol's profile; null for a symbol never seen.
  const VolumeProfile* profile(SymbolId id) const;

  // Hint: starts loading the cache lines on_event() touches first for symbol `id` (the state's
  // hot fields, its reference data). Changes nothing; no-op for unseen ids.
  void prefetch(SymbolId id) const;

  struct State;  // per-symbol rolling state (feature_engine.cpp)

 private:
  State& state_for(SymbolId id);
  void init_symbol(State& st, SymbolId id, const BookTop& book, int64_t ts);
  void start_session(State& st, int64_t ts, bool from_continuous, bool restart_returns);
  void refresh_expectation(State& st) const;
  const float* on_pause_event(State& st, const Event& e, const BookTop& book, const RefData* ref);
  static void update_book_group(State& st, const BookTop& book);
  static void update_reference_group(State& st, const BookTop& book, const RefData* ref, double mid);
  static void record_print_state(State& st, int64_t ts, Price px, Qty qty, Side aggressor, double notional);

  const SymbolTable& symbols_;
  FeatureOptions opts_;
  std::vector<std::unique_ptr<State>> states_;
  const ProfileStore* profiles_in_ = nullptr;
  ProfileParams profile_params_;
  // Constants derived from the options (EWMA weights per second).
  double a_short_, a_long_;
};

}  // namespace ts
