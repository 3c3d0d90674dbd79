// SQLite audit store: schema, WAL, batching, round trip, errors.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include "audit/alert_json.h"
#include "audit/audit_store.h"
#include "audit/audit_test_util.h"
#include "test_data.h"

namespace ts::testing {
namespace {

std::string raw_journal_mode(const std::string& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &s, nullptr), SQLITE_OK);
  std::string mode;
  if (sqlite3_step(s) == SQLITE_ROW) mode = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
  sqlite3_finalize(s);
  sqlite3_close(db);
  return mode;
}

TEST(AuditStore, RoundTripsEveryFieldInWalMode) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const SymbolId other = symbols.intern("000001.SZ");
  const std::string path = (scratch_dir("audit_round_trip") / "audit.db").string();
  {
    auto store = AuditStore::open(path);
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    EXPECT_EQ(store.value()->journal_mode().value(), "wal");
    for (uint64_t k = 0; k < 3; ++k) ASSERT_TRUE(store.value()->write(make_alert(k == 2 ? other : sym, k), symbols).is_ok());
    ASSERT_TRUE(store.value()->close().is_ok());
  }
  EXPECT_EQ(raw_journal_mode(path), "wal") << "WAL is persistent in the file";

  auto store = AuditStore::open(path);
  ASSERT_TRUE(store.is_ok());
  EXPECT_EQ(store.value()->count().value(), 3);
  auto rows = store.value()->load_all();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_EQ(rows.value().size(), 3u);
  const Alert want = make_alert(sym, 1);
  const AlertRecord& r = rows.value()[1];
  EXPECT_EQ(r.alert_id, 1u);
  EXPECT_EQ(r.symbol, "600519.SH");
  EXPECT_EQ(r.symbol_id, sym);
  EXPECT_EQ(r.type, alert_type_name(want.type));
  EXPECT_EQ(r.severity, "warning");
  EXPECT_EQ(r.exch_ts_ns, want.exch_ts_ns);
  EXPECT_EQ(r.event_seq, 1001u);
  EXPECT_EQ(r.price_ticks, 185012);
  EXPECT_NEAR(r.price, 1850.12, 1e-9);
  EXPECT_EQ(r.t.recv_ns, want.t.recv_ns);
  EXPECT_EQ(r.t.detect_ns, want.t.detect_ns);
  EXPECT_EQ(r.latency_ns, 23'000);
  ASSERT_EQ(r.values.size(), 2u);
  EXPECT_EQ(r.values[0].name, "ret_60s_bps");
  EXPECT_DOUBLE_EQ(r.values[0].value, 312.5);
  EXPECT_DOUBLE_EQ(r.values[0].threshold, 200);
  EXPECT_EQ(r.values[0].cmp, ">=");
  ASSERT_EQ(r.features.size(), size_t(kFeatureCount));
  for (int i = 0; i < kFeatureCount; ++i) EXPECT_EQ(r.features[i], want.features[i]) << i;

  AlertQuery q;
  q.symbol = "000001.SZ";
  auto sz = store.value()->query(q);
  ASSERT_TRUE(sz.is_ok());
  ASSERT_EQ(sz.value().size(), 1u);
  EXPECT_EQ(sz.value()[0].alert_id, 2u);
  q = AlertQuery{};
  q.type = "rapid_rise";
  EXPECT_EQ(store.value()->query(q).value().size(), 1u);
}

TEST(AuditStore, WritesAreBatchedUntilFlush) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const std::string path = (scratch_dir("audit_batched") / "audit.db").string();
  auto writer = AuditStore::open(path);
  ASSERT_TRUE(writer.is_ok());
  auto reader = AuditStore::open(path);
  ASSERT_TRUE(reader.is_ok());
  for (uint64_t k = 0; k < 10; ++k) ASSERT_TRUE(writer.value()->write(make_alert(sym, k), symbols).is_ok());
  EXPECT_EQ(writer.value()->pending(), 10);
  EXPECT_EQ(reader.value()->count().value(), 0) << "uncommitted batch is invisible to other connections";
  ASSERT_TRUE(writer.value()->flush().is_ok());
  EXPECT_EQ(reader.value()->count().value(), 10);
}

