#include "ingest/lobster_book.h"

#include "ingest/field_parse.h"
#include "ingest/line_reader.h"

namespace ts {

using ingest::FieldError;

Result<std::unique_ptr<LobsterBookReader>> LobsterBookReader::open(const std::string& path,
                                                                   InputErrors& errors) {
  auto lines = ingest::LineReader::open(path, errors);
  if (!lines) return lines.status().with_context("opening LOBSTER orderbook");
  return std::unique_ptr<LobsterBookReader>(new LobsterBookReader(std::move(lines).value(), errors));
}

std::unique_ptr<LobsterBookReader> LobsterBookReader::open(std::unique_ptr<ingest::LineReader> lines,
                                                           InputErrors& errors) {
  return std::unique_ptr<LobsterBookReader>(new LobsterBookReader(std::move(lines), errors));
}

LobsterBookReader::LobsterBookReader(std::unique_ptr<ingest::LineReader> lines, InputErrors& errors)
    : lines_(std::move(lines)), errors_(errors) {}

LobsterBookReader::~LobsterBookReader() = default;

bool LobsterBookReader::next(LobsterBookRow& row) {
  constexpr size_t kMaxFields = 4 * 200;
  std::string_view f[kMaxFields];
  ingest::Line line;
  while (lines_->next(line)) {
    const auto file = lines_->file_name();
    if (line.has_garbage) {
      errors_.report(InputError::kBinaryGarbage, file, line.number, "control bytes in a text row");
      continue;
    }
    const size_t n = ingest::split_fields(line.text, f, kMaxFields);
    const bool bad_count = n % 4 != 0 || n > kMaxFields || (levels_ != 0 && n != size_t(levels_) * 4);
    if (bad_count) {
      errors_.report(line.unterminated ? InputError::kTruncatedFile : InputError::kWrongColumnCount,
                     file, line.number, "expected 4 columns per level");
      continue;
    }
    LobsterBookRow r;
    r.line = line.number;
    r.levels = static_cast<int>(n / 4);
    bool ok = true;
    for (int lv = 0; lv < r.levels && ok; ++lv) {
      int64_t v[4];
      for (int k = 0; k < 4; ++k) {
        const FieldError e = ingest::parse_i64(f[lv * 4 + k], v[k]);
        if (e != FieldError::kOk) {
          errors_.report(line.unterminated ? InputError::kTruncatedFile : ingest::input_error_for(e),
                         file, line.number, "bad number in column " + std::to_string(lv * 4 + k + 1));
          ok = false;
          break;
        }
      }
      if (!ok) break;
      if (const char* why = lobster_level_error(v[0], v[1], v[2], v[3])) {
        errors_.report(line.unterminated ? InputError::kTruncatedFile
                       : v[1] < 0 || v[3] < 0 ? InputError::kBadSize : InputError::kBadPrice,
                       file, line.number, why);
        ok = false;
        break;
      }
      if (lv >= kBookLevels) continue;
      const bool ask_empty = v[0] >= kLobsterEmptyPrice || v[1] == 0;
      const bool bid_empty = v[2] <= -kLobsterEmptyPrice || v[3] == 0;
      r.asks[lv] = ask_empty ? Level{} : Level{lobster_price_ticks(v[0]), v[1]};
      r.bids[lv] = bid_empty ? Level{} : Level{lobster_price_ticks(v[2]), v[3]};
    }
    if (!ok) continue;
    if (levels_ == 0) levels_ = r.levels;
    row = r;
    return true;
  }
  return false;
}

}  // namespace ts
