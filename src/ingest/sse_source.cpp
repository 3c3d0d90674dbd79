#include "ingest/sse_source.h"

#include <array>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/clock.h"
#include "ingest/day_folder.h"
#include "ingest/field_parse.h"
#include "ingest/line_reader.h"
#include "core/log.h"
#include "ingest/merge_source.h"
#include "ingest/vendor_csv.h"

namespace ts {

using ingest::date_from_dir_name;
using ingest::FieldError;
using ingest::Line;
using ingest::LineReader;

Phase sse_phase(std::string_view s) {
  if (s == "TRADE") return Phase::kContinuous;
  if (s == "START") return Phase::kPreOpen;
  if (s == "OCALL" || s == "ICALL" || s == "FCALL") return Phase::kOpeningAuction;
  if (s == "CCALL") return Phase::kClosingAuction;
  if (s == "BREAK") return Phase::kBreak;
  if (s == "CLOSE" || s == "ENDTR") return Phase::kClosed;
  if (s == "SUSP" || s == "HALT") return Phase::kHalted;
  return Phase::kUnknown;
}

namespace {

constexpr double kTicksPerYuan = 100.0;  // tick 0.01 CNY
// Prices in integer arithmetic (decimal_ticks.h: parse_price_ticks' results exactly).
const ingest::DecimalTicks kYuanTicks{kTicksPerYuan};

// Common to the three SSE files: header → column indices, row splitting (split_fields_wide),
// symbol and time decoding, and the bad-row reports. Subclasses decode one row type.
class SseFile : public Source {
 public:
  SseFile(std::unique_ptr<LineReader> lines, SymbolTable& symbols, InputErrors& errors, int64_t midnight_ns)
      : lines_(std::move(lines)), symbols_(symbols), errors_(errors), midnight_ns_(midnight_ns) {}

  // Reads the header line and finds `names` in it; cols_[i] is the index of names[i]. A file
  // with no byte at all (a day without trades) is counted once as kEmptyFile and gives no
  // events, like a header-only file; the day's other files are read. A compressed stream that
  // fails before its header is an error.
  Status read_header(const std::vector<std::string_view>& names) {
    auto h = ingest::read_header_columns(*lines_, names, /*empty_ok=*/true);
    if (!h) return h.status();
    if (h.value().empty_file) {
      ingest::report_if_empty(errors_, *lines_, 1);
      done_ = true;
      return Status::ok();
    }
    ncols_ = h.value().ncols;
    cols_ = std::move(h.value().cols);
    fields_.resize(ncols_ + 1);
    return Status::ok();
  }

  size_t next_batch(std::span<Event> out) override {
    size_t n = 0;
    Line line;
    while (n < out.size() && lines_->next(line)) {
      if (line.has_garbage) {
        errors_.report(InputError::kBinaryGarbage, lines_->file_name(), line.number, "control bytes in a text row");
        continue;
      }
      if (ingest::split_fields_wide(line.text, fields_.data(), fields_.size()) != ncols_) {
        report(line, InputError::kWrongColumnCount, "expected " + std::to_string(ncols_) + " columns");
        continue;
      }
      Event& ev = out[n];
      if (!decode(line, ev)) continue;
      if (ev.exch_ts_ns < last_ts_ns_) {
        report(line, InputError::kOutOfOrder, "time goes backwards");
        continue;
      }
      last_ts_ns_ = ev.exch_ts_ns;
      ++n;
    }
    if (n == 0 && !done_) {
      done_ = true;
      ingest::report_if_empty(errors_, *lines_, 1);
    }
    return n;
  }
  bool done() const override { return done_; }
  std::string describe() const override { return "sse-l2 " + lines_->path(); }

 protected:
  // Decodes fields_ into `ev` (symbol, time, body); reports and returns false if bad.
  virtual bool decode(const Line& line, Event& ev) = 0;

  std::string_view field(size_t col_index) const { return fields_[cols_[col_index]]; }

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

  // "600519" → id of "600519.SH"; only six-digit codes are SSE securities.
  bool symbol(const Line& line, std::string_view code, SymbolId& id) {
    if (code.size() != 6 || code.find_first_not_of("0123456789") != std::string_view::npos) {
      return fail(line, InputError::kUnknownSymbol, "SecurityID is not a six-digit SSE code");
    }
    if (last_symbol_ == kInvalidSymbol || std::memcmp(last_code_.data(), code.data(), 6) != 0) {
      char name[9];
      std::memcpy(name, code.data(), 6);
      std::memcpy(name + 6, ".SH", 3);
      last_symbol_ = symbols_.intern(std::string_view(name, 9));
      std::memcpy(last_code_.data(), code.data(), 6);
    }
    id = last_symbol_;
    return true;
  }

