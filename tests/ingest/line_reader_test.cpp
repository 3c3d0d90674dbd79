#include "ingest/line_reader.h"

#include <gtest/gtest.h>

#include "ingest_test_util.h"
#include "test_data.h"

namespace ts::ingest {
namespace {

using ts::testing::scratch_dir;

std::vector<std::string> read_lines(const std::string& path, InputErrors& errors, std::vector<Line>* meta = nullptr) {
  auto r = LineReader::open(path, errors);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  std::vector<std::string> out;
  if (!r) return out;
  Line line;
  while (r.value()->next(line)) {
    out.emplace_back(line.text);
    if (meta) meta->push_back(line);
  }
  return out;
}

TEST(LineReader, PlainAndGzipGiveTheSameNumberedLines) {
  const auto dir = scratch_dir("line_reader_same");
  const std::string text = "a,b\r\nsecond line\n\nfourth\n";
  ts::testing::write_text(dir / "x.csv", text);
  ts::testing::write_gz(dir / "x.csv.gz", text);
  InputErrors errors;
  std::vector<Line> meta;
  const auto plain = read_lines(dir / "x.csv", errors, &meta);
  const auto gz = read_lines(dir / "x.csv.gz", errors);
  EXPECT_EQ(plain, (std::vector<std::string>{"a,b", "second line", "", "fourth"}));
  EXPECT_EQ(plain, gz);
  ASSERT_EQ(meta.size(), 4u);
  EXPECT_EQ(meta[3].number, 4u);
  EXPECT_FALSE(meta[3].unterminated);
  EXPECT_EQ(errors.total(), 0u);
}

TEST(LineReader, FlagsAFinalLineWithoutNewline) {
  const auto dir = scratch_dir("line_reader_unterminated");
  ts::testing::write_text(dir / "x.csv", "one\ntwo");
  InputErrors errors;
  std::vector<Line> meta;
  EXPECT_EQ(read_lines(dir / "x.csv", errors, &meta), (std::vector<std::string>{"one", "two"}));
  ASSERT_EQ(meta.size(), 2u);
  EXPECT_FALSE(meta[0].unterminated);
  EXPECT_TRUE(meta[1].unterminated);
}

TEST(LineReader, FlagsControlBytesButNotTabs) {
  const auto dir = scratch_dir("line_reader_garbage");
  ts::testing::write_text(dir / "x.csv", std::string("ok\tline\nbad\0line\nbell\x07\nfine\n", 27));
  InputErrors errors;
  std::vector<Line> meta;
  const auto lines = read_lines(dir / "x.csv", errors, &meta);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_FALSE(meta[0].has_garbage);
  EXPECT_TRUE(meta[1].has_garbage);
  EXPECT_EQ(lines[1].size(), 8u);  // the NUL is part of the line, not an end
  EXPECT_TRUE(meta[2].has_garbage);
  EXPECT_FALSE(meta[3].has_garbage);
}

TEST(LineReader, ReadsLinesLongerThanItsBuffer) {
  const auto dir = scratch_dir("line_reader_long");
  const std::string big(700 * 1024, 'x');
  ts::testing::write_gz(dir / "x.csv.gz", "a\n" + big + "\nb\n");
  InputErrors errors;
  const auto lines = read_lines(dir / "x.csv.gz", errors);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[1], big);
  EXPECT_EQ(lines[2], "b");
}

TEST(LineReader, TruncatedGzipDeliversTheCompleteLinesThenReportsOnce) {
  TS_REQUIRE_DATA(::ts::testing::lobster_file("GOOG", "message", 10));
  const auto src = ts::testing::lobster_file("GOOG", "message", 10).string();
  const std::string full = ts::testing::read_gz(src);
  const std::string gz = ts::testing::read_bytes(src);
  const auto dir = scratch_dir("line_reader_truncated");
  ts::testing::write_text(dir / "cut.csv.gz", gz.substr(0, gz.size() / 2));

  InputErrors errors;
  errors.set_quiet(true);
  auto r = LineReader::open(dir / "cut.csv.gz", errors);
  ASSERT_TRUE(r.is_ok());
  Line line;
  size_t n = 0, offset = 0;
  bool prefix_ok = true;
  while (r.value()->next(line)) {
    ++n;
    // Every delivered line is a complete line of the original file, in order.
    const size_t nl = full.find('\n', offset);
    prefix_ok = prefix_ok && full.compare(offset, nl - offset, line.text) == 0 && !line.unterminated;
    offset = nl + 1;
  }
  EXPECT_TRUE(prefix_ok);
  EXPECT_GT(n, 50'000u);   // about half of the 147,916 rows
  EXPECT_LT(n, 100'000u);
  EXPECT_TRUE(r.value()->truncated());
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
  EXPECT_FALSE(r.value()->next(line));  // stays stopped
}

TEST(LineReader, MissingFileIsNotFound) {
  InputErrors errors;
  auto r = LineReader::open("/nonexistent/x.csv.gz", errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ts::ingest
