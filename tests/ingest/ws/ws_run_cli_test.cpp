// `ticksentry run --source ws --venue binance --url ...` end to end against the loopback server
// replaying the real Binance capture: the live run must decode the same events as replaying the
// capture files (`replay --format binance-json`), with no input error, and stop once the server
// is gone (--ws-max-attempts).
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include "ingest/ws/capture_server.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts {
namespace {

using ts::testing::run_bin;
using ts::testing::scratch_dir;

nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in, nullptr, false);
}

TEST(WsRunCli, BinanceOverWebsocketDecodesAsTheCaptureReplays) {
  const auto data = ts::testing::data_dir() / "crypto";
  TS_REQUIRE_DATA(data / "BINANCE.ws.1.0");
  TS_REQUIRE_DATA(data / "BINANCE.http.0.0");
  const auto cap = ts::testing::read_capture(data / "BINANCE.ws.1.0", data / "BINANCE.http.0.0");
  const auto dir = scratch_dir("ws-run-binance");

  const auto file = run_bin({"replay", "--format", "binance-json", (data / "BINANCE.ws.1.0").string(),
                             (data / "BINANCE.http.0.0").string(), "--no-notify", "--no-stdout", "--out-dir",
                             (dir / "file").string(), "--summary-json", (dir / "file.json").string()},
                            dir);
  ASSERT_EQ(file.exit_code, 0) << file.err;

  ts::testing::CaptureServer server(cap, 0, /*close_at_end=*/true);
  std::vector<std::string> args = {"run", "--source", "ws", "--venue", "binance", "--url",
                                   "ws://127.0.0.1:" + std::to_string(server.ws_port()) +
                                       "/stream?streams=nknusdt@depth@100ms/blzeth@depth@100ms",
                                   "--ws-max-attempts", "2", "--no-notify", "--no-stdout", "--http", "off",
                                   "--out-dir", (dir / "ws").string(), "--summary-json", (dir / "ws.json").string()};
  for (const auto& t : cap.rest_targets) {
    args.push_back("--rest-url");
    args.push_back("http://127.0.0.1:" + std::to_string(server.http_port()) + t);
  }
  const auto live = run_bin(args, dir);
  ASSERT_EQ(live.exit_code, 0) << live.err;
  EXPECT_NE(live.err.find("ws: 1 connections, 265 messages, 4 snapshots"), std::string::npos) << live.err;

  const auto want = read_json(dir / "file.json"), got = read_json(dir / "ws.json");
  ASSERT_TRUE(want.is_object() && got.is_object());
  EXPECT_GT(got["events"].get<uint64_t>(), 100u);
  EXPECT_EQ(got["events"], want["events"]);
  EXPECT_EQ(got["events_by_kind"], want["events_by_kind"]);
  EXPECT_EQ(got["errors"], want["errors"]) << got["errors"].dump();
}

}  // namespace
}  // namespace ts
