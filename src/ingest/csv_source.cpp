#include "ingest/csv_source.h"

#include "core/log.h"

#include "ingest/csv_format.h"
#include "ingest/field_parse.h"
#include "ingest/line_reader.h"

namespace ts {

using ingest::FieldError;
using ingest::Line;
using ingest::LineReader;

namespace {

bool parse_kind(std::string_view s, EventKind& k) {
  for (int i = 0; i < kEventKindCount; ++i) {
    if (s == event_kind_name(static_cast<EventKind>(i))) {
      k = static_cast<EventKind>(i);
      return true;
    }
  }
  return false;
}

bool parse_phase(std::string_view s, Phase& p) {
  for (int i = 0; i <= static_cast<int>(Phase::kHalted); ++i) {
    if (s == phase_name(static_cast<Phase>(i))) {
      p = static_cast<Phase>(i);
      return true;
    }
  }
  return false;
}

bool parse_side(std::string_view s, Side& side) {
  if (s.size() != 1) return false;
  switch (s[0]) {
    case 'B': side = Side::kBuy; return true;
    case 'S': side = Side::kSell; return true;
    case 'N': side = Side::kNone; return true;
    default: return false;
  }
}

size_t columns_for(EventKind k) {
  switch (k) {
    case EventKind::kSnapshot: return ingest::kCsvSnapshotColumns;
    case EventKind::kTrade: return ingest::kCsvTradeColumns;
    case EventKind::kStatus: return ingest::kCsvStatusColumns;
    default: return ingest::kCsvOrderColumns;
  }
}

class CsvSource final : public Source {
 public:
  CsvSource(std::unique_ptr<LineReader> lines, SymbolTable& symbols, InputErrors& errors)
      : lines_(std::move(lines)), symbols_(symbols), errors_(errors) {}

  size_t next_batch(std::span<Event> out) override {
    size_t n = 0;
    Line line;
    while (n < out.size() && lines_->next(line)) {
      if (line.number == 1 && line.text.starts_with("kind,")) {  // header
        header_lines_ = 1;
        continue;
      }
      if (line.has_garbage) {
        errors_.report(InputError::kBinaryGarbage, lines_->file_name(), line.number, "control bytes in a text line");
        continue;
      }
      if (line.text.starts_with(ingest::kCsvUnitsKind) && line.text.size() > ingest::kCsvUnitsKind.size() &&
          line.text[ingest::kCsvUnitsKind.size()] == ',') {
        units(line);
        continue;
      }
      if (!decode(line, out[n])) continue;
      if (out[n].exch_ts_ns < last_ts_ns_) {
        report(line, InputError::kOutOfOrder, "time goes backwards");
        continue;
      }
      last_ts_ns_ = out[n].exch_ts_ns;
      ++n;
    }
    if (n == 0 && !done_) {
      done_ = true;
      ingest::report_if_empty(errors_, *lines_, header_lines_);
    }
    return n;
  }
  bool done() const override { return done_; }
  std::string describe() const override { return "csv " + lines_->path(); }

 private:
  void report(const Line& line, InputError kind, std::string_view detail) {
    ingest::report_line_error(errors_, *lines_, line, kind, detail);
  }
  bool fail(const Line& line, InputError kind, std::string_view detail) {
    report(line, kind, detail);
    return false;
  }
  bool fail(const Line& line, FieldError e, std::string_view what) {
    return fail(line, ingest::input_error_for(e), what);
  }

  bool symbol(const Line& line, std::string_view name, SymbolId& id) {
    if (name == last_name_ && last_id_ != kInvalidSymbol) {
      id = last_id_;
      return true;
    }
    if (!ingest::valid_symbol_name(name)) return fail(line, InputError::kUnknownSymbol, "invalid symbol name");
    last_id_ = symbols_.intern(name);
    last_name_.assign(name);
    id = last_id_;
    if (id == kInvalidSymbol) return fail(line, InputError::kUnknownSymbol, "symbol table full");
    return true;
  }

