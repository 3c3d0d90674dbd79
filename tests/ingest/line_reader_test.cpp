#include "ingest/line_reader.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <memory>
#include <utility>
#include <vector>

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

// Long lines are checked 32 bytes a step: a control byte anywhere in a line of any length is
// seen (also in the last, overlapping block), and tabs, '\r' and bytes >= 0x80 are not garbage.
TEST(LineReader, FlagsAControlByteAtEveryPositionOfLongLines) {
  const auto dir = scratch_dir("line_reader_garbage_long");
  std::string text;
  std::vector<bool> want;
  for (size_t len : {31, 32, 33, 63, 64, 65, 100, 663}) {
    std::string clean(len, 'x');
    for (size_t i = 0; i < len; i += 7) clean[i] = i % 2 ? '\t' : char(0xE9);  // tabs and UTF-8 bytes
    text += clean + "\n";
    want.push_back(false);
    for (size_t at = 0; at < len; ++at) {
      std::string bad = clean;
      bad[at] = at % 3 == 0 ? '\x7f' : (at % 3 == 1 ? '\x01' : '\x1f');
      text += bad + "\n";
      want.push_back(true);
    }
  }
  ts::testing::write_text(dir / "x.csv", text);
  InputErrors errors;
  std::vector<Line> meta;
  const auto lines = read_lines(dir / "x.csv", errors, &meta);
  ASSERT_EQ(meta.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(meta[i].has_garbage, want[i]) << "line " << i + 1;
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
  EXPECT_GT(n, 50'000u);  // about half of the 147,916 rows
  EXPECT_LT(n, 100'000u);
  EXPECT_TRUE(r.value()->truncated());
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(errors.total(), 1u);
  EXPECT_FALSE(r.value()->next(line));  // stays stopped
}

std::string gz_bytes(const std::filesystem::path& dir, const std::string& text) {
  ts::testing::write_gz(dir / "member.gz", text);
  return ts::testing::read_bytes(dir / "member.gz");
}

std::string numbered_lines(int from, int to) {
  std::string s;
  for (int i = from; i < to; ++i) s += "line " + std::to_string(i) + "\n";
  return s;
}

// `cat a.gz b.gz c.gz`: every member is read, as gunzip does.
TEST(LineReader, ReadsEveryGzipMember) {
  const auto dir = scratch_dir("line_reader_members");
  const std::string a = numbered_lines(0, 1000), b = numbered_lines(1000, 2000), c = numbered_lines(2000, 3000);
  ts::testing::write_text(dir / "x.csv.gz", gz_bytes(dir, a) + gz_bytes(dir, b) + gz_bytes(dir, c));
  InputErrors errors;
  const auto lines = read_lines(dir / "x.csv.gz", errors);
  ASSERT_EQ(lines.size(), 3000u);
  EXPECT_EQ(lines[2999], "line 2999");
  EXPECT_EQ(errors.total(), 0u);
}

// A damaged second member used to end the file silently ("errors none"): zlib took it for
// trailing garbage. Now it is reported, and the third member is still read.
TEST(LineReader, DamagedMemberIsReportedAndTheNextMemberStillRead) {
  const auto dir = scratch_dir("line_reader_damaged_member");
  const std::string a = numbered_lines(0, 1000), b = numbered_lines(1000, 2000), c = numbered_lines(2000, 3000);
  std::string bad_b = gz_bytes(dir, b);
  bad_b[0] = 'X';  // header magic damaged
  ts::testing::write_text(dir / "hdr.csv.gz", gz_bytes(dir, a) + bad_b + gz_bytes(dir, c));
  InputErrors errors;
  errors.set_quiet(true);
  auto lines = read_lines(dir / "hdr.csv.gz", errors);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  ASSERT_EQ(lines.size(), 2000u);  // the first and the third member
  EXPECT_EQ(lines[999], "line 999");
  EXPECT_EQ(lines[1000], "line 2000");

  std::string mid_b = gz_bytes(dir, b);
  for (size_t i = mid_b.size() / 2; i < mid_b.size() / 2 + 16; ++i) mid_b[i] = char(mid_b[i] ^ 0x5a);  // data damaged
  ts::testing::write_text(dir / "data.csv.gz", gz_bytes(dir, a) + mid_b + gz_bytes(dir, c));
  InputErrors errors2;
  errors2.set_quiet(true);
  lines = read_lines(dir / "data.csv.gz", errors2);
  EXPECT_EQ(errors2.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(lines.front(), "line 0");
  EXPECT_EQ(lines.back(), "line 2999");  // the member after the damage is not lost
  // Deflate notices damage only some bytes later (or at the member's CRC): lines decoded from the
  // damaged bytes are delivered as they came out (a source counts them as bad records); every
  // line of the first and the third member is intact.
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(lines[size_t(i)], "line " + std::to_string(i));
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(lines[lines.size() - 1000 + size_t(i)], "line " + std::to_string(2000 + i));
}

// Whole members are inflated at once (libdeflate) into room first sized by the file's last
// ISIZE: a first member far larger than the last is given more room and still read whole, an
// empty member in between yields nothing, and a bgzip-like file of many small members reads as
// the plain text.
TEST(LineReader, MembersOfEverySizeReadAsThePlainText) {
  const auto dir = scratch_dir("line_reader_member_sizes");
  const std::string big = numbered_lines(0, 200'000), small = numbered_lines(200'000, 200'010);
  ts::testing::write_text(dir / "grow.csv.gz", gz_bytes(dir, big) + gz_bytes(dir, "") + gz_bytes(dir, small));
  std::string blocks, text;
  for (int i = 0; i < 300; ++i) {
    const std::string part = numbered_lines(i * 97, (i + 1) * 97);
    blocks += gz_bytes(dir, part);
    text += part;
  }
  ts::testing::write_text(dir / "blocks.csv.gz", blocks);
  for (const auto& [name, want] : {std::pair{"grow.csv.gz", big + small}, std::pair{"blocks.csv.gz", text}}) {
    SCOPED_TRACE(name);
    InputErrors errors;
    const auto lines = read_lines(dir / name, errors);
    std::string joined;
    for (const auto& l : lines) joined += l + "\n";
    EXPECT_EQ(joined, want);
    EXPECT_EQ(errors.total(), 0u);
  }
}

// A gzip member with a header CRC (FHCRC), as zlib's deflateSetHeader writes it.
std::string gz_member_with_header_crc(const std::string& text) {
  z_stream zs{};
  EXPECT_EQ(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
  gz_header h{};
  h.hcrc = 1;
  EXPECT_EQ(deflateSetHeader(&zs, &h), Z_OK);
  std::string out(deflateBound(&zs, uLong(text.size())) + 64, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  zs.avail_in = uInt(text.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  return out;
}

// The header CRC is checked (zlib) where it is present: a damaged one is a corrupt member,
// reported, and the next member is still read.
TEST(LineReader, HeaderCrcIsChecked) {
  const auto dir = scratch_dir("line_reader_fhcrc");
  const std::string good = gz_member_with_header_crc(numbered_lines(0, 100));
  ASSERT_EQ(good[3] & 0x02, 0x02);
  std::string bad = good;
  bad[10] = char(bad[10] ^ 0x01);  // the CRC-16 right after the 10-byte fixed header
  ts::testing::write_text(dir / "good.csv.gz", good + gz_bytes(dir, "last\n"));
  ts::testing::write_text(dir / "bad.csv.gz", bad + gz_bytes(dir, "last\n"));
  InputErrors errors;
  errors.set_quiet(true);
  auto lines = read_lines(dir / "good.csv.gz", errors);
  ASSERT_EQ(lines.size(), 101u);
  EXPECT_EQ(lines[99], "line 99");
  EXPECT_EQ(errors.total(), 0u);
  lines = read_lines(dir / "bad.csv.gz", errors);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
  EXPECT_EQ(lines, std::vector<std::string>{"last"});
}

TEST(LineReader, TrailingGarbageAfterTheLastMemberIsReported) {
  const auto dir = scratch_dir("line_reader_trailing");
  ts::testing::write_text(dir / "x.csv.gz", gz_bytes(dir, numbered_lines(0, 10)) + "not gzip at all");
  InputErrors errors;
  errors.set_quiet(true);
  EXPECT_EQ(read_lines(dir / "x.csv.gz", errors).size(), 10u);
  EXPECT_EQ(errors.count(InputError::kTruncatedFile), 1u);
}

TEST(LineReader, SkipsAUtf8ByteOrderMark) {
  const auto dir = scratch_dir("line_reader_bom");
  ts::testing::write_text(dir / "x.csv", "\xEF\xBB\xBF" "a,b\n1,2\n");
  ts::testing::write_gz(dir / "x.csv.gz", "\xEF\xBB\xBF" "a,b\n1,2\n");
  InputErrors errors;
  EXPECT_EQ(read_lines(dir / "x.csv", errors), (std::vector<std::string>{"a,b", "1,2"}));
  EXPECT_EQ(read_lines(dir / "x.csv.gz", errors), (std::vector<std::string>{"a,b", "1,2"}));
}

struct ReadResult {
  std::vector<std::string> lines;
  std::vector<std::pair<bool, bool>> flags;  // has_garbage, unterminated
  std::map<std::string, uint64_t> errors;
  bool truncated = false;
  bool operator==(const ReadResult&) const = default;
};

ReadResult read_all(LineReader& r, InputErrors& errors) {
  ReadResult out;
  Line line;
  uint64_t n = 0;
  while (r.next(line)) {
    EXPECT_EQ(line.number, ++n);
    out.lines.emplace_back(line.text);
    out.flags.emplace_back(line.has_garbage, line.unterminated);
  }
  out.errors = errors.by_kind();
  out.truncated = r.truncated();
  return out;
}

// open_memory() is the in-memory twin of open() (the fuzz targets read every input through
// it): for each kind of file the reader handles, the same lines, flags and reports as the file.
TEST(LineReader, MemoryReadsExactlyAsTheFileOfTheSameBytes) {
  const auto dir = scratch_dir("line_reader_memory");
  const std::string text = numbered_lines(0, 3000);
  std::string corrupt = gz_bytes(dir, text);
  for (size_t i = corrupt.size() / 2; i < corrupt.size() / 2 + 16; ++i) corrupt[i] = char(corrupt[i] ^ 0x5a);
  const std::string cut = gz_bytes(dir, text);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"empty", ""},
      {"plain", "a,b\r\nsecond line\n\nfourth\n"},
      {"unterminated_bom", "\xEF\xBB\xBF" "one\ntwo"},
      {"garbage", std::string("ok\tline\nbad\0line\nbell\x07\nfine\n", 27)},
      {"long_lines", "a\n" + std::string(700 * 1024, 'x') + "\n" + std::string(5000, 'y') + "\nb"},
      {"many_lines", text},
      {"gzip_members", gz_bytes(dir, text) + gz_bytes(dir, "second\n")},
      {"gzip_corrupt_member", gz_bytes(dir, "first\n") + corrupt + gz_bytes(dir, "third\n")},
      {"gzip_cut", cut.substr(0, cut.size() / 2)},
      {"gzip_trailing_garbage", gz_bytes(dir, text) + "not gzip at all"},
      {"gzip_magic_only", "\x1f\x8b"},
  };
  for (const auto& [name, bytes] : cases) {
    SCOPED_TRACE(name);
    const std::string path = (dir / (name + ".csv")).string();
    ts::testing::write_text(path, bytes);
    InputErrors file_errors, memory_errors;
    file_errors.set_quiet(true);
    memory_errors.set_quiet(true);
    auto file = LineReader::open(path, file_errors);
    ASSERT_TRUE(file.is_ok());
    auto memory = LineReader::open_memory(bytes, path, memory_errors);
    EXPECT_EQ(memory->path(), path);
    EXPECT_EQ(memory->file_name(), name + ".csv");
    const ReadResult from_file = read_all(*file.value(), file_errors);
    const ReadResult from_memory = read_all(*memory, memory_errors);
    EXPECT_EQ(from_memory, from_file);
    EXPECT_FALSE(memory->next(*std::make_unique<Line>()));  // the end stays the end
  }
}

TEST(LineReader, MissingFileIsNotFound) {
  InputErrors errors;
  auto r = LineReader::open("/nonexistent/x.csv.gz", errors);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace ts::ingest
