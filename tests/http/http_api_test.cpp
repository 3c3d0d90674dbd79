// The admin API over real HTTP on loopback: authentication, bad input, readiness, metrics,
// alert history from a real SQLite audit store, models through the ModelAdmin interface.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "features/feature_set.h"
#include "http_test_util.h"

namespace ts::testing {
namespace {

using nlohmann::json;

json body_json(const httplib::Result& r) { return json::parse(r->body); }

TEST(HttpApi, HealthzNeedsNoTokenAndEverythingElseDoes) {
  TestServer s("http_auth");
  auto anon = s.client(false);
  auto r = anon.Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  for (const char* path : {"/metrics", "/readyz", "/api/alerts", "/api/silences", "/api/models", "/api/stream"}) {
    r = anon.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path;
    EXPECT_EQ(body_json(r)["error"], "missing_token") << path;
  }
  // A browser without the token gets the login page, not the dashboard.
  r = anon.Get("/");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_NE(r->body.find("<form"), std::string::npos);

  httplib::Client wrong("127.0.0.1", s.server->port());
  wrong.set_bearer_token_auth("not-the-token");
  r = wrong.Get("/api/silences");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 401);
  EXPECT_EQ(body_json(r)["error"], "wrong_token");

  r = s.client().Get("/api/silences");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  EXPECT_NE(s.client().Get("/metrics")->body.find("ticksentry_http_errors_total{kind=\"unauthorized\"}"),
            std::string::npos);
}

// /metrics by Prometheus conventions: the build and the process series beside ticksentry's own,
// and a scrape-only token that opens /metrics and nothing else (Prometheus needs no admin token).
TEST(HttpApi, MetricsHaveBuildInfoAndProcessSeriesAndAScrapeOnlyToken) {
  const std::string metrics_token = "scrape-only-token-42";
  Metrics metrics;
  http::EventHub hub;
  http::HttpOptions o;
  o.port = 0;
  o.token = kToken;
  o.metrics_token = metrics_token;
  http::HttpServer server(o, hub, metrics);
  ASSERT_TRUE(server.start().is_ok());
  httplib::Client scraper("127.0.0.1", server.port());
  scraper.set_bearer_token_auth(metrics_token.c_str());
  auto r = scraper.Get("/metrics");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const std::string m = r->body;
  EXPECT_NE(m.find("ticksentry_build_info{version=\""), std::string::npos) << m.substr(0, 500);
  EXPECT_NE(m.find("commit=\""), std::string::npos);
  for (const char* name : {"process_cpu_seconds_total ", "process_resident_memory_bytes ", "process_start_time_seconds ",
                           "process_open_fds ", "process_max_fds ", "process_virtual_memory_bytes "}) {
    const size_t at = m.find(std::string("\n") + name);
    ASSERT_NE(at, std::string::npos) << name;
    // CPU seconds tick in 10 ms steps: a test process this short may not have used one yet.
    const double v = std::stod(m.substr(at + 1 + std::strlen(name)));
    if (std::string(name) == "process_cpu_seconds_total ") {
      EXPECT_GE(v, 0) << name;
    } else {
      EXPECT_GT(v, 0) << name;
    }
  }
  const size_t start = m.find("\nprocess_start_time_seconds ");
  const double started = std::stod(m.substr(start + 28));
  EXPECT_NEAR(started, double(wall_ns()) / 1e9, 3600) << "a Unix time, this process's start";
  EXPECT_NE(m.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
  for (const char* path : {"/api/silences", "/api/alerts", "/readyz", "/"}) {
    r = scraper.Get(path);
    ASSERT_TRUE(r) << path;
    EXPECT_EQ(r->status, 401) << path << ": the scrape token opens /metrics only";
  }
  httplib::Client admin("127.0.0.1", server.port());
  admin.set_bearer_token_auth(kToken.c_str());
  EXPECT_EQ(admin.Get("/metrics")->status, 200) << "the admin token still does";
  server.stop();
}

TEST(HttpApi, CookieLoginAndCsrfHeaderForChanges) {
  TestServer s("http_cookie");
  auto anon = s.client(false);
  auto r = anon.Get(("/?token=" + kToken).c_str());
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 302);
  const std::string cookie = r->get_header_value("Set-Cookie");
  EXPECT_NE(cookie.find("HttpOnly"), std::string::npos);
  EXPECT_NE(cookie.find("SameSite=Strict"), std::string::npos);
  const httplib::Headers with_cookie = {{"Cookie", cookie.substr(0, cookie.find(';'))}};
  r = anon.Get("/api/silences", with_cookie);
  EXPECT_EQ(r->status, 200);
  const std::string spec = R"({"symbol":"AAPL","duration_s":60})";
  r = anon.Post("/api/silences", with_cookie, spec, "application/json");
  EXPECT_EQ(r->status, 403) << "a cookie alone must not change state (CSRF)";
  httplib::Headers h = with_cookie;
  h.emplace("X-Requested-With", "ticksentry");
  r = anon.Post("/api/silences", h, spec, "application/json");
  EXPECT_EQ(r->status, 201);
}

TEST(HttpApi, BadInputGetsJson4xxAndTheServerCarriesOn) {
  TestServer s("http_bad_input");
  auto c = s.client();
  struct Case { const char* method; const char* path; std::string body; int status; };
  const Case cases[] = {
      {"POST", "/api/silences", "not json", 400},
      {"POST", "/api/silences", "[1,2]", 400},
      {"POST", "/api/silences", "{}", 400},                                       // no matcher
      {"POST", "/api/silences", R"({"type":"moon_landing"})", 400},
      {"POST", "/api/silences", R"({"symbol":"AAPL","duration_s":-5})", 400},
      {"POST", "/api/silences", R"({"symbol":42})", 400},
      {"POST", "/api/silences", R"({"severity":"apocalyptic"})", 400},
      {"POST", "/api/silences/s999/expire", "", 404},
      {"GET", "/api/alerts?limit=abc", "", 400},
      {"GET", "/api/alerts?limit=0", "", 400},
      {"GET", "/api/alerts?since_ns=12x", "", 400},
      {"GET", "/api/alerts?type=nope", "", 400},
      {"GET", "/api/alerts?colour=red", "", 400},
      {"GET", "/api/no/such/endpoint", "", 404},
      {"GET", "/api/symbols/NOPE", "", 404},
      {"POST", "/api/models/default/promote", "{}", 400},                         // version missing
      {"POST", "/api/models/default/promote", R"({"version":"9"})", 404},
      {"POST", "/api/models/default/promote", std::string(200 * 1024, 'x'), 413},  // over max_body_bytes
  };
  for (const Case& k : cases) {
    auto r = std::string(k.method) == "GET" ? c.Get(k.path) : c.Post(k.path, k.body, "application/json");
    ASSERT_TRUE(r) << k.method << " " << k.path;
    EXPECT_EQ(r->status, k.status) << k.method << " " << k.path << ": " << r->body;
    if (k.status != 413) {
      json j = json::parse(r->body, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << k.path << " answered non-JSON: " << r->body;
      EXPECT_TRUE(j.contains("error") && j.contains("message")) << r->body;
      EXPECT_FALSE(j["message"].get<std::string>().empty());
    }
  }
  auto r = s.client(false).Get("/healthz");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200);
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("ticksentry_http_errors_total{kind=\"bad_request\"}"), std::string::npos);
  EXPECT_NE(metrics.find("ticksentry_http_requests_total{code=\"4xx\"}"), std::string::npos);
}

