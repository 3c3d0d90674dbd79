// Simulator: universe set-up, the global event clock, session sweeps and batching.
// The order-flow model of one symbol is in sim_flow.cpp, injected events in sim_inject.cpp.
#include "ingest/sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ingest/sim/sim_universe.h"

namespace ts {

using namespace sim;

namespace {
// A step emits at most this many events (a sweep of kMaxSweepOrders fills, an eviction, or a
// chunk of a status sweep); next_batch writes steps straight into the caller's span while this
// much room is left.
constexpr size_t kMaxStepEvents = 64;
// Emitted events per accepted base step, measured (tests/ingest/sim prints it); used to turn
// events_per_s into a step rate.
constexpr double kEventsPerStep = 1.2;
constexpr int kInitialLevels = 5;   // levels a side in the opening book
constexpr int kInitialOrders = 2;   // orders a level in the opening book
// Call auctions (A-share): the opening call 09:15-09:25, the closing call 14:57-15:00, an
// indicative snapshot every 3 s in between (the SSE/SZSE snapshot cadence).
constexpr int64_t kOpeningCallNs = (9 * 3600 + 15 * 60) * kNsPerSec;
constexpr int64_t kOpeningCallS = 600;
constexpr int64_t kClosingCallS = 180;
constexpr int64_t kIndicativeS = 3;
// How far the indicative price strays from the match early in the call (fraction of the price,
// one standard deviation, shrinking linearly to 0 at the match): real opening calls swing by
// percents before they settle (docs/simulator.md "Phases").
constexpr double kIndicativeSpread = 0.015;

uint32_t parse_types(const std::string& list) {
  if (list == "all") return (1u << kSimEventTypeCount) - 1;
  uint32_t mask = 0;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    std::string name = list.substr(pos, comma - pos);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (auto t = sim_event_type_from_name(name)) mask |= 1u << int(*t);
    pos = comma + 1;
  }
  return mask;
}
}  // namespace

Simulator::Simulator(SimOptions options, SymbolTable& symbols)
    : opt_(std::move(options)),
      table_(&symbols),
      rng_(opt_.seed),
      calendar_(opt_.start_ns),
      auction_rng_(opt_.seed ^ 0x6a09e667f3bcc909ull) {
  opt_.symbols = std::clamp(opt_.symbols, 1, 5000);
  opt_.hawkes_branching = std::clamp(opt_.hawkes_branching, 0.0, 0.8);
  opt_.hawkes_decay_s = std::max(opt_.hawkes_decay_s, 1e-3);
  opt_.events_per_s = std::max(opt_.events_per_s, 1.0);
  enabled_types_ = parse_types(opt_.anomaly_types);

  const auto universe = make_universe(opt_.symbols, opt_.st_fraction);
  const size_t n = universe.size();
  ids_.reserve(n);
  sym_.resize(n);
  hawkes_.resize(n);
  books_.resize(n);
  std::vector<double> weights(n);
  double total_activity = 0;
  for (const auto& u : universe) total_activity += u.activity;
  base_steps_per_s_ = opt_.events_per_s / kEventsPerStep * (1.0 - opt_.hawkes_branching);
  decay_per_ns_ = 1.0 / (opt_.hawkes_decay_s * double(kNsPerSec));

  for (size_t i = 0; i < n; ++i) {
    const SymbolId id = symbols.intern(universe[i].name);
    symbols.set_prev_close(id, universe[i].prev_close);
    symbols.set_st(id, universe[i].is_st);
    const RefData& ref = symbols.ref(id);
    ids_.push_back(id);
    SymbolState& st = sym_[i];
    st.id = id;
    st.prev_close = ref.prev_close;
    st.limit_up = ref.limit_up;
    st.limit_down = ref.limit_down;
    st.step = std::max<Price>(1, Price(std::llround(double(st.prev_close) * 1.5e-4)));
    st.half_spread = 0.4 * double(st.step);
    st.sigma = opt_.vol_bps * 1e-4 * double(st.prev_close);
    // Open within ±1% of the previous close.
    st.anchor = double(st.prev_close) * (1.0 + 0.01 * rng_.normal() / 1.7320508075688772);
    st.base = st.anchor;
    st.rate = base_steps_per_s_ * universe[i].activity / total_activity;
    hawkes_[i].alpha = opt_.hawkes_branching / (std::max(st.rate, 1e-3) * opt_.hawkes_decay_s);
    const double cny = double(st.prev_close) / 100.0;
    st.size_mult = std::clamp(int(std::lround(20.0 / cny)), 1, 8);
    weights[i] = universe[i].activity;
    books_[i].init(uint32_t(i));
  }
  pick_.build(weights);

  t_ = calendar_.start_offset_ns();
  for (auto& st : sym_) st.fair_ns = t_;
  for (auto& h : hawkes_) h.excite_ns = t_;
  next_boundary_ = SimCalendar::next_boundary(t_);
  if (opt_.duration_s > 0) end_t_ = t_ + int64_t(opt_.duration_s * double(kNsPerSec));
  next_base_ = t_;
  const double inject_per_s = opt_.anomalies_per_hour * double(n) / 3600.0;
  if (inject_per_s > 0 && enabled_types_ != 0) {
    next_inject_ = t_ + int64_t(opt_.anomaly_warmup_s * double(kNsPerSec)) +
                   int64_t(rng_.exponential() / inject_per_s * double(kNsPerSec));
  }
  active_.reserve(256);
  injected_.reserve(1024);
  pending_.resize(kMaxStepEvents);
  auction_.resize(n);
  sweep_.reserve(size_t((kOpeningCallS + kClosingCallS) / kIndicativeS) + 16);
  // A stream that starts before the first day's 09:30 open (09:15, say) starts with that day's
  // opening call; one that starts at 09:30 (the default) starts in continuous trading, so a live
  // `ticksentry run` does not wait through a quarter of an hour of auction first.
  if (opt_.auctions && t_ == 0 && opt_.start_ns < calendar_.day_midnight_ns() + SimCalendar::kOpenNs) {
    add_auction_stages(calendar_.day_midnight_ns() + kOpeningCallNs, kOpeningCallS, true);
  }
}

