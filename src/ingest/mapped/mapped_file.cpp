#include "ingest/mapped/mapped_file.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <vector>

#include "core/civil_time.h"
#include "ingest/csv_split.h"
#include "ingest/decimal_ticks.h"
#include "ingest/field_parse.h"
#include "ingest/line_reader.h"
#include "ingest/read_whole.h"

namespace ts::mapped {

using ingest::FieldError;
using ingest::Line;
using ingest::LineReader;

int64_t local_midnight_ns(const TimeZone& zone, int yyyymmdd) {
  const CivilDate d{yyyymmdd / 10000, static_cast<uint32_t>(yyyymmdd / 100 % 100), static_cast<uint32_t>(yyyymmdd % 100)};
  const int64_t local_s = days_from_civil(d) * kSecondsPerDay;
  // The offset in effect at that local midnight (guess with the offset at the same UTC instant).
  const int32_t offset = zone.utc_offset_s(local_s - zone.utc_offset_s(local_s));
  return (local_s - offset) * kNsPerSecond;
}

namespace {

// "20220601", "2022.06.01", "2022-06-01", "2022/06/01" → 20220601; 0 if not a date.
int parse_date(std::string_view s) {
  char digits[8];
  if (s.size() == 8) {
    std::memcpy(digits, s.data(), 8);
  } else if (s.size() == 10 && s[4] == s[7] && (s[4] == '.' || s[4] == '-' || s[4] == '/')) {
    std::memcpy(digits, s.data(), 4);
    std::memcpy(digits + 4, s.data() + 5, 2);
    std::memcpy(digits + 6, s.data() + 8, 2);
  } else {
    return 0;
  }
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return 0;
    v = v * 10 + (c - '0');
  }
  const int m = v / 100 % 100, d = v % 100;
  return (m >= 1 && m <= 12 && d >= 1 && d <= 31) ? v : 0;
}

// 93000120 (HHMMSSfff) → ns after midnight.
bool parse_hhmmssfff_ns(std::string_view s, int64_t& out) {
  int64_t v = 0;
  if (ingest::parse_i64(s, v) != FieldError::kOk || v < 0) return false;
  const int64_t ms = v % 1000, sec = v / 1000 % 100, min = v / 100000 % 100, h = v / 10000000;
  if (h > 24 || min > 59 || sec > 60) return false;
  out = ((h * 60 + min) * 60 + sec) * kNsPerSecond + ms * 1'000'000;
  return true;
}

// A code column bound to its index.
struct BoundCodes {
  int col = -1;
  const std::vector<std::pair<std::string, uint8_t>>* codes = nullptr;
  bool lookup(std::string_view cell, uint8_t& v) const {
    for (const auto& [code, value] : *codes) {
      if (cell == code) {
        v = value;
        return true;
      }
    }
    return false;
  }
};

class MappedFile final : public Source {
 public:
  MappedFile(const Layout& layout, const FileLayout& file, std::unique_ptr<LineReader> lines,
             std::shared_ptr<const TimeZone> zone, int64_t folder_midnight_ns, SymbolTable& symbols, InputErrors& errors)
      : f_(file), ticks_(file.price_scale), lines_(std::move(lines)), zone_(std::move(zone)),
        folder_midnight_ns_(folder_midnight_ns), symbols_(symbols), errors_(errors),
        where_("layout " + layout.origin + ": " + file.key) {}

  Status bind_header();
  size_t next_batch(std::span<Event> out) override;
  bool done() const override { return done_; }
  std::string describe() const override { return "mapped " + lines_->path(); }

 private:
  enum class Row { kEvent, kBad, kSkip };
  bool read_row(Event& ev, Line& line);  // false at the end of the file
  Row decode(const Line& line, Event& ev);
  Row decode_order(const Line& line, RowKind kind, Event& ev);
  Row decode_trade(const Line& line, Event& ev);
  Row decode_snapshot(const Line& line, Event& ev);
  bool symbol(const Line& line, SymbolId& id);
  bool time(const Line& line, int64_t& ts);
  bool level(const Line& line, int i, bool bid, Level& out);
  void load_grouped();

  std::string_view cell(int col) const { return fields_[static_cast<size_t>(col)]; }
  std::string_view cell(Field f) const { return fields_[static_cast<size_t>(col_[static_cast<int>(f)])]; }
  bool mapped(Field f) const { return col_[static_cast<int>(f)] >= 0; }
  const std::string& name(Field f) const { return f_.column(f); }