  bool time(const Line& line, std::string_view s, int64_t& ts_ns) {
    int64_t t = 0;
    if (!ingest::parse_hms_ns(s, t)) {
      return fail(line, ingest::looks_non_finite(s) || s.empty() ? InputError::kNotANumber : InputError::kMalformedLine,
                  "bad time (HH:MM:SS.fff)");
    }
    ts_ns = midnight_ns_ + t;
    return true;
  }

  std::unique_ptr<LineReader> lines_;
  SymbolTable& symbols_;
  InputErrors& errors_;
  int64_t midnight_ns_;
  size_t ncols_ = 0;
  std::vector<size_t> cols_;
  std::vector<std::string_view> fields_;
  int64_t last_ts_ns_ = INT64_MIN;
  SymbolId last_symbol_ = kInvalidSymbol;
  std::array<char, 6> last_code_{};
  bool done_ = false;
};

Side bs_side(std::string_view s) {
  if (s == "B") return Side::kBuy;
  if (s == "S") return Side::kSell;
  return Side::kNone;
}

class SseEntrustFile final : public SseFile {
 public:
  using SseFile::SseFile;
  static std::vector<std::string_view> columns() {
    return {"SecurityID", "OrderTime", "OrderType", "OrderNO", "OrderPrice", "Balance", "OrderBSFlag", "BizIndex"};
  }

 private:
  bool decode(const Line& line, Event& ev) override {
    SymbolId id = 0;
    int64_t ts = 0;
    if (!symbol(line, field(0), id) || !time(line, field(1), ts)) return false;
    const std::string_view type = field(2);
    if (type != "A" && type != "D") return fail(line, InputError::kMalformedLine, "OrderType not A/D");
    const Side side = bs_side(field(6));
    if (side == Side::kNone) return fail(line, InputError::kMalformedLine, "OrderBSFlag not B/S");
    uint64_t order_no = 0, biz = 0;
    Price px = 0;
    int64_t qty = 0;
    FieldError e;
    if ((e = ingest::parse_u64(field(3), order_no)) != FieldError::kOk) return fail(line, e, "bad OrderNO");
    if ((e = ingest::parse_u64(field(7), biz)) != FieldError::kOk) return fail(line, e, "bad BizIndex");
    if ((e = kYuanTicks.parse(field(4), px)) != FieldError::kOk) return fail(line, e, "bad OrderPrice");
    if ((e = ingest::parse_i64(field(5), qty)) != FieldError::kOk) return fail(line, e, "bad Balance");
    const bool add = type == "A";
    // A new order needs a price to rest at; a delete is by OrderNO, its price is informational.
    if (add ? px <= 0 : px < 0) return fail(line, InputError::kBadPrice, "OrderPrice out of range");
    if (qty <= 0) return fail(line, InputError::kBadSize, "Balance <= 0");
    ev = Event::make(add ? EventKind::kOrderAdd : EventKind::kOrderCancel);
    ev.symbol = id;
    ev.exch_ts_ns = ts;
    ev.seq = biz;
    ev.order = OrderBody{order_no, px, qty, side};
    return true;
  }
};

class SseTradeFile final : public SseFile {
 public:
  using SseFile::SseFile;
  static std::vector<std::string_view> columns() {
    return {"SecurityID", "TradTime", "TradPrice", "TradVolume", "TradeBuyNo", "TradeSellNo", "TradeBSFlag", "BizIndex"};
  }

