// The dashboard's serving panels and the model's probability per symbol: the ScoreBoard keeps
// each symbol's peak probability between two looks and the shards' end-to-end latencies;
// ServingStats turns the serving metrics into per-second numbers (differences, not totals since
// start); the live feed publishes them on /api/stats, /api/symbols/{s}, the "scores" stream
// and /metrics.
#include <gtest/gtest.h>

#include <thread>

#include <nlohmann/json.hpp>

#include "http/serving_stats.h"
#include "http_test_util.h"
#include "pipeline/score_board.h"

namespace ts::testing {
namespace {

using nlohmann::json;

TEST(BucketQuantile, InterpolatesWithinTheBucketLikePrometheus) {
  const std::vector<double> bounds = {1, 2, 4};
  EXPECT_DOUBLE_EQ(http::bucket_quantile(bounds, {0, 10, 0, 0}, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(http::bucket_quantile(bounds, {0, 10, 0, 0}, 0.99), 1.99);
  EXPECT_DOUBLE_EQ(http::bucket_quantile(bounds, {10, 0, 10, 0}, 0.75), 3.0);
  EXPECT_DOUBLE_EQ(http::bucket_quantile(bounds, {0, 0, 0, 3}, 0.5), 4.0) << "+Inf: the largest bound";
  EXPECT_DOUBLE_EQ(http::bucket_quantile(bounds, {0, 0, 0, 0}, 0.5), 0.0);
}

TEST(ScoreBoard, PeakSinceTheLastLookAndShardLatencies) {
  ScoreBoard board(64, /*publish_interval_ns=*/0);
  board.set_shards(2);
  float p = 0;
  EXPECT_FALSE(board.take_peak(3, &p)) << "never scored";
  std::thread a([&] {
    for (int i = 0; i < 1000; ++i) board.record(0, 2, i == 500 ? 0.97f : 0.1f, 0.9f, 40'000, 1'000'000 + i);
  });
  std::thread b([&] {
    for (int i = 0; i < 1000; ++i) board.record(1, 3, 0.2f, 0.8f, 400'000, 1'000'000 + i);
  });
  a.join();
  b.join();
  ASSERT_TRUE(board.take_peak(2, &p));
  EXPECT_FLOAT_EQ(p, 0.97f) << "a one-result spike is not sampled away";
  EXPECT_FALSE(board.take_peak(2, &p)) << "nothing new since the last look";
  ASSERT_TRUE(board.take_peak(3, &p));
  EXPECT_FLOAT_EQ(p, 0.2f);
  board.record(0, 100, 0.5f, 0.9f, 1, 2'000'000);  // id >= capacity: no peak kept (its latency counts)
  board.record(7, 2, 0.5f, 0.9f, 1, 2'000'000);    // shard never set: latency ignored
  EXPECT_TRUE(board.active());
  board.set_threshold(0.5);
  EXPECT_NEAR(board.threshold(3), 0.8, 1e-6) << "the symbol's own (group) threshold";
  EXPECT_DOUBLE_EQ(board.threshold(9), 0.5) << "never scored: the default";
  ScoreBoard::Latency l = board.take_latency();
  EXPECT_EQ(l.hist.count(), 2001u) << "every result of both shards (interval 0: handed over at once)";
  EXPECT_NEAR(double(l.hist.quantile_ns(0.25)), 40'000, 40'000 * 0.02);
  EXPECT_NEAR(double(l.hist.quantile_ns(0.75)), 400'000, 400'000 * 0.02);
  EXPECT_EQ(l.buckets[0], 1u) << "1 ns: in the first bucket";
  EXPECT_EQ(l.buckets[1], 1000u) << "40 us: in the (25, 50] us bucket";
  EXPECT_EQ(l.buckets[4], 1000u) << "400 us: in the (250, 500] us bucket";
  EXPECT_EQ(board.take_latency().hist.count(), 0u) << "taken";
  board.record(0, 2, 0.1f, 0.9f, 25'000, 3'000'000);       // exactly on a bound: that bucket (le)
  board.record(0, 2, 0.1f, 0.9f, 5'000'000'000, 3'000'000);  // 5 s: +Inf
  l = board.take_latency();
  EXPECT_EQ(l.buckets[0], 1u);
  EXPECT_EQ(l.buckets[ScoreBoard::kBuckets - 1], 1u);
  EXPECT_EQ(l.sum_ns, 5'000'025'000);
}

// The serving metrics as src/serve/model_server.cpp registers them.
struct ServingMetrics {
  Metrics m;
  const std::vector<double> seconds = {25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 0.1, 0.25, 1.0};
  prometheus::Histogram& batch = m.histogram("model_batch_size", "b", {1, 2, 4, 8, 16, 32, 64, 128, 256});
  prometheus::Histogram& queue = m.histogram("model_queue_wait_seconds", "q", seconds);
  prometheus::Histogram& compute = m.histogram("model_compute_seconds", "c", seconds);
  prometheus::Counter& batches = m.counter("model_batches_total", "b");
  prometheus::Counter& inferences = m.counter("model_inferences_total", "i");
  prometheus::Counter& failed = m.counter("model_failed_batches_total", "f");
  prometheus::Counter& deadline = m.counter("model_dropped_total", "d", {{"reason", "deadline"}});
  prometheus::Counter& superseded = m.counter("model_dropped_total", "d", {{"reason", "superseded"}});
  void run_batch(int size, double queue_s, double compute_s) {
    batch.Observe(size);
    queue.Observe(queue_s);
    compute.Observe(compute_s);
    batches.Increment();
    inferences.Increment(size);
  }
};

TEST(ServingStats, PerSecondNumbersFromTheServingMetrics) {
  Metrics rules_only;
  EXPECT_TRUE(http::ServingStats(rules_only, nullptr).sample(1.0).is_null()) << "no model: no serving panels";

  ServingMetrics sm;
  http::ServingStats stats(sm.m, nullptr);
  for (int i = 0; i < 90; ++i) sm.run_batch(3, 60e-6, 300e-6);  // 3 → bucket le=4
  for (int i = 0; i < 10; ++i) sm.run_batch(100, 2e-3, 4e-3);   // 100 → bucket le=128
  sm.deadline.Increment(7);
  sm.failed.Increment();
  json s = stats.sample(2.0);
  ASSERT_FALSE(s.is_null());
  EXPECT_DOUBLE_EQ(s["batches_per_s"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(s["inferences_per_s"].get<double>(), (270 + 1000) / 2.0);
  EXPECT_NEAR(s["mean_batch"].get<double>(), 12.7, 1e-9);
  std::map<double, double> sizes;
  for (const auto& b : s["batch_sizes"]) sizes[b[0].get<double>()] = b[1].get<double>();
  EXPECT_EQ(sizes[4], 90);
  EXPECT_EQ(sizes[128], 10);
  EXPECT_EQ(sizes[1], 0);
  // P50 in (50, 100] us; P99 in (1, 2.5] ms (90 % of batches waited 60 us, 10 % 2 ms).
  EXPECT_GT(s["queue_wait_us"]["p50"].get<double>(), 50);
  EXPECT_LE(s["queue_wait_us"]["p50"].get<double>(), 100);
  EXPECT_GT(s["queue_wait_us"]["p99"].get<double>(), 1000);
  EXPECT_LE(s["queue_wait_us"]["p99"].get<double>(), 2500);
  EXPECT_EQ(s["compute_us"]["count"], 100);
  EXPECT_EQ(s["drops"]["deadline"], 7);
  EXPECT_EQ(s["drops"]["superseded"], 0);
  EXPECT_EQ(s["failed_batches"], 1);

  // The next second: only what happened in it.
  sm.run_batch(1, 30e-6, 100e-6);
  sm.superseded.Increment(2);
  s = stats.sample(1.0);
  EXPECT_DOUBLE_EQ(s["batches_per_s"].get<double>(), 1.0);
  EXPECT_EQ(s["compute_us"]["count"], 1);
  EXPECT_EQ(s["drops"]["deadline"], 0);
  EXPECT_EQ(s["drops"]["superseded"], 2);
  EXPECT_EQ(s["drops_total"]["deadline"], 7);
  EXPECT_EQ(s["failed_batches"], 0);
  EXPECT_EQ(s["failed_total"], 1);
}

TEST(ServingStats, LiveFeedPublishesProbabilitiesAndServingPanels) {
  TestServer s("http_serving_feed");
  s.metrics.counter("model_batches_total", "as src/serve registers it").Increment(5);
  ScoreBoard board(1024, 0);
  board.set_shards(1);
  board.set_threshold(0.7);
  s.live->set_scores(&board);
  const SymbolId goog = s.symbols.intern("GOOG");
  s.symbols.intern("AAPL");
  uint64_t cursor = s.hub.head();
  for (int i = 0; i < 100; ++i) board.record(0, goog, i == 42 ? 0.93f : 0.05f, 0.9f, 250'000, 1'000 + i);
  s.live->tick();

  std::vector<http::SseMessage> msgs;
  s.hub.wait_next(&cursor, &msgs, 1000);
  const http::SseMessage* scores = nullptr;
  for (const auto& m : msgs) if (m.event == "scores") scores = &m;
  ASSERT_NE(scores, nullptr) << "a \"scores\" message for the scored symbol";
  json sc = json::parse(scores->data);
  ASSERT_EQ(sc.size(), 1u) << "only scored symbols: " << sc.dump();
  EXPECT_EQ(sc[0]["s"], "GOOG");
  EXPECT_NEAR(sc[0]["m"].get<double>(), 0.93, 1e-6) << "the tick's peak";

  auto c = s.client();
  auto r = c.Get("/api/symbols/GOOG");
  ASSERT_EQ(r->status, 200) << r->body;
  json view = json::parse(r->body);
  ASSERT_EQ(view["probability"].size(), 1u);
  EXPECT_NEAR(view["probability"][0][1].get<double>(), 0.93, 1e-6);
  EXPECT_NEAR(view["threshold"].get<double>(), 0.9, 1e-6) << "the threshold GOOG was decided with";
  EXPECT_EQ(c.Get("/api/symbols/AAPL")->status, 404) << "neither quoted nor scored";

  json pts = json::parse(c.Get("/api/stats")->body)["points"];
  ASSERT_EQ(pts.size(), 1u);
  ASSERT_TRUE(pts[0].contains("model")) << pts[0].dump();
  EXPECT_EQ(pts[0]["model"]["batches_per_s"].get<double>() > 0, true);
  EXPECT_EQ(pts[0]["model"]["end_to_end_us"]["count"], 100);
  EXPECT_NEAR(pts[0]["model"]["end_to_end_us"]["p99"].get<double>(), 250, 250 * 0.02);
  const std::string metrics = c.Get("/metrics")->body;
  EXPECT_NE(metrics.find("ticksentry_model_end_to_end_seconds_bucket{le=\"0.00025\"} 100"), std::string::npos) << metrics;
}

}  // namespace
}  // namespace ts::testing