  Row fail(const Line& line, InputError kind, std::string_view detail) {
    ingest::report_line_error(errors_, *lines_, line, kind, detail);
    return Row::kBad;
  }
  Row fail(const Line& line, FieldError e, std::string_view column) {
    return fail(line, ingest::input_error_for(e), "bad " + std::string(column));
  }
  // Parses a price cell into ticks; false after reporting.
  bool price(const Line& line, Field f, Price& out) {
    const FieldError e = ticks_.parse(cell(f), out);
    if (e == FieldError::kOk) return true;
    fail(line, e, name(f));
    return false;
  }
  bool size(const Line& line, std::string_view s, std::string_view column, int64_t& out) {
    const FieldError e = ingest::parse_i64(s, out);
    if (e != FieldError::kOk) {
      fail(line, e, column);
      return false;
    }
    if (f_.size_scale != 1 && __builtin_mul_overflow(out, f_.size_scale, &out)) {
      fail(line, InputError::kBadSize, std::string(column) + " overflows at size_scale");
      return false;
    }
    return true;
  }
  bool u64(const Line& line, Field f, uint64_t& out) {
    const FieldError e = ingest::parse_u64(cell(f), out);
    if (e == FieldError::kOk) return true;
    fail(line, e, name(f));
    return false;
  }

  const FileLayout f_;  // a copy: the layout may be gone once the source is open
  const ingest::DecimalTicks ticks_;  // f_.price_scale, resolved once
  std::unique_ptr<LineReader> lines_;
  std::shared_ptr<const TimeZone> zone_;
  int64_t folder_midnight_ns_;
  SymbolTable& symbols_;
  InputErrors& errors_;
  std::string where_;

  // Bound at header time.
  size_t ncols_ = 0;
  std::vector<std::string_view> fields_;
  std::array<int, kFieldCount> col_{};
  int time_col_ = -1, date_col_ = -1, symbol_col_ = -1;
  std::array<std::array<int, kBookLevels>, 4> level_col_{};  // bid price, bid size, ask price, ask size
  BoundCodes kind_, side_, aggressor_, phase_;

  // Per-row caches.
  std::array<char, 32> last_code_{};
  size_t last_code_len_ = SIZE_MAX;
  SymbolId last_symbol_ = kInvalidSymbol;
  std::array<char, 16> last_date_{};
  size_t last_date_len_ = SIZE_MAX;
  int64_t date_midnight_ns_ = 0;
  std::string symbol_name_;  // reused buffer for prefix + code + suffix
  Price limit_up_ = 0, limit_down_ = 0;  // the snapshot row's limit prices, 0 = not given

  int64_t last_ts_ns_ = INT64_MIN;
  std::vector<int64_t> last_ts_by_symbol_;  // sorted_by = "symbol"
  std::vector<Event> grouped_;              // sorted_by = "symbol": the whole file, in file order
  std::vector<uint32_t> grouped_order_;     // ... and its rows in time order
  size_t grouped_pos_ = 0;
  bool grouped_loaded_ = false;
  bool done_ = false;
};

Status MappedFile::bind_header() {
  Line line;
  if (!lines_->next(line)) {
    return Status(StatusCode::kParseError,
                  lines_->path() + (lines_->truncated() ? ": compressed stream is corrupt or cut off before the header line"
                                                        : ": empty file, expected a header line"));
  }
  ncols_ = ingest::split_fields(line.text, nullptr, 0);
  std::vector<std::string_view> header(ncols_);
  ingest::split_fields(line.text, header.data(), header.size());
  auto find = [&](const std::string& key, const std::string& column, int& out) -> Status {
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] == column) {
        out = static_cast<int>(i);
        return Status::ok();
      }
    }
    return Status(StatusCode::kParseError, where_ + "." + key + ": column \"" + column + "\" is not in the header of " +
                                               std::string(lines_->file_name()));
  };
  col_.fill(-1);
  for (auto& row : level_col_) row.fill(-1);
  TS_RETURN_IF_ERROR(find("time.column", f_.time_column, time_col_));
  TS_RETURN_IF_ERROR(find("symbol", f_.symbol.column, symbol_col_));
  if (!f_.date_column.empty()) TS_RETURN_IF_ERROR(find("date", f_.date_column, date_col_));
  for (int i = 0; i < kFieldCount; ++i) {
    if (!f_.fields[i].empty()) TS_RETURN_IF_ERROR(find(std::string(kFieldNames[i]), f_.fields[i], col_[i]));
  }
  struct CodeBinding {
    const char* key;
    const CodeTable& table;
    BoundCodes& bound;
  };
  for (const CodeBinding& b : {CodeBinding{"kind", f_.kind, kind_}, CodeBinding{"side", f_.side, side_},
                               CodeBinding{"aggressor", f_.aggressor, aggressor_}, CodeBinding{"phase", f_.phase, phase_}}) {
    b.bound.codes = &b.table.codes;
    if (!b.table.column.empty()) TS_RETURN_IF_ERROR(find(std::string(b.key) + ".column", b.table.column, b.bound.col));
  }
  for (int k = 0; k < kLevelFieldCount; ++k) {
    const std::string& pattern = f_.level_patterns[k];
    if (pattern.empty()) continue;
    const size_t at = pattern.find("{n}");
    for (int n = 1; n <= f_.levels; ++n) {
      const std::string column = pattern.substr(0, at) + std::to_string(n) + pattern.substr(at + 3);
      int c = -1;
      TS_RETURN_IF_ERROR(find(std::string(kLevelFieldNames[k]) + " = \"" + pattern + "\"", column, c));
      if (k < 4) level_col_[k][n - 1] = c;  // counts: checked present; Level carries no count
    }
  }
  if (f_.time_format <= TimeFormat::kSecondsOfDay && date_col_ < 0 && folder_midnight_ns_ == INT64_MIN) {
    return Status(StatusCode::kInvalidArgument,
                  where_ + ".date: the time column \"" + f_.time_column +
                      "\" is a time of day: map a date column, or name the day's folder …-YYYYMMDD");
  }
  fields_.resize(ncols_ + 1);
  symbol_name_.reserve(64);
  return Status::ok();
}

