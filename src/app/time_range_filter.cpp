#include "app/time_range_filter.h"

#include "audit/alert_format.h"
#include "core/instrument.h"

namespace ts {

Result<std::unique_ptr<TimeRangeSource>> TimeRangeSource::open(Source& inner, const SymbolTable& symbols,
                                                               const std::string& from, const std::string& to) {
  std::optional<TimeBound> f, t;
  for (auto [text, out, flag] : {std::tuple{&from, &f, "--from"}, std::tuple{&to, &t, "--to"}}) {
    if (text->empty()) continue;
    auto b = parse_time_bound(*text);
    if (!b.is_ok()) return Status(StatusCode::kInvalidArgument, std::string(flag) + ": " + b.status().message());
    *out = std::move(b).value();
  }
  if (f && t && f->absolute_ns && t->absolute_ns && *f->absolute_ns >= *t->absolute_ns) {
    return Status(StatusCode::kInvalidArgument, "--from " + from + " is not before --to " + to);
  }
  if (f && t && !f->absolute_ns && !t->absolute_ns && !f->local_day && !t->local_day && !f->utc_offset_s &&
      !t->utc_offset_s && f->time_of_day_ns >= t->time_of_day_ns) {
    return Status(StatusCode::kInvalidArgument, "--from " + from + " is not before --to " + to);
  }
  return std::unique_ptr<TimeRangeSource>(new TimeRangeSource(inner, symbols, std::move(f), std::move(t)));
}

int32_t TimeRangeSource::utc_offset_s(SymbolId id, int64_t unix_s) {
  const RefData& ref = symbols_.ref(id);
  if (ref.instrument && !ref.instrument->time_zone.empty()) {
    auto it = zones_.find(ref.instrument->time_zone);
    if (it == zones_.end()) {
      auto z = TimeZone::load(ref.instrument->time_zone);
      it = zones_.emplace(ref.instrument->time_zone, z.is_ok() ? z.value() : nullptr).first;
    }
    if (it->second) return it->second->utc_offset_s(unix_s);
  }
  return exchange_utc_offset_hours(ref.market, unix_s * 1'000'000'000) * 3600;
}

const TimeRangeSource::Window& TimeRangeSource::window(const Event& e) {
  if (e.symbol >= windows_.size()) windows_.resize(size_t(e.symbol) + 1);
  std::optional<Window>& w = windows_[e.symbol];
  if (!w) {
    auto offset = [&](int64_t unix_s) { return utc_offset_s(e.symbol, unix_s); };
    w = Window{from_ ? resolve_time_bound(*from_, e.exch_ts_ns, offset) : INT64_MIN,
               to_ ? resolve_time_bound(*to_, e.exch_ts_ns, offset) : INT64_MAX};
    if (first_window_.empty()) {
      auto show = [&](int64_t t) {
        return t == INT64_MIN || t == INT64_MAX ? std::string("…")
                                                : format_local_ns(t, utc_offset_s(e.symbol, t / 1'000'000'000));
      };
      first_window_ = symbols_.name(e.symbol) + " " + show(w->from_ns) + " .. " + show(w->to_ns);
    }
  }
  return *w;
}

size_t TimeRangeSource::next_batch(std::span<Event> out) {
  if (!active()) return inner_.next_batch(out);
  // Refill until something passes or the inner source has nothing right now (as SymbolFilterSource).
  while (!ended_) {
    const size_t n = inner_.next_batch(out);
    if (n == 0) return 0;
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
      const Event& e = out[i];
      if (e.symbol >= symbols_.size()) {  // not a symbol's event: the pipeline counts it
        out[kept++] = e;
        continue;
      }
      const Window& w = window(e);
      if (e.exch_ts_ns < w.from_ns) {
        ++before_;
      } else if (e.exch_ts_ns >= w.to_ns) {
        ++after_;
        if (to_ && to_->absolute_ns) {  // merged in time order: nothing later can pass
          ended_ = true;
          break;
        }
      } else {
        if (kept != i) out[kept] = e;
        ++kept;
      }
    }
    passed_ += kept;
    if (kept > 0) return kept;
  }
  return 0;
}

std::string TimeRangeSource::describe() const {
  if (!active()) return inner_.describe();
  return inner_.describe() + " (exchange time " + (from_ ? from_->text : "…") + " .. " + (to_ ? to_->text : "…") + ")";
}

}  // namespace ts
