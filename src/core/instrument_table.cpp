#include "core/instrument_table.h"

#include <array>
#include <fstream>
#include <sstream>

namespace ts {

namespace {

enum Column : int {
  kSymbol = 0, kBoard, kCurrency, kTickSize, kSizeIncrement, kLotSize, kLimitPct, kSt,
  kCalendar, kTimeZone, kMinNotional, kPrevClose, kName, kColumnCount
};
constexpr std::array<std::string_view, kColumnCount> kColumnNames = {
    "symbol", "board", "currency", "tick_size", "size_increment", "lot_size", "limit_pct", "st",
    "calendar", "time_zone", "min_notional", "prev_close", "name"};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    out.push_back(trim(line.substr(start, comma - start)));
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

// A row's problem: the message without the file:line prefix, and the InputErrors kind.
struct RowProblem {
  InputError kind;
  std::string message;
};

std::optional<bool> parse_flag(std::string_view s) {
  if (s == "1" || s == "true" || s == "yes" || s == "Y" || s == "y") return true;
  if (s == "0" || s == "false" || s == "no" || s == "N" || s == "n") return false;
  return std::nullopt;
}

// Applies one row's non-empty cells to `in` (which holds the symbol's defaults).
std::optional<RowProblem> apply_row(const std::array<std::string_view, kColumnCount>& cell,
                                    Instrument& in) {
  const auto bad = [&](Column c, const std::string& why) {
    return RowProblem{InputError::kMalformedLine, std::string(kColumnNames[c]) + " \"" +
                                                      std::string(cell[c]) + "\": " + why};
  };
  auto decimal_cell = [&](Column c, Decimal& out) -> std::optional<RowProblem> {
    if (cell[c].empty()) return std::nullopt;
    auto d = Decimal::parse(cell[c]);
    if (!d) return bad(c, d.status().message());
    if (!d.value().is_positive()) return bad(c, "must be positive");
    out = d.value();
    return std::nullopt;
  };
  if (auto p = decimal_cell(kTickSize, in.tick_size)) return p;
  if (auto p = decimal_cell(kSizeIncrement, in.size_increment)) return p;
  if (!cell[kCurrency].empty()) in.currency = std::string(cell[kCurrency]);
  if (!cell[kLotSize].empty()) {
    auto d = Decimal::parse(cell[kLotSize]);
    if (!d || d.value().scale != 0 || !d.value().is_positive()) {
      return bad(kLotSize, "expected a positive whole number of size increments");
    }
    in.lot_size = d.value().mantissa;
  }
  if (!cell[kSt].empty()) {
    auto st = parse_flag(cell[kSt]);
    if (!st) return bad(kSt, "expected 1/0, true/false, yes/no");
    in.is_st = *st;
    in.limit_bps = limit_bps_for(in.board, in.is_st);
  }
  if (!cell[kLimitPct].empty()) {  // after st: an explicit band wins over the ST default
    if (cell[kLimitPct] == "none") {
      in.limit_bps = 0;
    } else {
      auto d = Decimal::parse(cell[kLimitPct]);
      auto bps = d ? to_units(d.value(), Decimal{1, 2}) : Result<int64_t>(d.status());
      if (!bps || bps.value() < 0 || bps.value() >= 10000) {
        return bad(kLimitPct, "expected a percentage in [0, 100) with at most 2 decimals, "
                              "or none");
      }
      in.limit_bps = static_cast<int32_t>(bps.value());
    }
  }
  if (!cell[kMinNotional].empty()) {
    auto d = cell[kMinNotional] == "none" ? Result<Decimal>(Decimal{0, 0}) : Decimal::parse(cell[kMinNotional]);
    if (!d || d.value().mantissa < 0) {
      return bad(kMinNotional, "expected a non-negative plain decimal (currency), or none");
    }
    in.min_notional = d.value();
  }
  if (!cell[kPrevClose].empty()) {  // after tick_size: a whole number of the row's ticks
    auto d = Decimal::parse(cell[kPrevClose]);
    if (!d || !d.value().is_positive()) return bad(kPrevClose, "expected a positive plain decimal");
    if (!to_units(d.value(), in.tick_size)) {
      return bad(kPrevClose, "not a whole number of ticks of " + in.tick_size.to_string());
    }
    in.prev_close = d.value();
  }
  if (!cell[kName].empty()) in.name = std::string(cell[kName]);
  if (!cell[kCalendar].empty()) in.calendar = std::string(cell[kCalendar]);
  if (!cell[kTimeZone].empty()) in.time_zone = std::string(cell[kTimeZone]);
  return std::nullopt;
}

// The header: column → position in a row (-1 = absent).
struct Header {
  std::array<int, kColumnCount> index;
  size_t fields = 0;
};

Result<Header> parse_header(const std::vector<std::string_view>& fields, uint64_t line_no) {
  Header h;
  h.index.fill(-1);
  h.fields = fields.size();
  for (size_t i = 0; i < fields.size(); ++i) {
    int c = 0;
    while (c < kColumnCount && kColumnNames[c] != fields[i]) ++c;
    if (c == kColumnCount) {
      return Status{StatusCode::kParseError, "line " + std::to_string(line_no) +
                                                 ": unknown column \"" + std::string(fields[i]) +
                                                 "\""};
    }
    if (h.index[c] >= 0) {
      return Status{StatusCode::kParseError, "column \"" + std::string(fields[i]) + "\" twice"};
    }
    h.index[c] = static_cast<int>(i);
  }
  if (h.index[kSymbol] < 0) {
    return Status{StatusCode::kParseError, "the header has no \"symbol\" column"};
  }
  return h;
}

// The instrument one row describes: the defaults of its board (when given) or of its symbol,
// then the row's non-empty cells.
std::optional<RowProblem> row_instrument(const std::array<std::string_view, kColumnCount>& cell,
                                         const InstrumentDefaults& defaults, Instrument& in) {
  const std::string symbol(cell[kSymbol]);
  if (!cell[kBoard].empty()) {  // an explicit board replaces whatever the symbol implies
    auto b = parse_board(cell[kBoard]);
    if (!b) {
      return RowProblem{InputError::kMalformedLine,
                        symbol + ": board \"" + std::string(cell[kBoard]) +
                            "\": unknown (see docs/instruments.md)"};
    }
    in = instrument_for_board(symbol, *b);
    if (*b == Board::kCrypto) {  // keep the venue and quote currency the symbol gives
      if (auto d = instrument_from_symbol(symbol, defaults); d && d.value().board == *b) {
        in = d.value();
      }
    }
  } else {
    auto d = instrument_from_symbol(symbol, defaults);
    if (!d) return RowProblem{InputError::kUnknownSymbol, d.status().message() + " (give it a board)"};
    in = std::move(d).value();
  }
  if (auto problem = apply_row(cell, in)) {
    problem->message = symbol + ": " + problem->message;
    return problem;
  }
  return std::nullopt;
}

}  // namespace

InstrumentTable::InstrumentTable(InstrumentDefaults defaults) : defaults_(std::move(defaults)) {}

Result<LoadReport> InstrumentTable::load_csv(const std::string& path, InputErrors& errors) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status{StatusCode::kIoError, "instrument file " + path + ": cannot open"};
  std::stringstream ss;
  ss << f.rdbuf();
  return load_csv_text(ss.str(), path, errors);
}

