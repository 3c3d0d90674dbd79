// The HTTP server under abuse, over real sockets on loopback (issue 25's HTTP findings and issue
// 27's shared port): slow clients, connection floods, oversized and chunked bodies, redirects
// off the site, a second server on a taken port, and the [http] keys' ranges.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "core/config.h"
#include "http/dashboard.h"
#include "http/listen_socket.h"
#include "http_test_util.h"
#include "raw_client.h"

namespace ts::testing {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string get_request(const std::string& path, bool token = false) {
  return "GET " + path + " HTTP/1.1\r\nHost: x\r\n" + (token ? "Authorization: Bearer " + kToken + "\r\n" : "") +
         "\r\n";
}

std::string hex(size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%zx", n);
  return buf;
}

struct Fds {
  std::vector<int> fds;
  ~Fds() {
    for (int fd : fds) ::close(fd);
  }
};

TEST(HttpLimits, SlowClientsDoNotStopHealthz) {
  TestServer s("http_slow_clients");
  // More half-sent requests than the server has threads (no token needed to send half a head).
  Fds slow;
  for (int i = 0; i < 200; ++i) {
    const std::string src = "127.0.1." + std::to_string(1 + i / 50);
    const int fd = raw_connect(s.server->port(), src.c_str());
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(raw_send(fd, "GET /api/stats HTTP/1.1\r\nHost: x\r\n"));
    slow.fds.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  for (int i = 0; i < 20; ++i) {
    const int fd = raw_connect(s.server->port());
    ASSERT_GE(fd, 0);
    const auto t0 = Clock::now();
    ASSERT_TRUE(raw_send(fd, get_request("/healthz")));
    const std::string r = raw_read_response(fd, 3000);
    const double ms = ms_since(t0);
    ::close(fd);
    EXPECT_EQ(raw_status(r), 200) << r;
    EXPECT_LT(ms, 1000) << "/healthz waited behind slow clients (before the gate: 5 s and more)";
  }
  EXPECT_GE(s.server->open_connections(), 200);
}

TEST(HttpLimits, HeadNotSentInTimeIs408AndClosed) {
  http::HttpLimits l;
  l.header_timeout_ms = 300;
  TestServer s("http_head_timeout", true, &l);
  const int fd = raw_connect(s.server->port());
  ASSERT_TRUE(raw_send(fd, "GET /healthz HTTP/1.1\r\nHost: x\r\n"));
  const auto t0 = Clock::now();
  const std::string r = raw_read_response(fd, 5000);
  EXPECT_EQ(raw_status(r), 408) << r;
  EXPECT_LT(ms_since(t0), 2000);
  EXPECT_TRUE(raw_closed_within(fd, 2000));
  ::close(fd);
  EXPECT_NE(s.client().Get("/metrics")->body.find("ticksentry_http_errors_total{kind=\"timeout\"} 1"),
            std::string::npos);
}

TEST(HttpLimits, IdleKeptAliveConnectionIsClosed) {
  http::HttpLimits l;
  l.idle_timeout_ms = 300;
  TestServer s("http_idle", true, &l);
  const int fd = raw_connect(s.server->port());
  ASSERT_TRUE(raw_send(fd, get_request("/healthz")));
  EXPECT_EQ(raw_status(raw_read_response(fd, 3000)), 200);
  EXPECT_EQ(s.server->open_connections(), 1);
  EXPECT_TRUE(raw_closed_within(fd, 3000));
  ::close(fd);
}

TEST(HttpLimits, PipelinedRequestsAreAnsweredInOrder) {
  TestServer s("http_pipelined");
  const int fd = raw_connect(s.server->port());
  ASSERT_TRUE(raw_send(fd, get_request("/healthz") + get_request("/api/nope", true) + get_request("/healthz")));
  EXPECT_EQ(raw_read_statuses(fd, 3, 3000), (std::vector<int>{200, 404, 200}));
  ::close(fd);
}

TEST(HttpLimits, BodyOverTheLimitIs413BeforeItIsRead) {
  TestServer s("http_body_413");
  const int fd = raw_connect(s.server->port());
  // 300 MB announced, none sent: the answer must not wait for it.
  ASSERT_TRUE(raw_send(fd, "POST /api/silences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kToken +
                               "\r\nContent-Type: application/json\r\nContent-Length: 300000000\r\n\r\n"));
  const auto t0 = Clock::now();
  const std::string r = raw_read_response(fd, 5000);
  EXPECT_EQ(raw_status(r), 413) << r;
  EXPECT_LT(ms_since(t0), 1000);
  ::close(fd);
}

TEST(HttpLimits, ChunkedBodyOverTheLimitIs413WhileReading) {
  TestServer s("http_chunked_413");
  const int fd = raw_connect(s.server->port());
  ASSERT_TRUE(raw_send(fd, "POST /api/silences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kToken +
                               "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"));
  // 16 KiB chunks for up to 300 MB: the server answers once the body passes 64 KiB and stops
  // reading; the client notices at the latest when the connection is reset.
  const std::string chunk = "4000\r\n" + std::string(16384, 'x') + "\r\n";
  size_t sent = 0;
  while (sent < 300u * 1000 * 1000 && raw_send(fd, chunk)) {
    sent += 16384;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 0) > 0) break;  // the answer is there
  }
  EXPECT_LT(sent, 64u * 1024 * 1024) << "the server read far past the limit";
  const std::string r = raw_read_response(fd, 5000);
  EXPECT_EQ(raw_status(r), 413) << r;
  ::close(fd);
}

