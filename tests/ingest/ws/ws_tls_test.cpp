// wss:// and https:// in the websocket transport, against the loopback Beast server over TLS
// (a CA and server certificates made by the openssl command for this run): the real Binance
// capture arrives intact over wss with its REST snapshots over https when the CA is trusted
// (--ca-file); a server the CA did not sign, or a certificate for another host, ends the client
// at once with a message naming the cause, counted, without retrying.
#include <chrono>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>

#include "ingest/ws/capture_server.h"
#include "ingest/ws/test_certs.h"
#include "ingest/ws/ws_client.h"
#include "test_data.h"

namespace ts {
namespace {

using namespace std::chrono_literals;
using ts::testing::Capture;
using ts::testing::CaptureServer;
using ts::testing::CaptureServerOptions;

bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

class WsTls : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto dir = ts::testing::data_dir() / "crypto";
    TS_REQUIRE_DATA(dir / "BINANCE.ws.1.0");
    TS_REQUIRE_DATA(dir / "BINANCE.http.0.0");
    cap_ = ts::testing::read_capture(dir / "BINANCE.ws.1.0", dir / "BINANCE.http.0.0");
    certs_ = ts::testing::make_test_certs(ts::testing::scratch_dir(
        std::string("ws-tls-") + ::testing::UnitTest::GetInstance()->current_test_info()->name()));
    if (!certs_.error.empty()) GTEST_SKIP() << certs_.error;
  }
  WsClientOptions options(const CaptureServer& server) const {
    WsClientOptions o;
    o.url = "wss://127.0.0.1:" + std::to_string(server.ws_port()) + "/stream?streams=nknusdt@depth@100ms";
    for (const auto& t : cap_.rest_targets) {
      o.rest_snapshot_urls.push_back("https://127.0.0.1:" + std::to_string(server.http_port()) + t);
    }
    o.initial_backoff = 50ms;
    return o;
  }
  Capture cap_;
  ts::testing::TestCerts certs_;
};

TEST_F(WsTls, ReplaysTheBinanceCaptureOverWssWithHttpsSnapshots) {
  CaptureServer server(cap_, CaptureServerOptions{.cert_file = certs_.server_cert.string(),
                                                  .key_file = certs_.server_key.string()});
  WsClientOptions o = options(server);
  o.ca_file = certs_.ca.string();
  std::mutex mu;
  std::vector<std::pair<WsMessage::Kind, std::string>> got;
  auto client = WsClient::open(o, [&](const WsMessage& m) {
    std::lock_guard<std::mutex> lock(mu);
    got.emplace_back(m.kind, std::string(m.text));
  });
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  client.value()->start();
  const size_t want = cap_.rest_targets.size() + cap_.frames.size();
  ASSERT_TRUE(wait_for(
      [&] {
        std::lock_guard<std::mutex> lock(mu);
        return got.size() >= want;
      },
      20s))
      << "last error: " << client.value()->last_error();
  client.value()->stop();
  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(got.size(), want);
  for (size_t i = 0; i < cap_.rest_targets.size(); ++i) {
    EXPECT_EQ(got[i].first, WsMessage::Kind::kSnapshot);
    EXPECT_EQ(got[i].second, cap_.rest.at(cap_.rest_targets[i])) << i;
  }
  for (size_t i = 0; i < cap_.frames.size(); ++i) {
    EXPECT_EQ(got[cap_.rest_targets.size() + i].second, cap_.frames[i]) << "frame " << i;
  }
  const WsClientStats& st = client.value()->stats();
  EXPECT_EQ(st.connections.load(), 1u);
  EXPECT_EQ(st.tls_failures.load(), 0u);
  EXPECT_FALSE(client.value()->fatal());
  EXPECT_EQ(server.rest_requests.load(), static_cast<int>(cap_.rest_targets.size()));
}

TEST_F(WsTls, AServerTheGivenCaDidNotSignEndsTheClientAtOnce) {
  CaptureServer server(cap_, CaptureServerOptions{.cert_file = certs_.server_cert.string(),
                                                  .key_file = certs_.server_key.string()});
  WsClientOptions o = options(server);
  o.ca_file = certs_.wrong_ca.string();
  size_t messages = 0;
  auto client = WsClient::open(o, [&](const WsMessage&) { ++messages; });
  ASSERT_TRUE(client.is_ok()) << client.status().to_string();
  const auto t0 = std::chrono::steady_clock::now();
  client.value()->start();
  ASSERT_TRUE(wait_for([&] { return client.value()->finished(); }, 5s)) << "still retrying";
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_TRUE(client.value()->fatal());
  const std::string err = client.value()->last_error();
  EXPECT_NE(err.find("certificate verify failed"), std::string::npos) << err;
  EXPECT_NE(err.find("--ca-file " + certs_.wrong_ca.string()), std::string::npos) << err;
  EXPECT_EQ(client.value()->stats().tls_failures.load(), 1u);
  EXPECT_EQ(client.value()->stats().connections.load(), 0u);
  EXPECT_EQ(server.accepted_at().size(), 1u);  // no second attempt
  EXPECT_EQ(messages, 0u);
}

TEST_F(WsTls, ACertificateForAnotherHostIsRefused) {
  CaptureServer server(cap_, CaptureServerOptions{.cert_file = certs_.other_name_cert.string(),
                                                  .key_file = certs_.other_name_key.string()});
  WsClientOptions o = options(server);
  o.ca_file = certs_.ca.string();  // the right CA: only the name is wrong
  auto client = WsClient::open(o, [](const WsMessage&) {});
  ASSERT_TRUE(client.is_ok());
  client.value()->start();
  ASSERT_TRUE(wait_for([&] { return client.value()->finished(); }, 5s));
  EXPECT_TRUE(client.value()->fatal());
  const std::string err = client.value()->last_error();
  EXPECT_NE(err.find("certificate verify failed"), std::string::npos) << err;
  EXPECT_NE(err.find("mismatch"), std::string::npos) << err;  // "IP address mismatch"
}

}  // namespace
}  // namespace ts