bool MappedFile::symbol(const Line& line, SymbolId& id) {
  const std::string_view code = cell(symbol_col_);
  if (code.size() == last_code_len_ && std::memcmp(code.data(), last_code_.data(), code.size()) == 0) {
    id = last_symbol_;
    return true;
  }
  const SymbolRule& rule = f_.symbol;
  if (code.empty()) return fail(line, InputError::kUnknownSymbol, "empty " + rule.column) == Row::kEvent;
  if (rule.digits > 0 && (code.size() != static_cast<size_t>(rule.digits) ||
                          code.find_first_not_of("0123456789") != std::string_view::npos)) {
    return fail(line, InputError::kUnknownSymbol, rule.column + " is not a " + std::to_string(rule.digits) + "-digit code") ==
           Row::kEvent;
  }
  symbol_name_.assign(rule.prefix).append(code).append(rule.suffix);
  last_symbol_ = symbols_.intern(symbol_name_);
  if (last_symbol_ == kInvalidSymbol) {
    last_code_len_ = SIZE_MAX;
    return fail(line, InputError::kUnknownSymbol, "symbol table full") == Row::kEvent;
  }
  if (code.size() <= last_code_.size()) {
    std::memcpy(last_code_.data(), code.data(), code.size());
    last_code_len_ = code.size();
  } else {
    last_code_len_ = SIZE_MAX;
  }
  id = last_symbol_;
  return true;
}

bool MappedFile::time(const Line& line, int64_t& ts) {
  const std::string_view s = cell(time_col_);
  int64_t t = 0;
  bool ok = false;
  switch (f_.time_format) {
    case TimeFormat::kHms: ok = ingest::parse_hms_ns(s, t); break;
    case TimeFormat::kHhmmssfff: ok = parse_hhmmssfff_ns(s, t); break;
    case TimeFormat::kSecondsOfDay: ok = ingest::parse_seconds_ns(s, t) == FieldError::kOk; break;
    default: {
      ok = ingest::parse_i64(s, t) == FieldError::kOk;
      static constexpr int64_t kUnit[] = {1'000'000'000, 1'000'000, 1'000, 1};
      const int64_t unit = kUnit[static_cast<int>(f_.time_format) - static_cast<int>(TimeFormat::kEpochS)];
      if (ok && __builtin_mul_overflow(t, unit, &ts)) ok = false;
      if (!ok) break;
      return true;
    }
  }
  if (!ok) {
    fail(line, ingest::looks_non_finite(s) || s.empty() ? InputError::kNotANumber : InputError::kMalformedLine,
         "bad time in " + f_.time_column);
    return false;
  }
  if (date_col_ < 0) {
    ts = folder_midnight_ns_ + t;
    return true;
  }
  const std::string_view d = cell(date_col_);
  if (d.size() != last_date_len_ || std::memcmp(d.data(), last_date_.data(), d.size()) != 0) {
    const int date = parse_date(d);
    if (date == 0) {
      fail(line, InputError::kMalformedLine, "bad date in " + f_.date_column);
      return false;
    }
    date_midnight_ns_ = local_midnight_ns(*zone_, date);
    std::memcpy(last_date_.data(), d.data(), d.size());  // parse_date: at most 10 bytes
    last_date_len_ = d.size();
  }
  ts = date_midnight_ns_ + t;
  return true;
}

