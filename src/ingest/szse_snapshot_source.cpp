#include "ingest/szse_snapshot_source.h"

#include <algorithm>
#include <array>
#include <filesystem>
#include <vector>

#include "ingest/csv_split.h"
#include "ingest/decimal_ticks.h"
#include "ingest/flow_records.h"
#include "ingest/read_whole.h"
#include "ingest/vendor_csv.h"

namespace ts {

using ingest::FieldError;
using ingest::Line;
using ingest::LineReader;

Phase szse_phase(std::string_view code) {
  if (code.size() == 1 && code[0] >= '0' && code[0] <= '7') {
    static constexpr Phase kDigits[] = {Phase::kPreOpen,         Phase::kOpeningAuction, Phase::kBreak,
                                        Phase::kContinuous,      Phase::kBreak,          Phase::kClosingAuction,
                                        Phase::kClosed,          Phase::kHalted};
    return kDigits[code[0] - '0'];
  }
  if (code.empty()) return Phase::kUnknown;
  switch (code[0]) {
    case 'S': return Phase::kPreOpen;
    case 'O': return Phase::kOpeningAuction;
    case 'B': return Phase::kBreak;
    case 'T': return Phase::kContinuous;
    case 'C': return Phase::kClosingAuction;
    case 'E':
    case 'A': return Phase::kClosed;
    case 'H':
    case 'V': return Phase::kHalted;
    default: return Phase::kUnknown;
  }
}

namespace {

constexpr double kTicksPerYuan = 100.0;  // tick 0.01 CNY

// Column order asked of the header: 10 scalars, then BuyPrice1..10, BuyOrderQty1..10,
// SellPrice1..10, SellOrderQty1..10.
enum Col : size_t {
  kDate, kTime, kSecurity, kPreClose, kLast, kCumVolume, kCumValue, kPhaseCode, kMaxPx, kMinPx, kLevels
};

const std::vector<std::string_view>& column_names() {
  static const std::vector<std::string> levels = [] {
    std::vector<std::string> v;
    for (const char* what : {"BuyPrice", "BuyOrderQty", "SellPrice", "SellOrderQty"}) {
      for (int i = 1; i <= kBookLevels; ++i) v.push_back(what + std::to_string(i));
    }
    return v;
  }();
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> n = {"MDDate",   "MDTime",           "SecurityID", "PreClosePx", "LastPx",
                                       "TotalVolumeTrade", "TotalValueTrade", "TradingPhaseCode", "MaxPx", "MinPx"};
    for (const auto& s : levels) n.emplace_back(s);
    return n;
  }();
  return names;
}

class SzseSnapshotReader : ingest::RowDecoder {
 public:
  SzseSnapshotReader(LineReader& lines, SymbolTable& symbols, InputErrors& errors, const ingest::HeaderColumns& h)
      : RowDecoder(symbols, errors) {
    start_file(lines, h);
  }

  // The rows of ingest::for_each_row (same reports), split by split_fields_wide. `text_bytes`:
  // the file's size as text, if known (0 = not), to size the event vector once.
  std::vector<Event> read_all(uint64_t text_bytes) {
    std::vector<Event> events;
    bool reserved = text_bytes == 0;
    const size_t ncols = h_->ncols;
    std::vector<std::string_view> fields(ncols + 1);
    Line line;
    while (lines_->next(line)) {
      if (line.has_garbage) {
        errors_.report(InputError::kBinaryGarbage, lines_->file_name(), line.number, "control bytes in a text row");
        continue;
      }
      if (ingest::split_fields_wide(line.text, fields.data(), fields.size()) != ncols) {
        ingest::report_line_error(errors_, *lines_, line, InputError::kWrongColumnCount,
                                  "expected " + std::to_string(ncols) + " columns");
        continue;
      }
      fields_ = std::span<const std::string_view>(fields.data(), ncols);
      if (!reserved) {
        reserved = true;
        events.reserve(ingest::reserve_rows(text_bytes, line.text.size()));  // read_whole.h
      }
      Event& ev = events.emplace_back();
      if (!decode(line, ev)) events.pop_back();
    }
    ingest::report_if_empty(errors_, *lines_, 1);
    return events;
  }

 private:
  struct PerSymbol {
    int64_t last_ts_ns = INT64_MIN;
    Qty cum_volume = 0;
  };

  // Empty or 0 price → empty level (SZSE sends 0 for an empty level); else price > 0, qty > 0.
  bool level(const Line& line, std::string_view ps, std::string_view qs, Level& out) {
    InputError kind = InputError::kMalformedLine;
    const char* detail = "";
    return ingest::parse_level(ps, qs, ticks_, out, kind, detail) || fail(line, kind, detail);
  }

  bool price(const Line& line, size_t col, Price& out, const char* what) {
    out = 0;
    if (field(col).empty()) return true;
    const FieldError e = ticks_.parse(field(col), out);
    if (e != FieldError::kOk) return fail(line, e, what);
    if (out < 0) return fail(line, InputError::kBadPrice, what);
    return true;
  }

  bool symbol(const Line& line, std::string_view s, SymbolId& id) {
    if (s.size() != 9 || s.substr(6) != ".SZ" || s.substr(0, 6).find_first_not_of("0123456789") != std::string_view::npos) {
      return fail(line, InputError::kUnknownSymbol, "SecurityID is not NNNNNN.SZ");
    }
    return intern(line, s, id);
  }

