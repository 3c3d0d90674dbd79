#pragma once
// What a reference-file loader (instrument master, exchange calendars) reports: how many rows it
// took and which rows it rejected, each by line, so a user can fix the file. The same rows are
// also counted in the caller's InputErrors ("file:line: kind: detail").
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

struct RowError {
  uint64_t line = 0;      // 1-based line in the file
  std::string message;    // "600000.SH: tick_size \"0.0x\": not a plain decimal number"
};

struct LoadReport {
  uint64_t rows_read = 0;           // valid rows
  std::vector<RowError> bad_rows;   // in file order
};

}  // namespace ts
