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

// Exact decimals in the instrument's precision (core/decimal.h), the one formatting of prices,
// sizes and notionals in every output (stdout, JSONL, SQLite/PostgreSQL, Kafka, notifications,
// the dashboard API): 276 ticks of 0.01 → "2.76", never "2.7600000000000002".
std::string price_text(Price ticks, const RefData& ref);
// The JSON / REAL form of price_text: the double nearest to that decimal, so every JSON writer
// and database prints it back as "2.76".
double price_number(Price ticks, const RefData& ref);
// What an alert value measures, from its name: a notional ("notional",
// "typical_minute_notional": currency, tick.scale + size_increment.scale digits, trailing zeros
// trimmed down to the tick's, as core/decimal.h format_notional), a size ("qty": size
// increments, written in the instrument's units), or a plain number (z-scores, bps, multiples).
enum class ValueUnit { kPlain, kNotional, kSize };
ValueUnit value_unit(const char* name);
// `v` as text in its unit ("1851100.00", "0.00005", "312.5"); plain numbers as format_number().
// `ref` null: format_number() for every unit.
std::string format_alert_value(double v, ValueUnit unit, const RefData* ref);
// A value as a person reads it: "312.5", "200", "1000000", "0.82".
std::string format_number(double v);
// Appends each of the alert's values as " name=value (>=threshold)" (" name=value" for kInfo
// values): the part of an alert line that the stdout sink and notifications share.
// `ref`: the symbol's reference data (notionals and sizes in its precision); null: plain numbers.
void append_alert_values(std::string& out, const Alert& a, const RefData* ref = nullptr);
// detect (or the last stamped stage) minus receive, ns; -1 when the times were not stamped.
int64_t alert_latency_ns(const StageTimes& t);

}  // namespace ts
