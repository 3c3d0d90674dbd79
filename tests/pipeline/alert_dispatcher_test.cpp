// The dispatcher: many producers, no loss on stop, block on full rings, failing sinks.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "audit/audit_store.h"
#include "audit/audit_test_util.h"
#include "audit/jsonl_sink.h"
#include "pipeline/alert_dispatcher.h"
#include "test_data.h"

namespace ts::testing {
namespace {

// Records every alert id it receives; optionally slow.
class RecordingSink : public AlertSink {
 public:
  explicit RecordingSink(int delay_us = 0) : delay_us_(delay_us) {}
  Status write(const Alert& a, const SymbolTable&) override {
    if (delay_us_) std::this_thread::sleep_for(std::chrono::microseconds(delay_us_));
    std::lock_guard lock(mu_);
    ids.push_back(a.id);
    emit_ns.push_back(a.t.emit_ns);
    return Status::ok();
  }
  Status flush() override { return Status::ok(); }
  Status close() override {
    closed = true;
    return Status::ok();
  }
  std::mutex mu_;
  std::vector<uint64_t> ids;
  std::vector<int64_t> emit_ns;
  std::atomic<bool> closed{false};

 private:
  int delay_us_;
};

class ThrowingSink : public AlertSink {
 public:
  Status write(const Alert&, const SymbolTable&) override { throw std::runtime_error("boom"); }
  Status flush() override { return Status::ok(); }
};

size_t count_lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) ++n;
  return n;
}

struct Fixture {
  SymbolTable symbols;
  SymbolId sym = symbols.intern("600519.SH");
};

TEST(AlertDispatcher, TwoProducersEveryAlertReachesSqliteWithItsFeatureRow) {
  Fixture f;
  const auto dir = scratch_dir("dispatcher_two_producers");
  const std::string db = (dir / "audit.db").string();
  constexpr uint64_t kPerProducer = 5000;
  {
    auto store = AuditStore::open(db);
    ASSERT_TRUE(store.is_ok());
    auto rec = std::make_shared<RecordingSink>();
    AlertDispatcher d(f.symbols, 2, DispatcherOptions{.ring_capacity = 256});
    d.add_sink("sqlite", std::shared_ptr<AuditStore>(std::move(store.value())));
    d.add_sink("jsonl", std::make_shared<JsonlSink>((dir / "alerts.jsonl").string()));
    d.add_sink("rec", rec);
    d.start();
    std::thread producers[2];
    for (int p = 0; p < 2; ++p) {
      producers[p] = std::thread([&, p] {
        for (uint64_t k = 0; k < kPerProducer; ++k) ASSERT_TRUE(d.try_publish(p, make_alert(f.sym, uint64_t(p) * 1'000'000 + k)));
      });
    }
    for (auto& t : producers) t.join();
    d.stop();
    EXPECT_EQ(d.published(), 2 * kPerProducer);
    EXPECT_EQ(d.written(), 2 * kPerProducer);
    EXPECT_EQ(d.sink_errors(), 0u);
    EXPECT_TRUE(rec->closed) << "stop() closes the sinks";
    uint64_t by_type = 0;
    for (int t = 0; t < kAlertTypeCount; ++t) by_type += d.alerts_by_type(AlertType(t));
    EXPECT_EQ(by_type, 2 * kPerProducer);
    uint64_t want_rapid = 0;  // make_alert's type is id % kAlertTypeCount
    for (int p = 0; p < 2; ++p) {
      for (uint64_t k = 0; k < kPerProducer; ++k) want_rapid += (uint64_t(p) * 1'000'000 + k) % kAlertTypeCount == 0;
    }
    EXPECT_EQ(d.alerts_by_type(AlertType::kRapidRise), want_rapid);
    // Each producer's alerts arrive in order.
    uint64_t last[2] = {0, 0};
    bool first[2] = {true, true};
    for (uint64_t id : rec->ids) {
      const int p = id >= 1'000'000 ? 1 : 0;
      if (!first[p]) {
        EXPECT_GT(id, last[p]);
      }
      first[p] = false;
      last[p] = id;
    }
    for (int64_t e : rec->emit_ns) ASSERT_GT(e, 0) << "emit time stamped on publish";
  }
  EXPECT_EQ(count_lines(dir / "alerts.jsonl"), 2 * kPerProducer);
  auto store = AuditStore::open(db);
  ASSERT_TRUE(store.is_ok());
  EXPECT_EQ(store.value()->count().value(), int64_t(2 * kPerProducer));
  auto rows = store.value()->load_all();
  ASSERT_TRUE(rows.is_ok());
  std::map<uint64_t, const AlertRecord*> by_id;
  for (const auto& r : rows.value()) by_id[r.alert_id] = &r;
  ASSERT_EQ(by_id.size(), 2 * kPerProducer) << "no duplicates";
  for (uint64_t k : {uint64_t(0), uint64_t(1234), uint64_t(1'000'000 + 4999)}) {
    ASSERT_TRUE(by_id.count(k)) << k;
    const Alert want = make_alert(f.sym, k);
    for (int i = 0; i < kFeatureCount; ++i) EXPECT_EQ(by_id[k]->features[i], want.features[i]) << k << " " << i;
  }
}

