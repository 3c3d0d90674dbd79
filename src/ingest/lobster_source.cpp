#include "ingest/lobster_source.h"

#include <algorithm>
#include <filesystem>
#include <optional>

#include "core/clock.h"
#include "ingest/field_parse.h"
#include "ingest/line_reader.h"
#include "ingest/lobster_book.h"

namespace ts {

using ingest::FieldError;
using ingest::Line;
using ingest::LineReader;

int new_york_utc_offset_hours(int year, unsigned month, unsigned day) {
  auto weekday = [](int y, unsigned m, unsigned d) {  // 0 = Sunday
    const int64_t days = days_from_civil(y, m, d);
    return static_cast<unsigned>(((days + 4) % 7 + 7) % 7);
  };
  // Second Sunday of March .. first Sunday of November (transitions at 02:00, before any session).
  const unsigned march_first_sunday = 1 + (7 - weekday(year, 3, 1)) % 7;
  const unsigned dst_start = march_first_sunday + 7;
  const unsigned dst_end = 1 + (7 - weekday(year, 11, 1)) % 7;
  bool dst = false;
  if (month > 3 && month < 11) dst = true;
  if (month == 3) dst = day >= dst_start;
  if (month == 11) dst = day < dst_end;
  return dst ? -4 : -5;
}

std::string lobster_orderbook_path(const std::string& message_path) {
  const size_t slash = message_path.find_last_of('/');
  const size_t name_at = slash == std::string::npos ? 0 : slash + 1;
  const size_t pos = message_path.rfind("_message_");
  if (pos == std::string::npos || pos < name_at) return {};
  std::string out = message_path;
  out.replace(pos, 9, "_orderbook_");
  return out;
}

namespace {

// The visible book kept as the file shows it (vendor prices), for undoing message 1.
struct RawBook {
  int levels = 0;
  int64_t ask_px[kBookLevels] = {}, ask_sz[kBookLevels] = {};
  int64_t bid_px[kBookLevels] = {}, bid_sz[kBookLevels] = {};
};

struct Message {
  int64_t ts_ns = 0;  // after midnight
  int type = 0;
  int64_t order_id = 0;
  int64_t size = 0;
  int64_t price = 0;  // dollars × 10000
  int direction = 0;
};

class LobsterSource final : public Source {
 public:
  LobsterSource(std::unique_ptr<LineReader> lines, SymbolId symbol, int64_t midnight_ns,
                std::string describe, InputErrors& errors)
      : lines_(std::move(lines)), symbol_(symbol), midnight_ns_(midnight_ns),
        describe_(std::move(describe)), errors_(errors) {}

  // Reads message 1 and builds the opening snapshot from orderbook row 1 (see header).
  void prepare_opening(const std::optional<LobsterBookRow>& row1, const RawBook& raw1) {
    Event ev;
    Message m;
    Line line;
    std::optional<Message> first;
    // Message 1 is the first line of the file; if it is bad, the snapshot is row 1 unchanged.
    while (lines_->next(line)) {
      if (parse(line, m, ev)) {
        first_event_ = ev;
        if (line.number == 1) first = m;
        break;
      }
    }
    if (!row1) return;
    RawBook b = raw1;
    if (first) undo(b, *first);
    Event s = Event::make(EventKind::kSnapshot);
    s.symbol = symbol_;
    s.seq = 0;
    s.exch_ts_ns = first_event_ ? first_event_->exch_ts_ns : midnight_ns_ + 34200 * kNsPerSec;
    for (int i = 0; i < b.levels && i < kBookLevels; ++i) {
      if (b.ask_sz[i] > 0 && b.ask_px[i] < kLobsterEmptyPrice) {
        s.snapshot.asks[i] = {lobster_price_ticks(b.ask_px[i]), b.ask_sz[i]};
      }
      if (b.bid_sz[i] > 0 && b.bid_px[i] > -kLobsterEmptyPrice) {
        s.snapshot.bids[i] = {lobster_price_ticks(b.bid_px[i]), b.bid_sz[i]};
      }
    }
    s.snapshot.phase = Phase::kContinuous;
    opening_ = s;
  }

  size_t next_batch(std::span<Event> out) override {
    size_t n = 0;
    if (opening_ && n < out.size()) {
      out[n++] = *opening_;
      opening_.reset();
    }
    if (first_event_ && n < out.size()) {
      out[n++] = *first_event_;
      first_event_.reset();
    }
    Line line;
    Message m;
    while (n < out.size() && lines_->next(line)) {
      if (parse(line, m, out[n])) ++n;
    }
    if (n == 0) done_ = true;
    return n;
  }

  bool done() const override { return done_; }
  std::string describe() const override { return describe_; }

 private:
  void report(const Line& line, InputError kind, std::string_view detail) {
    errors_.report(line.unterminated && kind != InputError::kOutOfOrder ? InputError::kTruncatedFile : kind,
                   lines_->file_name(), line.number, detail);
  }