  bool i64(const Line& line, std::string_view s, int64_t& v, const char* what) {
    const FieldError e = ingest::parse_i64(s, v);
    return e == FieldError::kOk || fail(line, e, what);
  }
  bool u64(const Line& line, std::string_view s, uint64_t& v, const char* what) {
    const FieldError e = ingest::parse_u64(s, v);
    return e == FieldError::kOk || fail(line, e, what);
  }

  bool decode(const Line& line, Event& ev) {
    constexpr size_t kMax = ingest::kCsvSnapshotColumns + 1;
    std::string_view f[kMax];
    const size_t n = ingest::split_fields(line.text, f, kMax);
    EventKind kind;
    if (!parse_kind(f[0], kind)) return fail(line, InputError::kMalformedLine, "unknown kind");
    const bool old_snapshot = kind == EventKind::kSnapshot && n == ingest::kCsvSnapshotColumnsNoResync;
    if (n != columns_for(kind) && !old_snapshot) {
      return fail(line, InputError::kWrongColumnCount, "wrong column count for its kind");
    }
    ev = Event::make(kind);
    if (!symbol(line, f[1], ev.symbol)) return false;
    if (!i64(line, f[2], ev.exch_ts_ns, "bad exch_ts_ns") || !u64(line, f[3], ev.seq, "bad seq")) return false;
    ev.recv_ts_ns = 0;
    switch (kind) {
      case EventKind::kSnapshot: return snapshot(line, f + 4, n - 4, ev);
      case EventKind::kTrade: {
        TradeBody& t = ev.trade;
        if (!i64(line, f[4], t.price, "bad price") || !i64(line, f[5], t.qty, "bad qty")) return false;
        if (!parse_side(f[6], t.aggressor)) return fail(line, InputError::kMalformedLine, "aggressor not B/S/N");
        if (!u64(line, f[7], t.buy_order_id, "bad buy_order_id") ||
            !u64(line, f[8], t.sell_order_id, "bad sell_order_id")) {
          return false;
        }
        if (t.price <= 0) return fail(line, InputError::kBadPrice, "price <= 0");
        if (t.qty <= 0) return fail(line, InputError::kBadSize, "qty <= 0");
        return true;
      }
      case EventKind::kStatus:
        if (!parse_phase(f[4], ev.status.phase)) return fail(line, InputError::kMalformedLine, "unknown phase");
        return true;
      default: {
        OrderBody& o = ev.order;
        if (!u64(line, f[4], o.order_id, "bad order_id") || !i64(line, f[5], o.price, "bad price") ||
            !i64(line, f[6], o.qty, "bad qty")) {
          return false;
        }
        if (!parse_side(f[7], o.side)) return fail(line, InputError::kMalformedLine, "side not B/S/N");
        // An add must rest at a price; cancels and executions name the order, price may be 0.
        if (kind == EventKind::kOrderAdd ? o.price <= 0 : o.price < 0) {
          return fail(line, InputError::kBadPrice, "price out of range");
        }
        if (o.qty <= 0) return fail(line, InputError::kBadSize, "qty <= 0");
        return true;
      }
    }
  }

  // "units,SYMBOL,TICK,SIZE_INCREMENT": the file's prices are integers of TICK and its sizes of
  // SIZE_INCREMENT; they win over the instrument reference (a different one is logged once).
  void units(const Line& line) {
    std::string_view f[ingest::kCsvUnitsColumns + 1];
    if (ingest::split_fields(line.text, f, ingest::kCsvUnitsColumns + 1) != ingest::kCsvUnitsColumns) {
      report(line, InputError::kWrongColumnCount, "units line: expected units,symbol,tick,size_increment");
      return;
    }
    SymbolId id;
    if (!symbol(line, f[1], id)) return;
    auto tick = Decimal::parse(f[2]);
    auto size = Decimal::parse(f[3]);
    if (!tick.is_ok() || !tick.value().is_positive()) {
      report(line, InputError::kBadPrice, "units line: tick is not a positive decimal");
      return;
    }
    if (!size.is_ok() || !size.value().is_positive()) {
      report(line, InputError::kBadSize, "units line: size_increment is not a positive decimal");
      return;
    }
    RefData& r = symbols_.mutable_ref(id);
    if (r.tick == tick.value() && r.size_increment == size.value()) return;
    if (r.instrument != nullptr) {
      spdlog::warn("{}:{}: {} is written in tick {} and size {}; the instrument reference says {} and {}: the file's "
                   "units are used (its prices and sizes are whole numbers of them)",
                   lines_->file_name(), line.number, r.name, tick.value().to_string(), size.value().to_string(),
                   r.tick.to_string(), r.size_increment.to_string());
    }
    r.tick = tick.value();
    r.tick_size = r.tick.to_double();
    r.size_increment = size.value();
  }

