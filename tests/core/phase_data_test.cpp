// The session schedule against the phases real exchange feeds carry (../shared/data): the
// SZSE vendor TradingPhaseCode of five stocks on 2022-06-01 and the SSE InstruStatus of 600519
// on 2023-02-01. Integration: needs the data (fails, not skips, without it).
#include <gtest/gtest.h>
#include <zlib.h>

#include <map>
#include <string>
#include <vector>

#include "core/market_calendars.h"
#include "test_data.h"

namespace ts {
namespace {

// Rows of a gzip CSV as maps column → value (header from the first line).
std::vector<std::map<std::string, std::string>> read_gz_csv(const std::string& path,
                                                            const std::vector<std::string>& cols) {
  std::vector<std::map<std::string, std::string>> rows;
  gzFile f = gzopen(path.c_str(), "rb");
  EXPECT_NE(f, nullptr) << path;
  if (f == nullptr) return rows;
  std::vector<int> index;
  char buf[1 << 16];
  bool header = true;
  while (gzgets(f, buf, sizeof buf) != nullptr) {
    std::string line(buf);
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
    std::vector<std::string> fields;
    size_t start = 0;
    for (size_t comma; (comma = line.find(',', start)) != std::string::npos; start = comma + 1) {
      fields.push_back(line.substr(start, comma - start));
    }
    fields.push_back(line.substr(start));
    if (header) {
      for (const auto& c : cols) {
        int i = 0;
        while (i < int(fields.size()) && fields[size_t(i)] != c) ++i;
        EXPECT_LT(i, int(fields.size())) << c << " not in " << path;
        index.push_back(i);
      }
      header = false;
      continue;
    }
    std::map<std::string, std::string> row;
    for (size_t k = 0; k < cols.size(); ++k) {
      if (index[k] < int(fields.size())) row[cols[k]] = fields[size_t(index[k])];
    }
    rows.push_back(std::move(row));
  }
  gzclose(f);
  return rows;
}

// UTC ns of a Shanghai wall time "HH:MM:SS.mmm" on `date`.
int64_t shanghai_ns(const CivilDate& date, const std::string& hms) {
  const int h = std::stoi(hms.substr(0, 2)), m = std::stoi(hms.substr(3, 2));
  const double s = std::stod(hms.substr(6));
  const int64_t local_ms = (days_from_civil(date) * kSecondsPerDay + h * 3600 + m * 60) * 1000 +
                           int64_t(s * 1000 + 0.5);
  return (local_ms - 8 * 3600 * 1000) * 1'000'000;
}

class PhaseData : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(cals_.load_dir(std::string(TICKSENTRY_SOURCE_DIR) + "/config/calendars", errors_));
  }
  InstrumentSession session(const std::string& symbol) {
    return cals_.session_for(instrument_from_symbol(symbol).value()).value();
  }
  MarketCalendars cals_;
  InputErrors errors_;
};

// How a feed phase compares with the schedule at t: the same (the vendors' opening call covers
// both of our call sub-phases), or the phase just before a boundary t falls exactly on (a
// snapshot stamped 09:25:00.000 still shows the call), or neither.
enum class Match { kSame, kBoundary, kNo };
Match match(const InstrumentSession& s, int64_t t, TradingPhase feed) {
  auto same = [&](TradingPhase p) {
    return p == feed || (feed == TradingPhase::kOpeningCall &&
                         p == TradingPhase::kOpeningCallNoCancel);
  };
  if (same(s.phase_at(t))) return Match::kSame;
  if (s.phase_at(t) != s.phase_at(t - 1) && same(s.phase_at(t - 1))) return Match::kBoundary;
  return Match::kNo;
}
bool matches(const InstrumentSession& s, int64_t t, TradingPhase feed) {
  return match(s, t, feed) != Match::kNo;
}