 private:
  bool decode(const Line& line, Event& ev) override {
    SymbolId id = 0;
    int64_t ts = 0;
    if (!symbol(line, field(0), id) || !time(line, field(1), ts)) return false;
    const std::string_view flag = field(6);
    if (flag != "B" && flag != "S" && flag != "N") return fail(line, InputError::kMalformedLine, "TradeBSFlag not B/S/N");
    uint64_t buy_no = 0, sell_no = 0, biz = 0;
    Price px = 0;
    int64_t qty = 0;
    FieldError e;
    if ((e = ingest::parse_u64(field(4), buy_no)) != FieldError::kOk) return fail(line, e, "bad TradeBuyNo");
    if ((e = ingest::parse_u64(field(5), sell_no)) != FieldError::kOk) return fail(line, e, "bad TradeSellNo");
    if ((e = ingest::parse_u64(field(7), biz)) != FieldError::kOk) return fail(line, e, "bad BizIndex");
    if ((e = kYuanTicks.parse(field(2), px)) != FieldError::kOk) return fail(line, e, "bad TradPrice");
    if ((e = ingest::parse_i64(field(3), qty)) != FieldError::kOk) return fail(line, e, "bad TradVolume");
    if (px <= 0) return fail(line, InputError::kBadPrice, "TradPrice <= 0");
    if (qty <= 0) return fail(line, InputError::kBadSize, "TradVolume <= 0");
    ev = Event::make(EventKind::kTrade);
    ev.symbol = id;
    ev.exch_ts_ns = ts;
    ev.seq = biz;
    ev.trade = TradeBody{px, qty, bs_side(flag), buy_no, sell_no};
    return true;
  }
};

class SseSnapshotFile final : public SseFile {
 public:
  using SseFile::SseFile;
  // Column order: 7 scalars, then AskPrice1..10, AskVolume1..10, BidPrice1..10, BidVolume1..10.
  static std::vector<std::string_view> columns() {
    static const std::vector<std::string> level_names = [] {
      std::vector<std::string> v;
      for (const char* what : {"AskPrice", "AskVolume", "BidPrice", "BidVolume"}) {
        for (int i = 1; i <= kBookLevels; ++i) v.push_back(what + std::to_string(i));
      }
      return v;
    }();
    std::vector<std::string_view> cols = {"UpdateTime", "SecurityID", "PreCloPrice", "LastPrice",
                                          "InstruStatus", "TradVolume", "Turnover", "SeqNo"};
    for (const auto& n : level_names) cols.emplace_back(n);
    return cols;
  }

 private:
  static constexpr size_t kLevelCols = 8;

  // One level: empty price → empty level; price 0 → empty level (auction rows put the
  // unmatched volume at price 0); otherwise price > 0 and qty > 0.
  bool level(const Line& line, std::string_view ps, std::string_view qs, Level& out) {
    InputError kind = InputError::kMalformedLine;
    const char* detail = "";
    return ingest::parse_level(ps, qs, kYuanTicks, out, kind, detail) || fail(line, kind, detail);
  }