Simulator::~Simulator() {
  if (!opt_.labels_path.empty() && !labels_written_) {
    if (Status st = write_labels(opt_.labels_path); !st.is_ok()) {
      std::fprintf(stderr, "sim: %s\n", st.to_string().c_str());
    }
  }
}

std::string Simulator::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "sim %zu symbols, seed %llu, %.0f events/s, %.2f injected/symbol/h",
                sym_.size(), static_cast<unsigned long long>(opt_.seed), opt_.events_per_s,
                opt_.anomalies_per_hour);
  return buf;
}

bool Simulator::done() const { return finished_ && pending_pos_ >= pending_n_; }

double Simulator::ushape(int64_t t) const {
  const double x = 2.0 * SimCalendar::day_fraction(t) - 1.0;
  return 0.6 + 1.2 * x * x;  // mean 1 over the day; 1.8 at open and close, 0.6 at midday
}

size_t Simulator::next_batch(std::span<Event> out) {
  size_t n = 0;
  while (pending_pos_ < pending_n_ && n < out.size()) out[n++] = pending_[pending_pos_++];
  if (pending_pos_ < pending_n_) return n;
  while (!finished_ && n < out.size()) {
    if (out.size() - n >= kMaxStepEvents) {
      n += generate_step(out.data() + n);
      continue;
    }
    // Less room than one step can need: stage the step and hand over what fits.
    pending_n_ = generate_step(pending_.data());
    pending_pos_ = 0;
    while (pending_pos_ < pending_n_ && n < out.size()) out[n++] = pending_[pending_pos_++];
    if (pending_pos_ < pending_n_) break;
  }
  if (finished_ && !labels_written_ && !opt_.labels_path.empty()) {
    if (Status st = write_labels(opt_.labels_path); !st.is_ok()) {
      std::fprintf(stderr, "sim: %s\n", st.to_string().c_str());
    }
  }
  return n;
}

size_t Simulator::emit_startup(Event* out) {
  const uint32_t i = startup_index_++;
  SymbolState& st = sym_[i];
  SimBook& book = books_[i];
  EventWriter w{out, 0, &seq_, exch_ns(t_), st.id};
  w.status(Phase::kContinuous);
  const Price bid0 = Price(std::floor((st.base - st.half_spread) / double(st.step))) * st.step;
  const Price ask0 = Price(std::ceil((st.base + st.half_spread) / double(st.step))) * st.step;
  for (int k = 0; k < kInitialLevels; ++k) {
    for (int j = 0; j < kInitialOrders; ++j) {
      const Qty lots = Qty(1 + rng_.below(10)) * st.size_mult;
      const Price bp = bid0 - k * st.step;
      const Price ap = ask0 + k * st.step;
      if (bp >= st.limit_down) (void)book.add(Side::kBuy, bp, lots * 100, w);
      if (ap <= st.limit_up) (void)book.add(Side::kSell, ap, lots * 100, w);
    }
  }
  return w.n;
}

