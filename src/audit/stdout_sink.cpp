#include "audit/stdout_sink.h"

#include <cerrno>
#include <cstring>

#include "audit/alert_format.h"

namespace ts {

std::string format_alert_line(const Alert& a, const SymbolTable& symbols) {
  const bool known = a.symbol < symbols.size();
  const Market market = known ? symbols.ref(a.symbol).market : Market::kUnknown;
  const double tick = known ? symbols.ref(a.symbol).tick_size : 0.01;
  std::string s = format_exchange_time(a.exch_ts_ns, market);
  s += ' ';
  s += symbol_label(symbols, a.symbol);
  s += ' ';
  s += alert_type_name(a.type);
  s += ' ';
  s += severity_name(a.severity);
  append_alert_values(s, a, known ? &symbols.ref(a.symbol) : nullptr);
  s += " price=";
  s += known ? price_text(a.price, symbols.ref(a.symbol)) : format_price(a.price, tick);
  const int64_t lat = alert_latency_ns(a.t);
  if (lat >= 0) {
    s += " latency=";
    s += std::to_string(lat / 1000);
    s += "us";
  }
  return s;
}

Status StdoutSink::write(const Alert& a, const SymbolTable& symbols) {
  if (!out_) return Status(StatusCode::kIoError, "stdout sink: closed");
  const std::string line = format_alert_line(a, symbols);
  if (std::fprintf(out_, "%s\n", line.c_str()) < 0 || std::ferror(out_)) {
    std::clearerr(out_);
    return Status(StatusCode::kIoError, std::string("stdout sink: write failed: ") + std::strerror(errno));
  }
  return Status::ok();
}

Status StdoutSink::flush() {
  if (!out_) return Status::ok();
  if (std::fflush(out_) != 0) {
    std::clearerr(out_);
    return Status(StatusCode::kIoError, std::string("stdout sink: flush failed: ") + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace ts
