// Unit tests of the crypto venue decoders on hand-written venue messages: exact units, each
// venue's book procedure, gaps and checksum mismatches marking the book stale until a snapshot.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "ingest/crypto/capture_line.h"
#include "ingest/crypto/decimal_units.h"
#include "ingest/crypto/decoder_base.h"
#include "ingest/crypto/venue_decoder.h"

namespace ts::crypto {
namespace {

TEST(CryptoUnits, ExactDecimalsIntoUnits) {
  int64_t v = 0;
  EXPECT_TRUE(parse_units("0.35210000", Decimal{1, 4}, v));
  EXPECT_EQ(v, 3521);
  EXPECT_FALSE(parse_units("0.35215", Decimal{1, 4}, v));  // not a whole tick
  EXPECT_TRUE(parse_units("236.47", Decimal{1, 2}, v));
  EXPECT_EQ(v, 23647);
  EXPECT_TRUE(parse_units("12", Decimal{5, 1}, v));  // tick 0.5
  EXPECT_EQ(v, 24);
  EXPECT_TRUE(parse_units("0.00000001", Decimal{1, 8}, v));
  EXPECT_EQ(v, 1);
  for (const char* bad : {"", "-1", "1e-5", "1.", ".5", "1.2.3", "abc", "99999999999999999999999"}) {
    EXPECT_FALSE(parse_units(bad, Decimal{1, 8}, v)) << bad;
  }
  EXPECT_EQ(written_scale("0.35210000"), 8);
  EXPECT_EQ(written_scale("12"), 0);
  char text[64];
  int len = 0;
  // Kraken: "0.000022900" → "22900"; "56218.30000" → "5621830000".
  ASSERT_TRUE(append_checksum_digits(229, Decimal{1, 7}, 9, text, len));
  ASSERT_TRUE(append_checksum_digits(562183, Decimal{1, 1}, 5, text, len));
  EXPECT_EQ(std::string(text, size_t(len)), "229005621830000");
}

// The reference the fast paths must match: the text's digits and scale in 128 bits, then
// count = digits × 10^(unit scale − written scale) / unit mantissa, whole or refused.
bool reference_units(std::string_view t, const Decimal& unit, int64_t& out, int& scale) {
  __extension__ typedef unsigned __int128 u128;
  u128 m = 0;
  int n = 0, f = -1;
  scale = -1;
  for (char c : t) {
    if (c >= '0' && c <= '9') {
      m = m * 10 + unsigned(c - '0');
      if (m >> 100) return false;  // parse_units' documented limit: beyond int64 at any scale
      ++n;
      f += f >= 0;
    } else if (c == '.' && f < 0 && n > 0) {
      f = 0;
    } else {
      return false;
    }
  }
  if (n == 0 || f == 0) return false;
  scale = f < 0 ? 0 : f;
  for (int k = scale; k < unit.scale; ++k) m *= 10;
  for (int k = unit.scale; k < scale; ++k) {
    if (m % 10 != 0) return false;
    m /= 10;
  }
  if (unit.mantissa <= 0 || m % u128(unit.mantissa) != 0) return false;
  m /= u128(unit.mantissa);
  if (m > u128(INT64_MAX)) return false;
  out = int64_t(m);
  return true;
}

// parse_units and written_scale against the reference on seeded random decimals as venues write
// them (trailing zeros past the tick, long fractions, 19–21 digits, stray characters).
TEST(CryptoUnits, SeededRandomDecimalsMatchTheReference) {
  std::mt19937_64 rng(20261202);
  const char alphabet[] = "0123456789000000000.-e";
  int checked = 0;
  for (const Decimal unit : {Decimal{1, 0}, Decimal{1, 2}, Decimal{1, 4}, Decimal{1, 8}, Decimal{5, 1},
                             Decimal{25, 3}, Decimal{1, 18}}) {
    for (int i = 0; i < 60000; ++i) {
      std::string t;
      const int shape = int(rng() % 4);
      if (shape == 0) {  // any characters
        for (int k = int(rng() % 24); k > 0; --k) t += alphabet[rng() % (sizeof alphabet - 1)];
      } else {  // digits, a point, digits then zeros
        for (int k = 1 + int(rng() % (shape == 3 ? 21 : 8)); k > 0; --k) t += char('0' + rng() % 10);
        if (rng() % 4 != 0) {
          t += '.';
          for (int k = int(rng() % 6); k > 0; --k) t += char('0' + rng() % 10);
          for (int k = int(rng() % 12); k > 0; --k) t += '0';
        }
      }
      int64_t want = -7, got = -7;
      int scale = -1;
      const bool ok = reference_units(t, unit, want, scale);
      ASSERT_EQ(parse_units(t, unit, got), ok) << t << " at " << unit.to_string();
      if (ok) {
        ASSERT_EQ(got, want) << t << " at " << unit.to_string();
      }
      if (t.size() <= 30) {
        ASSERT_EQ(written_scale(t), scale) << t;
      }
      checked += ok;
    }
  }
  EXPECT_GT(checked, 50000);  // the sample is not all refusals
}

// A receive-time prefix past int64 ns (April 2262) is a bad line, not a wrapped time: ms and
// seconds were scaled to ns without a check (UB: found by crypto_fuzz with UBSan), and 19
// digits overflowed while being read.
TEST(CryptoCaptureLine, ReceiveTimePastTheInt64NsRangeIsBad) {
  EXPECT_EQ(parse_capture_line("9223372036854775807 {}").recv_ns, INT64_MAX);
  EXPECT_EQ(parse_capture_line("9223372036854775808 {}").kind, CaptureKind::kBad);
  EXPECT_EQ(parse_capture_line("9999999999999999999 {}").kind, CaptureKind::kBad);
  EXPECT_EQ(parse_capture_line("9223372036854 {}").recv_ns, 9'223'372'036'854'000'000);  // ms
  EXPECT_EQ(parse_capture_line("163399851256800 {}").kind, CaptureKind::kBad);           // ms, year 7147
  EXPECT_EQ(parse_capture_line("9223372036 {}").recv_ns, 9'223'372'036'000'000'000);     // seconds
  EXPECT_EQ(parse_capture_line("9223372037 {}").kind, CaptureKind::kBad);
}

TEST(CryptoCaptureLine, EveryFormIsRead) {
  auto c = parse_capture_line("1633998512.0633569: {\"a\":1}");
  EXPECT_EQ(c.kind, CaptureKind::kMessage);
  EXPECT_EQ(c.recv_ns, 1633998512063356900);
  EXPECT_EQ(c.json, "{\"a\":1}");
  c = parse_capture_line("https://api.binance.com/api/v3/depth?symbol=NKNUSDT&limit=1000 -> 1633998512.5: {}");
  EXPECT_EQ(c.kind, CaptureKind::kRest);
  EXPECT_EQ(c.url, "https://api.binance.com/api/v3/depth?symbol=NKNUSDT&limit=1000");
  EXPECT_EQ(c.recv_ns, 1633998512500000000);
  EXPECT_EQ(parse_capture_line("wss://ws.kraken.com <-> 1618678132.3858151").kind, CaptureKind::kConnect);
  EXPECT_EQ(parse_capture_line("wss://ws.kraken.com <- 1618678132.8: {\"event\":\"subscribe\"}").kind,
            CaptureKind::kSent);
  c = parse_capture_line("1700000000123456789 {\"x\":2}");
  EXPECT_EQ(c.recv_ns, 1700000000123456789);
  c = parse_capture_line("1430438404518 order_created {\"price\": \"236.47\"}");
  EXPECT_EQ(c.recv_ns, 1430438404518000000);
  EXPECT_EQ(c.event, "order_created");
  EXPECT_EQ(c.json, "{\"price\": \"236.47\"}");
  EXPECT_EQ(parse_capture_line("{\"bare\":1}").recv_ns, 0);
  EXPECT_EQ(parse_capture_line("garbage here").kind, CaptureKind::kBad);
  EXPECT_EQ(parse_capture_line("   ").kind, CaptureKind::kBlank);
}

// A decoder with its own symbol table and error counts, fed message by message.
struct Harness {
  explicit Harness(Venue v) : decoder(make_venue_decoder(v, symbols, errors)) { errors.set_quiet(true); }
  std::vector<Event> feed(const std::string& json, int64_t recv_ns = 1'000'000'000, bool rest = false,
                          std::string_view url = "", std::string_view event = "") {
    std::vector<Event> out;
    MessageContext ctx;
    ctx.recv_ns = recv_ns;
    ctx.file = "test";
    ctx.line = ++line;
    ctx.is_rest = rest;
    ctx.url = url;
    ctx.event_name = event;
    decoder->decode(json, ctx, out);
    return out;
  }
  const DecoderCounters& c() const { return decoder->counters(); }
  SymbolTable symbols;
  InputErrors errors;
  std::unique_ptr<VenueDecoder> decoder;
  uint64_t line = 0;
};

std::string binance_diff(uint64_t first, uint64_t last, const std::string& bids, const std::string& asks) {
  return R"({"stream":"nknusdt@depth@100ms","data":{"e":"depthUpdate","E":1633998512568,"s":"NKNUSDT","U":)" +
         std::to_string(first) + ",\"u\":" + std::to_string(last) + ",\"b\":" + bids + ",\"a\":" + asks + "}}";
}
constexpr const char* kBinanceUrl = "https://api.binance.com/api/v3/depth?symbol=NKNUSDT&limit=1000";
constexpr const char* kBinanceSnapshot =
    R"({"lastUpdateId":100,"bids":[["0.35210000","672.00000000"],["0.35200000","1144.00000000"]],)"
    R"("asks":[["0.35260000","3199.00000000"],["0.35270000","10.00000000"]]})";

TEST(BinanceDecoder, FollowsTheDocumentedSnapshotProcedure) {
  Harness h(Venue::kBinance);
  // Before the snapshot: kept; u <= lastUpdateId: dropped; the first applied diff straddles 101.
  EXPECT_TRUE(h.feed(binance_diff(95, 100, R"([["0.35210000","1.00000000"]])", "[]")).empty());
  EXPECT_TRUE(h.feed(binance_diff(99, 102, R"([["0.35220000","5.00000000"]])", "[]")).empty());
  auto ev = h.feed(kBinanceSnapshot, 2'000'000'000, true, kBinanceUrl);
  ASSERT_EQ(ev.size(), 1u);
  const Event& s = ev[0];
  EXPECT_EQ(s.kind, EventKind::kSnapshot);
  EXPECT_EQ(h.symbols.name(s.symbol), "BINANCE:NKNUSDT");
  // The default crypto tick (0.01) cannot hold 0.3521: the venue's 8 digits are used.
  EXPECT_EQ(h.symbols.ref(s.symbol).tick.to_string(), "0.00000001");
  EXPECT_EQ(s.snapshot.bids[0].price, 35220000);  // the pending 99..102 diff applied
  EXPECT_EQ(s.snapshot.bids[0].qty, 500000000);
  EXPECT_EQ(s.snapshot.bids[1].qty, 67200000000);  // the 95..100 diff was dropped
  EXPECT_EQ(s.snapshot.asks[0].price, 35260000);
  EXPECT_EQ(h.c().dropped_before_sync, 1u);
  // Next diff must start at 103.
  ev = h.feed(binance_diff(103, 104, "[]", R"([["0.35260000","0"]])"));
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].snapshot.asks[0].price, 35270000);
  EXPECT_EQ(h.c().sequence_gap, 0u);
  // bookTicker at the book's u agrees; at another u it is not compared.
  h.feed(R"({"stream":"nknusdt@bookTicker","data":{"u":104,"s":"NKNUSDT","b":"0.35220000","B":"5.00000000","a":"0.35270000","A":"10.00000000"}})");
  EXPECT_EQ(h.c().bbo_checks, 1u);
  EXPECT_EQ(h.c().bbo_mismatches, 0u);
}

TEST(BinanceDecoder, AGapEmptiesTheBookUntilTheNextSnapshot) {
  Harness h(Venue::kBinance);
  h.feed(kBinanceSnapshot, 2'000'000'000, true, kBinanceUrl);
  ASSERT_EQ(h.feed(binance_diff(101, 101, R"([["0.35220000","5.00000000"]])", "[]")).size(), 1u);
  auto ev = h.feed(binance_diff(105, 106, R"([["0.35230000","5.00000000"]])", "[]"));  // 102..104 lost
  EXPECT_EQ(h.c().sequence_gap, 1u);
  ASSERT_EQ(ev.size(), 1u);  // one empty book: nothing book-based can fire on it
  EXPECT_EQ(ev[0].kind, EventKind::kSnapshot);
  EXPECT_EQ(ev[0].snapshot.bids[0].qty, 0);
  EXPECT_EQ(ev[0].snapshot.asks[0].qty, 0);
  EXPECT_TRUE(h.feed(binance_diff(107, 108, R"([["0.35230000","6.00000000"]])", "[]")).empty());
  EXPECT_EQ(h.c().dropped_while_stale, 1u);
  ASSERT_FALSE(h.c().issues.empty());
  EXPECT_NE(h.c().issues[0].find("test:3: sequence_gap: BINANCE:NKNUSDT U=105 after u=101"), std::string::npos)
      << h.c().issues[0];
  ev = h.feed(R"({"lastUpdateId":200,"bids":[["0.35000000","1.00000000"]],"asks":[["0.36000000","1.00000000"]]})",
              3'000'000'000, true, kBinanceUrl);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].snapshot.bids[0].price, 35000000);
  EXPECT_EQ(h.feed(binance_diff(201, 201, "[]", R"([["0.35900000","1.00000000"]])")).size(), 1u);
  EXPECT_EQ(h.errors.total(), 0u);  // a gap is feed health, not bad input
}

// A venue time in ms or µs past int64 ns (April 2262) is a bad message, counted, not an event at
// a wrapped time: it was multiplied to ns unchecked (UB: found by crypto_fuzz with UBSan, a
// Binance depthUpdate with "E":16339985125682).
TEST(BinanceDecoder, VenueTimePastTheInt64NsRangeIsABadMessage) {
  int64_t ns = 0;
  EXPECT_TRUE(venue_time_ns(9'223'372'036'854, 1'000'000, ns));
  EXPECT_EQ(ns, 9'223'372'036'854'000'000);
  EXPECT_FALSE(venue_time_ns(9'223'372'036'855, 1'000'000, ns));
  EXPECT_FALSE(venue_time_ns(UINT64_MAX, 1'000, ns));
  Harness h(Venue::kBinance);
  ASSERT_EQ(h.feed(kBinanceSnapshot, 2'000'000'000, true, kBinanceUrl).size(), 1u);
  EXPECT_TRUE(h.feed(R"({"stream":"nknusdt@depth@100ms","data":{"e":"depthUpdate","E":16339985125682,"s":"NKNUSDT","U":101,"u":101,"b":[["0.35220000","5.00000000"]],"a":[]}})")
                  .empty());
  EXPECT_TRUE(h.feed(R"({"stream":"nknusdt@aggTrade","data":{"e":"aggTrade","E":1,"s":"NKNUSDT","a":1,"p":"0.35280000","q":"58.00000000","f":1,"l":1,"T":16339985125682,"m":false,"M":true}})")
                  .empty());
  EXPECT_EQ(h.c().bad_messages, 2u);
  EXPECT_EQ(h.errors.count(InputError::kMalformedLine), 2u);
  Harness bs(Venue::kBitstamp);
  EXPECT_TRUE(bs.feed(R"({"data":{"timestamp":"1","microtimestamp":"9999999999999999999","bids":[["3800.00","1.0"]],"asks":[]},"channel":"diff_order_book_ethusd","event":"data"})")
                  .empty());
  EXPECT_EQ(bs.c().bad_messages, 1u);
}

TEST(BinanceDecoder, TradesAndBadMessages) {
  Harness h(Venue::kBinance);
  auto ev = h.feed(
      R"({"stream":"nknusdt@aggTrade","data":{"e":"aggTrade","E":1633998523963,"s":"NKNUSDT","a":15683430,"p":"0.35280000","q":"58.00000000","f":1,"l":1,"T":1633998523963,"m":false,"M":true}})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kTrade);
  EXPECT_EQ(ev[0].trade.aggressor, Side::kBuy);  // the buyer was not the maker
  EXPECT_EQ(ev[0].exch_ts_ns, 1633998523963000000);
  EXPECT_TRUE(h.feed("{\"stream\":").empty());
  EXPECT_EQ(h.errors.count(InputError::kMalformedLine), 1u);
  EXPECT_TRUE(h.feed(binance_diff(1, 2, R"([["abc","1"]])", "[]")).empty());
  EXPECT_EQ(h.errors.count(InputError::kBadPrice), 1u);
  EXPECT_TRUE(h.feed(R"({"result":null,"id":1})").empty());
  EXPECT_EQ(h.c().ignored, 1u);
}

// Kraken's checksum of a book given as written strings (asks best first, then bids).
uint32_t kraken_crc(const std::vector<std::pair<std::string, std::string>>& asks,
                    const std::vector<std::pair<std::string, std::string>>& bids) {
  std::string s;
  auto digits = [](std::string v) {
    v.erase(std::remove(v.begin(), v.end(), '.'), v.end());
    v.erase(0, v.find_first_not_of('0'));
    return v;
  };
  for (const auto* side : {&asks, &bids}) {
    for (const auto& [p, q] : *side) s += digits(p) + digits(q);
  }
  return uint32_t(crc32(0L, reinterpret_cast<const Bytef*>(s.data()), uInt(s.size())));
}

TEST(KrakenDecoder, VerifiesTheChecksumOfEveryUpdate) {
  Harness h(Venue::kKraken);
  auto ev = h.feed(
      R"([1360,{"as":[["0.000022900","13355.87450757","1618678123.481570"],["0.000022910","15.00000000","1618678132.136369"]],)"
      R"("bs":[["0.000022800","100.00000000","1618678123.1"],["0.000022700","7.50000000","1618678123.2"]]},"book-1000","ADA/XBT"])");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(h.symbols.name(ev[0].symbol), "KRAKEN:ADA/XBT");
  const uint32_t good = kraken_crc({{"0.000022900", "13355.87450757"}, {"0.000022910", "15.00000000"}},
                                   {{"0.000022850", "2.00000000"}, {"0.000022800", "100.00000000"},
                                    {"0.000022700", "7.50000000"}});
  ev = h.feed(R"([1360,{"b":[["0.000022850","2.00000000","1618678135.0"]],"c":")" + std::to_string(good) +
              R"("},"book-1000","ADA/XBT"])");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(h.c().checksums_verified, 1u);
  EXPECT_EQ(h.c().checksum_mismatch, 0u);
  // A wrong checksum: counted, the book emptied downstream and stale until the next snapshot.
  ev = h.feed(R"([1360,{"a":[["0.000022900","0.00000000","1618678136.0"]],"c":"12345"},"book-1000","ADA/XBT"])");
  EXPECT_EQ(h.c().checksum_mismatch, 1u);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].snapshot.asks[0].qty, 0);
  EXPECT_TRUE(h.feed(R"([1360,{"a":[["0.000022950","1.00000000","1618678137.0"]],"c":"1"},"book-1000","ADA/XBT"])")
                  .empty());
  EXPECT_EQ(h.c().dropped_while_stale, 1u);
  EXPECT_EQ(h.errors.total(), 0u);
}

TEST(CoinbaseDecoder, SnapshotUpdatesAndMatches) {
  Harness h(Venue::kCoinbase);
  EXPECT_TRUE(h.feed(R"({"type":"l2update","product_id":"BTC-USD","changes":[["buy","100.01","1"]],"time":"2021-04-17T16:43:37.075687Z"})")
                  .empty());
  EXPECT_EQ(h.c().dropped_before_sync, 1u);
  auto ev = h.feed(R"({"type":"snapshot","product_id":"BTC-USD","bids":[["100.00","1.5"]],"asks":[["100.05","2"]]})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(h.symbols.name(ev[0].symbol), "COINBASE:BTC-USD");
  ev = h.feed(R"({"type":"l2update","product_id":"BTC-USD","changes":[["sell","100.03","0.25"]],"time":"2021-04-17T16:43:37.075687Z"})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].exch_ts_ns, 1618677817075687000);
  EXPECT_EQ(ev[0].snapshot.asks[0].price, 10003);
  ev = h.feed(R"({"type":"match","trade_id":1,"side":"sell","size":"0.5","price":"100.03","product_id":"BTC-USD","sequence":5,"time":"2021-04-17T16:43:38Z"})");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].trade.aggressor, Side::kBuy);  // the maker sold
  EXPECT_EQ(h.errors.total(), 0u);
}

// A time outside 1970..2261 is malformed: its ns since the epoch overflowed int64 (UB: found by
// crypto_fuzz with UBSan on a Coinbase "time" of year 0000), and a Coinbase message with one is
// a bad message, counted, not an event at a wrapped time.
TEST(CoinbaseDecoder, TimeOutsideTheInt64NsRangeIsMalformed) {
  int64_t ns = 0;
  EXPECT_TRUE(parse_iso8601_ns("2261-12-31T23:59:59.999999999Z", ns));
  EXPECT_EQ(ns, 9'214'646'399'999'999'999);
  EXPECT_TRUE(parse_iso8601_ns("1970-01-01T00:00:00Z", ns));
  EXPECT_EQ(ns, 0);
  EXPECT_FALSE(parse_iso8601_ns("0000-01-01T00:00:00Z", ns));
  EXPECT_FALSE(parse_iso8601_ns("2262-04-12T00:00:00Z", ns));
  EXPECT_FALSE(parse_iso8601_ns("9999-12-31T23:59:59Z", ns));
  Harness h(Venue::kCoinbase);
  h.errors.set_quiet(true);
  h.feed(R"({"type":"snapshot","product_id":"BTC-USD","bids":[["100.00","1.5"]],"asks":[["100.05","2"]]})");
  EXPECT_TRUE(h.feed(R"({"type":"match","trade_id":1,"side":"sell","size":"0.5","price":"100.03","product_id":"BTC-USD","sequence":5,"time":"0000-01-01T00:00:00Z"})")
                  .empty());
  EXPECT_EQ(h.c().bad_messages, 1u);
  EXPECT_EQ(h.errors.total(), 1u);
}

TEST(BitstampDecoder, DiffsOlderThanTheSnapshotAreDropped) {
  Harness h(Venue::kBitstamp);
  const std::string diff_old =
      R"({"data":{"timestamp":"1","microtimestamp":"1000","bids":[["3800.00","1.0"]],"asks":[]},"channel":"diff_order_book_ethusd","event":"data"})";
  const std::string diff_new =
      R"({"data":{"timestamp":"1","microtimestamp":"3000","bids":[["3801.00","2.0"]],"asks":[]},"channel":"diff_order_book_ethusd","event":"data"})";
  EXPECT_TRUE(h.feed(diff_old).empty());
  EXPECT_TRUE(h.feed(diff_new).empty());
  auto ev = h.feed(R"({"timestamp":"1","microtimestamp":"2000","bids":[["3799.00","1.0"]],"asks":[["3805.00","1.0"]]})",
                   5'000'000'000, true, "https://www.bitstamp.net/api/v2/order_book/ethusd");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(h.symbols.name(ev[0].symbol), "BITSTAMP:ETHUSD");
  EXPECT_EQ(ev[0].snapshot.bids[0].price, 380100);
  EXPECT_EQ(ev[0].snapshot.bids[1].price, 379900);  // 3800.00 (older than the snapshot) dropped
  EXPECT_EQ(h.c().dropped_before_sync, 1u);
}

TEST(BitstampL3Decoder, OrdersBecomeAddsCancelsAndTrades) {
  Harness h(Venue::kBitstampL3);
  auto ev = h.feed(R"({"price": "236.47", "amount": "2.00000000", "datetime": "1430438404", "id": 7, "order_type": 1})",
                   1430438404518000000, false, "", "order_created");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kOrderAdd);
  EXPECT_EQ(ev[0].order.side, Side::kSell);
  EXPECT_EQ(ev[0].order.qty, 200000000);
  EXPECT_EQ(h.symbols.name(ev[0].symbol), "BITSTAMP:BTCUSD");
  ev = h.feed(R"({"price": "236.47", "amount": "1.78855669", "datetime": "1430438404", "id": 7, "order_type": 1})",
              1430438404635000000, false, "", "order_changed");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kOrderCancel);
  EXPECT_EQ(ev[0].order.qty, 21144331);
  ev = h.feed(R"({"price": 236.47, "amount": 0.21144331000000001, "id": 8111041})", 1430438404645000000, false, "",
              "trade");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].trade.qty, 21144331);
  EXPECT_EQ(ev[0].trade.price, 23647);
  EXPECT_EQ(ev[0].trade.aggressor, Side::kBuy);  // it took the resting sell
  ev = h.feed(R"({"price": "236.47", "amount": "0.00000000", "datetime": "1430438404", "id": 7, "order_type": 1})",
              1430438404700000000, false, "", "order_deleted");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].order.qty, 178855669);  // what was left
  h.feed(R"({"price": "236.00", "amount": "1.00000000", "datetime": "1", "id": 3, "order_type": 0})", 1, false, "",
         "order_deleted");
  EXPECT_EQ(h.c().unknown_orders, 1u);
  EXPECT_EQ(h.errors.total(), 0u);
}

