// Notifications: (1) notifications/s through the SQLite outbox — the cycle every notification
// goes through: committed in the router's batch, read back by its receiver's delivery thread,
// marked delivered — at synchronous=NORMAL and FULL; (2) alert → delivered latency to a loopback
// webhook (cpp-httplib server in this process) through the whole notifier (ring, router,
// routing, grouping with group_wait 0, outbox commit, delivery thread, libcurl POST), measured
// from the alert's emit stamp to the moment the webhook server has parsed the request, with the
// delivery audit (SQLite notify_deliveries) and the Prometheus delivery metrics on, as `run` and
// `replay` have them by default, and without them (the peer in the same run).
// Every case runs --repeat times (this shared 2-core machine is rarely quiet): the JSON has each
// run and the medians.
//
//   notify_bench [--out bench/results] [--alerts 2000] [--interval-us 5000] [--rows 3000] [--repeat 5]
#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_json.h"
#include "core/clock.h"
#include "core/config.h"
#include "core/latency_histogram.h"
#include "core/log.h"
#include "notify/notifier.h"
#include "notify/outbox.h"

namespace {

using namespace ts;
using namespace ts::notify;

Notification random_notification(std::mt19937_64& rng, uint64_t id) {
  Notification n;
  n.receiver = "desk";
  n.route_id = "root";
  NotifyAlert a;
  a.alert_id = id;
  a.type = AlertType(rng() % uint64_t(kAlertTypeCount));
  const std::string sym = std::to_string(600000 + rng() % 2000) + ".SH";
  a.labels = Labels{
      {"symbol", sym}, {"market", "SH"}, {"type", alert_type_name(a.type)}, {"severity", "warning"}, {"source", "rule"}};
  a.summary = sym + " " + alert_type_name(a.type) + " warning 1850.12 ret_60s_bps=" + std::to_string(rng() % 1000) +
              " (>=200) at 10:31:07.120";
  a.alert_unix_ns = wall_ns();
  n.group_labels = Labels{{"symbol", sym}};
  n.group_key = "root{symbol=" + sym + "}";
  n.alerts.push_back(a);
  n.created_unix_ns = a.alert_unix_ns;
  return n;
}

// Enqueue in batches of `batch`, then drain like a delivery thread (due 64 at a time, mark each).
nlohmann::json outbox_throughput(const std::string& dir, bool sync_full, int rows, int batch) {
  const std::string path = dir + "/bench-outbox-" + (sync_full ? "full" : "normal") + ".db";
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(path + ext);
  auto ob = Outbox::open(path, sync_full);
  if (!ob.is_ok()) throw std::runtime_error(ob.status().to_string());
  Outbox& o = *ob.value();
  std::mt19937_64 rng(42);
  std::vector<Notification> ns;
  for (int i = 0; i < rows; ++i) ns.push_back(random_notification(rng, uint64_t(i)));
  const int64_t t0 = mono_ns();
  for (int i = 0; i < rows; i += batch) {
    std::vector<Notification> b(ns.begin() + i, ns.begin() + std::min(rows, i + batch));
    if (Status st = o.enqueue(b, wall_ns()); !st.is_ok()) throw std::runtime_error(st.to_string());
  }
  const int64_t t1 = mono_ns();
  int done = 0;
  for (;;) {
    auto due = o.due("desk", wall_ns(), 64);
    if (!due.is_ok() || due.value().empty()) break;
    for (const auto& e : due.value()) {
      auto n = notification_from_json(e.payload);  // the worker parses every payload
      if (!n.is_ok()) throw std::runtime_error(n.status().to_string());
      (void)o.mark_delivered(e.id, 1, wall_ns(), 1);
      ++done;
    }
  }
  const int64_t t2 = mono_ns();
  if (done != rows) throw std::runtime_error("outbox lost rows");
  const double enq = rows / (double(t1 - t0) / 1e9), cyc = rows / (double(t2 - t0) / 1e9);
  std::printf("outbox %-6s batch %4d: enqueue %9.0f notifications/s, enqueue+deliver+mark %8.0f notifications/s\n",
              sync_full ? "FULL" : "NORMAL", batch, enq, cyc);
  return {{"system", "ticksentry"},
          {"case", {{"what", "outbox"}, {"synchronous", sync_full ? "full" : "normal"}, {"batch", batch}, {"rows", rows}}},
          {"metrics", {{"enqueue_per_s", enq}, {"throughput_per_s", cyc}}}};
}

nlohmann::json webhook_latency(const std::string& dir, int alerts, int interval_us, bool audit) {
  std::mutex mu;
  std::unordered_map<uint64_t, int64_t> emitted;  // alert id → emit mono ns
  LatencyHistogram received;
  std::atomic<int> got{0};  // distinct alerts received (warm-up included)
  std::unordered_set<uint64_t> seen;
  httplib::Server srv;
  srv.Post("/generic", [&](const httplib::Request& req, httplib::Response& res) {
    const int64_t now = mono_ns();
    auto j = nlohmann::json::parse(req.body);
    std::lock_guard lock(mu);
    for (const auto& a : j["alerts"]) {
      auto it = emitted.find(a["alertId"].get<uint64_t>());
      // First receipt only: a still-firing sealed alert is re-sent with its group's later alerts.
      if (it != emitted.end()) {
        received.record(now - it->second);
        emitted.erase(it);
      }
      if (seen.insert(a["alertId"].get<uint64_t>()).second) got.fetch_add(1);
    }
    res.set_content("{\"ok\":true}", "application/json");
  });
  // As a production webhook endpoint (nginx) is set up: Nagle off, long keep-alive. With
  // cpp-httplib's defaults (Nagle on, 5 requests per connection) each response waits out the
  // client's delayed ACK (~40 ms) once the connection leaves quick-ack mode.
  srv.set_tcp_nodelay(true);
  srv.set_keep_alive_max_count(100000);
  const int port = srv.bind_to_any_port("127.0.0.1");
  std::thread server([&] { srv.listen_after_bind(); });

  const std::string db = dir + "/bench-notify-latency.db";
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(db + ext);
  const std::string audit_db = dir + "/bench-notify-audit.db";
  for (const char* ext : {"", "-wal", "-shm"}) std::filesystem::remove(audit_db + ext);
  Config cfg = Config::parse("[notify]\noutbox_db = \"" + db +
                             "\"\n[[notify.receivers]]\nname = \"desk\"\n"
                             "type = \"webhook\"\nurl = \"http://127.0.0.1:" +
                             std::to_string(port) +
                             "/generic\"\nrate_per_s = 100000\nburst = 100000\n"
                             "[notify.route]\nreceiver = \"desk\"\ngroup_by = [\"symbol\"]\ngroup_wait_ms = 0\n"
                             "group_interval_ms = 0\n");
  SymbolTable symbols;
  for (int i = 0; i < 2000; ++i) symbols.intern(std::to_string(600000 + i) + ".SH");
  NotifyConfig ncfg = read_notify_config(cfg);
  Metrics metrics;
  if (audit) ncfg.audit_db = audit_db;
  auto n = Notifier::create(ncfg, symbols, audit ? &metrics : nullptr);
  if (!n.is_ok()) throw std::runtime_error(n.status().to_string());
  n.value()->start();
  std::mt19937_64 rng(7);
  const int warmup = std::min(100, alerts / 10);
  for (int i = 0; i < alerts + warmup; ++i) {
    Alert a;
    a.id = uint64_t(i + 1);
    a.type = AlertType(rng() % uint64_t(kAlertTypeCount));
    a.severity = Severity::kWarning;
    a.symbol = SymbolId(rng() % 2000);
    a.price = 185012;
    a.add_value("ret_60s_bps", double(rng() % 1000), 200, Cmp::kGe);
    a.t.emit_ns = mono_ns();
    if (i >= warmup) {
      std::lock_guard lock(mu);
      emitted[a.id] = a.t.emit_ns;
    }
    (void)n.value()->submit(a);
    std::this_thread::sleep_for(std::chrono::microseconds(interval_us));
  }
  const int64_t deadline = mono_ns() + 30 * kNsPerSec;
  while (got.load() < alerts + warmup && mono_ns() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  n.value()->stop();
  srv.stop();
  server.join();
  const LatencyHistogram delivered = n.value()->delivery_latency();  // includes warm-up; ends at the HTTP response
  std::lock_guard lock(mu);
  auto us = [](int64_t ns) { return double(ns) / 1e3; };
  std::printf(
      "alert -> webhook received, audit %s (%llu alerts, 1 per %d us): p50 %.0f us, p99 %.0f us, p999 %.0f us, "
      "max %.0f us (target p99 <= 20000 us)\n",
      audit ? "on " : "off", (unsigned long long)received.count(), interval_us, us(received.quantile_ns(0.5)),
      us(received.quantile_ns(0.99)), us(received.quantile_ns(0.999)), us(received.max_ns()));
  std::printf("alert -> marked delivered in the outbox: p50 %.0f us, p99 %.0f us\n", us(delivered.quantile_ns(0.5)),
              us(delivered.quantile_ns(0.99)));
  return {{"system", "ticksentry"},
          {"case",
           {{"what", "alert_to_webhook"},
            {"alerts", alerts},
            {"interval_us", interval_us},
            {"group_wait_ms", 0},
            {"peer", "cpp-httplib loopback"},
            {"delivery_audit", audit}}},
          {"metrics",
           {{"p50_us", us(received.quantile_ns(0.5))},
            {"p99_us", us(received.quantile_ns(0.99))},
            {"p999_us", us(received.quantile_ns(0.999))},
            {"max_us", us(received.max_ns())},
            {"received", received.count()},
            {"target_p99_us", 20000},
            {"delivered_marked_p50_us", us(delivered.quantile_ns(0.5))},
            {"delivered_marked_p99_us", us(delivered.quantile_ns(0.99))}}}};
}

}  // namespace

int main(int argc, char** argv) {
  std::string out = std::string(TICKSENTRY_SOURCE_DIR) + "/bench/results";
  int alerts = 2000, interval_us = 5000, rows = 3000, repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--out")) out = argv[i + 1];
    else if (!std::strcmp(argv[i], "--alerts")) alerts = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--interval-us")) interval_us = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--rows")) rows = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::atoi(argv[i + 1]));
  }
  spdlog::set_level(spdlog::level::warn);
  const std::string tmp = std::filesystem::temp_directory_path().string();
  nlohmann::json results = nlohmann::json::array();
  try {
    auto median = [](std::vector<double> v) {
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    for (bool full : {false, true}) {
      for (int batch : {1, 64}) {
        std::vector<double> cycle, enqueue;
        for (int r = 0; r < repeat; ++r) {
          auto res = outbox_throughput(tmp, full, rows, batch);
          res["case"]["run"] = r;
          cycle.push_back(res["metrics"]["throughput_per_s"].get<double>());
          enqueue.push_back(res["metrics"]["enqueue_per_s"].get<double>());
          results.push_back(std::move(res));
        }
        std::printf("outbox %-6s batch %4d over %d runs: median enqueue+deliver+mark %.0f notifications/s\n",
                    full ? "FULL" : "NORMAL", batch, repeat, median(cycle));
        results.push_back(
            {{"system", "ticksentry"},
             {"case",
              {{"what", "outbox_summary"},
               {"synchronous", full ? "full" : "normal"},
               {"batch", batch},
               {"rows", rows},
               {"runs", repeat}}},
             {"metrics", {{"throughput_per_s_median", median(cycle)}, {"enqueue_per_s_median", median(enqueue)}}}});
      }
    }
    // Repeated, audit on and off interleaved: this shared machine's load moves the tail by 10x
    // from one run to the next.
    std::vector<double> p50s[2], p99s[2];
    for (int r = 0; r < repeat; ++r) {
      for (bool audit : {true, false}) {
        auto res = webhook_latency(tmp, alerts, interval_us, audit);
        res["case"]["run"] = r;
        p50s[audit].push_back(res["metrics"]["p50_us"].get<double>());
        p99s[audit].push_back(res["metrics"]["p99_us"].get<double>());
        results.push_back(std::move(res));
      }
    }
    for (bool audit : {true, false}) {
      auto& p99 = p99s[audit];
      std::sort(p99.begin(), p99.end());
      std::printf(
          "alert -> webhook, audit %s, over %d runs: p50 median %.0f us; p99 median %.0f us, best %.0f us, worst %.0f us\n",
          audit ? "on " : "off", repeat, median(p50s[audit]), median(p99), p99.front(), p99.back());
      results.push_back(
          {{"system", "ticksentry"},
           {"case",
            {{"what", "alert_to_webhook_summary"}, {"runs", repeat}, {"alerts_per_run", alerts}, {"delivery_audit", audit}}},
           {"metrics",
            {{"p50_us_median", median(p50s[audit])},
             {"p99_us_median", median(p99)},
             {"p99_us_best", p99.front()},
             {"p99_us_worst", p99.back()},
             {"target_p99_us", 20000}}}});
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "notify_bench: %s\n", e.what());
    return 1;
  }
  const ts::bench::Invocation run{
      ts::bench::command_line(argc, argv),
      {{"out", out}, {"alerts", alerts}, {"interval_us", interval_us}, {"rows", rows}, {"repeat", repeat}}};
  std::printf("wrote %s\n", ts::bench::write_results(out, "notify", run, results).c_str());
  return 0;
}