TEST(AlertDispatcher, StopWhileProducersPublishLosesNothing) {
  Fixture f;
  const auto dir = scratch_dir("dispatcher_stop_midway");
  const std::string db = (dir / "audit.db").string();
  std::atomic<uint64_t> accepted{0};
  std::atomic<uint64_t> refused{0};
  {
    auto store = AuditStore::open(db);
    ASSERT_TRUE(store.is_ok());
    AlertDispatcher d(f.symbols, 2, DispatcherOptions{.ring_capacity = 64});
    d.add_sink("sqlite", std::shared_ptr<AuditStore>(std::move(store.value())));
    d.start();
    std::atomic<bool> go{true};
    std::thread producers[2];
    for (int p = 0; p < 2; ++p) {
      producers[p] = std::thread([&, p] {
        for (uint64_t k = 0; go.load(); ++k) {
          if (d.try_publish(p, make_alert(f.sym, uint64_t(p) * 100'000'000 + k))) {
            accepted.fetch_add(1);
          } else {
            refused.fetch_add(1);
            return;  // stopped
          }
        }
      });
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    d.stop();  // producers are still publishing
    for (auto& t : producers) t.join();
    EXPECT_EQ(d.published(), accepted.load());
    EXPECT_EQ(d.written(), accepted.load());
  }
  EXPECT_GT(accepted.load(), 100u);
  EXPECT_EQ(refused.load(), 2u) << "each producer saw exactly one refusal, then returned";
  auto store = AuditStore::open(db);
  ASSERT_TRUE(store.is_ok());
  EXPECT_EQ(store.value()->count().value(), int64_t(accepted.load()));
}

TEST(AlertDispatcher, FullRingBlocksTheProducerInsteadOfDropping) {
  Fixture f;
  auto slow = std::make_shared<RecordingSink>(200);  // 200 us per alert
  AlertDispatcher d(f.symbols, 1, DispatcherOptions{.ring_capacity = 4});
  d.add_sink("slow", slow);
  d.start();
  for (uint64_t k = 0; k < 200; ++k) ASSERT_TRUE(d.try_publish(0, make_alert(f.sym, k)));
  d.stop();
  EXPECT_GT(d.publish_waits(), 0u) << "the ring was full at times";
  ASSERT_EQ(slow->ids.size(), 200u);
  for (uint64_t k = 0; k < 200; ++k) EXPECT_EQ(slow->ids[k], k);
}

TEST(AlertDispatcher, CommitsWhileRunningAtLeastEvery100ms) {
  Fixture f;
  const std::string db = (scratch_dir("dispatcher_periodic_commit") / "audit.db").string();
  auto store = AuditStore::open(db);
  ASSERT_TRUE(store.is_ok());
  AlertDispatcher d(f.symbols, 1);
  d.add_sink("sqlite", std::shared_ptr<AuditStore>(std::move(store.value())));
  d.start();
  for (uint64_t k = 0; k < 5; ++k) ASSERT_TRUE(d.try_publish(0, make_alert(f.sym, k)));
  auto reader = AuditStore::open(db);
  ASSERT_TRUE(reader.is_ok());
  int64_t seen = 0;
  for (int i = 0; i < 100 && seen < 5; ++i) {  // up to 1 s; expect ~100 ms
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    seen = reader.value()->count().value();
  }
  EXPECT_EQ(seen, 5) << "5 alerts (< 1000) committed by the interval, without stop()";
  EXPECT_GE(d.flushes(), 1u);
  d.stop();
}

TEST(AlertDispatcher, FailingSinksAreCountedAndOthersGetEveryAlert) {
  Fixture f;
  const auto dir = scratch_dir("dispatcher_failing_sink");
  const std::string db = (dir / "audit.db").string();
  auto rec = std::make_shared<RecordingSink>();
  constexpr uint64_t kN = 300;
  {
    auto store = AuditStore::open(db);
    ASSERT_TRUE(store.is_ok());
    AlertDispatcher d(f.symbols, 1);
    d.add_sink("jsonl", std::make_shared<JsonlSink>("/nonexistent-dir/alerts.jsonl"));
    d.add_sink("throws", std::make_shared<ThrowingSink>());
    d.add_sink("sqlite", std::shared_ptr<AuditStore>(std::move(store.value())));
    d.add_sink("rec", rec);
    d.start();
    for (uint64_t k = 0; k < kN; ++k) ASSERT_TRUE(d.try_publish(0, make_alert(f.sym, k)));
    d.stop();
    EXPECT_GE(d.sink_errors(0), kN) << "every jsonl write failed";
    EXPECT_EQ(d.sink_errors(1), kN) << "every throw counted";
    EXPECT_EQ(d.sink_errors(2), 0u);
    EXPECT_EQ(d.sink_errors(3), 0u);
    EXPECT_EQ(d.written(), kN);
    Metrics m;
    d.publish_metrics(m);
    d.publish_metrics(m);  // idempotent without new alerts
    const std::string text = m.serialize();
    EXPECT_NE(text.find("ticksentry_alert_sink_errors_total{sink=\"throws\"} " + std::to_string(kN)), std::string::npos)
        << text;
    EXPECT_NE(text.find("ticksentry_alert_sink_errors_total{sink=\"sqlite\"} 0"), std::string::npos) << text;
    // make_alert's type is id % kAlertTypeCount: ids 0, kAlertTypeCount, ... are rapid_rise.
    const uint64_t want_rapid = (kN + kAlertTypeCount - 1) / kAlertTypeCount;
    EXPECT_NE(text.find("ticksentry_alerts_total{type=\"rapid_rise\"} " + std::to_string(want_rapid)),
              std::string::npos) << text;
  }
  EXPECT_EQ(rec->ids.size(), kN);
  auto store = AuditStore::open(db);
  ASSERT_TRUE(store.is_ok());
  EXPECT_EQ(store.value()->count().value(), int64_t(kN));
}

TEST(AlertDispatcher, StopWithoutStartStillDeliversAndRefusesAfterwards) {
  Fixture f;
  auto rec = std::make_shared<RecordingSink>();
  AlertDispatcher d(f.symbols, 1);
  d.add_sink("rec", rec);
  ASSERT_TRUE(d.try_publish(0, make_alert(f.sym, 1)));
  d.stop();
  EXPECT_EQ(rec->ids.size(), 1u);
  EXPECT_FALSE(d.try_publish(0, make_alert(f.sym, 2)));
  EXPECT_EQ(d.published(), 1u);
}

}  // namespace
}  // namespace ts::testing
