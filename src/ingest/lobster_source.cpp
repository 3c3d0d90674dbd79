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

// The visible book as the file writes it (vendor prices, dollars × 10000), normalized: an empty
// level is {±kLobsterEmptyPrice, 0} whatever the file wrote for it.
struct RawBook {
  uint64_t line = 0;  // orderbook row number (= the message it follows); 0 = not from the file
  int levels = 0;     // levels kept: min(file depth, kBookLevels)
  int64_t ask_px[kBookLevels] = {}, ask_sz[kBookLevels] = {};
  int64_t bid_px[kBookLevels] = {}, bid_sz[kBookLevels] = {};

  bool same_levels(const RawBook& o) const {
    if (levels != o.levels) return false;
    for (int i = 0; i < levels; ++i) {
      if (ask_px[i] != o.ask_px[i] || ask_sz[i] != o.ask_sz[i] || bid_px[i] != o.bid_px[i] ||
          bid_sz[i] != o.bid_sz[i]) {
        return false;
      }
    }
    return true;
  }
};

struct Message {
  int64_t ts_ns = 0;  // after midnight
  int type = 0;
  int64_t order_id = 0;
  int64_t size = 0;
  int64_t price = 0;  // dollars × 10000
  int direction = 0;
};

// Changes the visible book by `delta` shares at (side of `ask`, price), within its levels only:
// a level reaching 0 disappears (the levels below move up; the last one becomes unknown = empty,
// since what lies beyond the file's depth is not in the file), a new level pushes the ones
// below it down (the last one falls off). A reduce at a price the book does not show, or any
// change deeper than the last level shown, changes nothing.
void change_level(RawBook& b, bool ask, int64_t price, int64_t delta) {
  int64_t* px = ask ? b.ask_px : b.bid_px;
  int64_t* sz = ask ? b.ask_sz : b.bid_sz;
  const int n = b.levels;
  const int64_t empty_px = ask ? kLobsterEmptyPrice : -kLobsterEmptyPrice;
  auto better = [ask](int64_t a, int64_t c) { return ask ? a < c : a > c; };
  int i = 0;
  while (i < n && sz[i] > 0 && better(px[i], price)) ++i;
  if (i == n) return;  // deeper than the levels shown
  if (sz[i] > 0 && px[i] == price) {
    sz[i] += delta;
    if (sz[i] <= 0) {
      for (int k = i; k + 1 < n; ++k) px[k] = px[k + 1], sz[k] = sz[k + 1];
      px[n - 1] = empty_px;
      sz[n - 1] = 0;
    }
  } else if (delta > 0) {
    for (int k = n - 1; k > i; --k) px[k] = px[k - 1], sz[k] = sz[k - 1];
    px[i] = price;
    sz[i] = delta;
  }
}

// The visible-book change of a message: +size for an add, -size for a cancel, delete or visible
// execution; hidden executions (5), crosses (6) and halts (7) do not show in the book.
int64_t visible_delta(const Message& m) {
  if (m.type == 1) return m.size;
  if (m.type >= 2 && m.type <= 4) return -m.size;
  return 0;
}

// Writes the book `b` as a snapshot body into `ev` (kind, levels in ticks; scalars zero).
void fill_snapshot(const RawBook& b, Event& ev) {
  ev.kind = EventKind::kSnapshot;
  ev.snapshot = SnapshotBody{};
  SnapshotBody& s = ev.snapshot;
  for (int i = 0; i < b.levels; ++i) {
    if (b.ask_sz[i] > 0) s.asks[i] = {lobster_price_ticks(b.ask_px[i]), b.ask_sz[i]};
    if (b.bid_sz[i] > 0) s.bids[i] = {lobster_price_ticks(b.bid_px[i]), b.bid_sz[i]};
  }
  s.resync = 1;
}

class LobsterSource final : public Source {
 public:
  LobsterSource(std::unique_ptr<LineReader> lines, std::unique_ptr<LineReader> book, SymbolId symbol,
                int64_t midnight_ns, std::string describe, InputErrors& errors)
      : lines_(std::move(lines)), book_(std::move(book)), symbol_(symbol), midnight_ns_(midnight_ns),
        describe_(std::move(describe)), errors_(errors) {}