MappedFile::Row MappedFile::decode(const Line& line, Event& ev) {
  RowKind kind = f_.role == FileRole::kSnapshot ? RowKind::kSnapshot : RowKind::kTrade;
  if (kind_.col >= 0) {
    uint8_t v = 0;
    if (!kind_.lookup(cell(kind_.col), v)) return fail(line, InputError::kMalformedLine, f_.kind.column + " not in kind codes");
    kind = static_cast<RowKind>(v);
    if (kind == RowKind::kSkip) return Row::kSkip;
  }
  SymbolId id = 0;
  int64_t ts = 0;
  if (!symbol(line, id) || !time(line, ts)) return Row::kBad;
  Row r = kind == RowKind::kSnapshot ? decode_snapshot(line, ev)
          : kind == RowKind::kTrade  ? decode_trade(line, ev)
                                     : decode_order(line, kind, ev);
  if (r != Row::kEvent) return r;
  if (!mapped(Field::kSeq)) {
    ev.seq = line.number;
  } else if (!u64(line, Field::kSeq, ev.seq)) {
    return Row::kBad;
  }
  ev.symbol = id;
  ev.exch_ts_ns = ts;
  return Row::kEvent;
}

MappedFile::Row MappedFile::decode_order(const Line& line, RowKind kind, Event& ev) {
  uint8_t sv = 0;
  if (!side_.lookup(cell(side_.col), sv) || static_cast<Side>(sv) == Side::kNone) {
    return fail(line, InputError::kMalformedLine, f_.side.column + " not a buy/sell code");
  }
  uint64_t order_id = 0;
  Price px = 0;
  int64_t qty = 0;
  if (!u64(line, Field::kOrderId, order_id) || !price(line, Field::kPrice, px) ||
      !size(line, cell(Field::kSize), name(Field::kSize), qty)) {
    return Row::kBad;
  }
  const bool add = kind == RowKind::kOrderAdd;
  // A new order needs a price to rest at; a cancel/execute is by order id, its price informational.
  if (add ? px <= 0 : px < 0) return fail(line, InputError::kBadPrice, name(Field::kPrice) + " out of range");
  if (qty <= 0) return fail(line, InputError::kBadSize, name(Field::kSize) + " <= 0");
  ev = Event::make(add ? EventKind::kOrderAdd : kind == RowKind::kOrderCancel ? EventKind::kOrderCancel
                                                                              : EventKind::kOrderExecute);
  ev.order = OrderBody{order_id, px, qty, static_cast<Side>(sv)};
  return Row::kEvent;
}

MappedFile::Row MappedFile::decode_trade(const Line& line, Event& ev) {
  uint8_t av = static_cast<uint8_t>(Side::kNone);
  if (aggressor_.col >= 0 && !aggressor_.lookup(cell(aggressor_.col), av)) {
    return fail(line, InputError::kMalformedLine, f_.aggressor.column + " not in aggressor codes");
  }
  uint64_t buy_no = 0, sell_no = 0;
  Price px = 0;
  int64_t qty = 0;
  if ((mapped(Field::kBuyOrderId) && !u64(line, Field::kBuyOrderId, buy_no)) ||
      (mapped(Field::kSellOrderId) && !u64(line, Field::kSellOrderId, sell_no)) || !price(line, Field::kPrice, px) ||
      !size(line, cell(Field::kSize), name(Field::kSize), qty)) {
    return Row::kBad;
  }
  if (px <= 0) return fail(line, InputError::kBadPrice, name(Field::kPrice) + " <= 0");
  if (qty <= 0) return fail(line, InputError::kBadSize, name(Field::kSize) + " <= 0");
  ev = Event::make(EventKind::kTrade);
  ev.trade = TradeBody{px, qty, static_cast<Side>(av), buy_no, sell_no};
  return Row::kEvent;
}

