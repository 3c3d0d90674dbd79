#pragma once
// Human-readable pieces of an alert, shared by the sinks (off the hot path; allocates).
#include <cstdint>
#include <string>

#include "core/symbol_table.h"
#include "detect/alert.h"

namespace ts {

// Hours east of UTC of a market's exchange-local time at `exch_ts_ns`, from the tz database
// (core/time_zone.h): Asia/Shanghai (+8) for Shanghai, Shenzhen and Beijing; America/New_York
// (-4 in daylight-saving time, else -5) for US markets; 0 for unknown markets. Without tzdata,
// the standard offsets (+8, -5).
int exchange_utc_offset_hours(Market market, int64_t exch_ts_ns);
// The symbol's name, or "#<id>" for an id the table does not know.
std::string symbol_label(const SymbolTable& symbols, SymbolId id);
// "09:31:07.120", exchange-local.
std::string format_exchange_time(int64_t exch_ts_ns, Market market);
// Price in currency with as many decimals as the tick size needs ("1850.12").
std::string format_price(Price ticks, double tick_size);
double price_in_currency(Price ticks, double tick_size);
// A value as a person reads it: "312.5", "200", "1000000", "0.82".
std::string format_number(double v);
// Appends each of the alert's values as " name=value (>=threshold)" (" name=value" for kInfo
// values): the part of an alert line that the stdout sink and notifications share.
void append_alert_values(std::string& out, const Alert& a);
// detect (or the last stamped stage) minus receive, ns; -1 when the times were not stamped.
int64_t alert_latency_ns(const StageTimes& t);

}  // namespace ts
