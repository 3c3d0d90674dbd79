#include "audit/alert_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/clock.h"

namespace ts {

namespace {

constexpr int64_t kSecPerDay = 86400;

// Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
void civil_from_days(int64_t z, int& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y = static_cast<int>(yoe + era * 400) + (m <= 2);
}

// Day of month of the n-th Sunday of a month.
unsigned nth_sunday(int y, unsigned m, int n) {
  const int64_t first = days_from_civil(y, m, 1);
  const int weekday = static_cast<int>(((first % 7) + 11) % 7);  // 0 = Sunday (1970-01-01 was Thursday)
  return static_cast<unsigned>(1 + (7 - weekday) % 7 + 7 * (n - 1));
}

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

}  // namespace

int exchange_utc_offset_hours(Market market, int64_t exch_ts_ns) {
  switch (market) {
    case Market::kShanghai:
    case Market::kShenzhen:
    case Market::kBeijing: return 8;
    case Market::kUs: {
      int y;
      unsigned m, d;
      civil_from_days(floor_div(exch_ts_ns, kNsPerSec * kSecPerDay), y, m, d);
      const bool dst = (m > 3 && m < 11) || (m == 3 && d >= nth_sunday(y, 3, 2)) ||
                       (m == 11 && d < nth_sunday(y, 11, 1));
      return dst ? -4 : -5;
    }
    case Market::kUnknown: break;
  }
  return 0;
}

std::string format_exchange_time(int64_t exch_ts_ns, Market market) {
  const int64_t local_ms = floor_div(exch_ts_ns, kNsPerMs) + int64_t(exchange_utc_offset_hours(market, exch_ts_ns)) * 3600 * 1000;
  const int64_t ms_of_day = local_ms - floor_div(local_ms, kSecPerDay * 1000) * kSecPerDay * 1000;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", int(ms_of_day / 3'600'000), int(ms_of_day / 60'000 % 60),
                int(ms_of_day / 1000 % 60), int(ms_of_day % 1000));
  return buf;
}

std::string symbol_label(const SymbolTable& symbols, SymbolId id) {
  if (id < symbols.size()) return symbols.name(id);
  std::string s(1, '#');
  s += std::to_string(id);  // (not "#" + to_string(): GCC 12 -Wrestrict false positive)
  return s;
}

double price_in_currency(Price ticks, double tick_size) { return double(ticks) * tick_size; }

std::string format_price(Price ticks, double tick_size) {
  int decimals = 0;
  if (tick_size > 0 && tick_size < 1) decimals = std::min(8, int(std::ceil(-std::log10(tick_size) - 1e-9)));
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, price_in_currency(ticks, tick_size));
  return buf;
}

std::string format_number(double v) {
  char buf[48];
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    std::snprintf(buf, sizeof buf, "%.0f", v);
  } else if (std::fabs(v) >= 1000) {
    std::snprintf(buf, sizeof buf, "%.1f", v);
  } else {
    std::snprintf(buf, sizeof buf, "%.4g", v);
  }
  return buf;
}

void append_alert_values(std::string& out, const Alert& a) {
  for (int i = 0; i < a.value_count && i < Alert::kMaxValues; ++i) {
    const AlertValue& v = a.values[i];
    out += ' ';
    out += v.name ? v.name : "?";
    out += '=';
    out += format_number(v.value);
    if (v.cmp != Cmp::kInfo) {
      out += " (";
      out += cmp_symbol(v.cmp);
      out += format_number(v.threshold);
      out += ')';
    }
  }
}

int64_t alert_latency_ns(const StageTimes& t) {
  if (t.recv_ns <= 0) return -1;
  const int64_t end = t.detect_ns > 0 ? t.detect_ns : t.features_ns > 0 ? t.features_ns : t.book_ns;
  return end > 0 ? end - t.recv_ns : -1;
}

}  // namespace ts