void Simulator::add_auction_stages(int64_t call_ns, int64_t call_s, bool opening) {
  sweep_.push_back({SweepStage::kStatus, opening ? Phase::kOpeningAuction : Phase::kClosingAuction, opening, 0, 1, call_ns});
  const int32_t of = int32_t(call_s / kIndicativeS) - 1;
  for (int32_t k = 0; k < of; ++k) {
    sweep_.push_back({SweepStage::kIndicative, Phase::kUnknown, opening, k, of, call_ns + (k + 1) * kIndicativeS * kNsPerSec});
  }
  // The opening match starts the 09:25-09:30 pause; the closing match is the close.
  sweep_.push_back({SweepStage::kMatch, opening ? Phase::kBreak : Phase::kClosed, opening, 0, 1, call_ns + call_s * kNsPerSec});
}

void Simulator::begin_boundary_sweep(int64_t boundary) {
  const int64_t midnight = calendar_.day_midnight_ns();
  sweep_.clear();
  auto status = [&](Phase p, int64_t exch) { sweep_.push_back({SweepStage::kStatus, p, false, 0, 1, exch}); };
  if (SimCalendar::is_lunch_boundary(boundary)) {
    status(Phase::kBreak, midnight + SimCalendar::kLunchNs);
    status(Phase::kContinuous, midnight + SimCalendar::kAfternoonOpenNs);
  } else {
    if (opt_.auctions) {
      add_auction_stages(midnight + SimCalendar::kContinuousEndNs, kClosingCallS, false);
    } else {
      status(Phase::kClosingAuction, midnight + SimCalendar::kContinuousEndNs);
      status(Phase::kClosed, midnight + SimCalendar::kCloseNs);
    }
    calendar_.set_day_for(boundary);
    const int64_t next = calendar_.day_midnight_ns();
    if (opt_.auctions) add_auction_stages(next + kOpeningCallNs, kOpeningCallS, true);
    status(Phase::kContinuous, next + SimCalendar::kOpenNs);
  }
  sweep_stage_ = 0;
  sweep_index_ = 0;
  next_boundary_ = SimCalendar::next_boundary(boundary);
}

// One symbol's event(s) of an auction stage. The match is drawn at the first indicative
// snapshot: the opening call converges to the fair price, the closing call to the book's mid.
void Simulator::emit_auction_event(uint32_t i, const SweepStage& stage, EventWriter& w) {
  const SymbolState& st = sym_[i];
  AuctionState& a = auction_[i];
  auto in_band = [&](double px) {
    const Price p = Price(std::llround(px / double(st.step))) * st.step;
    return std::clamp(p, std::max<Price>(st.limit_down, 1), st.limit_up);
  };
  if (stage.what == SweepStage::kIndicative && stage.k == 0) {
    const double mid = books_[i].mid();
    a.match_px = in_band(stage.opening || mid <= 0 ? st.base : mid);
    const Qty lots = Qty(stage.opening ? 50 + auction_rng_.below(151) : 30 + auction_rng_.below(91));
    a.match_qty = lots * st.size_mult * 100;
  }
  if (stage.what == SweepStage::kMatch) {
    w.status(stage.phase);
    if (a.match_qty > 0) w.trade(a.match_px, a.match_qty, Side::kNone, 0, 0);
    a = AuctionState{};
    return;
  }
  // An indicative snapshot: the price strays early and settles on the match; the matched
  // volume builds up to it.
  const double left = 1.0 - double(stage.k + 1) / double(stage.of);
  const double px = double(a.match_px) * (1.0 + kIndicativeSpread * left * auction_rng_.normal());
  const double built = double(stage.k + 1) / double(stage.of) * auction_rng_.uniform(0.85, 1.0);
  const Qty qty = std::max<Qty>(100, Qty(double(a.match_qty) * built) / 100 * 100);
  SnapshotBody& s = w.push(EventKind::kSnapshot).snapshot;
  s = SnapshotBody{};
  s.bids[0] = s.asks[0] = Level{stage.k + 1 == stage.of ? a.match_px : in_band(px), qty};
  s.prev_close = st.prev_close;
  s.phase = stage.opening ? Phase::kOpeningAuction : Phase::kClosingAuction;
}

