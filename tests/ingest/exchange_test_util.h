#pragma once
// Helpers for the exchange-layout tests (szse-l2, szse-trades, sse-l3): the real files' paths,
// their lines, editing one field of a row, a CSV round trip through CsvWriter and the csv source.
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ingest/csv_source.h"
#include "ingest/csv_writer.h"
#include "ingest_test_util.h"
#include "test_data.h"

namespace ts::testing {

inline std::filesystem::path szse_tick_file() { return data_dir() / "szse-l2" / "5stocks-20220601" / "tick.csv.gz"; }
inline std::filesystem::path szse_trade_file() {
  return data_dir() / "szse-trades" / "000001-20230201" / "tradeData.csv.gz";
}
inline std::filesystem::path sse_l3_dir() { return data_dir() / "sse-l3" / "20230711-5stocks"; }

// The lines of a (gzip) file, header first.
inline std::vector<std::string> file_lines(const std::filesystem::path& path) {
  const std::string text = read_gz(path.string());
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    std::string l = text.substr(start, nl - start);
    if (!l.empty() && l.back() == '\r') l.pop_back();
    lines.push_back(std::move(l));
  }
  return lines;
}

// `row` with field `index` (0-based) replaced by `value`.
inline std::string with_field(const std::string& row, size_t index, const std::string& value) {
  size_t start = 0;
  for (size_t i = 0; i < index; ++i) start = row.find(',', start) + 1;
  const size_t end = row.find(',', start);
  return row.substr(0, start) + value + (end == std::string::npos ? "" : row.substr(end));
}

// Index of `name` in a header line.
inline size_t column_of(const std::string& header, const std::string& name) {
  size_t i = 0, start = 0;
  for (;;) {
    const size_t end = header.find(',', start);
    if (header.substr(start, end == std::string::npos ? std::string::npos : end - start) == name) return i;
    if (end == std::string::npos) break;
    start = end + 1;
    ++i;
  }
  ADD_FAILURE() << "no column " << name;
  return 0;
}

// Writes `events` as project CSV to `path`, reads it back with the csv source and expects the same
// events (recv time aside) and no error.
inline void expect_csv_round_trip(const std::vector<Event>& events, const SymbolTable& symbols,
                                  const std::string& path) {
  auto w = CsvWriter::open(path);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  for (const auto& e : events) ASSERT_TRUE(w.value().write(e, symbols).is_ok());
  ASSERT_TRUE(w.value().close().is_ok());
  SymbolTable s2;
  InputErrors e2;
  auto src = make_csv_source(path, s2, e2);
  ASSERT_TRUE(src.is_ok()) << src.status().to_string();
  const auto back = drain(*src.value());
  EXPECT_EQ(e2.total(), 0u);
  ASSERT_EQ(back.size(), events.size());
  for (size_t i = 0; i < back.size(); ++i) {
    // Symbol ids are the order of first appearance in both tables: compare names.
    ASSERT_EQ(s2.name(back[i].symbol), symbols.name(events[i].symbol)) << "event " << i;
    Event a = events[i];
    a.symbol = back[i].symbol;
    ASSERT_TRUE(same_event(a, back[i])) << "event " << i;
  }
}

}  // namespace ts::testing
