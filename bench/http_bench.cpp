// http_bench: the dashboard server under a slow-client attack and a crowd of pollers, over real
// sockets on loopback (issue 25's target: /healthz P99 <= 10 ms while 1,000 slow connections are
// held open and 500 clients poll the API).
//
// An in-process HttpServer (default HttpLimits, the live feed attached) and, in this process:
//   - `--slow` connections from 127.0.1.x, each sending half a request head and a header line a
//     second; the server ends each at header_timeout_ms (408) and the attacker reconnects, so
//     about `--slow` are held open at any time (sampled from the server);
//   - `--pollers` keep-alive clients from 127.0.2.x, each asking /api/stats (with the token)
//     every `--poll-interval-ms`;
//   - one /healthz prober from 127.0.0.1 on a kept-alive connection every 2 ms, and one on a
//     fresh connection every 20 ms (accept path included).
// Phases: idle (prober alone), loaded (everything), burst (500 fresh connections at once, one
// /healthz each). Prints a table; writes bench/results/http-<machine>-<date>.json.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench_json.h"
#include "core/metrics.h"
#include "core/symbol_table.h"
#include "http/alert_stream.h"
#include "http/event_hub.h"
#include "http/http_server.h"
#include "http/live_feed.h"
#include "pipeline/market_board.h"
#include "raw_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using ts::testing::raw_connect;
using ts::testing::raw_read_statuses;
using ts::testing::raw_send;

const std::string kToken = "bench-token-0123456789";

double us_since(Clock::time_point t0) { return std::chrono::duration<double, std::micro>(Clock::now() - t0).count(); }

struct Samples {
  std::mutex mu;
  std::vector<double> us;
  uint64_t errors = 0;
  void add(double v) {
    std::lock_guard<std::mutex> l(mu);
    us.push_back(v);
  }
  void error() {
    std::lock_guard<std::mutex> l(mu);
    ++errors;
  }
  nlohmann::json summary() {
    std::lock_guard<std::mutex> l(mu);
    std::sort(us.begin(), us.end());
    auto q = [&](double p) { return us.empty() ? 0.0 : us[std::min(us.size() - 1, size_t(p * double(us.size())))] / 1000; };
    return {{"requests", us.size()}, {"errors", errors}, {"p50_ms", q(0.5)}, {"p99_ms", q(0.99)},
            {"p999_ms", q(0.999)},   {"max_ms", us.empty() ? 0.0 : us.back() / 1000}};
  }
};

std::string get(const std::string& path, bool token) {
  return "GET " + path + " HTTP/1.1\r\nHost: bench\r\n" + (token ? "Authorization: Bearer " + kToken + "\r\n" : "") +
         "\r\n";
}

// One request on a kept-alive connection (reconnecting when needed); latency in µs or -1.
double timed_request(int port, int* fd, const char* src, const std::string& req) {
  if (*fd < 0) *fd = raw_connect(port, src);
  if (*fd < 0) return -1;
  const auto t0 = Clock::now();
  if (raw_send(*fd, req)) {
    const auto st = raw_read_statuses(*fd, 1, 5000);
    if (st.size() == 1 && st[0] == 200) return us_since(t0);
  }
  ::close(*fd);
  *fd = -1;
  return -1;
}

