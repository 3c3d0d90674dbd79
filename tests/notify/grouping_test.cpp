// group_by / group_wait / group_interval / repeat_interval and resolved notifications.
#include <gtest/gtest.h>

#include "notify/grouper.h"

namespace ts::notify {
namespace {

constexpr int64_t kMs = 1'000'000;

NotifyAlert alert(const std::string& symbol, AlertType t, uint64_t id) {
  NotifyAlert a;
  a.alert_id = id;
  a.type = t;
  a.labels = Labels{{"symbol", symbol}, {"type", alert_type_name(t)}, {"market", "SH"}};
  a.summary = symbol + " " + alert_type_name(t);
  return a;
}

Route route() {
  Route r;
  r.id = "root";
  r.receiver = "desk";
  r.group_by = {"market", "type"};
  r.group_wait_ms = 100;
  r.group_interval_ms = 500;
  r.repeat_interval_ms = 5000;
  return r;
}

// The alerts inside one notification read in exchange-time order (not in the order of their
// fingerprints: "600036.SH" sorts before "600519.SH" whatever happened first).
TEST(NotifyGrouper, AlertsOfOneNotificationAreInTimeOrder) {
  const Route r = route();
  Grouper g;
  std::vector<Notification> out;
  const char* symbols[] = {"601318.SH", "600519.SH", "600036.SH", "688981.SH", "600000.SH"};
  for (int i = 0; i < 5; ++i) {
    NotifyAlert a = alert(symbols[i], AlertType::kRapidRise, uint64_t(10 + i));
    a.exch_ts_ns = 1'675'213'867'000'000'000 + int64_t(i) * kMs;
    g.add(r, a, int64_t(i) * kMs);
  }
  g.flush_due(100 * kMs, 0, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].alerts.size(), 5u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(out[0].alerts[size_t(i)].labels.get("symbol"), symbols[i]) << i;
}

TEST(NotifyGrouper, WaitThenIntervalOneMessagePerGroup) {
  const Route r = route();
  Grouper g;
  std::vector<Notification> out;
  g.add(r, alert("600519.SH", AlertType::kRapidRise, 1), 0);
  g.add(r, alert("600036.SH", AlertType::kRapidRise, 2), 50 * kMs);
  g.add(r, alert("600036.SH", AlertType::kLargeBuy, 3), 60 * kMs);   // another group
  g.flush_due(99 * kMs, 0, out);
  EXPECT_TRUE(out.empty());                                         // group_wait not over
  g.flush_due(100 * kMs, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].alerts.size(), 2u);
  EXPECT_EQ(out[0].group_labels.to_string(), "market=SH,type=rapid_rise");
  EXPECT_EQ(out[0].receiver, "desk");
  out.clear();
  g.flush_due(160 * kMs, 0, out);
  ASSERT_EQ(out.size(), 1u);                                        // large_buy group's own wait
  out.clear();
  // A new alert in the first group waits for group_interval after its last message.
  g.add(r, alert("601318.SH", AlertType::kRapidRise, 4), 200 * kMs);
  g.flush_due(599 * kMs, 0, out);
  EXPECT_TRUE(out.empty());
  g.flush_due(600 * kMs, 0, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_EQ(out[0].alerts.size(), 1u);                              // events are sent once
  EXPECT_EQ(out[0].alerts[0].alert_id, 4u);
  out.clear();
  // Quiet groups are forgotten after group_interval.
  g.flush_due(10'000 * kMs, 0, out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(g.group_count(), 0u);
}

TEST(NotifyGrouper, ZeroWaitSendsAtOnce) {
  Route r = route();
  r.group_wait_ms = 0;
  Grouper g;
  std::vector<Notification> out;
  g.add(r, alert("600519.SH", AlertType::kRapidRise, 1), 7 * kMs);
  EXPECT_EQ(g.next_due_ns(), 7 * kMs);
  g.flush_due(7 * kMs, 0, out);
  EXPECT_EQ(out.size(), 1u);
}

TEST(NotifyGrouper, SealedRepeatsWhileFiringThenResolves) {
  const Route r = route();
  Grouper g;
  std::vector<Notification> out;
  NotifyAlert sealed = alert("600519.SH", AlertType::kLimitUpSealed, 1);
  sealed.alert_unix_ns = 555;
  g.add(r, sealed, 0);
  g.flush_due(100 * kMs, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].resolved);
  EXPECT_EQ(out[0].first_alert_unix_ns(), 555);
  out.clear();
  g.flush_due(5099 * kMs, 0, out);
  EXPECT_TRUE(out.empty());
  g.flush_due(5100 * kMs, 777, out);                                // repeat_interval
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].alerts[0].alert_id, 1u);
  EXPECT_EQ(out[0].first_alert_unix_ns(), 777);  // a repeat's latency counts from when it was due
  out.clear();
  EXPECT_EQ(g.resolve(AlertType::kLimitUpSealed, "600519.SH", 6000 * kMs, 123), 1);
  g.flush_due(6000 * kMs, 0, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].resolved);
  EXPECT_STREQ(out[0].status(), "resolved");
  EXPECT_EQ(out[0].alerts[0].ends_unix_ns, 123);
  out.clear();
  g.flush_due(60'000 * kMs, 0, out);
  EXPECT_TRUE(out.empty());                                         // nothing fires any more
}

TEST(NotifyGrouper, FlushAllAtShutdownCutsTimersShort) {
  Route r = route();
  r.group_wait_ms = 60'000;
  Grouper g;
  std::vector<Notification> out;
  g.add(r, alert("600519.SH", AlertType::kRapidRise, 1), 0);
  g.flush_all(0, out);
  EXPECT_EQ(out.size(), 1u);
}

}  // namespace
}  // namespace ts::notify