TEST(HttpApi, ReadyzFollowsThePipeline) {
  TestServer s("http_ready");
  auto c = s.client();
  EXPECT_EQ(c.Get("/readyz")->status, 503);
  s.server->set_ready(true);
  EXPECT_EQ(c.Get("/readyz")->status, 200);
}

TEST(HttpApi, BindsLoopbackByDefault) {
  http::HttpOptions o;
  EXPECT_EQ(o.bind, "127.0.0.1");
  EXPECT_EQ(o.port, 8080);
  TestServer s("http_bind");
  EXPECT_EQ(s.server->url(), "http://127.0.0.1:" + std::to_string(s.server->port()));
}

TEST(HttpApi, AlertHistoryByTimeSymbolAndType) {
  TestServer s("http_history");
  const SymbolId aapl = s.symbols.intern("AAPL"), goog = s.symbols.intern("GOOG");
  const int64_t t0 = 1'340'285'400'000'000'000;  // 2012-06-21 13:30 UTC
  uint64_t id = 1;
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(s.writer->write(http_alert(aapl, AlertType::kRapidRise, t0 + i * kNsPerSec, id++), s.symbols).is_ok());
    ASSERT_TRUE(s.writer->write(http_alert(goog, AlertType::kVolumeBurst, t0 + i * kNsPerSec, id++), s.symbols).is_ok());
  }
  ASSERT_TRUE(s.writer->flush().is_ok());
  auto c = s.client();
  auto count = [&](const std::string& q) { return body_json(c.Get(("/api/alerts?" + q).c_str()))["count"].get<int>(); };
  EXPECT_EQ(count(""), 20);
  EXPECT_EQ(count("symbol=AAPL"), 10);
  EXPECT_EQ(count("type=volume_burst"), 10);
  EXPECT_EQ(count("symbol=AAPL&type=volume_burst"), 0);
  EXPECT_EQ(count("since_ns=" + std::to_string(t0 + 5 * kNsPerSec)), 10);
  EXPECT_EQ(count("since_ns=" + std::to_string(t0 + 2 * kNsPerSec) + "&until_ns=" + std::to_string(t0 + 4 * kNsPerSec)), 4);
  EXPECT_EQ(count("limit=3"), 3);
  EXPECT_EQ(count("severity=critical"), 0);
  json first = body_json(c.Get("/api/alerts?symbol=GOOG&limit=1"))["alerts"][0];
  EXPECT_EQ(first["symbol"], "GOOG");
  EXPECT_EQ(first["type"], "volume_burst");
  EXPECT_EQ(first["exch_ts_ns"], std::to_string(t0 + 9 * kNsPerSec)) << "newest first";
  // The alert's feature row, one key per feature (the JSONL schema, audit/alert_json.h), and the
  // total latency the dashboard shows.
  ASSERT_TRUE(first.contains("features")) << first.dump();
  EXPECT_EQ(first["features"].size(), size_t(kFeatureCount));
  EXPECT_TRUE(first["features"].contains(feature_name(0)));
  EXPECT_GT(first["latency_ns"]["total"].get<int64_t>(), 0);
}