Result<LoadReport> InstrumentTable::load_csv_text(std::string_view text, const std::string& name,
                                                  InputErrors& errors) {
  const auto file_error = [&](const std::string& why) {
    return Status{StatusCode::kParseError, "instrument file " + name + ": " + why};
  };
  LoadReport report;
  std::optional<Header> header;
  std::unordered_map<std::string, std::unique_ptr<Instrument>> rows;
  std::unordered_map<std::string, uint64_t> first_line;
  uint64_t line_no = 0;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = trim(text.substr(pos, eol - pos));
    pos = eol + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const auto fields = split(line);
    if (!header) {
      auto h = parse_header(fields, line_no);
      if (!h) return file_error(h.status().message());
      header = h.value();
      continue;
    }
    const auto reject = [&](InputError kind, const std::string& why) {
      errors.report(kind, name, line_no, why);
      report.bad_rows.push_back({line_no, why});
    };
    if (fields.size() != header->fields) {
      reject(InputError::kWrongColumnCount, std::to_string(fields.size()) +
                                                " fields, the header has " +
                                                std::to_string(header->fields));
      continue;
    }
    std::array<std::string_view, kColumnCount> cell{};
    for (int c = 0; c < kColumnCount; ++c) {
      if (header->index[c] >= 0) cell[c] = fields[size_t(header->index[c])];
    }
    const std::string symbol(cell[kSymbol]);
    if (symbol.empty()) {
      reject(InputError::kMalformedLine, "empty symbol");
      continue;
    }
    if (auto it = first_line.find(symbol); it != first_line.end()) {
      reject(InputError::kMalformedLine, symbol + ": duplicate symbol (first at line " +
                                             std::to_string(it->second) + ")");
      continue;
    }
    Instrument in;
    if (auto problem = row_instrument(cell, defaults_, in)) {
      reject(problem->kind, problem->message);
      continue;
    }
    first_line.emplace(symbol, line_no);
    rows[symbol] = std::make_unique<Instrument>(std::move(in));
  }
  if (!header) return file_error("no header line");
  if (rows.empty()) {
    return file_error("no valid row (" + std::to_string(report.bad_rows.size()) + " bad)");
  }
  report.rows_read = rows.size();
  adopt(std::move(rows));
  return report;
}

void InstrumentTable::adopt(std::unordered_map<std::string, std::unique_ptr<Instrument>> rows) {
  for (auto& [symbol, in] : rows) {
    // A later file overrides what was derived or read before; the old object is kept (retired)
    // so pointers resolve() handed out stay valid.
    if (auto it = derived_.find(symbol); it != derived_.end()) {
      retired_.push_back(std::move(it->second));
      derived_.erase(it);
    }
    auto& slot = reference_[symbol];
    if (slot) retired_.push_back(std::move(slot));
    slot = std::move(in);
  }
}

Result<const Instrument*> InstrumentTable::resolve(std::string_view symbol) {
  const std::string key(symbol);
  if (auto it = reference_.find(key); it != reference_.end()) return it->second.get();
  if (auto it = derived_.find(key); it != derived_.end()) return it->second.get();
  auto d = instrument_from_symbol(symbol, defaults_);
  if (!d) {
    ++unknown_symbols_;
    return d.status();
  }
  auto [it, inserted] = derived_.emplace(key, std::make_unique<Instrument>(std::move(d).value()));
  return static_cast<const Instrument*>(it->second.get());
}

}  // namespace ts
