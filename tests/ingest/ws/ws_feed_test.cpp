// WsFeed (ingest/ws/ws_feed.h): what `run --source ws` does with each websocket message, factored
// out of WsSource so the websocket fuzz target runs the same code. Binance messages as the venue
// sends them: the REST depth snapshot first, then diffs, a trade, a control message, a bad one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/event.h"
#include "core/symbol_table.h"
#include "ingest/ws/ws_feed.h"

namespace ts {
namespace {

std::string diff(int first, int last, int64_t event_ms, const char* bids) {
  return R"({"stream":"nknusdt@depth@100ms","data":{"e":"depthUpdate","E":)" + std::to_string(event_ms) +
         R"(,"s":"NKNUSDT","U":)" + std::to_string(first) + R"(,"u":)" + std::to_string(last) + R"(,"b":)" + bids +
         R"(,"a":[]}})";
}

TEST(WsFeed, DecodesSnapshotThenDiffsWithTimesNeverGoingBack) {
  SymbolTable symbols;
  WsFeed feed(crypto::Venue::kBinance, symbols);
  std::vector<Event> events;
  const std::string snapshot = R"({"lastUpdateId":100,"bids":[["0.35210000","672.0"]],"asks":[["0.35260000","3199.0"]]})";
  feed.decode({WsMessage::Kind::kSnapshot, snapshot, 1'633'998'512'600'000'000, 1,
               "https://api.binance.com/api/v3/depth?symbol=NKNUSDT&limit=1000"},
              events);
  const size_t after_snapshot = events.size();
  EXPECT_GT(after_snapshot, 0u) << "the snapshot's levels";
  // Diffs with u <= lastUpdateId are dropped; the next ones apply. The second diff's event time
  // is earlier than the first's: the feed keeps exchange time non-decreasing.
  feed.decode({WsMessage::Kind::kStream, diff(95, 100, 1633998512568, R"([["0.35210000","1.0"]])"), 1'633'998'512'700'000'000, 1, {}}, events);
  EXPECT_EQ(events.size(), after_snapshot) << "a diff the snapshot already holds";
  feed.decode({WsMessage::Kind::kStream, diff(101, 102, 1633998513000, R"([["0.35220000","5.0"]])"), 1'633'998'513'100'000'000, 1, {}}, events);
  feed.decode({WsMessage::Kind::kStream, diff(103, 104, 1633998512000, R"([["0.35230000","5.0"]])"), 1'633'998'513'200'000'000, 1, {}}, events);
  ASSERT_GT(events.size(), after_snapshot + 1);
  int64_t last = INT64_MIN;
  for (const Event& e : events) {
    EXPECT_GE(e.exch_ts_ns, last);
    EXPECT_EQ(e.recv_ts_ns, 0) << "the replayer's to set";
    EXPECT_LT(e.symbol, symbols.size());
    last = e.exch_ts_ns;
  }
  EXPECT_EQ(events.back().exch_ts_ns, 1633998513000LL * 1'000'000) << "held at the previous message's time";
  EXPECT_EQ(feed.messages(), 4u);
  EXPECT_EQ(feed.counters().messages, 4u);
  EXPECT_EQ(feed.counters().events, events.size());
  EXPECT_EQ(feed.errors().total(), 0u);
}

TEST(WsFeed, ABadMessageIsCountedAndAddsNoEvent) {
  SymbolTable symbols;
  WsFeed feed(crypto::Venue::kBinance, symbols);
  std::vector<Event> events;
  feed.decode({WsMessage::Kind::kStream, R"({"result":null,"id":1})", 1, 1, {}}, events);  // a control message
  feed.decode({WsMessage::Kind::kStream, R"({"stream":"nknusdt@depth@100ms","data":{"e":)", 2, 1, {}}, events);
  feed.decode({WsMessage::Kind::kStream, diff(1, 2, 1633998512568, R"([["abc","1"]])"), 3, 1, {}}, events);
  EXPECT_TRUE(events.empty());
  EXPECT_EQ(feed.messages(), 3u);
  EXPECT_EQ(feed.counters().ignored, 1u);
  EXPECT_EQ(feed.counters().bad_messages, 2u);
  EXPECT_EQ(feed.errors().total(), 2u) << "bad input reaches the run's error counts";
}

}  // namespace
}  // namespace ts
