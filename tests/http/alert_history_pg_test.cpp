// GET /api/alerts when the audit trail is in PostgreSQL ([sinks] audit_backend = "postgres"),
// against a real server (tests/postgres_server.h). The same alerts written to the SQLite store
// and to PostgreSQL must give the same answers, byte for byte, for every filter; a server that
// cannot be reached is a clear error at start-up. Skipped, saying why, only if PostgreSQL
// cannot start here.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "audit/postgres_store.h"
#include "core/clock.h"
#include "http/dashboard.h"
#include "http_test_util.h"
#include "postgres_server.h"

namespace ts::testing {
namespace {

using nlohmann::json;

class PostgresHistory : public PostgresTest {};

// An HttpServer answering /api/alerts from `history` only.
struct HistoryServer {
  Metrics metrics;
  http::EventHub hub;
  std::unique_ptr<http::AlertHistory> history;
  std::unique_ptr<http::HttpServer> server;
  explicit HistoryServer(std::unique_ptr<http::AlertHistory> h) : history(std::move(h)) {
    http::HttpOptions o;
    o.port = 0;
    o.token = kToken;
    server = std::make_unique<http::HttpServer>(o, hub, metrics);
    server->set_alert_history(history.get());
    Status st = server->start();
    if (!st.is_ok()) throw std::runtime_error(st.to_string());
  }
  httplib::Result get(const std::string& path) {
    httplib::Client c("127.0.0.1", server->port());
    c.set_bearer_token_auth(kToken.c_str());
    return c.Get(path.c_str());
  }
};

TEST_F(PostgresHistory, AnswersLikeTheSqliteStoreForEveryFilter) {
  SymbolTable symbols;
  const SymbolId aapl = symbols.intern("AAPL"), goog = symbols.intern("GOOG");
  const int64_t t0 = 1'340'285'400'000'000'000;  // 2012-06-21 13:30 UTC
  const auto db = (scratch_dir("http_history_pg") / "audit.db").string();
  auto sqlite = AuditStore::open(db);
  ASSERT_TRUE(sqlite.is_ok()) << sqlite.status().to_string();
  auto pg = PostgresStore::open(server().dsn());
  ASSERT_TRUE(pg.is_ok()) << pg.status().to_string();
  uint64_t id = 100;
  for (int i = 0; i < 10; ++i) {
    Alert a = http_alert(aapl, AlertType::kRapidRise, t0 + i * kNsPerSec, id++);
    Alert g = http_alert(goog, AlertType::kVolumeBurst, t0 + i * kNsPerSec, id++);
    if (i == 7) {
      g.severity = Severity::kCritical;
      g.id = ~uint64_t(0) - 5;  // ids use all 64 bits: stored as signed BIGINT, answered unsigned
    }
    for (AlertSink* s : {static_cast<AlertSink*>(sqlite.value().get()), static_cast<AlertSink*>(pg.value().get())}) {
      ASSERT_TRUE(s->write(a, symbols).is_ok());
      ASSERT_TRUE(s->write(g, symbols).is_ok());
    }
  }
  ASSERT_TRUE(sqlite.value()->flush().is_ok());
  ASSERT_TRUE(pg.value()->flush().is_ok());

  auto from_pg = http::AlertHistory::open_postgres(server().dsn());
  ASSERT_TRUE(from_pg.is_ok()) << from_pg.status().to_string();
  HistoryServer p(std::move(from_pg).value());
  HistoryServer q(std::move(http::AlertHistory::open(db)).value());
  const std::string t2 = std::to_string(t0 + 2 * kNsPerSec), t4 = std::to_string(t0 + 4 * kNsPerSec);
  const std::pair<std::string, int> cases[] = {
      {"", 20}, {"symbol=AAPL", 10}, {"type=volume_burst", 10}, {"symbol=AAPL&type=volume_burst", 0},
      {"since_ns=" + t2 + "&until_ns=" + t4, 4}, {"limit=3", 3}, {"severity=critical", 1},
      {"symbol=GOOG&limit=1", 1}, {"symbol=MSFT", 0}};
  for (const auto& [query, n] : cases) {
    auto rp = p.get("/api/alerts?" + query);
    auto rq = q.get("/api/alerts?" + query);
    ASSERT_TRUE(rp && rq) << query;
    ASSERT_EQ(rp->status, 200) << query << ": " << rp->body;
    EXPECT_EQ(json::parse(rp->body)["count"].get<int>(), n) << query;
    EXPECT_EQ(rp->body, rq->body) << "postgres and sqlite differ for '" << query << "'";
  }
  const json critical = json::parse(p.get("/api/alerts?severity=critical")->body)["alerts"][0];
  EXPECT_EQ(critical["id"].get<uint64_t>(), ~uint64_t(0) - 5);
  EXPECT_EQ(critical["exch_ts_ns"], std::to_string(t0 + 7 * kNsPerSec)) << "a string: exact in jq";
  EXPECT_EQ(critical["values"][0]["name"], "ret_60s_bps");
  EXPECT_EQ(p.get("/api/alerts?limit=0")->status, 400);
  EXPECT_EQ(p.get("/api/alerts?type=nope")->status, 400);
}

// The dashboard as `run` builds it with audit_backend = "postgres": /api/alerts reads PostgreSQL
// (alerts written by another instance show up), and an unreachable server fails start().
TEST_F(PostgresHistory, DashboardReadsTheSharedStore) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  auto pg = PostgresStore::open(server().dsn());
  ASSERT_TRUE(pg.is_ok()) << pg.status().to_string();
  const int64_t t = 1'675'213'867'000'000'000;
  ASSERT_TRUE(pg.value()->write(http_alert(sym, AlertType::kLargeSell, t, 77'001), symbols).is_ok());
  ASSERT_TRUE(pg.value()->flush().is_ok());

  Metrics metrics;
  http::DashboardOptions o;
  o.enabled = true;
  o.port = 0;
  o.token = kToken;
  o.web_root = "";
  o.audit_db = (scratch_dir("http_history_pg_dash") / "unused.db").string();
  o.audit_postgres_dsn = server().dsn();
  http::Dashboard d(o, symbols, metrics);
  ASSERT_TRUE(d.start().is_ok());
  httplib::Client c("127.0.0.1", d.port());
  c.set_bearer_token_auth(kToken.c_str());
  auto r = c.Get("/api/alerts?symbol=600519.SH&type=large_sell");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->status, 200) << r->body;
  const json body = json::parse(r->body);
  ASSERT_EQ(body["count"].get<int>(), 1);
  EXPECT_EQ(body["alerts"][0]["id"].get<uint64_t>(), 77'001u);
  d.stop();
  EXPECT_FALSE(std::filesystem::exists(o.audit_db)) << "no SQLite file is made when the audit trail is in PostgreSQL";

  http::DashboardOptions bad = o;
  bad.audit_postgres_dsn = "host=127.0.0.1 port=1 dbname=postgres connect_timeout=5";
  http::Dashboard d2(bad, symbols, metrics);
  Status st = d2.start();
  ASSERT_FALSE(st.is_ok());
  EXPECT_NE(st.message().find("alert history"), std::string::npos) << st.message();
  EXPECT_NE(st.message().find("PQconnectdb"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ts::testing