void run_prober(int port, std::atomic<bool>& stop, Samples& kept, Samples& fresh) {
  int fd = -1;
  auto next_fresh = Clock::now();
  while (!stop.load()) {
    const double us = timed_request(port, &fd, "127.0.0.1", get("/healthz", false));
    us < 0 ? kept.error() : kept.add(us);
    if (Clock::now() >= next_fresh) {
      next_fresh += std::chrono::milliseconds(20);
      int f = -1;
      const auto t0 = Clock::now();
      const double r = timed_request(port, &f, "127.0.0.1", get("/healthz", false));
      r < 0 ? fresh.error() : fresh.add(us_since(t0));
      if (f >= 0) ::close(f);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (fd >= 0) ::close(fd);
}

void run_poller(int port, int i, int interval_ms, std::atomic<bool>& stop, Samples& s) {
  const std::string src = "127.0.2." + std::to_string(1 + i / 50);
  std::mt19937 rng{uint32_t(i)};
  std::this_thread::sleep_for(std::chrono::milliseconds(rng() % uint32_t(interval_ms)));
  int fd = -1;
  auto next = Clock::now();
  const std::string req = get(i % 2 ? "/api/stats" : "/api/symbols", true);
  while (!stop.load()) {
    const double us = timed_request(port, &fd, src.c_str(), req);
    us < 0 ? s.error() : s.add(us);
    next += std::chrono::milliseconds(interval_ms);
    std::this_thread::sleep_until(next);
  }
  if (fd >= 0) ::close(fd);
}

// Holds `n` half-sent requests open, a header line a second each, reconnecting closed ones.
void run_slow(int port, int n, std::atomic<bool>& stop, std::atomic<uint64_t>& reconnects) {
  std::vector<int> fds(size_t(n), -1);
  const std::string head = "GET /api/stats HTTP/1.1\r\nHost: bench\r\n";
  while (!stop.load()) {
    for (int i = 0; i < n && !stop.load(); ++i) {
      int& fd = fds[size_t(i)];
      if (fd >= 0) {
        char buf[512];
        const ssize_t r = ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        if (r == 0 || (r < 0 && errno != EAGAIN) || r > 0 || !raw_send(fd, "X-Slow: 1\r\n")) {
          ::close(fd);  // answered (408) or closed: come back
          fd = -1;
          ++reconnects;
        }
      }
      if (fd < 0) {
        const std::string src = "127.0.1." + std::to_string(1 + i / 50);
        fd = raw_connect(port, src.c_str());
        if (fd >= 0 && !raw_send(fd, head)) {
          ::close(fd);
          fd = -1;
        }
      }
    }
    for (int k = 0; k < 10 && !stop.load(); ++k) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (int fd : fds) {
    if (fd >= 0) ::close(fd);
  }
}

nlohmann::json burst(int port, int n) {
  Samples s;
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back([&, i] {
      ++ready;
      while (!go.load()) std::this_thread::yield();
      const std::string src = "127.0.3." + std::to_string(1 + i / 50);
      const auto t0 = Clock::now();
      int fd = raw_connect(port, src.c_str());
      bool ok = fd >= 0 && raw_send(fd, get("/healthz", false));
      ok = ok && raw_read_statuses(fd, 1, 2000) == std::vector<int>{200};
      ok ? s.add(us_since(t0)) : s.error();
      if (fd >= 0) ::close(fd);
    });
  }
  while (ready.load() < n) std::this_thread::yield();
  go.store(true);
  for (auto& th : t) th.join();
  return s.summary();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"HTTP server under slow clients and pollers (loopback)"};
  int slow = 1000, pollers = 500, interval_ms = 100, seconds = 20;
  std::string out_dir = "bench/results";
  app.add_option("--slow", slow, "slow connections held open");
  app.add_option("--pollers", pollers, "API pollers (kept-alive connections)");
  app.add_option("--poll-interval-ms", interval_ms, "each poller's interval");
  app.add_option("--seconds", seconds, "measured time of the loaded phase");
  app.add_option("--out", out_dir, "results directory ('' = no file)");
  CLI11_PARSE(app, argc, argv);

  ts::SymbolTable symbols;
  ts::Metrics metrics;
  ts::http::EventHub hub;
  ts::MarketBoard board(1024);
  ts::http::AlertStream stream(hub, metrics, nullptr);
  ts::http::LiveFeed live(symbols, &board, &stream, hub, metrics);
  ts::http::HttpOptions o;
  o.port = 0;
  o.token = kToken;
  ts::http::HttpServer server(o, hub, metrics);
  server.set_alert_stream(&stream);
  server.set_live_feed(&live);
  if (ts::Status st = server.start(); !st.is_ok()) {
    std::fprintf(stderr, "http_bench: %s\n", st.to_string().c_str());
    return 1;
  }
  live.start();
  const int port = server.port();
  nlohmann::json results;

  {  // idle
    std::atomic<bool> stop{false};
    Samples kept, fresh;
    std::thread p([&] { run_prober(port, stop, kept, fresh); });
    std::this_thread::sleep_for(std::chrono::seconds(5));
    stop = true;
    p.join();
    results["idle"] = {{"healthz_kept_alive", kept.summary()}, {"healthz_fresh_connection", fresh.summary()}};
  }
  {  // loaded
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> reconnects{0};
    std::thread attacker([&] { run_slow(port, slow, stop, reconnects); });
    for (int i = 0; i < 100 && server.open_connections() < slow * 9 / 10; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    Samples api, kept, fresh;
    std::vector<std::thread> poll;
    for (int i = 0; i < pollers; ++i) poll.emplace_back([&, i] { run_poller(port, i, interval_ms, stop, api); });
    std::this_thread::sleep_for(std::chrono::seconds(2));
    { std::lock_guard<std::mutex> l(api.mu); api.us.clear(); api.errors = 0; }
    std::atomic<bool> stop_probe{false};
    std::thread p([&] { run_prober(port, stop_probe, kept, fresh); });
    std::vector<int> open;
    for (int i = 0; i < seconds * 10; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      open.push_back(server.open_connections());
    }
    stop_probe = true;
    p.join();
    stop = true;
    for (auto& t : poll) t.join();
    attacker.join();
    std::sort(open.begin(), open.end());
    const auto healthz = kept.summary();
    results["loaded"] = {{"healthz_kept_alive", healthz},
                         {"healthz_fresh_connection", fresh.summary()},
                         {"api_polls", api.summary()},
                         {"open_connections_min", open.front()},
                         {"open_connections_median", open[open.size() / 2]},
                         {"slow_reconnects", reconnects.load()},
                         {"target_healthz_p99_ms", 10},
                         {"target_met", healthz["p99_ms"].get<double>() <= 10 && healthz["errors"] == 0}};
  }
  results["burst"] = burst(port, 500);
  live.stop();
  server.stop();

  std::printf("%-10s %-26s %9s %7s %9s %9s %9s %9s\n", "phase", "what", "requests", "errors", "p50 ms", "p99 ms",
              "p999 ms", "max ms");
  auto row = [](const char* phase, const char* what, const nlohmann::json& j) {
    std::printf("%-10s %-26s %9llu %7llu %9.3f %9.3f %9.3f %9.3f\n", phase, what,
                (unsigned long long)j["requests"].get<uint64_t>(), (unsigned long long)j["errors"].get<uint64_t>(),
                j["p50_ms"].get<double>(), j["p99_ms"].get<double>(), j["p999_ms"].get<double>(), j["max_ms"].get<double>());
  };
  row("idle", "/healthz kept alive", results["idle"]["healthz_kept_alive"]);
  row("idle", "/healthz fresh connection", results["idle"]["healthz_fresh_connection"]);
  row("loaded", "/healthz kept alive", results["loaded"]["healthz_kept_alive"]);
  row("loaded", "/healthz fresh connection", results["loaded"]["healthz_fresh_connection"]);
  row("loaded", "/api polls", results["loaded"]["api_polls"]);
  row("burst", "500 fresh /healthz at once", results["burst"]);
  std::printf("open connections while loaded: min %d, median %d (slow %d + pollers %d); target met: %s\n",
              results["loaded"]["open_connections_min"].get<int>(), results["loaded"]["open_connections_median"].get<int>(),
              slow, pollers, results["loaded"]["target_met"].get<bool>() ? "yes" : "no");
  if (!out_dir.empty()) {
    ts::bench::Invocation inv{ts::bench::command_line(argc, argv),
                              {{"slow", slow}, {"pollers", pollers}, {"poll_interval_ms", interval_ms},
                               {"seconds", seconds}, {"limits", "HttpLimits defaults (docs/config.md [http])"}}};
    std::printf("%s\n", ts::bench::write_results(out_dir, "http", inv, results).c_str());
  }
  return 0;
}
