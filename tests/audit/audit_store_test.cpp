// SQLite audit store: schema, WAL, batching, round trip, errors.
#include <gtest/gtest.h>

#include <sqlite3.h>

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

}  // namespace
}  // namespace ts::testing