// GET /api/alerts/{id}: one alert with its feature row, values and thresholds, the book around
// it (exact decimals) and, for a model alert, the window it scored — what the dashboard's alert
// detail view renders.
TEST(HttpApi, OneAlertWithItsBookAndModelWindow) {
  TestServer s("http_alert_detail");
  const SymbolId goog = s.symbols.intern("GOOG");
  const int64_t t0 = 1'340'285'400'000'000'000;
  Alert rule = http_alert(goog, AlertType::kLargeSell, t0, 4242);
  rule.book.bids[0] = {58010, 300};
  rule.book.bids[1] = {58001, 200};
  rule.book.bid_levels = 2;
  rule.book.asks[0] = {58020, 100};
  rule.book.ask_levels = 1;
  Alert model = http_alert(goog, AlertType::kModel, t0 + kNsPerSec, 4343);
  std::snprintf(model.model.model, sizeof model.model.model, "%s", "gru");
  model.model.version = 3;
  model.model.probability = 0.93f;
  model.model.threshold = 0.9f;
  std::vector<float> window(4 * kFeatureCount);
  for (size_t i = 0; i < window.size(); ++i) window[i] = float(i) / 8;
  ASSERT_TRUE(s.writer->write(rule, s.symbols).is_ok());
  ASSERT_TRUE(s.writer->write(model, s.symbols).is_ok());
  ASSERT_TRUE(s.writer->write_model_input(model, window.data(), 4, kFeatureCount).is_ok());
  ASSERT_TRUE(s.writer->flush().is_ok());
  auto c = s.client();

  auto r = c.Get("/api/alerts/4242");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  json j = json::parse(r->body);
  EXPECT_EQ(j["id"], 4242);
  EXPECT_EQ(j["symbol"], "GOOG");
  EXPECT_EQ(j["type"], "large_sell");
  EXPECT_EQ(j["values"][0]["name"], "ret_60s_bps");
  EXPECT_EQ(j["values"][0]["threshold"], 200);
  EXPECT_EQ(j["features"].size(), size_t(kFeatureCount));
  EXPECT_EQ(j["book"], json::parse(R"({"bids": [{"price_ticks": 58010, "price_text": "580.10", "size": 300, "size_text": "300"},
                                                {"price_ticks": 58001, "price_text": "580.01", "size": 200, "size_text": "200"}],
                                       "asks": [{"price_ticks": 58020, "price_text": "580.20", "size": 100, "size_text": "100"}]})"));
  EXPECT_TRUE(j["model"].is_null()) << "a rule alert has no model window";

  r = c.Get("/api/alerts/4343");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  j = json::parse(r->body);
  EXPECT_EQ(j["book"], json::parse(R"({"bids": [], "asks": []})")) << "no levels captured: empty sides, not null";
  ASSERT_TRUE(j["model"].is_object()) << r->body;
  EXPECT_EQ(j["model"]["name"], "gru");
  EXPECT_EQ(j["model"]["version"], 3);
  EXPECT_EQ(j["model"]["rows"], 4);
  EXPECT_EQ(j["model"]["cols"], kFeatureCount);
  ASSERT_EQ(j["model"]["window"].size(), window.size());
  EXPECT_EQ(j["model"]["window"][5].get<float>(), window[5]);

  r = c.Get("/api/alerts/999");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
  EXPECT_EQ(json::parse(r->body)["message"], "no alert 999 in the audit store");
  for (const char* bad : {"/api/alerts/abc", "/api/alerts/-1", "/api/alerts/12x", "/api/alerts/99999999999999999999999"}) {
    r = c.Get(bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << bad << ": " << r->body;
    EXPECT_NE(json::parse(r->body)["message"].get<std::string>().find("alert id must be a decimal integer"),
              std::string::npos);
  }
  r = c.Get("/api/alerts/recent");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 200) << "/api/alerts/recent is still the live list: " << r->body;
  EXPECT_EQ(s.client(false).Get("/api/alerts/4242")->status, 401) << "behind the token like every /api path";
}