TEST(HttpLimits, ChunkedBodyWithinTheLimitReachesTheHandler) {
  TestServer s("http_chunked_ok");
  const int fd = raw_connect(s.server->port());
  const std::string spec = R"({"symbol":"AAPL","duration_s":60})";
  ASSERT_TRUE(raw_send(fd, "POST /api/silences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kToken +
                               "\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n" +
                               "a\r\n" + spec.substr(0, 10) + "\r\n" + hex(spec.size() - 10) + "\r\n" +
                               spec.substr(10) + "\r\n0\r\n\r\n" + get_request("/healthz")));
  EXPECT_EQ(raw_read_statuses(fd, 2, 3000), (std::vector<int>{201, 200})) << "the silence, then the next request";
  EXPECT_EQ(s.client().Get("/api/silences")->body.find("AAPL") != std::string::npos, true);
  ::close(fd);
}

TEST(HttpLimits, AmbiguousBodyFramingIs400AndClosed) {
  TestServer s("http_smuggling");
  const int fd = raw_connect(s.server->port());
  // Content-Length and chunked at once: the smuggled request after it must never be answered.
  ASSERT_TRUE(raw_send(fd, "POST /api/silences HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + kToken +
                               "\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n" +
                               get_request("/api/silences", true)));
  EXPECT_EQ(raw_read_statuses(fd, 2, 3000), std::vector<int>{400});
  ::close(fd);
}

TEST(HttpLimits, ConnectionsPerClientAndInTotalAreBounded) {
  http::HttpLimits l;
  l.max_connections = 16;
  l.max_connections_per_client = 4;
  TestServer s("http_conn_limits", true, &l);
  Fds held;
  for (int i = 0; i < 4; ++i) held.fds.push_back(raw_connect(s.server->port(), "127.0.2.1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  int fd = raw_connect(s.server->port(), "127.0.2.1");
  ASSERT_TRUE(raw_send(fd, get_request("/healthz")));
  EXPECT_EQ(raw_status(raw_read_response(fd, 3000)), 429);
  ::close(fd);
  // Another address still gets in, up to the total.
  for (int i = 0; i < 12; ++i) held.fds.push_back(raw_connect(s.server->port(), ("127.0.3." + std::to_string(i + 1)).c_str()));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(s.server->open_connections(), 16);
  fd = raw_connect(s.server->port(), "127.0.4.1");
  ASSERT_TRUE(raw_send(fd, get_request("/healthz")));
  EXPECT_EQ(raw_status(raw_read_response(fd, 3000)), 503);
  ::close(fd);
  // Closing one makes room.
  ::close(held.fds.back());
  held.fds.pop_back();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  fd = raw_connect(s.server->port(), "127.0.4.1");
  ASSERT_TRUE(raw_send(fd, get_request("/healthz")));
  EXPECT_EQ(raw_status(raw_read_response(fd, 3000)), 200);
  ::close(fd);
}

// How many of `n` connects to `port` complete within `timeout_ms` while nobody accepts: what the
// listen backlog holds (beyond it the kernel drops SYNs and a client waits a 1 s retry).
int connects_completed(int port, int n, int timeout_ms) {
  Fds fds;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in dst{};
    dst.sin_family = AF_INET;
    dst.sin_port = htons(uint16_t(port));
    inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
    (void)::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst));
    fds.fds.push_back(fd);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
  int done = 0;
  for (int fd : fds.fds) {
    int err = -1;
    socklen_t len = sizeof(err);
    pollfd p{fd, POLLOUT, 0};
    if (::poll(&p, 1, 0) > 0 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) ++done;
  }
  return done;
}