// One level: empty or zero price → empty level (auction rows put unmatched volume at price 0);
// otherwise price > 0 and size > 0.
bool MappedFile::level(const Line& line, int i, bool bid, Level& out) {
  out = Level{};
  const int side = bid ? 0 : 2;
  const std::string_view ps = cell(level_col_[side][i]);
  if (ps.empty()) return true;
  Price px = 0;
  FieldError e = ticks_.parse(ps, px);
  if (e != FieldError::kOk) return fail(line, ingest::input_error_for(e), "bad level price") == Row::kEvent;
  if (px < 0) return fail(line, InputError::kBadPrice, "negative level price") == Row::kEvent;
  if (px == 0) return true;
  int64_t qty = 0;
  if (!size(line, cell(level_col_[side + 1][i]), "level size", qty)) return false;
  if (qty <= 0) return fail(line, InputError::kBadSize, "level size <= 0 at a price") == Row::kEvent;
  out = Level{px, qty};
  return true;
}

MappedFile::Row MappedFile::decode_snapshot(const Line& line, Event& ev) {
  // In place, as Event::make would leave it (decode() sets symbol, seq and time on success):
  // copying a made ~390-byte event cost more than its ten levels' parse.
  ev.kind = EventKind::kSnapshot;
  ev.recv_ts_ns = 0;
  ev.snapshot = SnapshotBody{};
  SnapshotBody& s = ev.snapshot;
  if (mapped(Field::kPrevClose)) {
    if (!price(line, Field::kPrevClose, s.prev_close)) return Row::kBad;
    if (s.prev_close <= 0) return fail(line, InputError::kBadPrice, name(Field::kPrevClose) + " <= 0");
  }
  if (mapped(Field::kLast) && !cell(Field::kLast).empty()) {
    if (!price(line, Field::kLast, s.last)) return Row::kBad;
    if (s.last < 0) return fail(line, InputError::kBadPrice, name(Field::kLast) + " < 0");  // 0: no trade yet
  }
  if (mapped(Field::kCumVolume) && !cell(Field::kCumVolume).empty()) {
    if (!size(line, cell(Field::kCumVolume), name(Field::kCumVolume), s.cum_volume)) return Row::kBad;
    if (s.cum_volume < 0) return fail(line, InputError::kBadSize, name(Field::kCumVolume) + " < 0");
  }
  if (mapped(Field::kCumTurnover) && !cell(Field::kCumTurnover).empty()) {
    const FieldError e = ingest::parse_f64(cell(Field::kCumTurnover), s.cum_turnover);
    if (e != FieldError::kOk) return fail(line, e, name(Field::kCumTurnover));
    if (s.cum_turnover < 0) return fail(line, InputError::kBadSize, name(Field::kCumTurnover) + " < 0");
  }
  limit_up_ = limit_down_ = 0;
  if (mapped(Field::kUpperLimit) && !cell(Field::kUpperLimit).empty()) {
    if (!price(line, Field::kUpperLimit, limit_up_)) return Row::kBad;
    if (limit_up_ < 0) return fail(line, InputError::kBadPrice, name(Field::kUpperLimit) + " < 0");
  }
  if (mapped(Field::kLowerLimit) && !cell(Field::kLowerLimit).empty()) {
    if (!price(line, Field::kLowerLimit, limit_down_)) return Row::kBad;
    if (limit_down_ < 0) return fail(line, InputError::kBadPrice, name(Field::kLowerLimit) + " < 0");
  }
  if (phase_.col >= 0) {
    uint8_t pv = 0;
    s.phase = phase_.lookup(cell(phase_.col), pv) ? static_cast<Phase>(pv) : Phase::kUnknown;
  }
  for (int i = 0; i < f_.levels; ++i) {
    if (!level(line, i, false, s.asks[i]) || !level(line, i, true, s.bids[i])) return Row::kBad;
  }
  // In a call auction both sides show the indicative price at level 1 (bid == ask is normal);
  // only bid > ask is crossed there. In other phases bid >= ask is crossed.
  const Price bid = s.bids[0].price, ask = s.asks[0].price;
  const bool auction = s.phase == Phase::kOpeningAuction || s.phase == Phase::kClosingAuction;
  if (bid > 0 && ask > 0 && (auction ? bid > ask : bid >= ask)) {
    return fail(line, InputError::kCrossedBook, "best bid >= best ask");
  }
  return Row::kEvent;
}

