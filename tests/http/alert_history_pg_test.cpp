// GET /api/alerts when the audit trail is in PostgreSQL ([sinks] audit_backend = "postgres"),
// against a real server (tests/postgres_server.h). The same alerts written to the SQLite store
// and to PostgreSQL must give the same answers, byte for byte, for every filter; a server that
// cannot be reached is a clear error at start-up. Skipped, saying why, only if PostgreSQL
// cannot start here.
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <cstdio>

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

// GET /api/alerts/{id} from PostgreSQL: the book around the alert as the SQLite store answers it,
// and a table made before book_json existed migrated at connect (its old rows answer book null).
TEST_F(PostgresHistory, OneAlertWithItsBookAndAnOlderTableMigrated) {
  // The alerts table as builds before the book created it, with one row.
  {
    auto conn = pg_open(server().dsn(), "SELECT 1", "test");
    ASSERT_TRUE(conn.is_ok()) << conn.status().to_string();
    Status st = pg_exec(conn.value(),
                        "DROP TABLE IF EXISTS alerts; "
                        "CREATE TABLE alerts (row_id BIGSERIAL PRIMARY KEY, alert_id BIGINT NOT NULL UNIQUE, "
                        "symbol_id BIGINT NOT NULL, symbol TEXT NOT NULL, type TEXT NOT NULL, severity TEXT NOT NULL, "
                        "exch_ts_ns BIGINT NOT NULL, event_seq BIGINT NOT NULL, price_ticks BIGINT NOT NULL, "
                        "price DOUBLE PRECISION NOT NULL, recv_ns BIGINT NOT NULL, book_ns BIGINT NOT NULL, "
                        "features_ns BIGINT NOT NULL, detect_ns BIGINT NOT NULL, emit_ns BIGINT NOT NULL, "
                        "latency_ns BIGINT NOT NULL, values_json TEXT NOT NULL, features_json TEXT NOT NULL, "
                        "features_blob BYTEA NOT NULL, written_at_ns BIGINT NOT NULL); "
                        "INSERT INTO alerts (alert_id, symbol_id, symbol, type, severity, exch_ts_ns, event_seq, "
                        "price_ticks, price, recv_ns, book_ns, features_ns, detect_ns, emit_ns, latency_ns, values_json, "
                        "features_json, features_blob, written_at_ns) VALUES (55, 0, 'GOOG', 'large_buy', 'warning', "
                        "1340285400000000000, 5, 58012, 580.12, 1, 2, 3, 4, 5, 3, '[]', '{}', ''::bytea, 6)",
                        "old schema");
    ASSERT_TRUE(st.is_ok()) << st.to_string();
    PQfinish(conn.value());
  }
  SymbolTable symbols;
  const SymbolId goog = symbols.intern("GOOG");
  auto pg = PostgresStore::open(server().dsn());
  ASSERT_TRUE(pg.is_ok()) << pg.status().to_string();
  const auto db = (scratch_dir("http_history_pg_book") / "audit.db").string();
  auto sqlite = AuditStore::open(db);
  ASSERT_TRUE(sqlite.is_ok());
  Alert a = http_alert(goog, AlertType::kLargeSell, 1'340'285'460'000'000'000, 66);
  for (int i = 0; i < kAlertBookLevels; ++i) {
    a.book.bids[i] = {58010 - i, 100 * (i + 1)};
    a.book.asks[i] = {58020 + i, 50 * (i + 1)};
  }
  a.book.bid_levels = a.book.ask_levels = kAlertBookLevels;
  for (AlertSink* s : {static_cast<AlertSink*>(sqlite.value().get()), static_cast<AlertSink*>(pg.value().get())}) {
    ASSERT_TRUE(s->write(a, symbols).is_ok());
    ASSERT_TRUE(s->flush().is_ok());
  }
  HistoryServer p(std::move(http::AlertHistory::open_postgres(server().dsn())).value());
  HistoryServer q(std::move(http::AlertHistory::open(db)).value());
  auto rp = p.get("/api/alerts/66"), rq = q.get("/api/alerts/66");
  ASSERT_TRUE(rp && rq);
  ASSERT_EQ(rp->status, 200) << rp->body;
  EXPECT_EQ(rp->body, rq->body) << "postgres and sqlite answer the same alert alike";
  const json j = json::parse(rp->body);
  ASSERT_EQ(j["book"]["bids"].size(), size_t(kAlertBookLevels));
  EXPECT_EQ(j["book"]["bids"][4]["price_text"], "580.06");
  EXPECT_EQ(j["book"]["asks"][4]["size_text"], "250");
  EXPECT_TRUE(j["model"].is_null());
  auto old = p.get("/api/alerts/55");
  ASSERT_TRUE(old);
  ASSERT_EQ(old->status, 200) << old->body;
  EXPECT_EQ(json::parse(old->body)["symbol"], "GOOG");
  EXPECT_TRUE(json::parse(old->body)["book"].is_null()) << "a row from before the book: null, not an error";
  EXPECT_EQ(p.get("/api/alerts/77")->status, 404);
  // A model alert: its score is in the row (the migrated table gained model_json), so the audit
  // search and the detail view show the probability from PostgreSQL too (no window there).
  Alert m = http_alert(goog, AlertType::kModel, 1'340'285'470'000'000'000, 68);
  std::snprintf(m.model.model, sizeof m.model.model, "%s", "desk-gru");
  m.model.version = 5;
  m.model.probability = 0.9375f;
  m.model.threshold = 0.8f;
  ASSERT_TRUE(pg.value()->write(m, symbols).is_ok());
  ASSERT_TRUE(pg.value()->flush().is_ok());
  auto rm = p.get("/api/alerts/68");
  ASSERT_TRUE(rm);
  ASSERT_EQ(rm->status, 200) << rm->body;
  const json jm = json::parse(rm->body);
  ASSERT_TRUE(jm["model"].is_object()) << rm->body;
  EXPECT_EQ(jm["model"]["name"], "desk-gru");
  EXPECT_EQ(jm["model"]["version"], 5);
  EXPECT_NEAR(jm["model"]["probability"].get<double>(), 0.9375, 1e-6);
  EXPECT_FALSE(jm["model"].contains("window")) << "PostgreSQL keeps no windows";
  auto listed = p.get("/api/alerts?type=model");
  ASSERT_TRUE(listed);
  ASSERT_EQ(listed->status, 200) << listed->body;
  const json jl = json::parse(listed->body);
  ASSERT_EQ(jl["alerts"].size(), 1u) << listed->body;
  EXPECT_NEAR(jl["alerts"][0]["model"]["probability"].get<double>(), 0.9375, 1e-6) << "the audit search carries it";
  // Leave the table as the other tests expect to find it: made by PostgresStore::open.
  ASSERT_TRUE(pg.value()->close().is_ok());
  auto conn = pg_open(server().dsn(), "DROP TABLE alerts", "cleanup");
  ASSERT_TRUE(conn.is_ok()) << conn.status().to_string();
  PQfinish(conn.value());
}

}  // namespace
}  // namespace ts::testing
