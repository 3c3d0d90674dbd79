// Exact decimals in every output (issue 22): an alert's price, sizes and notionals are written in
// the instrument's own precision by every sink — "58.3", never "58.300000000000004" (5830 ticks ×
// 0.01 in double); a notional "1851100.00" on stdout and 1851100 in JSON, never 1851100.0; a
// crypto size of 5 increments of 0.00001 BTC as "0.00005". One formatting (audit/alert_format.h)
// behind stdout, JSONL (and so Kafka, which writes the same JSON), SQLite, notifications.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "audit/alert_format.h"
#include "audit/alert_json.h"
#include "audit/audit_store.h"
#include "audit/audit_test_util.h"
#include "audit/jsonl_sink.h"
#include "audit/stdout_sink.h"
#include "core/instrument_ref.h"
#include "core/instrument_table.h"
#include "core/sqlite_db.h"
#include "test_data.h"

namespace ts::testing {
namespace {

// A ¥58.30 A-share print of 31,750 shares (1,851,025.00) as large_buy saw it, and a BTC print.
struct DecimalAlerts {
  SymbolTable symbols;
  SymbolId stock = symbols.intern("600036.SH");
  SymbolId btc = kInvalidSymbol;
  Alert share_alert() const {
    Alert a = make_alert(stock, 11);
    a.type = AlertType::kLargeBuy;
    a.price = 5830;  // double(5830) * 0.01 = 58.300000000000004
    a.value_count = 0;
    a.add_value("notional", 5830.0 * 31750 / 100, 1'851'100.0, Cmp::kGe);  // 1851025 (exact in double)
    a.add_value("qty", 31750, 0, Cmp::kInfo);
    a.add_value("typical_minute_notional", 1'234'066.6666666667, 0, Cmp::kInfo);
    return a;
  }
  Alert coin_alert() const {
    Alert a = make_alert(btc, 12);
    a.type = AlertType::kLargeSell;
    a.price = 6000001;  // 60000.01
    a.value_count = 0;
    // 5 increments of 0.00001 BTC at 60000.01: 3.0000005 (tick 0.01 × size 0.00001: 7 digits)
    a.add_value("notional", 3.0000005, 1.5, Cmp::kGe);
    a.add_value("qty", 5, 0, Cmp::kInfo);
    return a;
  }
  InstrumentTable instruments;
  DecimalAlerts() {
    auto id = intern_instrument(symbols, instruments, "BINANCE:BTCUSDT");
    EXPECT_TRUE(id.is_ok());
    if (id.is_ok()) btc = id.value();
  }
};

TEST(DecimalOutputs, PricesSizesAndNotionalsInTheInstrumentsPrecision) {
  DecimalAlerts d;
  const RefData& share = d.symbols.ref(d.stock);
  const RefData& coin = d.symbols.ref(d.btc);
  EXPECT_EQ(price_text(5830, share), "58.30");
  EXPECT_EQ(price_number(5830, share), 58.3);
  EXPECT_EQ(price_text(6000001, coin), "60000.01");
  EXPECT_EQ(format_alert_value(1'851'100.0, ValueUnit::kNotional, &share), "1851100.00");
  EXPECT_EQ(format_alert_value(1'234'066.6666666667, ValueUnit::kNotional, &share), "1234066.67");
  EXPECT_EQ(format_alert_value(3.0000005, ValueUnit::kNotional, &coin), "3.0000005");
  EXPECT_EQ(format_alert_value(3.0, ValueUnit::kNotional, &coin), "3.00");
  EXPECT_EQ(format_alert_value(5, ValueUnit::kSize, &coin), "0.00005");
  EXPECT_EQ(format_alert_value(31750, ValueUnit::kSize, &share), "31750");
  EXPECT_EQ(value_unit("typical_minute_notional"), ValueUnit::kNotional);
  EXPECT_EQ(value_unit("ret_60s_bps"), ValueUnit::kPlain);
}

TEST(DecimalOutputs, StdoutLine) {
  DecimalAlerts d;
  EXPECT_EQ(format_alert_line(d.share_alert(), d.symbols),
            "09:31:07.120 600036.SH large_buy warning notional=1851025.00 (>=1851100.00) qty=31750 "
            "typical_minute_notional=1234066.67 price=58.30 latency=23us");
  EXPECT_EQ(format_alert_line(d.coin_alert(), d.symbols).substr(13),
            "BINANCE:BTCUSDT large_sell warning notional=3.0000005 (>=1.50) qty=0.00005 price=60000.01 latency=23us");
}

TEST(DecimalOutputs, JsonAsWrittenToJsonlAndKafka) {
  DecimalAlerts d;
  const auto path = scratch_dir("decimal_jsonl") / "alerts.jsonl";
  {
    JsonlSink sink(path.string());
    ASSERT_TRUE(sink.write(d.share_alert(), d.symbols).is_ok());
    ASSERT_TRUE(sink.write(d.coin_alert(), d.symbols).is_ok());
    ASSERT_TRUE(sink.close().is_ok());
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  // The raw text, as jq, a browser or a Kafka consumer reads it.
  EXPECT_NE(line.find(R"("price":58.3,)"), std::string::npos) << line;
  EXPECT_NE(line.find(R"("price_text":"58.30")"), std::string::npos) << line;
  EXPECT_EQ(line.find("58.300000000000004"), std::string::npos) << line;
  EXPECT_EQ(line.find("1851100.0,"), std::string::npos) << line;
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["values"][0]["value"].dump(), "1851025");
  EXPECT_EQ(j["values"][0]["threshold"].dump(), "1851100");
  EXPECT_EQ(j["values"][0]["text"], "1851025.00") << "the stdout text";
  EXPECT_EQ(j["values"][1]["value"].dump(), "31750");
  EXPECT_EQ(j["values"][2]["value"].dump(), "1234066.67");
  ASSERT_TRUE(std::getline(in, line));
  const auto c = nlohmann::json::parse(line);
  EXPECT_EQ(c["price"].dump(), "60000.01");
  EXPECT_EQ(c["values"][0]["value"].dump(), "3.0000005");
  EXPECT_EQ(c["values"][1]["value"].dump(), "5e-05") << "JSON's own spelling of 0.00005";
  EXPECT_EQ(c["values"][1]["text"], "0.00005");
  // Kafka publishes alert_to_json(...).dump(): the same text as the JSONL line.
  EXPECT_EQ(alert_to_json(d.coin_alert(), d.symbols).dump(), line);
}

TEST(DecimalOutputs, SqliteStoresTheDecimalNotItsDoubleNoise) {
  DecimalAlerts d;
  const auto path = scratch_dir("decimal_sqlite") / "audit.db";
  {
    auto store = AuditStore::open(path.string());
    ASSERT_TRUE(store.is_ok()) << store.status().message();
    ASSERT_TRUE(store.value()->write(d.share_alert(), d.symbols).is_ok());
    ASSERT_TRUE(store.value()->flush().is_ok());
  }
  auto db = SqlDb::open(path.string(), false);
  ASSERT_TRUE(db.is_ok()) << db.status().message();
  auto q = db.value()->prepare("SELECT CAST(price AS TEXT), values_json FROM alerts");
  ASSERT_TRUE(q.is_ok()) << q.status().message();
  SqlStmt& stmt = q.value();
  auto row = stmt.step();
  ASSERT_TRUE(row.is_ok() && row.value());
  EXPECT_EQ(stmt.col_text(0), "58.3");
  const std::string values = stmt.col_text(1);
  EXPECT_NE(values.find(R"("text":"1851025.00")"), std::string::npos) << values;
  EXPECT_EQ(values.find("1851100.0,"), std::string::npos) << values;
}

}  // namespace
}  // namespace ts::testing
