#include "audit/alert_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <memory>

#include "core/clock.h"
#include "core/decimal.h"
#include "core/time_zone.h"

namespace ts {

namespace {

constexpr int64_t kSecPerDay = 86400;

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The market's zone, loaded once (thread-safe static); null when the tz database lacks it.
const TimeZone* market_zone(Market market) {
  auto load = [](const char* name) -> std::shared_ptr<const TimeZone> {
    auto z = TimeZone::load(name);
    return z.is_ok() ? z.value() : nullptr;
  };
  switch (market) {
    case Market::kShanghai:
    case Market::kShenzhen:
    case Market::kBeijing: {
      static const std::shared_ptr<const TimeZone> shanghai = load("Asia/Shanghai");
      return shanghai.get();
    }
    case Market::kUs: {
      static const std::shared_ptr<const TimeZone> new_york = load("America/New_York");
      return new_york.get();
    }
    case Market::kUnknown: break;
  }
  return nullptr;
}

}  // namespace

int exchange_utc_offset_hours(Market market, int64_t exch_ts_ns) {
  if (const TimeZone* zone = market_zone(market)) {
    return zone->utc_offset_s(floor_div(exch_ts_ns, kNsPerSec)) / 3600;
  }
  // No tz database (tzdata not installed): the markets' standard offsets.
  switch (market) {
    case Market::kShanghai:
    case Market::kShenzhen:
    case Market::kBeijing: return 8;
    case Market::kUs: return -5;
    case Market::kUnknown: break;
  }
  return 0;
}

std::string format_exchange_time(int64_t exch_ts_ns, Market market) {
  const int64_t local_ms =
      floor_div(exch_ts_ns, kNsPerMs) + int64_t(exchange_utc_offset_hours(market, exch_ts_ns)) * 3600 * 1000;
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

std::string price_text(Price ticks, const RefData& ref) { return format_units(ticks, ref.tick); }

double price_number(Price ticks, const RefData& ref) { return std::strtod(price_text(ticks, ref).c_str(), nullptr); }

ValueUnit value_unit(const char* name) {
  if (name == nullptr) return ValueUnit::kPlain;
  const std::string_view n(name);
  if (n == "notional" || n == "typical_minute_notional") return ValueUnit::kNotional;
  if (n == "qty") return ValueUnit::kSize;
  return ValueUnit::kPlain;
}

std::string format_alert_value(double v, ValueUnit unit, const RefData* ref) {
  if (ref == nullptr || unit == ValueUnit::kPlain || !std::isfinite(v)) return format_number(v);
  if (unit == ValueUnit::kSize) return format_units(std::llround(v), ref->size_increment);
  // A notional: the rule computed it exactly (ticks × increments in 128-bit integers, one
  // rounding to double), so printing scale digits gives the exact decimal back.
  const int scale = std::clamp(ref->tick.scale + ref->size_increment.scale, 0, 12);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", scale, v);
  std::string s = buf;
  const size_t dot = s.find('.');
  if (dot != std::string::npos) {
    const size_t keep = dot + 1 + size_t(std::max(0, ref->tick.scale));
    while (s.size() > keep && s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

void append_alert_values(std::string& out, const Alert& a, const RefData* ref) {
  for (int i = 0; i < a.value_count && i < Alert::kMaxValues; ++i) {
    const AlertValue& v = a.values[i];
    const ValueUnit unit = value_unit(v.name);
    out += ' ';
    out += v.name ? v.name : "?";
    out += '=';
    out += format_alert_value(v.value, unit, ref);
    if (v.cmp != Cmp::kInfo) {
      out += " (";
      out += cmp_symbol(v.cmp);
      out += format_alert_value(v.threshold, unit, ref);
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