TEST_F(PhaseData, SzseVendorPhasesFollowTheSchedule) {
  TS_REQUIRE_DATA(testing::data_dir() / "szse-l2" / "5stocks-20220601");
  const auto rows = read_gz_csv((testing::data_dir() / "szse-l2" / "5stocks-20220601" /
                                 "tick.csv.gz").string(),
                                {"MDTime", "SecurityID", "TradingPhaseCode"});
  ASSERT_GT(rows.size(), 20000u);
  // The vendor's codes: 1 opening call (it has no 09:20 sub-phase), 2 the 09:25 pause,
  // 3 continuous, 4 lunch break, 5 closing call, 6 closed.
  const std::map<std::string, TradingPhase> code = {
      {"1", TradingPhase::kOpeningCall}, {"2", TradingPhase::kOpeningPause},
      {"3", TradingPhase::kContinuous},  {"4", TradingPhase::kLunchBreak},
      {"5", TradingPhase::kClosingCall}, {"6", TradingPhase::kClosed}};
  size_t on_boundary = 0;
  for (const auto& r : rows) {
    const InstrumentSession s = session(r.at("SecurityID"));
    const int64_t t = shanghai_ns({2022, 6, 1}, r.at("MDTime"));
    ASSERT_TRUE(code.count(r.at("TradingPhaseCode"))) << r.at("TradingPhaseCode");
    const TradingPhase feed = code.at(r.at("TradingPhaseCode"));
    const Match m = match(s, t, feed);
    EXPECT_NE(m, Match::kNo) << r.at("SecurityID") << " " << r.at("MDTime") << " feed "
                             << trading_phase_name(feed) << " schedule "
                             << trading_phase_name(s.phase_at(t));
    on_boundary += m == Match::kBoundary;
  }
  EXPECT_EQ(on_boundary, 7u);  // rows stamped exactly 09:25:00, 11:30:00 or 14:57:00
}

TEST_F(PhaseData, SseInstruStatusIsCoarserThanTheSchedule) {
  TS_REQUIRE_DATA(testing::sse_day_dir() / "snapshot.csv.gz");
  const auto rows = read_gz_csv((testing::sse_day_dir() / "snapshot.csv.gz").string(),
                                {"UpdateTime", "InstruStatus"});
  ASSERT_GT(rows.size(), 5000u);
  const InstrumentSession s = session("600519.SH");
  size_t trade_in_pause = 0, trade_at_lunch = 0, early_call = 0;
  for (const auto& r : rows) {
    const int64_t t = shanghai_ns({2023, 2, 1}, r.at("UpdateTime"));
    const TradingPhase p = s.phase_at(t);
    const std::string& st = r.at("InstruStatus");
    const std::string where = r.at("UpdateTime") + " " + st + " schedule " + trading_phase_name(p);
    if (st == "START") {
      EXPECT_TRUE(p == TradingPhase::kClosed || p == TradingPhase::kPreOpen) << where;
    } else if (st == "OCALL") {
      if (p == TradingPhase::kPreOpen) {  // the feed's call starts a minute early here
        EXPECT_GE(t, shanghai_ns({2023, 2, 1}, "09:14:00.000")) << where;
        ++early_call;
      } else {
        EXPECT_TRUE(matches(s, t, TradingPhase::kOpeningCall)) << where;
      }
    } else if (st == "TRADE") {
      // TRADE covers the 09:25 pause and the lunch break: the feed alone cannot tell them.
      EXPECT_TRUE(p == TradingPhase::kOpeningPause || p == TradingPhase::kContinuous ||
                  p == TradingPhase::kLunchBreak) << where;
      trade_in_pause += p == TradingPhase::kOpeningPause;
      trade_at_lunch += p == TradingPhase::kLunchBreak;
    } else if (st == "CCALL") {
      EXPECT_TRUE(matches(s, t, TradingPhase::kClosingCall)) << where;
    } else {
      EXPECT_TRUE(st == "CLOSE" || st == "ENDTR") << where;
      EXPECT_EQ(p, TradingPhase::kClosed) << where;
    }
  }
  EXPECT_GT(trade_in_pause, 0u);   // 09:25:01-09:29:59: matched, not yet trading
  EXPECT_GT(trade_at_lunch, 50u);  // 11:30-13:00
  EXPECT_LE(early_call, 5u);
}

}  // namespace
}  // namespace ts
