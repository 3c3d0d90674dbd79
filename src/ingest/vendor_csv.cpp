#include "ingest/vendor_csv.h"

#include <algorithm>
#include <cstring>
#include <filesystem>

#include "core/clock.h"

namespace ts::ingest {

Result<HeaderColumns> read_header_columns(LineReader& lines, std::span<const std::string_view> names,
                                          bool empty_ok) {
  Line line;
  if (!lines.next(line)) {
    if (empty_ok && !lines.truncated()) return HeaderColumns{.empty_file = true};
    return Status(StatusCode::kParseError,
                  lines.path() + (lines.truncated() ? ": compressed stream is corrupt or cut off before the header line"
                                                    : ": empty file, expected a header line"));
  }
  std::vector<std::string_view> header(512);
  HeaderColumns h;
  h.ncols = split_fields(line.text, header.data(), header.size());
  header.resize(std::min(h.ncols, header.size()));
  for (auto name : names) {
    size_t i = 0;
    while (i < header.size() && header[i] != name) ++i;
    if (i == header.size()) {
      return Status(StatusCode::kParseError, lines.path() + ": header lacks column " + std::string(name));
    }
    h.cols.push_back(i);
  }
  return h;
}

bool parse_ymd(std::string_view s, int& y, unsigned& m, unsigned& d) {
  std::string_view ys, ms, ds;
  if (s.size() == 8) {
    ys = s.substr(0, 4), ms = s.substr(4, 2), ds = s.substr(6, 2);
  } else if (s.size() == 10 && (s[4] == '.' || s[4] == '-') && s[7] == s[4]) {
    ys = s.substr(0, 4), ms = s.substr(5, 2), ds = s.substr(8, 2);
  } else {
    return false;
  }
  int64_t yv = 0, mv = 0, dv = 0;
  if (parse_i64(ys, yv) != FieldError::kOk || parse_i64(ms, mv) != FieldError::kOk ||
      parse_i64(ds, dv) != FieldError::kOk) {
    return false;
  }
  // Years end at 2261: ns since the epoch in int64 end in April 2262, and a later date's midnight
  // overflowed (UB; found by szse_trades_fuzz with UBSan).
  if (yv < 1900 || yv > kMaxYear || mv < 1 || mv > 12 || dv < 1 || dv > 31) return false;
  y = int(yv), m = unsigned(mv), d = unsigned(dv);
  return true;
}

bool ChinaMidnight::get(std::string_view date, int64_t& ns) {
  if (date.size() == last_len_ && last_len_ > 0 && std::memcmp(date.data(), last_, last_len_) == 0) {
    ns = last_ns_;
    return true;
  }
  int y = 0;
  unsigned m = 0, d = 0;
  if (date.size() > sizeof(last_) || !parse_ymd(date, y, m, d)) return false;
  last_ns_ = midnight_ns(y, m, d, 8);
  std::memcpy(last_, date.data(), date.size());
  last_len_ = date.size();
  ns = last_ns_;
  return true;
}

bool RowDecoder::intern(const Line& line, std::string_view name, SymbolId& id) {
  if (name != last_name_ || last_id_ == kInvalidSymbol) {
    last_id_ = symbols_.intern(name);
    last_name_.assign(name);
  }
  if (last_id_ == kInvalidSymbol) return fail(line, InputError::kUnknownSymbol, "symbol table full");
  id = last_id_;
  return true;
}

bool RowDecoder::china_time(const Line& line, std::string_view date, std::string_view time, const char* what,
                            int64_t& ts_ns) {
  int64_t midnight = 0, tod = 0;
  if (!days_.get(date, midnight) || !parse_hms_ns(time, tod)) return fail(line, InputError::kMalformedLine, what);
  ts_ns = midnight + tod;
  return true;
}

std::string find_data_file(const std::string& dir, std::initializer_list<const char*> names) {
  std::error_code ec;
  for (const char* name : names) {
    for (const char* ext : {".csv.gz", ".csv"}) {
      const auto p = std::filesystem::path(dir) / (std::string(name) + ext);
      if (std::filesystem::exists(p, ec)) return p.string();
    }
  }
  return {};
}

}  // namespace ts::ingest
