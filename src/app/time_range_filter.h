#pragma once
// `--from` / `--to` on replay, record and publish (app/time_arg.h for the forms): a Source that
// passes on only the events with from <= exch_ts < to. A bound written without a date or zone
// ("10:50") is fixed per symbol, on its first event, in that symbol's exchange zone (the
// instrument master's time zone, else its market's: America/New_York for US tickers,
// Asia/Shanghai for .SH/.SZ/.BJ, UTC otherwise) on the local date of that event. Events before
// --from are read and skipped without pacing, so a paced replay of 10:50-11:00 starts at 10:50.
// Every stage starts from nothing at --from (baselines, books): `--state-in` carries volume
// profiles; a book built from a feed's snapshots needs its events from the open.
// When both bounds are absolute the source ends at the first event at or past --to (inputs are
// merged in exchange-time order); otherwise it reads the input to its end.
// Threading: driven by the source thread, like the source it wraps.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/time_arg.h"
#include "core/symbol_table.h"
#include "core/time_zone.h"
#include "ingest/source.h"

namespace ts {

class TimeRangeSource : public Source {
 public:
  // Empty `from`/`to`: no bound on that side. Errors: a bound that does not parse (the message
  // names the flag), or --from not before --to when both are absolute.
  static Result<std::unique_ptr<TimeRangeSource>> open(Source& inner, const SymbolTable& symbols,
                                                       const std::string& from, const std::string& to);

  size_t next_batch(std::span<Event> out) override;
  bool done() const override { return ended_ || inner_.done(); }
  std::string describe() const override;
  void feed_counters(FeedCounters& out) const override { inner_.feed_counters(out); }

  bool active() const { return from_ || to_; }
  uint64_t skipped_before() const { return before_; }
  uint64_t skipped_after() const { return after_; }
  uint64_t passed() const { return passed_; }
  // The first symbol's resolved window, "GOOG 2012-06-21T10:50:00-04:00 .. 2012-06-21T11:00:00-04:00".
  const std::string& first_window() const { return first_window_; }

 private:
  TimeRangeSource(Source& inner, const SymbolTable& symbols, std::optional<TimeBound> from, std::optional<TimeBound> to)
      : inner_(inner), symbols_(symbols), from_(std::move(from)), to_(std::move(to)) {}
  struct Window {
    int64_t from_ns;
    int64_t to_ns;
  };
  const Window& window(const Event& e);
  int32_t utc_offset_s(SymbolId id, int64_t unix_s);

  Source& inner_;
  const SymbolTable& symbols_;
  std::optional<TimeBound> from_, to_;
  std::vector<std::optional<Window>> windows_;  // per symbol id
  std::map<std::string, std::shared_ptr<const TimeZone>> zones_;  // instrument zones by name
  bool ended_ = false;
  uint64_t before_ = 0, after_ = 0, passed_ = 0;
  std::string first_window_;
};

}  // namespace ts