  // Reads message 1 and orderbook row 1 and builds the opening snapshot (see header).
  void prepare_opening() {
    Event ev;
    Message m;
    Line line;
    // Message 1 is the first line of the file; if it is bad, the snapshot is row 1 unchanged.
    while (lines_->next(line)) {
      if (parse(line, m, ev)) {
        first_event_ = ev;
        first_msg_ = m;
        break;
      }
    }
    have_row_ = next_row();
    if (!have_row_ || row_.line != 1) {
      errors_.report(InputError::kMalformedLine, book_->file_name(), 1,
                     "orderbook row 1 unreadable: no opening snapshot");
      return;
    }
    state_ = row_;
    state_.line = 0;
    // Undo message 1 (when it is line 1): the book the message acted on.
    if (first_event_ && first_event_->seq == 1) {
      change_level(state_, first_msg_.direction == -1, first_msg_.price, -visible_delta(first_msg_));
    }
    state_known_ = true;
    Event s;
    fill_snapshot(state_, s);
    s.symbol = symbol_;
    s.seq = 0;
    s.exch_ts_ns = first_event_ ? first_event_->exch_ts_ns : midnight_ns_ + 34200 * kNsPerSec;
    s.recv_ts_ns = 0;
    s.snapshot.phase = Phase::kContinuous;
    opening_ = s;
  }

  size_t next_batch(std::span<Event> out) override {
    size_t n = 0;
    if (opening_ && n < out.size()) {
      out[n++] = *opening_;
      opening_.reset();
    }
    if (has_pending_ && n < out.size()) {
      out[n++] = pending_;
      has_pending_ = false;
    }
    if (first_event_ && n < out.size()) {
      out[n++] = *first_event_;
      first_event_.reset();
      check_row(first_msg_, out[n - 1], out, n);
    }
    Line line;
    Message m;
    while (n < out.size() && !has_pending_ && lines_->next(line)) {
      if (parse(line, m, out[n])) {
        ++n;
        check_row(m, out[n - 1], out, n);
      }
    }
    if (n == 0 && !done_) {
      done_ = true;
      ingest::report_if_empty(errors_, *lines_, 0);
    }
    return n;
  }

  bool done() const override { return done_; }
  std::string describe() const override { return describe_; }

 private:
  void report(const Line& line, InputError kind, std::string_view detail) {
    ingest::report_line_error(errors_, *lines_, line, kind, detail);
  }

  // Reads the next valid orderbook row into row_; false at the end of the file. Bad rows are
  // reported and skipped (the messages they follow are then not checked).
  bool next_row() {
    Line line;
    while (book_->next(line)) {
      const auto file = book_->file_name();
      if (line.has_garbage) {
        errors_.report(InputError::kBinaryGarbage, file, line.number, "control bytes in a text row");
        continue;
      }
      std::string_view f[4 * kBookLevels];
      const size_t n = ingest::split_fields(line.text, f, 4 * kBookLevels);
      if (n % 4 != 0 || (book_levels_ != 0 && n != book_levels_ * 4)) {
        errors_.report(line.unterminated ? InputError::kTruncatedFile : InputError::kWrongColumnCount, file,
                       line.number, "expected 4 columns per level");
        continue;
      }
      RawBook& r = row_;
      r.levels = static_cast<int>(std::min<size_t>(n / 4, kBookLevels));
      bool ok = true;
      for (int i = 0; ok && i < r.levels; ++i) {
        int64_t* dst[4] = {&r.ask_px[i], &r.ask_sz[i], &r.bid_px[i], &r.bid_sz[i]};
        for (int k = 0; ok && k < 4; ++k) {
          const FieldError e = ingest::parse_i64(f[4 * i + k], *dst[k]);
          if (e != FieldError::kOk) {
            errors_.report(line.unterminated ? InputError::kTruncatedFile : ingest::input_error_for(e), file,
                           line.number, "bad number in an orderbook row");
            ok = false;
          }
        }
        if (!ok) break;
        // A level is empty (size 0, or the vendor's ±9999999999 price) or a positive price and
        // size; a negative size or a non-positive price with a size refuses the row, as the
        // csv reader refuses such a snapshot level.
        if (const char* why = lobster_level_error(r.ask_px[i], r.ask_sz[i], r.bid_px[i], r.bid_sz[i])) {
          errors_.report(line.unterminated ? InputError::kTruncatedFile
                         : r.ask_sz[i] < 0 || r.bid_sz[i] < 0 ? InputError::kBadSize : InputError::kBadPrice,
                         file, line.number, why);
          ok = false;
          break;
        }
        if (r.ask_sz[i] == 0 || r.ask_px[i] >= kLobsterEmptyPrice) r.ask_px[i] = kLobsterEmptyPrice, r.ask_sz[i] = 0;
        if (r.bid_sz[i] == 0 || r.bid_px[i] <= -kLobsterEmptyPrice) r.bid_px[i] = -kLobsterEmptyPrice, r.bid_sz[i] = 0;
      }
      if (!ok) continue;
      if (book_levels_ == 0) book_levels_ = n / 4;
      r.line = line.number;
      return true;
    }
    return false;
  }