  bool decode(const Line& line, Event& ev) override {
    SymbolId id = 0;
    int64_t ts = 0;
    if (!time(line, field(0), ts) || !symbol(line, field(1), id)) return false;
    ev = Event::make(EventKind::kSnapshot);
    SnapshotBody& s = ev.snapshot;
    FieldError e;
    uint64_t seq_no = 0;
    if ((e = ingest::parse_u64(field(7), seq_no)) != FieldError::kOk) return fail(line, e, "bad SeqNo");
    if ((e = kYuanTicks.parse(field(2), s.prev_close)) != FieldError::kOk) {
      return fail(line, e, "bad PreCloPrice");
    }
    if (s.prev_close <= 0) return fail(line, InputError::kBadPrice, "PreCloPrice <= 0");
    if (!field(3).empty()) {
      if ((e = kYuanTicks.parse(field(3), s.last)) != FieldError::kOk) return fail(line, e, "bad LastPrice");
      if (s.last < 0) return fail(line, InputError::kBadPrice, "LastPrice < 0");  // 0: no trade yet
    }
    if (!field(5).empty()) {
      if ((e = ingest::parse_i64(field(5), s.cum_volume)) != FieldError::kOk) return fail(line, e, "bad TradVolume");
      if (s.cum_volume < 0) return fail(line, InputError::kBadSize, "TradVolume < 0");
    }
    if (!field(6).empty()) {
      if ((e = ingest::parse_f64(field(6), s.cum_turnover)) != FieldError::kOk) return fail(line, e, "bad Turnover");
      if (s.cum_turnover < 0) return fail(line, InputError::kBadSize, "Turnover < 0");
    }
    s.phase = sse_phase(field(4));
    for (size_t i = 0; i < kBookLevels; ++i) {
      if (!level(line, field(kLevelCols + i), field(kLevelCols + kBookLevels + i), s.asks[i])) return false;
      if (!level(line, field(kLevelCols + 2 * kBookLevels + i), field(kLevelCols + 3 * kBookLevels + i), s.bids[i])) {
        return false;
      }
    }
    // In a call auction both sides show the indicative price at level 1 (bid == ask is normal);
    // only bid > ask is crossed there. In other phases bid >= ask is crossed.
    const Price bid = s.bids[0].price, ask = s.asks[0].price;
    const bool auction = s.phase == Phase::kOpeningAuction || s.phase == Phase::kClosingAuction;
    if (bid > 0 && ask > 0 && (auction ? bid > ask : bid >= ask)) {
      return fail(line, InputError::kCrossedBook, "best bid >= best ask");
    }
    if (symbols_.ref(id).prev_close != s.prev_close) symbols_.set_prev_close(id, s.prev_close);
    ev.symbol = id;
    ev.exch_ts_ns = ts;
    ev.seq = seq_no;
    return true;
  }
};

template <typename File>
Result<std::unique_ptr<Source>> open_file(std::unique_ptr<LineReader> lines, SymbolTable& symbols, InputErrors& errors,
                                          int64_t midnight) {
  if (!lines) return std::unique_ptr<Source>();  // absent: the day runs on the files it has
  auto file = std::make_unique<File>(std::move(lines), symbols, errors, midnight);
  TS_RETURN_IF_ERROR(file->read_header(File::columns()));
  return std::unique_ptr<Source>(std::move(file));
}

bool valid_date(int date) {
  const auto m = static_cast<unsigned>(date / 100 % 100), d = static_cast<unsigned>(date % 100);
  return date > 0 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

}  // namespace

Result<std::unique_ptr<Source>> make_sse_source(const std::string& day_dir, SymbolTable& symbols,
                                                InputErrors& errors, SseOptions options) {
  const std::string ctx = "opening SSE Level-2 day " + day_dir;
  std::error_code ec;
  if (!std::filesystem::is_directory(day_dir, ec)) {
    return Status(StatusCode::kNotFound, "no such directory: " + day_dir).with_context(ctx);
  }
  const int date = options.date_yyyymmdd != 0 ? options.date_yyyymmdd : date_from_dir_name(day_dir);
  if (!valid_date(date)) {
    return Status(StatusCode::kInvalidArgument,
                  "no trading date: name the folder …-YYYYMMDD or pass SseOptions::date_yyyymmdd")
        .with_context(ctx);
  }
  SseDayReaders readers;
  for (auto [name, reader] : {std::pair{"snapshot", &readers.snapshot}, std::pair{"entrust", &readers.entrust},
                              std::pair{"trade", &readers.trade}}) {
    const std::string path = ingest::find_data_file(day_dir, {name});
    if (path.empty()) continue;
    auto lines = LineReader::open(path, errors);
    if (!lines) return lines.status().with_context(ctx);
    *reader = std::move(lines).value();
  }
  return make_sse_source_from_readers(std::move(readers), date, day_dir, symbols, errors);
}

Result<std::unique_ptr<Source>> make_sse_source_from_readers(SseDayReaders files, int date_yyyymmdd, const std::string& day_name,
                                                SymbolTable& symbols, InputErrors& errors) {
  const std::string ctx = "opening SSE Level-2 day " + day_name;
  if (!valid_date(date_yyyymmdd)) {
    return Status(StatusCode::kInvalidArgument, "no trading date: " + std::to_string(date_yyyymmdd) + " is not YYYYMMDD")
        .with_context(ctx);
  }
  const int y = date_yyyymmdd / 10000;
  const auto m = static_cast<unsigned>(date_yyyymmdd / 100 % 100), d = static_cast<unsigned>(date_yyyymmdd % 100);
  const int64_t midnight = midnight_ns(y, m, d, 8);
  std::vector<std::unique_ptr<Source>> sources;
  std::string found, missing;
  auto add = [&](Result<std::unique_ptr<Source>> file, const char* name) -> Status {
    if (!file) return file.status().with_context(ctx);
    std::string& list = file.value() ? found : missing;
    list += (list.empty() ? "" : ", ") + std::string(name);
    if (file.value()) sources.push_back(std::move(file).value());
    return Status::ok();
  };
  // Snapshots first: their PreCloPrice sets prev_close while the merge primes its inputs,
  // before any order of the symbol is handed on.
  TS_RETURN_IF_ERROR(add(open_file<SseSnapshotFile>(std::move(files.snapshot), symbols, errors, midnight), "snapshot"));
  TS_RETURN_IF_ERROR(add(open_file<SseEntrustFile>(std::move(files.entrust), symbols, errors, midnight), "entrust"));
  TS_RETURN_IF_ERROR(add(open_file<SseTradeFile>(std::move(files.trade), symbols, errors, midnight), "trade"));
  if (sources.empty()) {
    return Status(StatusCode::kNotFound, "none of snapshot, entrust, trade .csv(.gz) in " + day_name).with_context(ctx);
  }
  spdlog::info("sse-l2 {}: found {}{}", day_name, found,
               missing.empty() ? std::string()
                               : "; no " + missing + (missing.find("entrust") != std::string::npos
                                                          ? " (no order flow: the book comes from the snapshots)"
                                                          : ""));
  return std::unique_ptr<Source>(std::make_unique<MergeSource>(std::move(sources), MergeOrder::kTimeThenSeq,
                                                               "sse-l2 " + day_name + " (" + found + ")"));
}

}  // namespace ts