TEST(HttpApi, ModelsListPromoteRefuseRollbackShadow) {
  TestServer s("http_models");
  auto c = s.client();
  json list = body_json(c.Get("/api/models"))["models"];
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[1]["stage"], "prod");
  EXPECT_DOUBLE_EQ(list[1]["metrics"]["pr_auc"].get<double>(), 0.47);

  auto r = c.Post("/api/models/default/promote", R"({"version":"3"})", "application/json");
  EXPECT_EQ(r->status, 409);
  EXPECT_NE(body_json(r)["message"].get<std::string>().find("PR-AUC below the gate"), std::string::npos);
  EXPECT_EQ(c.Post("/api/models/default/rollback", "", "application/json")->status, 404);
  EXPECT_EQ(c.Post("/api/models/default/promote", R"({"version":"1"})", "application/json")->status, 200);
  EXPECT_EQ(body_json(c.Get("/api/models"))["models"][0]["stage"], "prod");
  EXPECT_EQ(c.Post("/api/models/default/rollback", "", "application/json")->status, 200);
  EXPECT_EQ(body_json(c.Get("/api/models"))["models"][1]["stage"], "prod");
  EXPECT_EQ(c.Post("/api/models/default/shadow", R"({"version":"3"})", "application/json")->status, 200);
  EXPECT_EQ(body_json(c.Get("/api/models"))["models"][2]["stage"], "shadow");
}

TEST(HttpApi, ServicesNotConfiguredAnswer503) {
  TestServer s("http_unconfigured", /*with_services=*/false);
  auto c = s.client();
  for (const char* path : {"/api/models", "/api/silences", "/api/alerts"}) {
    auto r = c.Get(path);
    EXPECT_EQ(r->status, 503) << path;
    EXPECT_EQ(body_json(r)["error"], "not_configured");
  }
}

}  // namespace
}  // namespace ts::testing