bool MappedFile::read_row(Event& ev, Line& line) {
  while (lines_->next(line)) {
    if (line.has_garbage) {
      errors_.report(InputError::kBinaryGarbage, lines_->file_name(), line.number, "control bytes in a text row");
      continue;
    }
    if (ingest::split_fields_wide(line.text, fields_.data(), fields_.size()) != ncols_) {
      fail(line, InputError::kWrongColumnCount, "expected " + std::to_string(ncols_) + " columns");
      continue;
    }
    if (decode(line, ev) != Row::kEvent) continue;
    // prev_close is set once the row is known good (it moves the symbol's limits); limits the
    // row gives (0 = not given) replace the ones derived from it.
    if (ev.kind == EventKind::kSnapshot) {
      if (ev.snapshot.prev_close > 0 && symbols_.ref(ev.symbol).prev_close != ev.snapshot.prev_close) {
        symbols_.set_prev_close(ev.symbol, ev.snapshot.prev_close);
      }
      RefData& ref = symbols_.mutable_ref(ev.symbol);
      if (limit_up_ > 0 && ref.limit_up != limit_up_) ref.limit_up = limit_up_;
      if (limit_down_ > 0 && ref.limit_down != limit_down_) ref.limit_down = limit_down_;
    }
    return true;
  }
  return false;
}

// sorted_by = "symbol": the file is one time-ordered run per symbol; read it whole, drop rows
// that go back in time within their symbol, and hand the rows on in time order (stable: equal
// times keep the file's order).
void MappedFile::load_grouped() {
  grouped_loaded_ = true;
  const uint64_t text_bytes = ingest::text_bytes(lines_->path());
  Line line;
  for (;;) {
    // Decoded in place at the vector's end (read_whole.h: reserved once, not copied).
    Event& ev = grouped_.emplace_back();
    if (!read_row(ev, line)) {
      grouped_.pop_back();
      break;
    }
    if (grouped_.size() == 1 && text_bytes > 0) {
      grouped_.reserve(ingest::reserve_rows(text_bytes, line.text.size()));
    }
    const Event& e = grouped_.back();
    if (e.symbol >= last_ts_by_symbol_.size()) last_ts_by_symbol_.resize(e.symbol + 1, INT64_MIN);
    if (e.exch_ts_ns < last_ts_by_symbol_[e.symbol]) {
      fail(line, InputError::kOutOfOrder, "time goes backwards within the symbol");
      grouped_.pop_back();
      continue;
    }
    last_ts_by_symbol_[e.symbol] = e.exch_ts_ns;
  }
  grouped_order_ = ingest::time_order(grouped_);  // not a stable_sort of the events: read_whole.h
}

size_t MappedFile::next_batch(std::span<Event> out) {
  size_t n = 0;
  if (f_.grouped_by_symbol) {
    if (!grouped_loaded_) load_grouped();
    n = std::min(out.size(), grouped_.size() - grouped_pos_);
    for (size_t i = 0; i < n; ++i) out[i] = grouped_[grouped_order_[grouped_pos_ + i]];
    grouped_pos_ += n;
  } else {
    Line line;
    while (n < out.size() && read_row(out[n], line)) {
      if (out[n].exch_ts_ns < last_ts_ns_) {
        fail(line, InputError::kOutOfOrder, "time goes backwards");
        continue;
      }
      last_ts_ns_ = out[n].exch_ts_ns;
      ++n;
    }
  }
  if (n == 0 && !done_) {
    done_ = true;
    ingest::report_if_empty(errors_, *lines_, 1);
  }
  return n;
}

}  // namespace

Result<std::unique_ptr<Source>> open_mapped_file(const Layout& layout, const FileLayout& file, const std::string& path,
                                                 std::shared_ptr<const TimeZone> zone, int64_t folder_midnight_ns,
                                                 SymbolTable& symbols, InputErrors& errors) {
  auto lines = LineReader::open(path, errors);
  if (!lines) return lines.status();
  return open_mapped_file(layout, file, std::move(lines).value(), std::move(zone), folder_midnight_ns, symbols,
                          errors);
}

Result<std::unique_ptr<Source>> open_mapped_file(const Layout& layout, const FileLayout& file,
                                                 std::unique_ptr<LineReader> lines,
                                                 std::shared_ptr<const TimeZone> zone, int64_t folder_midnight_ns,
                                                 SymbolTable& symbols, InputErrors& errors) {
  auto f = std::make_unique<MappedFile>(layout, file, std::move(lines), std::move(zone), folder_midnight_ns, symbols,
                                        errors);
  TS_RETURN_IF_ERROR(f->bind_header());
  return std::unique_ptr<Source>(std::move(f));
}

}  // namespace ts::mapped