TEST(AuditStore, OpenErrorsNameTheCallAndReason) {
  auto store = AuditStore::open("/nonexistent-dir/audit.db");
  ASSERT_FALSE(store.is_ok());
  EXPECT_EQ(store.status().code(), StatusCode::kIoError);
  EXPECT_NE(store.status().message().find("sqlite3_open_v2"), std::string::npos) << store.status().message();
  EXPECT_NE(store.status().message().find("/nonexistent-dir/audit.db"), std::string::npos);
}

TEST(AuditStore, WriteAfterCloseIsAnError) {
  SymbolTable symbols;
  auto store = AuditStore::open((scratch_dir("audit_closed") / "audit.db").string());
  ASSERT_TRUE(store.is_ok());
  ASSERT_TRUE(store.value()->close().is_ok());
  EXPECT_FALSE(store.value()->write(make_alert(symbols.intern("600519.SH"), 1), symbols).is_ok());
}

// The book around an alert: stored with exact decimals in the instrument's precision (a crypto
// pair's size increment of 1e-8, a price tick of 0.01), read back level by level.
TEST(AuditStore, KeepsTheBookAroundTheAlertInExactDecimals) {
  SymbolTable symbols;
  const SymbolId btc = symbols.intern("BTCUSD");
  symbols.mutable_ref(btc).tick = Decimal{1, 2};
  symbols.mutable_ref(btc).tick_size = 0.01;
  symbols.mutable_ref(btc).size_increment = Decimal{1, 8};
  const std::string path = (scratch_dir("audit_book") / "audit.db").string();
  Alert a = make_alert(btc, 7);
  a.book.bids[0] = {2345601, 150000000};  // 23456.01 × 1.5
  a.book.bids[1] = {2345600, 1};          // 23456.00 × 0.00000001
  a.book.bid_levels = 2;
  for (int i = 0; i < kAlertBookLevels; ++i) a.book.asks[i] = {2345610 + i, 1000000 * (i + 1)};
  a.book.ask_levels = kAlertBookLevels;
  {
    auto store = AuditStore::open(path);
    ASSERT_TRUE(store.is_ok()) << store.status().to_string();
    ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
    ASSERT_TRUE(store.value()->write(make_alert(btc, 8), symbols).is_ok());  // no levels captured
    ASSERT_TRUE(store.value()->close().is_ok());
  }
  auto store = AuditStore::open(path);
  ASSERT_TRUE(store.is_ok());
  auto rows = store.value()->load_all();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_EQ(rows.value().size(), 2u);
  const BookRecord& b = rows.value()[0].book;
  ASSERT_TRUE(b.present);
  ASSERT_EQ(b.bids.size(), 2u);
  ASSERT_EQ(b.asks.size(), size_t(kAlertBookLevels));
  EXPECT_EQ(b.bids[0].price_ticks, 2345601);
  EXPECT_EQ(b.bids[0].price_text, "23456.01");
  EXPECT_EQ(b.bids[0].size, 150000000);
  EXPECT_EQ(b.bids[0].size_text, "1.50000000");
  EXPECT_EQ(b.bids[1].size_text, "0.00000001");
  EXPECT_EQ(b.asks[4].price_text, "23456.14");
  EXPECT_EQ(b.asks[4].size_text, "0.05000000");
  const BookRecord& empty = rows.value()[1].book;
  EXPECT_TRUE(empty.present);
  EXPECT_TRUE(empty.bids.empty() && empty.asks.empty());
}

// The score of a model alert is kept in the alerts row (model_json), so the audit search and the
// alert detail show the probability wherever the alert is read; rule alerts have none.
TEST(AuditStore, KeepsTheModelScoreOfAModelAlert) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const std::string path = (scratch_dir("audit_model_score") / "audit.db").string();
  auto store = AuditStore::open(path);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  Alert rule = make_alert(sym, 7);
  rule.type = AlertType::kLargeBuy;
  ASSERT_TRUE(store.value()->write(rule, symbols).is_ok());
  ASSERT_TRUE(store.value()->write(make_model_alert(sym, 8, "desk-gru", 3, 0.8725f), symbols).is_ok());
  ASSERT_TRUE(store.value()->flush().is_ok());
  AlertQuery q;
  q.alert_id = 8;
  auto rows = store.value()->query(q);
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_EQ(rows.value().size(), 1u);
  expect_desk_gru_score(rows.value()[0].model);
  const nlohmann::json j = alert_record_json(rows.value()[0]);
  ASSERT_TRUE(j.contains("model")) << j.dump();
  EXPECT_NEAR(j["model"]["probability"].get<double>(), 0.8725, 1e-6);
  q.alert_id = 7;
  rows = store.value()->query(q);
  ASSERT_TRUE(rows.is_ok());
  ASSERT_EQ(rows.value().size(), 1u);
  EXPECT_FALSE(rows.value()[0].model.present);
  EXPECT_FALSE(alert_record_json(rows.value()[0]).contains("model"));
}