TEST(HttpLimits, TheListenBacklogHoldsABurstOf500) {
  // cpp-httplib listened with a backlog of 5: 22 % of 500 concurrent requests timed out.
  auto fd = http::listen_tcp("127.0.0.1", 0, http::HttpLimits{}.listen_backlog);
  ASSERT_TRUE(fd.is_ok()) << fd.status().to_string();
  EXPECT_EQ(connects_completed(http::socket_port(fd.value()), 500, 300), 500);
  ::close(fd.value());
  auto small = http::listen_tcp("127.0.0.1", 0, 5);  // the old backlog, for contrast
  ASSERT_TRUE(small.is_ok());
  EXPECT_LT(connects_completed(http::socket_port(small.value()), 500, 300), 500);
  ::close(small.value());
}

TEST(HttpLimits, ABurstOf500ConnectionsIsAnswered) {
  TestServer s("http_burst");
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < 500; ++i) {
    clients.emplace_back([&, i] {
      const std::string src = "127.0.5." + std::to_string(1 + i / 50);
      const int fd = raw_connect(s.server->port(), src.c_str());
      if (fd < 0) return;
      if (raw_send(fd, get_request("/healthz")) && raw_status(raw_read_response(fd, 10000)) == 200) ++ok;
      ::close(fd);
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok.load(), 500);
}

TEST(HttpLimits, LoginLinkRedirectsOnlyWithinTheServer) {
  TestServer s("http_redirect");
  struct Case { std::string path; std::string location; };
  const Case cases[] = {{"/", "/"}, {"/symbol/AAPL", "/symbol/AAPL"}, {"//evil.example/x", "/"},
                        {"/%2Fevil.example", "/"}, {"/\\evil.example", "/"}, {"/%5Cevil.example", "/"}};
  for (const auto& c : cases) {
    const int fd = raw_connect(s.server->port());
    ASSERT_TRUE(raw_send(fd, get_request(c.path + "?token=" + kToken)));
    const std::string r = raw_read_response(fd, 3000);
    ::close(fd);
    EXPECT_EQ(raw_status(r), 302) << c.path << "\n" << r;
    EXPECT_NE(r.find("\r\nLocation: " + c.location + "\r\n"), std::string::npos) << c.path << "\n" << r;
  }
}

TEST(HttpLimits, ASecondServerOnATakenPortIsRefused) {
  TestServer first("http_port_taken");
  http::EventHub hub;
  Metrics metrics;
  http::HttpOptions o;
  o.port = first.server->port();
  o.token = kToken;
  http::HttpServer second(o, hub, metrics);
  Status st = second.start();
  EXPECT_FALSE(st.is_ok()) << "two servers listen on port " << o.port;
  EXPECT_NE(st.message().find(std::to_string(o.port)), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("in use"), std::string::npos) << st.message();
  second.stop();
  // The first one still answers every request (none went to the second).
  for (int i = 0; i < 20; ++i) EXPECT_EQ(first.client().Get("/healthz")->status, 200);
}

TEST(HttpLimits, EveryNumericKeyHasARange) {
  const char* bad[] = {"port = 70000",         "port = -1",
                       "max_connections = 0",  "max_connections_per_client = 0",
                       "listen_backlog = 0",   "header_timeout_ms = 5",
                       "body_timeout_ms = 0",  "idle_timeout_ms = 99999999",
                       "write_timeout_ms = 0", "max_header_bytes = 10",
                       "max_body_bytes = -1",  "workers = 0",
                       "max_streams = 100000", "port = 8080.5"};
  for (const char* line : bad) {
    const Config c = Config::parse(std::string("[http]\n") + line + "\n");
    const std::string key = std::string(line).substr(0, std::string(line).find(' '));
    try {
      (void)http::DashboardOptions::from_config(c.section("http"), true);
      ADD_FAILURE() << line << " was accepted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("http." + key), std::string::npos) << e.what();
    }
  }
  const Config ok = Config::parse("[http]\nport = 0\nmax_connections = 100\nmax_body_bytes = 1048576\n");
  const auto o = http::DashboardOptions::from_config(ok.section("http"), true);
  EXPECT_EQ(o.port, 0);
  EXPECT_EQ(o.limits.max_connections, 100);
  EXPECT_EQ(o.limits.max_body_bytes, 1048576);
}

}  // namespace
}  // namespace ts::testing