  // Parses and validates one message line into `ev`; reports and returns false if bad.
  bool parse(const Line& line, Message& m, Event& ev) {
    if (line.has_garbage) {
      errors_.report(InputError::kBinaryGarbage, lines_->file_name(), line.number, "control bytes in a text line");
      return false;
    }
    std::string_view f[7];
    if (ingest::split_fields(line.text, f, 7) != 6) {
      report(line, InputError::kWrongColumnCount, "expected 6 columns");
      return false;
    }
    FieldError e = ingest::parse_seconds_ns(f[0], m.ts_ns);
    if (e != FieldError::kOk) return report(line, ingest::input_error_for(e), "bad time"), false;
    int64_t v[5];
    for (int k = 0; k < 5; ++k) {
      e = ingest::parse_i64(f[k + 1], v[k]);
      if (e != FieldError::kOk) {
        report(line, ingest::input_error_for(e), "bad number in column " + std::to_string(k + 2));
        return false;
      }
    }
    if (v[0] < 1 || v[0] > 7) return report(line, InputError::kMalformedLine, "event type not 1..7"), false;
    if (v[4] != 1 && v[4] != -1) return report(line, InputError::kMalformedLine, "direction not -1/1"), false;
    m.type = static_cast<int>(v[0]);
    m.order_id = v[1];
    m.size = v[2];
    m.price = v[3];
    m.direction = static_cast<int>(v[4]);
    if (m.type == 7) {
      if (m.price < -1 || m.price > 1) return report(line, InputError::kMalformedLine, "halt price not -1/0/1"), false;
    } else {
      if (m.order_id < 0 && m.type < 5) return report(line, InputError::kMalformedLine, "negative order id"), false;
      if (m.price <= 0) return report(line, InputError::kBadPrice, "price <= 0"), false;
      if (m.size <= 0) return report(line, InputError::kBadSize, "size <= 0"), false;
    }
    const int64_t ts = midnight_ns_ + m.ts_ns;
    if (ts < last_ts_ns_) return report(line, InputError::kOutOfOrder, "time goes backwards"), false;
    last_ts_ns_ = ts;

    const Side side = m.direction == 1 ? Side::kBuy : Side::kSell;
    const uint64_t id = m.order_id > 0 ? static_cast<uint64_t>(m.order_id) : 0;
    const Price px = lobster_price_ticks(m.price);
    // PERF NOTE: bodies are assigned in place; `ev = Event::make(...)` would build and copy a
    // whole snapshot-sized Event (~400 bytes) per message, a third of the parse time.
    switch (m.type) {
      case 1: case 2: case 3: case 4:
        ev.kind = m.type == 1 ? EventKind::kOrderAdd : m.type == 4 ? EventKind::kOrderExecute : EventKind::kOrderCancel;
        ev.order = OrderBody{id, px, m.size, side};
        break;
      case 5:
        ev.kind = EventKind::kTrade;
        ev.trade = TradeBody{px, m.size, side == Side::kBuy ? Side::kSell : Side::kBuy,
                             side == Side::kBuy ? id : 0, side == Side::kSell ? id : 0};
        break;
      case 6:
        ev.kind = EventKind::kTrade;
        ev.trade = TradeBody{px, m.size, Side::kNone, 0, 0};
        break;
      default:
        ev.kind = EventKind::kStatus;
        ev.status = StatusBody{m.price == -1 ? Phase::kHalted : m.price == 0 ? Phase::kPreOpen : Phase::kContinuous};
        break;
    }
    ev.symbol = symbol_;
    ev.seq = line.number;
    ev.exch_ts_ns = ts;
    ev.recv_ts_ns = 0;
    return true;
  }

  // Undoes message `m` on the visible book: adds back what a cancel/delete/execution removed,
  // removes what an add put there. Hidden executions, crosses and halts never show in the book.
  static void undo(RawBook& b, const Message& m) {
    int64_t delta = 0;
    if (m.type == 1) delta = -m.size;
    else if (m.type >= 2 && m.type <= 4) delta = m.size;
    else return;
    const bool ask = m.direction == -1;
    int64_t* px = ask ? b.ask_px : b.bid_px;
    int64_t* sz = ask ? b.ask_sz : b.bid_sz;
    const int n = std::min(b.levels, kBookLevels);
    auto better = [ask](int64_t a, int64_t c) { return ask ? a < c : a > c; };
    int i = 0;
    while (i < n && sz[i] > 0 && better(px[i], m.price)) ++i;
    if (i == n) return;  // deeper than the levels shown
    if (sz[i] > 0 && px[i] == m.price) {
      sz[i] += delta;
      if (sz[i] <= 0) {  // the add created this level: remove it; the level below is unknown
        for (int k = i; k + 1 < n; ++k) px[k] = px[k + 1], sz[k] = sz[k + 1];
        px[n - 1] = ask ? kLobsterEmptyPrice : -kLobsterEmptyPrice;
        sz[n - 1] = 0;
      }
    } else if (delta > 0) {  // the message emptied this level: put it back, last level falls off
      for (int k = n - 1; k > i; --k) px[k] = px[k - 1], sz[k] = sz[k - 1];
      px[i] = m.price;
      sz[i] = delta;
    }
  }