  // f points at the body: phase, last, prev_close, cum_volume, cum_turnover, bids, asks, and
  // (when body_fields has room for it) resync.
  bool snapshot(const Line& line, const std::string_view* f, size_t body_fields, Event& ev) {
    SnapshotBody& s = ev.snapshot;
    if (!parse_phase(f[0], s.phase)) return fail(line, InputError::kMalformedLine, "unknown phase");
    if (!i64(line, f[1], s.last, "bad last") || !i64(line, f[2], s.prev_close, "bad prev_close") ||
        !i64(line, f[3], s.cum_volume, "bad cum_volume")) {
      return false;
    }
    const FieldError e = ingest::parse_f64(f[4], s.cum_turnover);
    if (e != FieldError::kOk) return fail(line, e, "bad cum_turnover");
    if (s.last < 0 || s.prev_close < 0) return fail(line, InputError::kBadPrice, "negative last/prev_close");
    if (s.cum_volume < 0 || s.cum_turnover < 0) return fail(line, InputError::kBadSize, "negative cum volume/turnover");
    Level* sides[2] = {s.bids, s.asks};
    for (int side = 0; side < 2; ++side) {
      for (int i = 0; i < kBookLevels; ++i) {
        Level& l = sides[side][i];
        const std::string_view* lf = f + 5 + (side * kBookLevels + i) * 2;
        if (!i64(line, lf[0], l.price, "bad level price") || !i64(line, lf[1], l.qty, "bad level qty")) return false;
        if (l.price < 0 || (l.price == 0 && l.qty != 0)) return fail(line, InputError::kBadPrice, "bad level price");
        if (l.price > 0 && l.qty <= 0) return fail(line, InputError::kBadSize, "level qty <= 0");
      }
    }
    // The resync flag (0/1) ends the line; older files without it read as 0.
    constexpr size_t kResyncAt = 5 + 4 * kBookLevels;
    if (body_fields > kResyncAt) {
      if (f[kResyncAt] == "1") {
        s.resync = 1;
      } else if (f[kResyncAt] != "0") {
        return fail(line, InputError::kMalformedLine, "resync not 0/1");
      }
    }
    const Price bid = s.bids[0].price, ask = s.asks[0].price;
    const bool auction = s.phase == Phase::kOpeningAuction || s.phase == Phase::kClosingAuction;
    if (bid > 0 && ask > 0 && (auction ? bid > ask : bid >= ask)) {
      return fail(line, InputError::kCrossedBook, "best bid >= best ask");
    }
    if (s.prev_close > 0 && symbols_.ref(ev.symbol).prev_close != s.prev_close) {
      symbols_.set_prev_close(ev.symbol, s.prev_close);
    }
    return true;
  }

  std::unique_ptr<LineReader> lines_;
  SymbolTable& symbols_;
  InputErrors& errors_;
  int64_t last_ts_ns_ = INT64_MIN;
  std::string last_name_;
  SymbolId last_id_ = kInvalidSymbol;
  uint64_t header_lines_ = 0;
  bool done_ = false;
};

}  // namespace

Result<std::unique_ptr<Source>> make_csv_source(const std::string& path, SymbolTable& symbols, InputErrors& errors) {
  auto lines = LineReader::open(path, errors);
  if (!lines) return lines.status().with_context("opening csv events file " + path);
  return make_csv_source_from_reader(std::move(lines).value(), symbols, errors);
}

std::unique_ptr<Source> make_csv_source_from_reader(std::unique_ptr<LineReader> lines, SymbolTable& symbols, InputErrors& errors) {
  return std::make_unique<CsvSource>(std::move(lines), symbols, errors);
}

}  // namespace ts