  // After message `m` (delivered as `ev`): moves state_ (the visible book the events so far
  // imply) by the message and compares it with the vendor's row for it. When they differ, the
  // row follows as a resync snapshot: into out[n] when there is room, else into pending_.
  void check_row(const Message& m, const Event& ev, std::span<Event> out, size_t& n) {
    if (state_known_) change_level(state_, m.direction == -1, m.price, visible_delta(m));
    while (have_row_ && row_.line < ev.seq) have_row_ = next_row();
    if (!have_row_ && !reported_short_book_) {
      reported_short_book_ = true;
      errors_.report(InputError::kTruncatedFile, book_->file_name(), book_->line_number(),
                     "orderbook file ends before the messages: later messages are not checked");
    }
    if (!have_row_ || row_.line != ev.seq) return;  // no vendor row for this message
    const bool same = state_known_ && state_.same_levels(row_);
    state_ = row_;
    state_known_ = true;
    if (same) return;
    const uint64_t seq = ev.seq;
    const int64_t ts = ev.exch_ts_ns;
    Event& s = n < out.size() ? out[n++] : pending_;
    if (&s == &pending_) has_pending_ = true;
    fill_snapshot(row_, s);  // phase stays kUnknown: a resync does not change the phase
    s.symbol = symbol_;
    s.seq = seq;
    s.exch_ts_ns = ts;
    s.recv_ts_ns = 0;
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
    // Seconds after midnight of the file's day: a later time would not be that day (and the
    // date's midnight plus it could overflow int64).
    if (m.ts_ns >= 86'400 * kNsPerSec) return report(line, InputError::kMalformedLine, "time not within the day"), false;
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

  std::unique_ptr<LineReader> lines_;
  std::unique_ptr<LineReader> book_;  // the orderbook file, one row per message
  SymbolId symbol_;
  int64_t midnight_ns_;
  std::string describe_;
  InputErrors& errors_;
  int64_t last_ts_ns_ = INT64_MIN;
  std::optional<Event> opening_;
  std::optional<Event> first_event_;
  Message first_msg_;
  RawBook state_;              // the visible book the events delivered so far imply
  bool state_known_ = false;   // false until the opening snapshot or a first resync
  RawBook row_;                // the last orderbook row read
  bool have_row_ = false;      // row_ holds a row (false at the end of the orderbook file)
  size_t book_levels_ = 0;     // levels per orderbook row (from its first valid row)
  Event pending_;              // a resync that did not fit in the caller's batch
  bool has_pending_ = false;
  bool reported_short_book_ = false;
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

  auto book_lines = LineReader::open(book_path, errors);
  if (!book_lines) return book_lines.status().with_context(ctx);
  return make_lobster_source_from_readers(std::move(lines).value(), std::move(book_lines).value(), symbols, errors);
}

Result<std::unique_ptr<Source>> make_lobster_source_from_readers(std::unique_ptr<LineReader> messages,
                                                    std::unique_ptr<LineReader> orderbook, SymbolTable& symbols,
                                                    InputErrors& errors) {
  const std::string_view name = messages->file_name();
  std::string_view symbol;
  int y = 0;
  unsigned m = 0, d = 0;
  if (!parse_lobster_name(name, symbol, y, m, d)) {
    return Status(StatusCode::kInvalidArgument,
                  "file name is not TICKER_YYYY-MM-DD_..._message_N.csv[.gz]: " + std::string(name))
        .with_context("opening LOBSTER message file " + messages->path());
  }
  const SymbolId id = symbols.intern(symbol);
  const int64_t midnight = midnight_ns(y, m, d, new_york_utc_offset_hours(y, m, d));
  const std::string describe = "lobster " + std::string(name);
  auto src = std::make_unique<LobsterSource>(std::move(messages), std::move(orderbook), id, midnight, describe,
                                             errors);
  src->prepare_opening();
  return std::unique_ptr<Source>(std::move(src));
}

}  // namespace ts
