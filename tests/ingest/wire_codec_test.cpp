// The Kafka wire codecs (docs/kafka.md): every kind round-trips through JSON and binary exactly,
// and every malformed message is refused with the kind it is counted as and a reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ingest/wire_binary.h"
#include "ingest/wire_json.h"

namespace ts {
namespace {

std::span<const uint8_t> bytes_of(const std::string& s) { return {reinterpret_cast<const uint8_t*>(s.data()), s.size()}; }

// One valid event of every kind, with random but valid values.
std::vector<WireEvent> sample_events(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::vector<WireEvent> out;
  for (int k = 0; k < kEventKindCount; ++k) {
    WireEvent w;
    w.event = Event::make(static_cast<EventKind>(k));
    w.symbol = k % 2 ? "600519.SH" : "GOOG";
    w.prev_close = r(0, 1) ? r(1, 200000) : 0;
    w.is_st = r(0, 1);
    w.event.seq = uint64_t(r(0, INT64_MAX));
    w.event.exch_ts_ns = r(1'300'000'000'000'000'000, 1'800'000'000'000'000'000);
    Event& e = w.event;
    switch (e.kind) {
      case EventKind::kSnapshot: {
        const Price mid = r(1000, 100000);
        const int depth = int(r(1, kBookLevels));
        for (int i = 0; i < depth; ++i) {
          e.snapshot.bids[i] = Level{mid - 1 - i, r(1, 100000)};
          e.snapshot.asks[i] = Level{mid + 1 + i, r(1, 100000)};
        }
        e.snapshot.last = mid;
        e.snapshot.prev_close = r(0, 100000);
        e.snapshot.cum_volume = r(0, 1'000'000'000);
        e.snapshot.cum_turnover = double(r(0, 1'000'000'000)) * 1.37;
        e.snapshot.phase = static_cast<Phase>(r(0, int(Phase::kHalted)));
        e.snapshot.resync = uint8_t(r(0, 1));
        break;
      }
      case EventKind::kTrade:
        e.trade = TradeBody{r(1, 1'000'000), r(1, 1'000'000), static_cast<Side>(r(-1, 1)), uint64_t(r(0, INT64_MAX)),
                            uint64_t(r(0, INT64_MAX))};
        break;
      case EventKind::kStatus: e.status.phase = static_cast<Phase>(r(0, int(Phase::kHalted))); break;
      default: e.order = OrderBody{uint64_t(r(1, INT64_MAX)), r(1, 1'000'000), r(1, 1'000'000), static_cast<Side>(r(-1, 1))};
    }
    out.push_back(w);
  }
  return out;
}

void expect_same(const WireEvent& a, const WireEvent& b) {
  EXPECT_EQ(a.symbol, b.symbol);
  EXPECT_EQ(a.prev_close, b.prev_close);
  EXPECT_EQ(a.is_st, b.is_st);
  EXPECT_EQ(a.event.kind, b.event.kind);
  EXPECT_EQ(a.event.seq, b.event.seq);
  EXPECT_EQ(a.event.exch_ts_ns, b.event.exch_ts_ns);
  switch (a.event.kind) {
    case EventKind::kSnapshot: {
      const SnapshotBody &x = a.event.snapshot, &y = b.event.snapshot;
      for (int i = 0; i < kBookLevels; ++i) {
        EXPECT_EQ(x.bids[i].price, y.bids[i].price);
        EXPECT_EQ(x.bids[i].qty, y.bids[i].qty);
        EXPECT_EQ(x.asks[i].price, y.asks[i].price);
        EXPECT_EQ(x.asks[i].qty, y.asks[i].qty);
      }
      EXPECT_EQ(x.last, y.last);
      EXPECT_EQ(x.prev_close, y.prev_close);
      EXPECT_EQ(x.cum_volume, y.cum_volume);
      EXPECT_EQ(x.cum_turnover, y.cum_turnover);  // exact: shortest round-trip text in JSON
      EXPECT_EQ(x.phase, y.phase);
      EXPECT_EQ(x.resync, y.resync);
      break;
    }
    case EventKind::kTrade:
      EXPECT_EQ(a.event.trade.price, b.event.trade.price);
      EXPECT_EQ(a.event.trade.qty, b.event.trade.qty);
      EXPECT_EQ(a.event.trade.aggressor, b.event.trade.aggressor);
      EXPECT_EQ(a.event.trade.buy_order_id, b.event.trade.buy_order_id);
      EXPECT_EQ(a.event.trade.sell_order_id, b.event.trade.sell_order_id);
      break;
    case EventKind::kStatus: EXPECT_EQ(a.event.status.phase, b.event.status.phase); break;
    default:
      EXPECT_EQ(a.event.order.order_id, b.event.order.order_id);
      EXPECT_EQ(a.event.order.price, b.event.order.price);
      EXPECT_EQ(a.event.order.qty, b.event.order.qty);
      EXPECT_EQ(a.event.order.side, b.event.order.side);
  }
}

TEST(WireCodec, EveryKindRoundTripsThroughBinaryAndJson) {
  WireJsonDecoder json;
  for (uint64_t seed = 1; seed <= 50; ++seed) {
    for (const WireEvent& w : sample_events(seed)) {
      SCOPED_TRACE(std::string(event_kind_name(w.event.kind)) + " seed " + std::to_string(seed));
      std::string bin, js;
      wire_binary_append(w, bin);
      ASSERT_EQ(bin.size(), kWireBinaryHeaderBytes + wire_binary_body_bytes(w.event.kind) + w.symbol.size());
      WireEvent back;
      WireDecodeStatus s = wire_binary_decode(bytes_of(bin), back);
      ASSERT_TRUE(s.ok()) << s.reason;
      expect_same(w, back);
      wire_json_append(w, js);
      WireEvent back_js;
      s = json.decode(bytes_of(js), back_js);
      ASSERT_TRUE(s.ok()) << s.reason << " in " << js;
      expect_same(w, back_js);
    }
  }
}

// Found by wire_fuzz: a snapshot with an empty level between two others (valid: each level is
// empty or priced) came back from JSON with the deeper levels moved up into the hole, because
// the encoder left every empty level out. Levels keep their positions in both encodings.
TEST(WireCodec, SnapshotWithAnEmptyLevelInsideKeepsEveryLevelsPlace) {
  WireEvent w;
  w.event = Event::make(EventKind::kSnapshot);
  w.symbol = "GOOG";
  SnapshotBody& s = w.event.snapshot;
  s.bids[0] = Level{57800, 100};
  s.bids[2] = Level{57790, 300};  // bids[1] empty
  s.asks[0] = Level{57801, 50};
  s.asks[1] = Level{57802, 60};
  s.asks[3] = Level{57810, 70};   // asks[2] empty
  s.phase = Phase::kContinuous;
  std::string js;
  wire_json_append(w, js);
  EXPECT_NE(js.find("\"bids\":[[57800,100],[0,0],[57790,300]]"), std::string::npos) << js;
  EXPECT_NE(js.find("\"asks\":[[57801,50],[57802,60],[0,0],[57810,70]]"), std::string::npos) << js;
  WireJsonDecoder json;
  WireEvent back;
  const WireDecodeStatus st = json.decode(bytes_of(js), back);
  ASSERT_TRUE(st.ok()) << st.reason;
  expect_same(w, back);
}

TEST(WireCodec, JsonFieldsInAnyOrderAndOptionalFieldsDefault) {
  WireJsonDecoder json;
  WireEvent w;
  const std::string msg = R"({"qty":300,"price":57812,"symbol":"GOOG","kind":"trade","exch_ts_ns":5,"seq":7,"v":1})";
  const WireDecodeStatus s = json.decode(bytes_of(msg), w);
  ASSERT_TRUE(s.ok()) << s.reason;
  EXPECT_EQ(w.symbol, "GOOG");
  EXPECT_EQ(w.event.kind, EventKind::kTrade);
  EXPECT_EQ(w.event.trade.price, 57812);
  EXPECT_EQ(w.event.trade.qty, 300);
  EXPECT_EQ(w.event.trade.aggressor, Side::kNone);
  EXPECT_EQ(w.event.seq, 7u);
  EXPECT_EQ(w.prev_close, 0);
}

struct Bad {
  const char* name;
  std::string message;
  InputError kind;
};

std::string good_trade_binary() {
  WireEvent w;
  w.event = Event::make(EventKind::kTrade);
  w.event.trade = TradeBody{5000, 100, Side::kBuy, 1, 2};
  w.symbol = "AAPL";
  std::string s;
  wire_binary_append(w, s);
  return s;
}

std::string good_snapshot_binary(Price bid, Price ask, double turnover) {
  WireEvent w;
  w.event = Event::make(EventKind::kSnapshot);
  w.event.snapshot.bids[0] = Level{bid, 10};
  w.event.snapshot.asks[0] = Level{ask, 10};
  w.event.snapshot.phase = Phase::kContinuous;
  w.event.snapshot.cum_turnover = turnover;
  w.symbol = "AAPL";
  std::string s;
  wire_binary_append(w, s);
  return s;
}

TEST(WireCodec, MalformedBinaryIsRefusedWithKindAndReason) {
  const std::string good = good_trade_binary();
  auto patched = [&](size_t off, uint8_t v) {
    std::string s = good;
    s[off] = char(v);
    return s;
  };
  std::string no_symbol = good;
  no_symbol[4] = 0;
  no_symbol.resize(no_symbol.size() - 4);
  std::string bad_symbol = good;
  bad_symbol[bad_symbol.size() - 1] = ',';
  std::string neg_price = good;
  const int64_t minus = -5;
  std::memcpy(&neg_price[32], &minus, 8);
  std::string zero_qty = good;
  std::memset(&zero_qty[40], 0, 8);
  const std::vector<Bad> cases = {
      {"empty", "", InputError::kTruncatedFile},
      {"shorter than the header", good.substr(0, 20), InputError::kTruncatedFile},
      {"bad magic", patched(0, 'X'), InputError::kBinaryGarbage},
      {"version 2", patched(2, 2), InputError::kMalformedLine},
      {"unknown kind", patched(3, 9), InputError::kMalformedLine},
      {"body_bytes wrong", patched(6, 41), InputError::kWrongColumnCount},
      {"symbol length 0", no_symbol, InputError::kUnknownSymbol},
      {"symbol length 33", patched(4, 33), InputError::kUnknownSymbol},
      {"unknown flags", patched(5, 0x80), InputError::kMalformedLine},
      {"truncated body", good.substr(0, good.size() - 6), InputError::kTruncatedFile},
      {"trailing bytes", good + "xx", InputError::kWrongColumnCount},
      {"nonzero padding", patched(32 + 33, 1), InputError::kMalformedLine},
      {"aggressor 5", patched(32 + 32, 5), InputError::kMalformedLine},
      {"bad symbol name", bad_symbol, InputError::kUnknownSymbol},
      {"negative price", neg_price, InputError::kBadPrice},
      {"zero qty", zero_qty, InputError::kBadSize},
      {"crossed book", good_snapshot_binary(5001, 5000, 0), InputError::kCrossedBook},
      {"NaN turnover", good_snapshot_binary(5000, 5001, std::nan("")), InputError::kNotANumber},
  };
  for (const Bad& c : cases) {
    WireEvent w;
    const WireDecodeStatus s = wire_binary_decode(bytes_of(c.message), w);
    EXPECT_FALSE(s.ok()) << c.name;
    if (!s.ok()) {
      EXPECT_EQ(s.kind, c.kind) << c.name << ": " << s.reason;
      EXPECT_GT(std::strlen(s.reason), 5u) << c.name;
    }
  }
}

TEST(WireCodec, MalformedJsonIsRefusedWithKindAndReason) {
  const std::string head = R"({"v":1,"symbol":"GOOG","seq":1,"exch_ts_ns":5,)";
  const std::vector<Bad> cases = {
      {"empty", "", InputError::kTruncatedFile},
      {"not JSON", "hello", InputError::kMalformedLine},
      {"cut short", head, InputError::kMalformedLine},
      {"not an object", "[1,2,3]", InputError::kMalformedLine},
      {"invalid UTF-8", head + "\"kind\":\"trade\",\"price\":1,\"qty\":1,\"aggressor\":\"\xff\"}",
       InputError::kBinaryGarbage},
      {"missing v", R"({"kind":"trade","symbol":"GOOG","seq":1,"exch_ts_ns":5,"price":1,"qty":1})",
       InputError::kWrongColumnCount},
      {"version 2", R"({"v":2,"kind":"trade","symbol":"GOOG","seq":1,"exch_ts_ns":5,"price":1,"qty":1})",
       InputError::kMalformedLine},
      {"unknown kind", head + R"("kind":"quote","price":1,"qty":1})", InputError::kMalformedLine},
      {"missing kind", head + R"("price":1,"qty":1})", InputError::kWrongColumnCount},
      {"unknown field", head + R"("kind":"trade","price":1,"qty":1,"venue":"X"})", InputError::kWrongColumnCount},
      {"missing qty", head + R"("kind":"trade","price":1})", InputError::kWrongColumnCount},
      {"field of another kind", head + R"("kind":"trade","price":1,"qty":1,"order_id":3})", InputError::kWrongColumnCount},
      {"price as string", head + R"("kind":"trade","price":"1","qty":1})", InputError::kMalformedLine},
      {"price fractional", head + R"("kind":"trade","price":1.5,"qty":1})", InputError::kMalformedLine},
      {"seq negative", R"({"v":1,"symbol":"GOOG","seq":-1,"exch_ts_ns":5,"kind":"trade","price":1,"qty":1})",
       InputError::kMalformedLine},
      {"duplicate field", head + R"("kind":"trade","price":1,"price":2,"qty":1})", InputError::kMalformedLine},
      {"trailing content", head + R"("kind":"trade","price":1,"qty":1} {})", InputError::kMalformedLine},
      {"bad side", head + R"("kind":"order_add","order_id":1,"price":1,"qty":1,"side":"X"})", InputError::kMalformedLine},
      {"bad phase", head + R"("kind":"status","phase":"lunch"})", InputError::kMalformedLine},
      {"11 levels",
       head +
           R"("kind":"snapshot","phase":"continuous","asks":[],"bids":[[9,1],[8,1],[7,1],[6,1],[5,1],[4,1],[3,1],[2,1],[1,1],[1,1],[1,1]]})",
       InputError::kMalformedLine},
      {"level of 3", head + R"("kind":"snapshot","phase":"continuous","asks":[],"bids":[[9,1,1]]})",
       InputError::kMalformedLine},
      {"bad symbol", R"({"v":1,"symbol":"GO OG","seq":1,"exch_ts_ns":5,"kind":"trade","price":1,"qty":1})",
       InputError::kUnknownSymbol},
      {"zero price", head + R"("kind":"trade","price":0,"qty":1})", InputError::kBadPrice},
      {"negative qty", head + R"("kind":"trade","price":1,"qty":-1})", InputError::kBadSize},
      {"crossed book", head + R"("kind":"snapshot","phase":"continuous","bids":[[10,1]],"asks":[[9,1]]})",
       InputError::kCrossedBook},
      {"ref not object", head + R"("kind":"trade","price":1,"qty":1,"ref":5})", InputError::kMalformedLine},
      {"resync 2", head + R"("kind":"snapshot","phase":"continuous","bids":[],"asks":[],"resync":2})",
       InputError::kMalformedLine},
      {"too large", head + std::string(70000, ' ') + R"("kind":"trade","price":1,"qty":1})", InputError::kMalformedLine},
  };
  WireJsonDecoder json;
  for (const Bad& c : cases) {
    WireEvent w;
    const WireDecodeStatus s = json.decode(bytes_of(c.message), w);
    EXPECT_FALSE(s.ok()) << c.name;
    if (!s.ok()) {
      EXPECT_EQ(s.kind, c.kind) << c.name << ": " << s.reason;
      EXPECT_GT(std::strlen(s.reason), 5u) << c.name;
    }
  }
  // The decoder is still fine after all that.
  WireEvent w;
  const std::string ok = head + R"("kind":"trade","price":1,"qty":1})";
  EXPECT_TRUE(json.decode(bytes_of(ok), w).ok());
}

}  // namespace
}  // namespace ts
