// Stdout line format and JSONL round trip; sink errors are Status values.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "audit/alert_format.h"
#include "audit/audit_test_util.h"
#include "audit/jsonl_sink.h"
#include "audit/stdout_sink.h"
#include "test_data.h"

namespace ts::testing {
namespace {

std::string read_file(std::FILE* f) {
  std::rewind(f);
  std::string s;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) s.append(buf, n);
  return s;
}

TEST(StdoutSink, OneReadableLinePerAlert) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  Alert a = make_alert(sym, 0);
  ASSERT_EQ(a.type, AlertType::kRapidRise);
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  StdoutSink sink(f);
  ASSERT_TRUE(sink.write(a, symbols).is_ok());
  a.type = AlertType::kLargeBuy;
  a.severity = Severity::kCritical;
  a.value_count = 0;
  a.add_value("notional", 6'000'000, 1'000'000, Cmp::kGe);
  a.add_value("qty", 3300, 0, Cmp::kInfo);
  a.t = StageTimes{};
  ASSERT_TRUE(sink.write(a, symbols).is_ok());
  ASSERT_TRUE(sink.flush().is_ok());
  EXPECT_EQ(read_file(f),
            "09:31:07.120 600519.SH rapid_rise warning ret_60s_bps=312.5 (>=200) ret_10s_bps=20 (>0) "
            "price=1850.12 latency=23us\n"
            "09:31:07.120 600519.SH large_buy critical notional=6000000.00 (>=1000000.00) qty=3300 price=1850.12\n");
  std::fclose(f);
}

TEST(AlertFormat, ExchangeLocalTimeAndPrices) {
  // New York: EDT in June (UTC-4), EST in January (UTC-5).
  EXPECT_EQ(format_exchange_time(midnight_ns(2012, 6, 21, 0) + (13 * 3600 + 30 * 60) * kNsPerSec, Market::kUs),
            "09:30:00.000");
  EXPECT_EQ(format_exchange_time(midnight_ns(2013, 1, 2, 0) + (14 * 3600 + 30 * 60) * kNsPerSec + 5 * kNsPerMs,
                                 Market::kUs),
            "09:30:00.005");
  EXPECT_EQ(format_exchange_time(midnight_ns(2023, 2, 1, 8) + 14 * 3600 * kNsPerSec, Market::kShenzhen), "14:00:00.000");
  EXPECT_EQ(format_price(185012, 0.01), "1850.12");
  EXPECT_EQ(format_price(12345, 0.001), "12.345");
  EXPECT_EQ(format_number(0.82), "0.82");
  EXPECT_EQ(format_number(1234567.25), "1234567.2");
}

TEST(StdoutSink, WriteToAnUnwritableFileIsAnError) {
  std::FILE* f = std::fopen("/dev/null", "r");
  ASSERT_NE(f, nullptr);
  SymbolTable symbols;
  StdoutSink sink(f);
  Status st = sink.write(make_alert(symbols.intern("600519.SH"), 1), symbols);
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("stdout sink"), std::string::npos) << st.message();
  std::fclose(f);
}

TEST(JsonlSink, EveryFieldParsesBack) {
  SymbolTable symbols;
  const SymbolId sym = symbols.intern("600519.SH");
  const auto path = scratch_dir("jsonl_every_field") / "alerts.jsonl";
  Alert a = make_alert(sym, 7);
  a.t.emit_ns = 1'030'000;
  a.features[kVolRatio] = std::numeric_limits<float>::quiet_NaN();
  {
    JsonlSink sink(path.string());
    ASSERT_TRUE(sink.write(a, symbols).is_ok());
    ASSERT_TRUE(sink.write(make_alert(sym, 8), symbols).is_ok());
    ASSERT_TRUE(sink.close().is_ok());
  }
  std::ifstream in(path);
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["id"].get<uint64_t>(), 7u);
  EXPECT_EQ(j["symbol"], "600519.SH");
  EXPECT_EQ(j["symbol_id"].get<uint32_t>(), sym);
  EXPECT_EQ(j["type"], alert_type_name(a.type));
  EXPECT_EQ(j["severity"], "warning");
  EXPECT_EQ(j["exch_ts_ns"], std::to_string(a.exch_ts_ns)) << "a string: exact in jq and JavaScript";
  EXPECT_EQ(j["event_seq"].get<uint64_t>(), 1007u);
  EXPECT_EQ(j["price_ticks"].get<int64_t>(), 185012);
  EXPECT_NEAR(j["price"].get<double>(), 1850.12, 1e-9);
  ASSERT_EQ(j["values"].size(), 2u);
  EXPECT_EQ(j["values"][0]["name"], "ret_60s_bps");
  EXPECT_DOUBLE_EQ(j["values"][0]["value"].get<double>(), 312.5);
  EXPECT_DOUBLE_EQ(j["values"][0]["threshold"].get<double>(), 200);
  EXPECT_EQ(j["values"][0]["cmp"], ">=");
  EXPECT_EQ(j["values"][1]["cmp"], ">");
  EXPECT_EQ(j["stage_ns"]["recv"], std::to_string(1'000'000));
  EXPECT_EQ(j["stage_ns"]["book"], std::to_string(1'002'000));
  EXPECT_EQ(j["stage_ns"]["features"], std::to_string(1'005'000));
  EXPECT_EQ(j["stage_ns"]["detect"], std::to_string(1'023'000));
  EXPECT_EQ(j["stage_ns"]["emit"], std::to_string(1'030'000));
  EXPECT_EQ(j["latency_ns"]["book"].get<int64_t>(), 2'000);
  EXPECT_EQ(j["latency_ns"]["features"].get<int64_t>(), 3'000);
  EXPECT_EQ(j["latency_ns"]["detect"].get<int64_t>(), 18'000);
  EXPECT_EQ(j["latency_ns"]["emit"].get<int64_t>(), 7'000);
  EXPECT_EQ(j["latency_ns"]["total"].get<int64_t>(), 23'000);
  ASSERT_EQ(j["features"].size(), size_t(kFeatureCount));
  for (int i = 0; i < kFeatureCount; ++i) {
    if (i == kVolRatio) {
      EXPECT_TRUE(j["features"][feature_name(i)].is_null()) << "NaN is written as null";
    } else {
      EXPECT_EQ(j["features"][feature_name(i)].get<float>(), a.features[i]) << feature_name(i);
    }
  }
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(nlohmann::json::parse(line)["id"].get<uint64_t>(), 8u);
  EXPECT_FALSE(std::getline(in, line)) << "one line per alert";
}

TEST(JsonlSink, UnwritablePathIsAnIoErrorNamingThePath) {
  SymbolTable symbols;
  JsonlSink sink("/nonexistent-dir/alerts.jsonl");
  Status st = sink.write(make_alert(symbols.intern("600519.SH"), 1), symbols);
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), StatusCode::kIoError);
  EXPECT_NE(st.message().find("/nonexistent-dir/alerts.jsonl"), std::string::npos) << st.message();
}

}  // namespace
}  // namespace ts::testing
