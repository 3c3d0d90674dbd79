// The live side over real HTTP: the SSE stream delivers alerts (marked when a silence mutes
// them), silences are created, listed and expired, the market board reaches /api/symbols and
// the "ticks" stream, latency stats and histograms appear on /api/stats and /metrics.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "book/book_top.h"
#include "core/instrument_ref.h"
#include "http_test_util.h"

namespace ts::testing {
namespace {

using nlohmann::json;

// Reads /api/stream on a thread of its own and collects every "event: <name>" message's data.
class StreamReader {
 public:
  explicit StreamReader(const TestServer& s) : client_(s.client()) {
    thread_ = std::thread([this] {
      client_.Get("/api/stream", [this](const char* data, size_t n) {
        std::lock_guard<std::mutex> lock(mu_);
        buffer_.append(data, n);
        return !stop_.load();
      });
    });
  }
  ~StreamReader() {
    stop_ = true;
    client_.stop();
    thread_.join();
  }
  // Waits (up to 20 s) until a message of `event` whose data contains `needle` arrived.
  std::optional<json> wait_for(const std::string& event, const std::string& needle) {
    for (int i = 0; i < 400; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        size_t pos = 0;
        while ((pos = buffer_.find("event: " + event + "\ndata: ", pos)) != std::string::npos) {
          const size_t start = pos + event.size() + 14, end = buffer_.find('\n', start);
          const std::string data = buffer_.substr(start, end - start);
          if (data.find(needle) != std::string::npos) return json::parse(data);
          pos = end;
        }
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return std::nullopt;
  }
  bool connected() {
    std::lock_guard<std::mutex> lock(mu_);
    return buffer_.find("event: hello") != std::string::npos;
  }

 private:
  httplib::Client client_;
  std::thread thread_;
  std::mutex mu_;
  std::string buffer_;
  std::atomic<bool> stop_{false};
};

void wait_connected(StreamReader& r) {
  for (int i = 0; i < 400 && !r.connected(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_TRUE(r.connected());
}

TEST(HttpStream, AlertsReachTheBrowserStream) {
  TestServer s("http_stream_alerts");
  StreamReader reader(s);
  wait_connected(reader);
  const SymbolId aapl = s.symbols.intern("AAPL");
  ASSERT_TRUE(s.stream->write(http_alert(aapl, AlertType::kLargeBuy, 1, 7), s.symbols).is_ok());
  auto a = reader.wait_for("alert", "\"AAPL\"");
  ASSERT_TRUE(a);
  EXPECT_EQ((*a)["type"], "large_buy");
  EXPECT_EQ((*a)["latency_ns"]["total"].get<int64_t>(), 7'000);  // alert_json: detect − recv
  EXPECT_FALSE(a->contains("silenced_by"));
  EXPECT_FALSE(a->contains("features")) << "the feature row stays in the audit store";
  // A browser that connects later still sees it.
  json recent = json::parse(s.client().Get("/api/alerts/recent")->body);
  ASSERT_EQ(recent.size(), 1u);
  EXPECT_EQ(recent[0]["id"], 7);
}

TEST(HttpStream, SilenceCreatedListedMutesMatchingAlertsThenExpires) {
  TestServer s("http_stream_silence");
  StreamReader reader(s);
  wait_connected(reader);
  auto c = s.client();
  auto r = c.Post("/api/silences", R"({"symbol":"GOOG","type":"volume_burst","duration_s":600,"comment":"earnings"})",
                  "application/json");
  ASSERT_EQ(r->status, 201) << r->body;
  const std::string id = json::parse(r->body)["id"];
  json list = json::parse(c.Get("/api/silences")->body)["silences"];
  ASSERT_EQ(list.size(), 1u);
  EXPECT_TRUE(list[0]["active"].get<bool>());
  EXPECT_EQ(list[0]["comment"], "earnings");

  const SymbolId goog = s.symbols.intern("GOOG"), aapl = s.symbols.intern("AAPL");
  ASSERT_TRUE(s.stream->write(http_alert(goog, AlertType::kVolumeBurst, 1, 1), s.symbols).is_ok());
  ASSERT_TRUE(s.stream->write(http_alert(goog, AlertType::kRapidRise, 2, 2), s.symbols).is_ok());
  ASSERT_TRUE(s.stream->write(http_alert(aapl, AlertType::kVolumeBurst, 3, 3), s.symbols).is_ok());
  auto muted = reader.wait_for("alert", "\"id\":1,");
  ASSERT_TRUE(muted);
  EXPECT_EQ((*muted)["silenced_by"], id);
  for (const char* other : {"\"id\":2,", "\"id\":3,"}) {
    auto a = reader.wait_for("alert", other);
    ASSERT_TRUE(a) << other;
    EXPECT_FALSE(a->contains("silenced_by")) << "only GOOG volume_burst matches: " << a->dump();
  }
  EXPECT_EQ(json::parse(c.Get("/api/silences")->body)["silences"][0]["muted"], 1);

  ASSERT_EQ(c.Post(("/api/silences/" + id + "/expire").c_str(), "", "application/json")->status, 200);
  EXPECT_FALSE(json::parse(c.Get("/api/silences")->body)["silences"][0]["active"].get<bool>());
  ASSERT_TRUE(s.stream->write(http_alert(goog, AlertType::kVolumeBurst, 4, 4), s.symbols).is_ok());
  auto after = reader.wait_for("alert", "\"id\":4,");
  ASSERT_TRUE(after);
  EXPECT_FALSE(after->contains("silenced_by")) << "an expired silence mutes nothing";
  EXPECT_NE(c.Get("/metrics")->body.find("ticksentry_alerts_silenced_total 1"), std::string::npos);
}

TEST(HttpStream, MarketBoardReachesSymbolsTicksAndLadder) {
  TestServer s("http_stream_market");
  StreamReader reader(s);
  wait_connected(reader);
  const SymbolId id = s.symbols.intern("600519.SH");
  BookTop top;
  top.bid_levels = 2;
  top.ask_levels = 1;
  top.bids[0] = {185000, 300};
  top.bids[1] = {184990, 500};
  top.asks[0] = {185010, 200};
  top.last = 185005;
  top.cum_volume = 123400;
  s.board.maybe_publish(id, 1'000'000'000, top);
  s.live->tick();
  auto ticks = reader.wait_for("ticks", "600519.SH");
  ASSERT_TRUE(ticks);
  EXPECT_NEAR((*ticks)[0]["p"].get<double>(), 1850.05, 1e-9);
  EXPECT_EQ((*ticks)[0]["v"], 123400);

  json view = json::parse(s.client().Get("/api/symbols/600519.SH")->body);
  ASSERT_EQ(view["bids"].size(), 2u);
  EXPECT_NEAR(view["bids"][1][0].get<double>(), 1849.90, 1e-9);
  EXPECT_EQ(view["bids"][1][1], 500);
  ASSERT_EQ(view["asks"].size(), 1u);
  EXPECT_EQ(view["history"].size(), 1u);
  json syms = json::parse(s.client().Get("/api/symbols")->body)["symbols"];
  ASSERT_EQ(syms.size(), 1u);
  EXPECT_EQ(syms[0]["s"], "600519.SH");

  // Within the board's interval a second publish is skipped; after it, it lands.
  top.last = 185100;
  s.board.maybe_publish(id, 1'050'000'000, top);
  QuoteSnapshot q;
  ASSERT_TRUE(s.board.read(id, &q));
  EXPECT_EQ(q.last, 185005);
  s.board.maybe_publish(id, 1'200'000'000, top);
  ASSERT_TRUE(s.board.read(id, &q));
  EXPECT_EQ(q.last, 185100);
}

// Instrument names (the instruments reference file's `name` column; no feed carries one) reach
// /api/symbols, which the dashboard's picker searches, and the symbol page's /api/symbols/{s}.
TEST(HttpStream, InstrumentNamesReachTheSymbolList) {
  TestServer s("http_stream_names");
  InstrumentTable instruments;
  InputErrors errors;
  ASSERT_TRUE(instruments.load_csv_text("symbol,name\n600519.SH,Kweichow Moutai\n", "names.csv", errors));
  InstrumentRefResolver resolver(instruments);
  s.symbols.set_resolver(&resolver);
  BookTop top;
  top.bid_levels = top.ask_levels = 1;
  top.bids[0] = {185000, 300};
  top.asks[0] = {185010, 200};
  s.board.maybe_publish(s.symbols.intern("600519.SH"), 1'000'000'000, top);
  s.board.maybe_publish(s.symbols.intern("000001.SZ"), 1'000'000'000, top);
  s.live->tick();
  auto c = s.client();
  const json syms = json::parse(c.Get("/api/symbols")->body)["symbols"];
  ASSERT_EQ(syms.size(), 2u) << syms.dump();
  EXPECT_EQ(syms[0]["s"], "000001.SZ");
  EXPECT_EQ(syms[0]["name"], "") << "no name in the file: empty";
  EXPECT_EQ(syms[1]["s"], "600519.SH");
  EXPECT_EQ(syms[1]["name"], "Kweichow Moutai");
  EXPECT_EQ(json::parse(c.Get("/api/symbols/600519.SH")->body)["name"], "Kweichow Moutai");
  s.symbols.set_resolver(nullptr);
}

// The symbol page and the alert detail chart read exchange time (a replay's day, not the wall
// clock), a range of it, and the market context: previous close, change, phase, units, zone.
TEST(HttpStream, SymbolHistoryIsInExchangeTimeAndCarriesMarketContext) {
  TestServer s("http_stream_history");
  const SymbolId id = s.symbols.intern("600519.SH");
  BookTop top;
  top.bid_levels = 1;
  top.ask_levels = 1;
  top.bids[0] = {185000, 300};
  top.asks[0] = {185010, 200};
  top.prev_close = 180000;
  top.phase = Phase::kContinuous;
  const int64_t day_ns = 1675215000LL * 1'000'000'000;  // 2023-02-01 09:30 +08:00
  for (int i = 0; i < 5; ++i) {
    top.last = 185000 + i;
    top.cum_volume = 100 * (i + 1);
    top.update_ts_ns = day_ns + int64_t(i) * 30'000'000'000;  // every 30 s of exchange time
    s.board.maybe_publish(id, 1'000'000'000 + int64_t(i) * 200'000'000, top);
    s.live->tick();
  }
  auto c = s.client();
  json view = json::parse(c.Get("/api/symbols/600519.SH")->body);
  ASSERT_EQ(view["history"].size(), 5u);
  EXPECT_NEAR(view["history"][0][0].get<double>(), 1675215000.0, 1e-3) << "exchange time, not the wall clock";
  const json& m = view["market"];
  EXPECT_EQ(m["phase"], "continuous");
  EXPECT_NEAR(m["prev_close"].get<double>(), 1800.00, 1e-9);
  EXPECT_NEAR(m["change_pct"].get<double>(), 2.78, 1e-9);  // 1850.04 / 1800 - 1
  EXPECT_EQ(m["currency"], "CNY");
  EXPECT_EQ(m["lot_size"], 100);
  EXPECT_EQ(m["price_decimals"], 2);
  EXPECT_EQ(m["time_zone"], "Asia/Shanghai");

  // 09:30:30 .. 09:31:30: the middle three points.
  auto r = c.Get(("/api/symbols/600519.SH/history?from_ns=" + std::to_string(day_ns + 30'000'000'000) +
                  "&to_ns=" + std::to_string(day_ns + 90'000'000'000)).c_str());
  ASSERT_EQ(r->status, 200);
  json pts = json::parse(r->body)["points"];
  ASSERT_EQ(pts.size(), 3u) << r->body;
  EXPECT_NEAR(pts[0][1].get<double>(), 1850.01, 1e-9);
  EXPECT_EQ(c.Get("/api/symbols/600519.SH/history?from_ns=abc")->status, 400);
  EXPECT_EQ(c.Get("/api/symbols/NOPE/history")->status, 404);
}

TEST(HttpStream, LatencyStatsAndHistograms) {
  TestServer s("http_stream_stats");
  const SymbolId aapl = s.symbols.intern("AAPL");
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(s.stream->write(http_alert(aapl, AlertType::kLargeSell, 1, i), s.symbols).is_ok());
  s.live->tick();
  auto c = s.client();
  json pts = json::parse(c.Get("/api/stats")->body)["points"];
  ASSERT_EQ(pts.size(), 1u);
  EXPECT_EQ(pts[0]["latency_us"]["total"]["count"], 5);
  EXPECT_NEAR(pts[0]["latency_us"]["total"]["p50"].get<double>(), 10.0, 0.5);
  EXPECT_NEAR(pts[0]["latency_us"]["detect"]["p99"].get<double>(), 4.0, 0.2);
  const std::string m = c.Get("/metrics")->body;
  EXPECT_NE(m.find("ticksentry_alert_latency_seconds_bucket{stage=\"total\",le=\"1e-05\"} 5"), std::string::npos) << m;
  EXPECT_NE(m.find("# TYPE ticksentry_alert_latency_seconds histogram"), std::string::npos);
}

TEST(HttpStream, StreamLimitAnswers503) {
  TestServer s("http_stream_limit");  // max_streams = 4
  std::vector<std::unique_ptr<StreamReader>> readers;
  for (int i = 0; i < 4; ++i) {
    readers.push_back(std::make_unique<StreamReader>(s));
    wait_connected(*readers.back());
  }
  auto r = s.client().Get("/api/stream");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 503);
  EXPECT_EQ(s.server->active_streams(), 4);
}

}  // namespace
}  // namespace ts::testing
