// `ticksentry audit alerts` and `ticksentry explain` over the audit store a real replay wrote,
// checked against the run's own JSONL file; exchange-time arguments.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/time_arg.h"
#include "audit/audit_store.h"
#include "features/feature_set.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts::testing {
namespace {

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(TimeArg, NanosecondsOrRfc3339WithAZone) {
  EXPECT_EQ(parse_exchange_time("1340285400012000123").value(), 1340285400012000123);
  // 09:30 in New York on 2012-06-21 (EDT, UTC-4) is 13:30 UTC.
  EXPECT_EQ(parse_exchange_time("2012-06-21T09:30:00-04:00").value(), 1340285400LL * 1'000'000'000);
  EXPECT_EQ(parse_exchange_time("2012-06-21T13:30:00Z").value(), 1340285400LL * 1'000'000'000);
  EXPECT_EQ(parse_exchange_time("2023-02-01 10:50:00.5+08:00").value(), 1675219800LL * 1'000'000'000 + 500'000'000);
  for (const char* bad : {"", "2012-06-21T09:30:00", "2012-06-21", "yesterday", "2012-13-01T00:00Z",
                          "2012-06-21T09:30:00.1234567891Z", "2012-06-21T09:30Zjunk"}) {
    auto r = parse_exchange_time(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("with Z or +HH:MM"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(format_utc_ns(1340285400012000123), "2012-06-21T13:30:00.012000123Z");
  EXPECT_EQ(format_utc_ns(1340285400LL * 1'000'000'000), "2012-06-21T13:30:00Z");
}

// Times past what int64 nanoseconds since the epoch hold (1677-09-21 .. 2262-04-11) are refused
// with the forms, never an overflow or an exception ([[silences.declared]] starts, --since; found
// by config_fuzz: "4986-..." overflowed, 19 digits over INT64_MAX threw std::out_of_range).
TEST(TimeArg, TimesOutsideTheNanosecondRangeAreRefused) {
  for (const char* bad : {"9999999999999999999", "-9999999999999999999", "4986-06-21T09:30:00Z",
                          "9999-12-31T23:59:59Z", "0000-01-01T00:00Z", "1677-12-31T00:00Z", "2262-01-01T00:00Z"}) {
    auto r = parse_exchange_time(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("out of range"), std::string::npos) << r.status().message();
    EXPECT_FALSE(parse_time_bound(bad).is_ok()) << bad;
  }
  EXPECT_EQ(parse_exchange_time("9223372036854775807").value(), INT64_MAX);
  EXPECT_EQ(parse_exchange_time("-9223372036854775808").value(), INT64_MIN);
  EXPECT_EQ(parse_exchange_time("2261-12-31T00:00:00Z").value(), 9'214'560'000LL * 1'000'000'000);
  EXPECT_EQ(parse_exchange_time("1678-01-01T00:00:00Z").value(), -9'214'560'000LL * 1'000'000'000);
}

// --from / --to: a time of day (or a date and time) without zone is read in the symbol's zone on
// the day of its first event; a zone or nanoseconds fix it outright.
TEST(TimeArg, BoundsReadInTheSymbolsExchangeZone) {
  const int64_t s = 1'000'000'000;
  const int64_t open_ny = 1340285400LL * s;  // 2012-06-21 09:30 EDT (UTC-4)
  auto new_york = [](int64_t unix_s) { return unix_s < 1352008800 ? -4 * 3600 : -5 * 3600; };  // EDT until 2012-11-04
  auto at = [&](const char* text, int64_t first_ns, auto offset) {
    auto b = parse_time_bound(text);
    EXPECT_TRUE(b.is_ok()) << text << ": " << b.status().to_string();
    return b.is_ok() ? resolve_time_bound(b.value(), first_ns, offset) : -1;
  };
  EXPECT_EQ(at("10:50", open_ny, new_york), open_ny + (80 * 60) * s);
  EXPECT_EQ(at("10:50:30.5", open_ny, new_york), open_ny + (80 * 60 + 30) * s + 500'000'000);
  EXPECT_EQ(at("2012-06-21T10:50", open_ny, new_york), open_ny + 80 * 60 * s);
  EXPECT_EQ(at("2012-06-22 09:30", open_ny, new_york), open_ny + 86400 * s) << "another day named";
  EXPECT_EQ(at("10:50-04:00", open_ny, new_york), open_ny + 80 * 60 * s);
  EXPECT_EQ(at("14:50Z", open_ny, new_york), open_ny + 80 * 60 * s);
  EXPECT_EQ(at("2012-06-21T14:50Z", 0, new_york), open_ny + 80 * 60 * s) << "absolute: the first event does not matter";
  EXPECT_EQ(at("1340285400000000000", 0, new_york), open_ny);
  // Shanghai: the first event at 09:15 local (01:15 UTC) on 2023-02-01; 10:50 is that day's.
  auto shanghai = [](int64_t) { return 8 * 3600; };
  const int64_t sse_first = 1675214100LL * s;
  EXPECT_EQ(at("10:50", sse_first, shanghai), 1675219800LL * s);
  // An event just after local midnight is on the new local day (UTC still on the day before).
  EXPECT_EQ(at("10:50", 1675180800LL * s /* 00:00 local 02-01 */, shanghai), 1675219800LL * s);
  // A date on the other side of a DST change gets that date's offset.
  EXPECT_EQ(at("2012-11-05T09:30", open_ny, new_york), (1340285400LL + 137 * 86400 + 3600) * s);
  for (const char* bad : {"", "1:2", "10:5", "25:00", "10:50 junk", "2012-06-21", "10:50+25:00", "yesterday"}) {
    auto r = parse_time_bound(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_NE(r.status().message().find("in the symbol's exchange time"), std::string::npos) << r.status().message();
  }
  EXPECT_EQ(format_local_ns(open_ny, -4 * 3600), "2012-06-21T09:30:00-04:00");
  EXPECT_EQ(format_local_ns(1675219800LL * s + 5, 8 * 3600), "2023-02-01T10:50:00.000000005+08:00");
}

TEST(AuditCli, AlertsAndExplainAnswerFromTheStoreTheRunWrote) {
  const auto goog = lobster_file("GOOG", "message", 10);
  TS_REQUIRE_DATA(goog);
  const auto dir = scratch_dir("audit_cli");
  // The absolute thresholds: GOOG's 77 alerts of several types (6 at the relative defaults).
  std::ofstream(dir / "abs.toml") << "[rules]\nrelative = false\n";
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--no-stdout", "--http", "off", "--jsonl",
                    "alerts.jsonl", "--audit-db", "audit.db", "--config", "abs.toml"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto written = json_lines(slurp(dir / "alerts.jsonl"));
  ASSERT_GE(written.size(), 20u);

  // Every alert, newest first, in the JSONL schema: the same objects less the model block.
  o = run_bin({"audit", "alerts", "--audit-db", "audit.db", "--json", "--limit", "100000"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto listed = json_lines(o.out);
  ASSERT_EQ(listed.size(), written.size());
  std::map<uint64_t, nlohmann::json> by_id;
  for (const auto& j : written) by_id[j["id"].get<uint64_t>()] = j;
  for (size_t i = 0; i < listed.size(); ++i) {
    const auto& j = listed[i];
    ASSERT_TRUE(by_id.count(j["id"].get<uint64_t>())) << j.dump();
    auto w = by_id[j["id"].get<uint64_t>()];
    // The stores keep numbers, not the decimal text the live sinks add (values[].text).
    for (auto& v : w["values"]) v.erase("text");
    for (const char* key : {"symbol", "type", "severity", "exch_ts_ns", "event_seq", "price_ticks", "values",
                            "stage_ns", "features"}) {
      EXPECT_EQ(j[key], w[key]) << key << " of " << j["id"];
    }
    if (i > 0) {
      EXPECT_GE(std::stoll(listed[i - 1]["exch_ts_ns"].get<std::string>()), std::stoll(j["exch_ts_ns"].get<std::string>()))
          << "newest first";
    }
  }

  // Filters: a type, and a window of exchange time given with its zone.
  const std::string type = written.front()["type"];
  o = run_bin({"audit", "alerts", "--audit-db", "audit.db", "--json", "--type", type, "--limit", "100000"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  size_t of_type = 0;
  for (const auto& j : written) of_type += j["type"] == type;
  EXPECT_EQ(json_lines(o.out).size(), of_type);
  for (const auto& j : json_lines(o.out)) EXPECT_EQ(j["type"], type);
  // 10:00 to 11:00 in New York (EDT).
  const int64_t from = 1340287200LL * 1'000'000'000, to = 1340290800LL * 1'000'000'000;
  o = run_bin({"audit", "alerts", "--audit-db", "audit.db", "--json", "--since", "2012-06-21T10:00:00-04:00", "--until",
               "2012-06-21T11:00:00-04:00", "--limit", "100000"},
              dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  size_t in_window = 0;
  for (const auto& j : written) {
    const int64_t t = std::stoll(j["exch_ts_ns"].get<std::string>());
    in_window += t >= from && t < to;
  }
  EXPECT_GT(in_window, 0u);
  EXPECT_EQ(json_lines(o.out).size(), in_window);
  o = run_bin({"audit", "alerts", "--audit-db", "audit.db", "--limit", "3"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("2012-06-21T"), std::string::npos) << "the date is shown: " << o.out;
  // In New York time with its zone (EDT in June), never UTC: GOOG trades 09:30-16:00 -04:00.
  EXPECT_NE(o.out.find("-04:00  GOOG"), std::string::npos) << "exchange zone: " << o.out;
  EXPECT_EQ(o.out.find("Z  GOOG"), std::string::npos) << "UTC instead of the exchange zone: " << o.out;
  EXPECT_NE(o.out.find("(3 alerts, newest first, from audit store audit.db)"), std::string::npos) << o.out;
  o = run_bin({"audit", "alerts", "--audit-db", "audit.db", "--since", "10:00"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("--since"), std::string::npos) << o.err;
  o = run_bin({"audit", "alerts", "--audit-db", "audit.db", "--type", "rapid_rsie"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  o = run_bin({"audit", "alerts", "--audit-db", "nothing.db"}, dir);
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_NE(o.err.find("nothing.db: no such audit database"), std::string::npos) << o.err;

  // explain: what fired against its thresholds, every feature, the stages.
  const auto& first = written.front();
  const std::string id = std::to_string(first["id"].get<uint64_t>());
  o = run_bin({"explain", id, "--audit-db", "audit.db"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("alert " + id + ": " + first["symbol"].get<std::string>() + " " + first["type"].get<std::string>()),
            std::string::npos)
      << o.out;
  EXPECT_NE(o.out.find(first["exch_ts_ns"].get<std::string>() + " ns"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("-04:00 (" + first["exch_ts_ns"].get<std::string>() + " ns)"), std::string::npos)
      << "explain prints New York time with its zone: " << o.out;
  for (const auto& v : first["values"]) EXPECT_NE(o.out.find(v["name"].get<std::string>()), std::string::npos) << o.out;
  for (int i = 0; i < kFeatureCount; ++i) EXPECT_NE(o.out.find(feature_name(i)), std::string::npos) << feature_name(i);
  EXPECT_NE(o.out.find("stages (us)     book "), std::string::npos) << o.out;
  o = run_bin({"explain", id, "--audit-db", "audit.db", "--json"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["features"], first["features"]);
  EXPECT_EQ(j["values"], first["values"]);
  o = run_bin({"explain", "12345", "--audit-db", "audit.db"}, dir);
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("no alert 12345 in audit store audit.db"), std::string::npos) << o.err;
}

// LOBSTER's orderbook file row k (1-based) is the book after message k: "ask price 1, ask size 1,
// bid price 1, bid size 1, ..." with prices in 1/10000 dollars. The rows of `wanted` lines.
std::map<uint64_t, std::vector<int64_t>> lobster_book_rows(const std::filesystem::path& gz, const std::set<uint64_t>& wanted) {
  std::map<uint64_t, std::vector<int64_t>> out;
  FILE* f = popen(("zcat '" + gz.string() + "'").c_str(), "r");
  if (!f) return out;
  char buf[4096];
  uint64_t line = 0;
  while (fgets(buf, sizeof buf, f)) {
    if (!wanted.count(++line)) continue;
    std::vector<int64_t> v;
    std::istringstream in(buf);
    for (std::string cell; std::getline(in, cell, ',');) v.push_back(std::stoll(cell));
    out[line] = std::move(v);
  }
  pclose(f);
  return out;
}

// `ticksentry explain` shows the book around the alert: on a real LOBSTER replay, the stored top
// 5 levels of each side of every alert are the vendor's order-book row of the triggering message,
// with prices and sizes as exact decimals.
TEST(AuditCli, ExplainShowsTheBookAsTheVendorRecordedIt) {
  const auto goog = lobster_file("GOOG", "message", 10);
  const auto book = lobster_file("GOOG", "orderbook", 10);
  TS_REQUIRE_DATA(goog);
  TS_REQUIRE_DATA(book);
  const auto dir = scratch_dir("audit_cli_book");
  std::ofstream(dir / "abs.toml") << "[rules]\nrelative = false\n";
  auto o = run_bin({"replay", "--format", "lobster", goog.string(), "--no-stdout", "--http", "off", "--jsonl", "",
                    "--audit-db", "audit.db", "--config", "abs.toml"},
                   dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  auto store = AuditStore::open((dir / "audit.db").string());
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  auto rows = store.value()->load_all();
  ASSERT_TRUE(rows.is_ok()) << rows.status().to_string();
  ASSERT_GE(rows.value().size(), 20u);
  std::set<uint64_t> seqs;
  for (const auto& r : rows.value()) {
    if (r.event_seq > 0) seqs.insert(r.event_seq);  // 0: the opening book, made from the first row
  }
  const auto vendor = lobster_book_rows(book, seqs);
  ASSERT_EQ(vendor.size(), seqs.size());
  auto text = [](int64_t lobster_price) {  // 1/10000 dollars → cents, GOOG's tick
    char b[32];
    std::snprintf(b, sizeof b, "%lld.%02lld", (long long)(lobster_price / 10000), (long long)(lobster_price / 100 % 100));
    return std::string(b);
  };
  int levels_checked = 0, without_row = 0;
  const AlertRecord* first = nullptr;
  for (const auto& r : rows.value()) {
    ASSERT_TRUE(r.book.present) << r.alert_id;
    if (!vendor.count(r.event_seq)) {
      ++without_row;
      continue;
    }
    if (!first) first = &r;
    const auto& v = vendor.at(r.event_seq);
    ASSERT_EQ(v.size(), 40u);
    for (int side = 0; side < 2; ++side) {  // 0 asks, 1 bids
      const auto& got = side == 0 ? r.book.asks : r.book.bids;
      size_t n = 0;
      for (int i = 0; i < 5; ++i) {
        const int64_t price = v[size_t(4 * i + 2 * side)], size = v[size_t(4 * i + 2 * side + 1)];
        if (size <= 0) break;  // an empty level (LOBSTER's dummy prices)
        ASSERT_LT(size_t(i), got.size()) << "alert " << r.alert_id << " seq " << r.event_seq << " side " << side;
        EXPECT_EQ(got[size_t(i)].price_text, text(price)) << "alert " << r.alert_id << " level " << i;
        EXPECT_EQ(got[size_t(i)].price_ticks, price / 100);
        EXPECT_EQ(got[size_t(i)].size, size);
        EXPECT_EQ(got[size_t(i)].size_text, std::to_string(size));
        ++n;
        ++levels_checked;
      }
      EXPECT_EQ(got.size(), n) << "alert " << r.alert_id << ": no more levels than the vendor's";
    }
  }
  EXPECT_LE(without_row, 1) << "only an alert on the opening book has no vendor row of its own";
  EXPECT_GE(levels_checked, int(rows.value().size()) * 8) << "most books have 5 levels a side";

  // explain prints it; --json carries it in the /api/alerts/{id} form.
  ASSERT_NE(first, nullptr);
  const std::string id = std::to_string(first->alert_id);
  o = run_bin({"explain", id, "--audit-db", "audit.db"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("book when it was raised (best first)"), std::string::npos) << o.out;
  const auto& v = vendor.at(first->event_seq);
  char line[160];
  std::snprintf(line, sizeof line, "    %14s %14s | %-14s %-14s", std::to_string(v[3]).c_str(), text(v[2]).c_str(),
                text(v[0]).c_str(), std::to_string(v[1]).c_str());
  EXPECT_NE(o.out.find(line), std::string::npos) << "best bid and ask side by side: '" << line << "' in\n" << o.out;
  o = run_bin({"explain", id, "--audit-db", "audit.db", "--json"}, dir);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = nlohmann::json::parse(o.out);
  ASSERT_TRUE(j["book"].is_object()) << o.out;
  EXPECT_EQ(j["book"]["asks"][0]["price_text"], text(v[0]));
  EXPECT_EQ(j["book"]["bids"][0]["size_text"], std::to_string(v[3]));
}

}  // namespace
}  // namespace ts::testing
