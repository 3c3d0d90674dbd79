#pragma once
// A real HttpServer on a free loopback port with every service attached (in-memory silences,
// an in-test model registry, a scratch audit store), and helpers to talk to it over HTTP.
#include <httplib.h>

#include <memory>
#include <string>

#include "audit/audit_store.h"
#include "core/metrics.h"
#include "core/symbol_table.h"
#include "detect/alert.h"
#include "http/alert_history.h"
#include "http/alert_stream.h"
#include "http/event_hub.h"
#include "http/http_server.h"
#include "http/live_feed.h"
#include "http/memory_silences.h"
#include "pipeline/market_board.h"
#include "test_data.h"

namespace ts::testing {

inline const std::string kToken = "test-token-0123456789";

// An alert of `type` on `sym` at exchange time `exch_ns`, with every stage stamped.
inline Alert http_alert(SymbolId sym, AlertType type, int64_t exch_ns, uint64_t id = 1) {
  Alert a;
  a.id = id;
  a.type = type;
  a.severity = Severity::kWarning;
  a.symbol = sym;
  a.exch_ts_ns = exch_ns;
  a.price = 58012;
  a.add_value("ret_60s_bps", 312.5, 200, Cmp::kGe);
  a.t.recv_ns = 1'000'000;
  a.t.book_ns = 1'001'000;
  a.t.features_ns = 1'003'000;
  a.t.detect_ns = 1'007'000;
  a.t.emit_ns = 1'010'000;
  return a;
}

// A model registry as simple as it can be: versions in a vector, the gate is "pr_auc >= 0.4".
class TestModels : public http::ModelAdmin {
 public:
  std::vector<http::ModelVersionInfo> versions = {{"default", "1", "archived", 1000, {{"pr_auc", 0.42}}},
                                                  {"default", "2", "prod", 2000, {{"pr_auc", 0.47}}},
                                                  {"default", "3", "staging", 3000, {{"pr_auc", 0.31}}}};
  std::vector<std::string> history;  // prod versions before each promote

  std::vector<http::ModelVersionInfo> list() override { return versions; }
  Status promote(const std::string& name, const std::string& version) override {
    http::ModelVersionInfo* v = find(name, version);
    if (!v) return {StatusCode::kNotFound, "no version " + version + " of model " + name};
    if (v->metrics["pr_auc"] < 0.4)
      return {StatusCode::kUnsupported, "promote " + name + " v" + version + ": PR-AUC below the gate 0.40"};
    for (auto& o : versions) {
      if (o.name == name && o.stage == "prod") {
        o.stage = "archived";
        history.push_back(o.version);
      }
    }
    v->stage = "prod";
    return Status::ok();
  }
  Status rollback(const std::string& name) override {
    if (history.empty()) return {StatusCode::kNotFound, "model " + name + " has no earlier prod version"};
    const std::string back = history.back();
    history.pop_back();
    for (auto& o : versions) {
      if (o.name == name && o.stage == "prod") o.stage = "archived";
    }
    find(name, back)->stage = "prod";
    return Status::ok();
  }
  Status shadow(const std::string& name, const std::string& version) override {
    http::ModelVersionInfo* v = find(name, version);
    if (!v) return {StatusCode::kNotFound, "no version " + version + " of model " + name};
    v->stage = "shadow";
    return Status::ok();
  }

 private:
  http::ModelVersionInfo* find(const std::string& name, const std::string& version) {
    for (auto& v : versions) {
      if (v.name == name && v.version == version) return &v;
    }
    return nullptr;
  }
};

struct TestServer {
  SymbolTable symbols;
  Metrics metrics;
  http::EventHub hub;
  MarketBoard board{1024};
  http::MemorySilences silences;
  TestModels models;
  std::unique_ptr<AuditStore> writer;
  std::unique_ptr<http::AlertHistory> history;
  std::unique_ptr<http::AlertStream> stream;
  std::unique_ptr<http::LiveFeed> live;
  std::unique_ptr<http::HttpServer> server;

  // `with_services`: false leaves models, silences and history out (their endpoints answer 503).
  // `limits`: the server's connection limits (default: HttpLimits's, with 4 streams).
  explicit TestServer(const std::string& name, bool with_services = true, const http::HttpLimits* limits = nullptr) {
    const auto db = (scratch_dir(name) / "audit.db").string();
    writer = std::move(AuditStore::open(db)).value();
    history = std::move(http::AlertHistory::open(db)).value();
    stream = std::make_unique<http::AlertStream>(hub, metrics, with_services ? &silences : nullptr);
    http::LiveFeedOptions lo;
    lo.interval_ms = 100000;  // tests call tick() themselves
    live = std::make_unique<http::LiveFeed>(symbols, &board, stream.get(), hub, metrics, lo);
    http::HttpOptions o;
    o.port = 0;
    o.token = kToken;
    o.limits.max_streams = 4;
    if (limits) o.limits = *limits;
    server = std::make_unique<http::HttpServer>(o, hub, metrics);
    server->set_alert_stream(stream.get());
    server->set_live_feed(live.get());
    if (with_services) {
      server->set_alert_history(history.get());
      server->set_models(&models);
      server->set_silences(&silences);
    }
    Status st = server->start();
    if (!st.is_ok()) throw std::runtime_error(st.to_string());
  }
  ~TestServer() { server->stop(); }

  httplib::Client client(bool with_token = true) const {
    httplib::Client c("127.0.0.1", server->port());
    c.set_connection_timeout(10);
    c.set_read_timeout(30);
    if (with_token) c.set_bearer_token_auth(kToken.c_str());
    return c;
  }
};

}  // namespace ts::testing
