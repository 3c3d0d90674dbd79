// Injected events: choosing symbol, type and magnitude, the fair-price path, and the ground truth.
#include <algorithm>
#include <cmath>

#include "ingest/sim/simulator.h"

namespace ts {

using namespace sim;

namespace {
int64_t secs(double s) { return int64_t(s * double(kNsPerSec)); }
}  // namespace

double Simulator::shift_at(const ActiveEvent& a, int64_t t) const {
  if (t < a.t1) return a.shift_peak * double(t - a.t0) / double(std::max<int64_t>(1, a.t1 - a.t0));
  if (t < a.t2) return a.shift_peak;
  if (t >= a.t3) return a.shift_final;
  return a.shift_peak + (a.shift_final - a.shift_peak) * double(t - a.t2) / double(std::max<int64_t>(1, a.t3 - a.t2));
}

void Simulator::start_injected(int64_t t, EventWriter& w) {
  (void)w;
  // A symbol that is quiet (no event running, past its gap), a few tries.
  uint32_t s = 0;
  bool found = false;
  for (int tries = 0; tries < 8 && !found; ++tries) {
    s = rng_.below(uint32_t(sym_.size()));
    found = sym_[s].anomaly < 0 && t >= sym_[s].free_after_ns && books_[s].has_bbo();
  }
  if (!found) return;
  SymbolState& st = sym_[s];
  const SimBook& book = books_[s];

  int enabled[kSimEventTypeCount];
  int n_enabled = 0;
  for (int k = 0; k < kSimEventTypeCount; ++k) {
    if (enabled_types_ & (1u << k)) enabled[n_enabled++] = k;
  }
  auto type = SimEventType(enabled[rng_.below(uint32_t(n_enabled))]);

  const double p0 = book.mid();
  const double step = double(st.step);
  const double lu = double(st.limit_up), ld = double(st.limit_down);
  const double u = ushape(t);
  const double busy_rate = std::max(60.0, 2.5 * st.rate * u);

  ActiveEvent a;
  a.sym = s;
  a.t0 = t;
  double magnitude = 0;
  // A move that does not fit inside the band turns into its mirror.
  auto room_down = [&] { return (p0 - ld) / p0 - 0.005; };
  auto room_up = [&] { return (lu - p0) / p0 - 0.005; };
  if (type == SimEventType::kFlashCrash && room_down() < 0.03) type = SimEventType::kPump;
  if (type == SimEventType::kPump && room_up() < 0.03) type = SimEventType::kFlashCrash;
  if ((type == SimEventType::kFlashCrash && room_down() < 0.03) ||
      (type == SimEventType::kLimitUpRun && p0 >= lu - step) ||
      (type == SimEventType::kLimitDownRun && p0 <= ld + step)) {
    return;
  }
  a.type = type;

  switch (type) {
    case SimEventType::kFlashCrash:
    case SimEventType::kPump: {
      const bool down = type == SimEventType::kFlashCrash;
      magnitude = std::min(rng_.uniform(0.03, 0.07), down ? room_down() : room_up());
      a.t1 = t + secs(rng_.uniform(10, 60));
      a.t2 = a.t1 + secs(rng_.uniform(2, 5));
      a.t3 = a.t2 + secs(rng_.uniform(10, 60));
      a.shift_peak = (down ? -1 : 1) * magnitude * p0;
      a.shift_final = a.shift_peak * (1.0 - (down ? rng_.uniform(0.3, 0.6) : rng_.uniform(0.2, 0.5)));
      a.rate = busy_rate;
      break;
    }
    case SimEventType::kLimitUpRun:
    case SimEventType::kLimitDownRun: {
      const bool up = type == SimEventType::kLimitUpRun;
      const double limit = up ? lu : ld;
      magnitude = std::abs(limit - p0) / double(st.prev_close);
      a.t1 = t + secs(20 + 400 * magnitude);
      a.t2 = a.t1 + secs(rng_.uniform(30, 180));
      a.t3 = a.t2 + secs(rng_.uniform(10, 30));
      // Beyond the limit by more than the quiet random walk can undo while sealed (~4 bps/s^0.5
      // over minutes): the fair price stays past the limit, so the book stays sealed.
      a.shift_peak = limit + (up ? 1 : -1) * std::max(3 * step, 0.01 * p0) - p0;
      // Opens: the fair price comes back 1-3% inside the limit.
      a.shift_final = limit * (1.0 + (up ? -1 : 1) * rng_.uniform(0.01, 0.03)) - p0;
      a.rate = busy_rate;
      break;
    }
    case SimEventType::kVolumeBurst: {
      magnitude = rng_.uniform(10, 30);
      a.t1 = a.t2 = a.t3 = t + secs(rng_.uniform(20, 90));
      // Extra steps trade half the time; a quiet step trades ~kQuietTradesPerStep of the time.
      constexpr double kQuietTradesPerStep = 0.19;
      const double quiet_trades = st.rate * u * kQuietTradesPerStep / (1.0 - opt_.hawkes_branching);
      a.rate = std::max(20.0, 2.0 * (magnitude - 1.0) * quiet_trades);
      break;
    }
    case SimEventType::kLiquidityWithdrawal: {
      // The wide book must fit inside the band (with room for a few levels beyond the touch).
      const double room_levels = std::floor(std::min(lu - p0, p0 - ld) / step) - 4;
      const double levels = std::min(std::round(rng_.uniform(10, 25)), 2 * room_levels);
      if (levels < 8) return;
      a.wide_half_spread = 0.5 * levels * step;
      magnitude = levels * step;
      a.t1 = t + secs(3);
      a.t2 = a.t1 + secs(rng_.uniform(10, 40));
      a.t3 = a.t2 + secs(5);
      a.target_orders = std::max(2, book.total_orders() * 15 / 100);
      a.rate = 150;
      break;
    }
    case SimEventType::kSpoofing: {
      a.spoof_side = rng_.chance(0.5) ? Side::kBuy : Side::kSell;
      const SimSide& side = book.side(a.spoof_side);
      Qty depth = 0;
      const int levels = std::min(side.levels, 5);
      for (int k = 0; k < levels; ++k) depth += side.level(k).qty;
      const double avg_level = levels ? double(depth) / levels : 1000.0;
      magnitude = rng_.uniform(10, 30);
      a.spoof_qty = std::max<Qty>(100, Qty(std::llround(magnitude * avg_level / 100.0)) * 100);
      magnitude = double(a.spoof_qty) / avg_level;
      a.spoof_cycles = 3 + int(rng_.below(4));
      int64_t at = t;
      for (int c = 0; c < a.spoof_cycles; ++c) {
        a.spoof_times[2 * c] = at;
        at += secs(rng_.uniform(2, 6));
        a.spoof_times[2 * c + 1] = at;
        at += secs(rng_.uniform(1, 3));
      }
      a.t1 = a.t2 = a.t3 = a.spoof_times[2 * a.spoof_cycles - 1] + 1;
      a.rate = 0;  // scheduled by spoof_times
      break;
    }
  }
  // Never across a session boundary: the event must fit in this session.
  if (a.t3 >= SimCalendar::next_boundary(t) || a.t3 >= end_t_) return;

  a.next_ns = t;
  a.label = injected_.size();
  injected_.push_back(InjectedEvent{st.id, type, exch_ns(a.t0), exch_ns(a.t3), magnitude});
  // The move starts from where the book is now.
  st.base = p0;
  st.fair_ns = t;
  st.anomaly = int32_t(active_.size());
  active_.push_back(a);
}

void Simulator::finish_injected(size_t index) {
  ActiveEvent& a = active_[index];
  SymbolState& st = sym_[a.sym];
  st.base += a.shift_final;
  st.anomaly = -1;
  st.free_after_ns = a.t3 + secs(opt_.anomaly_gap_s);
  if (index + 1 != active_.size()) {
    active_[index] = active_.back();
    sym_[active_[index].sym].anomaly = int32_t(index);
  }
  active_.pop_back();
}

}  // namespace ts