// A store written before the book and the model score were kept (no book_json, model_json
// columns): opened by this build it gains them, its old rows read as before (no book, no score),
// new rows keep theirs.
TEST(AuditStore, AnOlderStoreIsMigratedAndStaysReadable) {
  const std::string path = (scratch_dir("audit_migrate") / "audit.db").string();
  {
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    // The alerts table as builds before the book created it, with one row.
    const char* old_schema =
        "PRAGMA journal_mode=WAL;"
        "CREATE TABLE alerts (row_id INTEGER PRIMARY KEY, alert_id INTEGER NOT NULL, symbol_id INTEGER NOT NULL, "
        "symbol TEXT NOT NULL, type TEXT NOT NULL, severity TEXT NOT NULL, exch_ts_ns INTEGER NOT NULL, "
        "event_seq INTEGER NOT NULL, price_ticks INTEGER NOT NULL, price REAL NOT NULL, recv_ns INTEGER NOT NULL, "
        "book_ns INTEGER NOT NULL, features_ns INTEGER NOT NULL, detect_ns INTEGER NOT NULL, emit_ns INTEGER NOT NULL, "
        "latency_ns INTEGER NOT NULL, values_json TEXT NOT NULL, features_json TEXT NOT NULL, "
        "features_blob BLOB NOT NULL, written_at_ns INTEGER NOT NULL);"
        "INSERT INTO alerts VALUES (1, 99, 0, 'GOOG', 'large_buy', 'warning', 1340285400000000000, 5, 58012, 580.12, "
        "1, 2, 3, 4, 5, 3, '[{\"name\":\"qty\",\"value\":900,\"threshold\":500,\"cmp\":\">=\"}]', '{}', x'', 6);";
    char* err = nullptr;
    ASSERT_EQ(sqlite3_exec(db, old_schema, nullptr, nullptr, &err), SQLITE_OK) << (err ? err : "");
    sqlite3_close(db);
  }
  SymbolTable symbols;
  const SymbolId goog = symbols.intern("GOOG");
  auto store = AuditStore::open(path);
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  Alert a = make_model_alert(goog, 100, "alert-default", 4, 0.93f);
  a.book.asks[0] = {58020, 100};
  a.book.ask_levels = 1;
  ASSERT_TRUE(store.value()->write(a, symbols).is_ok());
  ASSERT_TRUE(store.value()->flush().is_ok());
  auto rows = store.value()->load_all();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_EQ(rows.value().size(), 2u);
  EXPECT_FALSE(rows.value()[0].model.present) << "an old row has no model score";
  ASSERT_TRUE(rows.value()[1].model.present) << "the migrated store keeps the new row's score";
  EXPECT_NEAR(rows.value()[1].model.probability, 0.93, 1e-6);
  EXPECT_EQ(rows.value()[0].alert_id, 99u);
  EXPECT_EQ(rows.value()[0].type, "large_buy");
  ASSERT_EQ(rows.value()[0].values.size(), 1u);
  EXPECT_EQ(rows.value()[0].values[0].name, "qty");
  EXPECT_FALSE(rows.value()[0].book.present) << "an old row has no book";
  ASSERT_TRUE(rows.value()[1].book.present);
  ASSERT_EQ(rows.value()[1].book.asks.size(), 1u);
  EXPECT_EQ(rows.value()[1].book.asks[0].price_text, "580.20");
  // Opening the migrated store again changes nothing.
  ASSERT_TRUE(store.value()->close().is_ok());
  auto again = AuditStore::open(path);
  ASSERT_TRUE(again.is_ok()) << again.status().to_string();
  EXPECT_EQ(again.value()->count().value(), 2);
}

}  // namespace
}  // namespace ts::testing
