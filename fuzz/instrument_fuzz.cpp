// libFuzzer target for the instrument reference file and an exchange calendar
// (docs/instruments.md; input: instruments CSV @@ calendar CSV, fuzz_files.h). Both are parsed
// from memory as a run loads them (bad rows counted and named by line, a file with no valid
// row an error), then every symbol named in the instrument text is resolved, and its session
// (the calendar "fz" parsed from part 2 where a row names it, or a shipped market's schedule)
// is asked for the phase, the trading date and whether it is a trading day at instants from
// the far past to the far future. Nothing may crash, read past a buffer or overflow.
//   build/fuzz/fuzz/instrument_fuzz -max_total_time=60 fuzz/corpus/instrument_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/civil_time.h"
#include "core/exchange_calendar.h"
#include "core/instrument_table.h"
#include "core/market_calendars.h"
#include "fuzz_files.h"

namespace {

constexpr int64_t kInstants[] = {INT64_MIN, -86'400'000'000'000, -1, 0, 1'700'000'000'000'000'000,
                                 1'675'214'100'000'000'000, INT64_MAX};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data), size), 2);
  ts::InputErrors errors;
  errors.set_quiet(true);
  ts::MarketCalendars calendars;
  auto cal = ts::ExchangeCalendar::parse("fz", parts[1], "fz.csv", errors);
  if (cal.is_ok()) {
    const ts::ExchangeCalendar& c = cal.value();
    for (int64_t day : {INT64_MIN / 2, int64_t(-1), int64_t(0), int64_t(19'000), INT64_MAX / 2}) {
      (void)c.is_holiday(day);
      (void)c.holiday_name(day);
      (void)c.covers(day);
    }
    calendars.add(std::move(cal).value());
  }
  ts::InstrumentTable table;
  auto loaded = table.load_csv_text(parts[0], "instruments.csv", errors);
  // Every first field of the text is a symbol to resolve (the header's "symbol" too).
  std::string_view text = parts[0];
  for (int rows = 0; !text.empty() && rows < 64; ++rows) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    auto in = table.resolve(line.substr(0, line.find(',')));
    if (!in.is_ok()) continue;
    auto session = calendars.session_for(*in.value());
    if (!session.is_ok()) continue;
    for (int64_t t : kInstants) {
      (void)session.value().phase_at(t);
      (void)session.value().trading_date(t);
      (void)session.value().is_trading_day(ts::floor_div(t, int64_t(86'400'000'000'000)));
    }
  }
  return 0;
}
