// Every crypto capture in ../shared/data/crypto replayed through its decoder: 0 input errors,
// the venue checks (Binance book = bookTicker, Kraken checksums, Bitstamp L3 never crossed), and
// synthetic corruptions of real captures counted with file:line while the rest is read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "book/book_set.h"
#include "ingest/crypto/crypto_source.h"
#include "ingest/open_source.h"
#include "../ingest_test_util.h"
#include "test_data.h"

namespace ts::crypto {
namespace {

using ts::testing::data_dir;
using ts::testing::count_kind;
using ts::testing::drain;

std::string crypto_file(const std::string& name) { return (data_dir() / "crypto" / name).string(); }

struct Replay {
  SymbolTable symbols;
  InputErrors errors;
  std::vector<Event> events;
  DecoderCounters counters;
  Venue venue = Venue::kBinance;
};

void replay(Replay& r, const std::vector<std::string>& paths, std::optional<Venue> venue = std::nullopt) {
  r.errors.set_quiet(true);
  auto s = open_crypto_source(paths, venue, r.symbols, r.errors);
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  r.events = drain(*s.value());
  r.counters = s.value()->counters();
  r.venue = s.value()->venue();
}

TEST(CryptoCaptures, BinanceBookEqualsBookTicker) {
  TS_REQUIRE_DATA(crypto_file("BINANCE.ws.1.0"));
  Replay r;
  replay(r, {crypto_file("BINANCE.ws.1.0"), crypto_file("BINANCE.http.0.0")});
  EXPECT_EQ(r.venue, Venue::kBinance);
  EXPECT_EQ(r.errors.total(), 0u);
  EXPECT_EQ(r.counters.bad_messages, 0u);
  EXPECT_EQ(r.counters.snapshots, 4u);  // one REST snapshot per symbol
  EXPECT_GT(r.events.size(), 100u);
  ASSERT_GT(r.counters.bbo_checks, 20u);
  EXPECT_GE(double(r.counters.bbo_checks - r.counters.bbo_mismatches), 0.999 * double(r.counters.bbo_checks))
      << r.counters.bbo_mismatches << " of " << r.counters.bbo_checks;
  ASSERT_TRUE(r.symbols.find("BINANCE:NKNUSDT"));
  EXPECT_EQ(r.counters.sequence_gap, 0u);
}

TEST(CryptoCaptures, KrakenChecksumsAllVerify) {
  TS_REQUIRE_DATA(crypto_file("KRAKEN.ws.50.0"));
  Replay r;
  replay(r, {crypto_file("KRAKEN.ws.50.0")});
  EXPECT_EQ(r.venue, Venue::kKraken);
  EXPECT_EQ(r.errors.total(), 0u);
  EXPECT_EQ(r.counters.checksum_mismatch, 0u) << (r.counters.issues.empty() ? "" : r.counters.issues[0]);
  EXPECT_EQ(r.counters.checksums_verified, 4269u);  // every update line carries "c"
  EXPECT_EQ(r.counters.snapshots, 10u);
}

TEST(CryptoCaptures, CoinbaseReplaysWithoutErrors) {
  TS_REQUIRE_DATA(crypto_file("COINBASE.ws.28.0"));
  Replay r;
  replay(r, {crypto_file("COINBASE.ws.28.0")});
  EXPECT_EQ(r.venue, Venue::kCoinbase);
  EXPECT_EQ(r.errors.total(), 0u);
  EXPECT_EQ(r.counters.snapshots, 10u);
  EXPECT_EQ(count_kind(r.events, EventKind::kTrade), 107u);  // match + last_match
  EXPECT_EQ(r.counters.crossed_books, 0u);
}

TEST(CryptoCaptures, BitstampDiffsMeetTheirRestSnapshots) {
  TS_REQUIRE_DATA(crypto_file("BITSTAMP.ws.1.0"));
  Replay r;
  replay(r, {crypto_file("BITSTAMP.ws.1.0"), crypto_file("BITSTAMP.http.0.0")});
  EXPECT_EQ(r.venue, Venue::kBitstamp);
  EXPECT_EQ(r.errors.total(), 0u);
  EXPECT_EQ(r.counters.snapshots, 10u);
  EXPECT_EQ(count_kind(r.events, EventKind::kTrade), 10u);
  EXPECT_EQ(r.counters.crossed_books, 0u);
}

TEST(CryptoCaptures, BitstampOrderLevelBookNeverCrossed) {
  const auto path = data_dir() / "crypto" / "bitstamp-l3-20150501" / "2015-05-01.log.gz";
  TS_REQUIRE_DATA(path);
  Replay r;
  replay(r, {path.string()});
  EXPECT_EQ(r.venue, Venue::kBitstampL3);
  EXPECT_EQ(r.errors.total(), 0u);
  EXPECT_EQ(count_kind(r.events, EventKind::kTrade), 575u);
  // Every order_created is added, except incoming orders filled before they could rest (held
  // while they would cross, see bitstamp_l3_decoder.cpp); changes that raise a size add too.
  EXPECT_GT(count_kind(r.events, EventKind::kOrderAdd), 24000u);
  EXPECT_LE(count_kind(r.events, EventKind::kOrderAdd), 24894u + 602u);
  EXPECT_EQ(r.counters.crossed_books, 0u);
  // The book every later stage sees: never crossed after any event.
  BookSet books(r.symbols);
  InputErrors book_errors;
  book_errors.set_quiet(true);
  size_t crossed = 0;
  for (const Event& e : r.events) {
    books.apply(e, book_errors);
    const BookTop& t = books.top(e.symbol);
    if (t.has_bbo() && t.best_bid() >= t.best_ask()) ++crossed;
  }
  EXPECT_EQ(crossed, 0u);
  EXPECT_EQ(book_errors.total(), 0u);
}

TEST(CryptoCaptures, CorruptionsAreCountedWithFileAndLineAndTheRestIsRead) {
  TS_REQUIRE_DATA(crypto_file("KRAKEN.ws.50.0"));
  TS_REQUIRE_DATA(crypto_file("BINANCE.ws.1.0"));
  Replay clean;
  replay(clean, {crypto_file("KRAKEN.ws.50.0")});
  const auto dir = ts::testing::scratch_dir("crypto_corrupt");
  // Kraken: line 20 is not JSON, line 40's checksum is wrong.
  std::string text = ts::testing::read_gz(crypto_file("KRAKEN.ws.50.0"));
  std::vector<std::string> lines;
  for (size_t at = 0; at < text.size();) {
    const size_t nl = text.find('\n', at);
    lines.push_back(text.substr(at, nl - at));
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  ASSERT_GT(lines.size(), 100u);
  size_t bad_crc_line = 0;
  for (size_t i = 299; i < lines.size(); ++i) {  // after every pair's snapshot
    const size_t c = lines[i].find("\"c\":\"");
    if (c == std::string::npos) continue;
    lines[i].insert(c + 5, "9");
    bad_crc_line = i + 1;
    break;
  }
  lines[19] = "1618678133.0: {\"event\": not json";
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  const std::string kraken = (dir / "KRAKEN.corrupt").string();
  ts::testing::write_gz(kraken, out);
  Replay r;
  replay(r, {kraken});
  EXPECT_EQ(r.errors.count(InputError::kMalformedLine), 1u);
  EXPECT_EQ(r.counters.checksum_mismatch, 1u) << "line " << bad_crc_line << ": " << lines[bad_crc_line - 1];
  ASSERT_FALSE(r.counters.issues.empty());
  EXPECT_NE(r.counters.issues[0].find("KRAKEN.corrupt:" + std::to_string(bad_crc_line) + ": checksum_mismatch"),
            std::string::npos)
      << r.counters.issues[0];
  // The rest is read: one pair's book is stale until its next snapshot (none in 30 s), the others flow.
  EXPECT_GT(r.events.size(), clean.events.size() / 2);
  // Every other update was still checked (the not-JSON line may have been a pair's snapshot: then
  // that pair's updates wait for one, dropped_before_sync).
  EXPECT_GE(r.counters.checksums_verified + r.counters.dropped_while_stale + r.counters.dropped_before_sync + 2,
            clean.counters.checksums_verified);

  // Binance: one NKNUSDT diff removed → a sequence gap named by the line after it.
  text = ts::testing::read_gz(crypto_file("BINANCE.ws.1.0"));
  const size_t first = text.find("nknusdt@depth@100ms\",\"data\"", text.find("nknusdt@depth@100ms\",\"data\"") + 1);
  const size_t third = text.find("nknusdt@depth@100ms\",\"data\"", text.find("nknusdt@depth@100ms\",\"data\"", first + 1) + 1);
  const size_t line_start = text.rfind('\n', third) + 1;
  const size_t line_end = text.find('\n', third) + 1;
  text.erase(line_start, line_end - line_start);
  const std::string binance = (dir / "BINANCE.gap").string();
  ts::testing::write_text(binance, text);
  Replay g;
  replay(g, {binance, crypto_file("BINANCE.http.0.0")});
  EXPECT_EQ(g.errors.total(), 0u);
  EXPECT_EQ(g.counters.sequence_gap, 1u);
  ASSERT_FALSE(g.counters.issues.empty());
  EXPECT_NE(g.counters.issues[0].find("BINANCE.gap:"), std::string::npos) << g.counters.issues[0];
  EXPECT_NE(g.counters.issues[0].find("sequence_gap: BINANCE:NKNUSDT"), std::string::npos) << g.counters.issues[0];
}

TEST(CryptoCaptures, OpenSourceKnowsTheCryptoFormats) {
  TS_REQUIRE_DATA(crypto_file("KRAKEN.ws.50.0"));
  SymbolTable symbols;
  InputErrors errors;
  errors.set_quiet(true);
  for (const char* f : {"crypto", "kraken-json"}) {
    auto s = open_source(f, {crypto_file("KRAKEN.ws.50.0")}, symbols, errors);
    ASSERT_TRUE(s.is_ok()) << f << ": " << s.status().message();
    EXPECT_GT(drain(*s.value()).size(), 1000u) << f;
  }
  // A file that is no venue's capture: the venue cannot be told, and the error says what to give.
  TS_REQUIRE_DATA(ts::testing::lobster_file("AAPL", "message", 1));
  auto s = open_source("crypto", {ts::testing::lobster_file("AAPL", "message", 1).string()}, symbols, errors);
  EXPECT_FALSE(s.is_ok());
}

}  // namespace
}  // namespace ts::crypto