size_t Simulator::emit_sweep(Event* out) {
  size_t n = 0;
  while (n + 2 <= kMaxStepEvents && sweep_stage_ < sweep_.size()) {
    const SweepStage& stage = sweep_[sweep_stage_];
    EventWriter w{out + n, 0, &seq_, stage.exch_ns, sym_[sweep_index_].id};
    if (stage.what == SweepStage::kStatus) {
      w.status(stage.phase);
    } else {
      emit_auction_event(sweep_index_, stage, w);
    }
    n += w.n;
    if (++sweep_index_ == sym_.size()) {
      sweep_index_ = 0;
      ++sweep_stage_;
    }
  }
  return n;
}

void Simulator::refresh_next_overlay() {
  next_overlay_ = INT64_MAX;
  for (size_t i = 0; i < active_.size(); ++i) {
    if (active_[i].next_ns < next_overlay_) {
      next_overlay_ = active_[i].next_ns;
      next_overlay_index_ = i;
    }
  }
}

size_t Simulator::generate_step(Event* out) {
  if (sweep_stage_ < sweep_.size()) return emit_sweep(out);
  if (startup_index_ < sym_.size()) return emit_startup(out);

  const int64_t t = std::min({next_base_, next_overlay_, next_inject_});
  if (t >= end_t_ && end_t_ <= next_boundary_) {
    finished_ = true;
    return 0;
  }
  if (t >= next_boundary_) {
    begin_boundary_sweep(next_boundary_);
    return emit_sweep(out);
  }
  t_ = t;
  EventWriter w{out, 0, &seq_, exch_ns(t), kInvalidSymbol};

  if (t == next_overlay_) {
    ActiveEvent& a = active_[next_overlay_index_];
    if (t >= a.t3) {
      finish_injected(next_overlay_index_);
    } else {
      w.symbol = sym_[a.sym].id;
      step_symbol(a.sym, t, &a, w);
      if (a.rate > 0) a.next_ns = t + 1 + int64_t(rng_.exponential() / a.rate * double(kNsPerSec));
      a.next_ns = std::min(a.next_ns, a.t3);
    }
    refresh_next_overlay();
    return w.n;
  }
  if (t == next_inject_) {
    start_injected(t, w);
    const double per_s = opt_.anomalies_per_hour * double(sym_.size()) / 3600.0;
    next_inject_ = t + 1 + int64_t(rng_.exponential() / per_s * double(kNsPerSec));
    refresh_next_overlay();
    return w.n;
  }

  // Base flow: candidates at cap x the U-shaped base rate, thinned by each symbol's Hawkes
  // excitation (accept with probability min(1 + excite, cap) / cap).
  const double u_now = ushape(t);
  const double rate = base_steps_per_s_ * u_now * thinning_cap_;
  next_base_ = t + 1 + int64_t(rng_.exponential() / rate * double(kNsPerSec));
  const uint32_t s = pick_.sample(rng_);
  HawkesState& h = hawkes_[s];
  // PERF NOTE: exp(-x) by its [2/2] Pade approximant where x < 1 (relative error < 1e-3; the
  // common case, since active symbols trade every few ms): the decay is computed for every
  // candidate, and libm's exp was 7% of generation time.
  const double x = double(t - h.excite_ns) * decay_per_ns_;
  const double e = h.excite * (x < 1.0 ? (12.0 - 6.0 * x + x * x) / (12.0 + 6.0 * x + x * x) : std::exp(-x));
  if (rng_.uniform() * thinning_cap_ >= 1.0 + e) return 0;  // thinned out
  // Excitation is a multiple of the current base rate: divide by the U-shape so one event causes
  // hawkes_branching extra events on average at any time of day.
  h.excite = e + h.alpha / u_now;
  h.excite_ns = t;
  w.symbol = sym_[s].id;
  step_symbol(s, t, nullptr, w);
  return w.n;
}

Status Simulator::write_labels(const std::string& path) const {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return Status(StatusCode::kIoError, "writing sim labels " + path + ": cannot open");
  std::fprintf(f, "symbol,type,start_ns,end_ns,magnitude\n");
  for (const auto& e : injected_) {
    std::fprintf(f, "%s,%s,%lld,%lld,%.6g\n", table_->name(e.symbol).c_str(), sim_event_type_name(e.type),
                 static_cast<long long>(e.start_ns), static_cast<long long>(e.end_ns), e.magnitude);
  }
  const bool ok = std::fclose(f) == 0;
  if (!ok) return Status(StatusCode::kIoError, "writing sim labels " + path + ": write failed");
  if (path == opt_.labels_path) labels_written_ = true;
  return Status::ok();
}

}  // namespace ts