// Real snippet, 2015-05-01 01:58:18 UTC (ids shortened): a sell walks down onto a resting bid.
// The bid's delete uncrosses the sell, which is released into the book, and its own change
// follows before the print. The print is a sell: the taker's side, not the last order changed.
TEST(BitstampL3Decoder, TakerReleasedBeforeItsPrintIsStillTheAggressor) {
  Harness h(Venue::kBitstampL3);
  auto feed = [&](const char* json, int64_t ms, const char* ev) { return h.feed(json, ms * 1'000'000, false, "", ev); };
  feed(R"({"price": "236.22", "amount": "3.70240000", "datetime": "1430445494", "id": 85, "order_type": 0})",
       1430445495060, "order_created");
  feed(R"({"price": "236.50", "amount": "7.34933031", "datetime": "1430445496", "id": 93, "order_type": 1})",
       1430445498631, "order_created");
  // The sell moves onto the bid: held (it would cross), nothing rests yet.
  auto ev = feed(R"({"price": "236.22", "amount": "7.34933031", "datetime": "1430445496", "id": 93, "order_type": 1})",
                 1430445498663, "order_changed");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, EventKind::kOrderCancel);  // out at 236.50
  // The maker is filled; the taker no longer crosses and rests with its size before this fill.
  feed(R"({"price": "236.22", "amount": "0.00000000", "datetime": "1430445494", "id": 85, "order_type": 0})",
       1430445498802, "order_deleted");
  feed(R"({"price": "236.22", "amount": "3.64693031", "datetime": "1430445496", "id": 93, "order_type": 1})",
       1430445498803, "order_changed");
  ev = h.feed(R"({"price": 236.22, "amount": 3.7023999999999999, "id": 8111381})", 1430445498814000000, false, "",
              "trade");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].trade.qty, 370240000);
  EXPECT_EQ(ev[0].trade.aggressor, Side::kSell) << "the walking sell took the bid";
  // The taker has printed its fill: a later print after a resting bid is reduced is a sell
  // again by the fallback (the side opposite to the resting order reduced).
  feed(R"({"price": "236.10", "amount": "1.00000000", "datetime": "1430445499", "id": 95, "order_type": 0})",
       1430445499000, "order_created");
  feed(R"({"price": "236.22", "amount": "3.00000000", "datetime": "1430445496", "id": 93, "order_type": 1})",
       1430445499100, "order_changed");
  ev = h.feed(R"({"price": 236.22, "amount": 0.64693031, "id": 8111382})", 1430445499110000000, false, "", "trade");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].trade.aggressor, Side::kBuy) << "someone took the resting sell";
  EXPECT_EQ(h.errors.total(), 0u);
}

}  // namespace
}  // namespace ts::crypto