  bool decode(const Line& line, Event& ev) {
    int64_t ts = 0;
    if (!china_time(line, field(kDate), field(kTime), "bad MDDate / MDTime", ts)) return false;
    SymbolId id = 0;
    if (!symbol(line, field(kSecurity), id)) return false;
    // `ev` is a fresh Event (read_all): made a snapshot in place, not copied from Event::make.
    ev.kind = EventKind::kSnapshot;
    ev.snapshot = SnapshotBody{};
    SnapshotBody& s = ev.snapshot;
    Price max_px = 0, min_px = 0;
    if (!price(line, kPreClose, s.prev_close, "bad PreClosePx") || !price(line, kLast, s.last, "bad LastPx") ||
        !price(line, kMaxPx, max_px, "bad MaxPx") || !price(line, kMinPx, min_px, "bad MinPx")) {
      return false;
    }
    if (s.prev_close <= 0) return fail(line, InputError::kBadPrice, "PreClosePx <= 0");
    FieldError e;
    if ((e = ingest::parse_i64(field(kCumVolume), s.cum_volume)) != FieldError::kOk) return fail(line, e, "bad TotalVolumeTrade");
    if (s.cum_volume < 0) return fail(line, InputError::kBadSize, "TotalVolumeTrade < 0");
    if ((e = ingest::parse_f64(field(kCumValue), s.cum_turnover)) != FieldError::kOk) return fail(line, e, "bad TotalValueTrade");
    if (s.cum_turnover < 0) return fail(line, InputError::kBadSize, "TotalValueTrade < 0");
    s.phase = szse_phase(field(kPhaseCode));
    for (size_t i = 0; i < kBookLevels; ++i) {
      if (!level(line, field(kLevels + i), field(kLevels + kBookLevels + i), s.bids[i]) ||
          !level(line, field(kLevels + 2 * kBookLevels + i), field(kLevels + 3 * kBookLevels + i), s.asks[i])) {
        return false;
      }
    }
    const Price bid = s.bids[0].price, ask = s.asks[0].price;
    const bool auction = s.phase == Phase::kOpeningAuction || s.phase == Phase::kClosingAuction;
    if (bid > 0 && ask > 0 && (auction ? bid > ask : bid >= ask)) {
      return fail(line, InputError::kCrossedBook, "best bid >= best ask");
    }
    if (id >= per_symbol_.size()) per_symbol_.resize(size_t(id) + 1);
    PerSymbol& p = per_symbol_[id];
    ev.exch_ts_ns = ts;
    if (ev.exch_ts_ns < p.last_ts_ns) return fail(line, InputError::kOutOfOrder, "the security's time goes backwards");
    if (s.cum_volume < p.cum_volume) return fail(line, InputError::kBadSize, "TotalVolumeTrade goes down");
    p.last_ts_ns = ev.exch_ts_ns;
    p.cum_volume = s.cum_volume;
    // The day's reference data: prev close, then the exchange's own limits over the derived band.
    const RefData& r = symbols_.ref(id);
    if (r.prev_close != s.prev_close) symbols_.set_prev_close(id, s.prev_close);
    if (max_px > 0 && min_px > 0 && (r.limit_up != max_px || r.limit_down != min_px)) {
      symbols_.mutable_ref(id).limit_up = max_px;
      symbols_.mutable_ref(id).limit_down = min_px;
    }
    ev.symbol = id;
    ev.seq = line.number;
    return true;
  }

  const ingest::DecimalTicks ticks_{kTicksPerYuan};
  std::vector<PerSymbol> per_symbol_;
};

// The day's snapshots in time order (stable: equal times keep file order), handed out through
// their order rather than sorted (ingest/read_whole.h).
class SzseSnapshots final : public Source {
 public:
  SzseSnapshots(std::vector<Event> events, std::string description)
      : events_(std::move(events)), order_(ingest::time_order(events_)), description_(std::move(description)) {}
  size_t next_batch(std::span<Event> out) override {
    const size_t n = std::min(out.size(), order_.size() - next_);
    for (size_t i = 0; i < n; ++i) out[i] = events_[order_[next_ + i]];
    next_ += n;
    if (next_ == order_.size() && !order_.empty()) {  // replayed: give the memory back
      std::vector<Event>().swap(events_);
      std::vector<uint32_t>().swap(order_);
      next_ = 0;
    }
    return n;
  }
  bool done() const override { return next_ >= order_.size(); }
  std::string describe() const override { return description_; }

 private:
  std::vector<Event> events_;
  std::vector<uint32_t> order_;
  size_t next_ = 0;
  std::string description_;
};

}  // namespace

Result<std::unique_ptr<Source>> make_szse_snapshot_source(const std::string& path, SymbolTable& symbols,
                                                          InputErrors& errors) {
  const std::string ctx = "opening SZSE snapshots " + path;
  std::error_code ec;
  std::string file = path;
  if (std::filesystem::is_directory(path, ec)) {
    file = ingest::find_data_file(path, {"tick", "snapshot"});
    if (file.empty()) return Status(StatusCode::kNotFound, "no tick.csv(.gz) in " + path).with_context(ctx);
  }
  auto lines = LineReader::open(file, errors);
  if (!lines) return lines.status().with_context(ctx);
  return make_szse_snapshot_source_from_reader(std::move(lines).value(), symbols, errors);
}

Result<std::unique_ptr<Source>> make_szse_snapshot_source_from_reader(std::unique_ptr<LineReader> lines, SymbolTable& symbols,
                                                          InputErrors& errors) {
  const std::string& file = lines->path();
  auto header = ingest::read_header_columns(*lines, column_names());
  if (!header) return header.status().with_context("opening SZSE snapshots " + file);
  SzseSnapshotReader reader(*lines, symbols, errors, header.value());
  std::vector<Event> events = reader.read_all(ingest::text_bytes(file));  // 0 (no reserve) for a memory reader
  return std::unique_ptr<Source>(std::make_unique<SzseSnapshots>(std::move(events), "szse-l2 " + file));
}

}  // namespace ts