  std::unique_ptr<LineReader> lines_;
  SymbolId symbol_;
  int64_t midnight_ns_;
  std::string describe_;
  InputErrors& errors_;
  int64_t last_ts_ns_ = INT64_MIN;
  std::optional<Event> opening_;
  std::optional<Event> first_event_;
  bool done_ = false;
};

// "GOOG_2012-06-21_34200000_..." → symbol "GOOG", date 2012-06-21.
bool parse_lobster_name(std::string_view name, std::string_view& symbol, int& y, unsigned& m, unsigned& d) {
  const size_t u1 = name.find('_');
  if (u1 == std::string_view::npos || u1 == 0) return false;
  symbol = name.substr(0, u1);
  const std::string_view date = name.substr(u1 + 1, 10);
  if (date.size() != 10 || date[4] != '-' || date[7] != '-') return false;
  int64_t yy = 0, mm = 0, dd = 0;
  if (ingest::parse_i64(date.substr(0, 4), yy) != FieldError::kOk ||
      ingest::parse_i64(date.substr(5, 2), mm) != FieldError::kOk ||
      ingest::parse_i64(date.substr(8, 2), dd) != FieldError::kOk || mm < 1 || mm > 12 || dd < 1 || dd > 31) {
    return false;
  }
  y = static_cast<int>(yy);
  m = static_cast<unsigned>(mm);
  d = static_cast<unsigned>(dd);
  return true;
}

}  // namespace

Result<std::unique_ptr<Source>> make_lobster_source(const std::string& message_path, SymbolTable& symbols,
                                                    InputErrors& errors) {
  const std::string ctx = "opening LOBSTER message file " + message_path;
  std::error_code ec;
  if (!std::filesystem::exists(message_path, ec)) {
    return Status(StatusCode::kNotFound, "no such file: " + message_path).with_context(ctx);
  }
  const std::string_view name = ingest::base_name(message_path);
  std::string_view symbol;
  int y = 0;
  unsigned m = 0, d = 0;
  if (!parse_lobster_name(name, symbol, y, m, d)) {
    return Status(StatusCode::kInvalidArgument,
                  "file name is not TICKER_YYYY-MM-DD_..._message_N.csv[.gz]: " + std::string(name))
        .with_context(ctx);
  }
  const std::string book_path = lobster_orderbook_path(message_path);
  if (book_path.empty()) {
    return Status(StatusCode::kInvalidArgument, "file name lacks \"_message_\": " + std::string(name))
        .with_context(ctx);
  }
  if (!std::filesystem::exists(book_path, ec)) {
    return Status(StatusCode::kNotFound, "its orderbook file " + book_path +
                                             " is missing (needed for the book before the first message)")
        .with_context(ctx);
  }
  auto lines = LineReader::open(message_path, errors);
  if (!lines) return lines.status().with_context(ctx);

  // Orderbook row 1, kept raw so message 1 can be undone exactly.
  auto book_lines = LineReader::open(book_path, errors);
  if (!book_lines) return book_lines.status().with_context(ctx);
  std::optional<LobsterBookRow> row1;
  RawBook raw;
  {
    Line line;
    if (book_lines.value()->next(line) && !line.has_garbage) {
      std::string_view f[4 * kBookLevels + 1];
      const size_t n = ingest::split_fields(line.text, f, 4 * kBookLevels);
      bool ok = n % 4 == 0 && n > 0;
      raw.levels = static_cast<int>(std::min<size_t>(n / 4, kBookLevels));
      for (int i = 0; ok && i < raw.levels; ++i) {
        ok = ingest::parse_i64(f[4 * i], raw.ask_px[i]) == FieldError::kOk &&
             ingest::parse_i64(f[4 * i + 1], raw.ask_sz[i]) == FieldError::kOk &&
             ingest::parse_i64(f[4 * i + 2], raw.bid_px[i]) == FieldError::kOk &&
             ingest::parse_i64(f[4 * i + 3], raw.bid_sz[i]) == FieldError::kOk;
      }
      if (ok) row1 = LobsterBookRow{};
    }
    if (!row1) {
      errors.report(InputError::kMalformedLine, ingest::base_name(book_path), 1,
                    "orderbook row 1 unreadable: no opening snapshot");
    }
  }
  const SymbolId id = symbols.intern(symbol);
  const int64_t midnight = midnight_ns(y, m, d, new_york_utc_offset_hours(y, m, d));
  auto src = std::make_unique<LobsterSource>(std::move(lines).value(), id, midnight,
                                             "lobster " + std::string(name), errors);
  src->prepare_opening(row1, raw);
  return std::unique_ptr<Source>(std::move(src));
}

}  // namespace ts
