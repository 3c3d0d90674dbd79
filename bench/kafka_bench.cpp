// Kafka ingest benchmark (docs/kafka.md):
//   1. decode throughput on one core: real LOBSTER GOOG events (192,368), encoded once in each wire
//      format, decoded into Events (symbol interned, reference data applied) — the work the kafka
//      source does per message; 7 runs, median and slowest;
//   2. consume + decode through librdkafka's mock cluster on loopback: simulator events on 16
//      partitions, consumed by KafkaSource (fetch, decode, events out); the brokers share the
//      machine's cores with the consumer;
//   3. produce → alert latency: simulator events restamped with the wall clock at produce time,
//      paced, through the mock cluster and the whole pipeline (KafkaSource → shards → rules →
//      sink thread); latency = wall clock at the sink − produce time. P50/P99/P999.
// Writes bench/results/kafka-<machine>-<date>.json. Usage: kafka_bench [out_dir]
#include <algorithm>
#include <unordered_map>
#include <atomic>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "bench_json.h"
#include "core/clock.h"
#include "core/latency_histogram.h"
#include "core/log.h"
#include "ingest/kafka_source.h"
#include "ingest/open_source.h"
#include "ingest/sim/simulator.h"
#include "ingest/wire_binary.h"
#include "ingest/wire_json.h"
#include "kafka/kafka_mock.h"
#include "kafka/kafka_producer.h"
#include "pipeline/pipeline.h"

namespace ts {
namespace {

std::vector<Event> load_goog(SymbolTable& symbols) {
  InputErrors errors;
  auto src = open_source("lobster",
                         {std::string(TICKSENTRY_SOURCE_DIR) +
                          "/../shared/data/lobster/GOOG_2012-06-21_34200000_57600000_message_10.csv.gz"},
                         symbols, errors);
  std::vector<Event> all, batch(4096);
  if (!src.is_ok()) {
    std::fprintf(stderr, "%s\n", src.status().to_string().c_str());
    return all;
  }
  for (;;) {
    const size_t n = src.value()->next_batch(batch);
    if (n == 0 && src.value()->done()) break;
    all.insert(all.end(), batch.begin(), batch.begin() + n);
  }
  return all;
}

struct Encoded {
  std::string bytes;
  std::vector<std::pair<size_t, size_t>> spans;  // offset, length per message
};

Encoded encode_all(const std::vector<Event>& events, const SymbolTable& symbols, WireEncoding enc) {
  Encoded out;
  for (const Event& e : events) {
    const RefData& r = symbols.ref(e.symbol);
    const size_t at = out.bytes.size();
    WireEvent w{e, r.name, r.prev_close, r.is_st};
    if (enc == WireEncoding::kBinary) {
      wire_binary_append(w, out.bytes);
    } else {
      wire_json_append(w, out.bytes);
    }
    out.spans.emplace_back(at, out.bytes.size() - at);
  }
  return out;
}

// One decode pass over every message, as KafkaSource::Impl::decode does it; returns events/s.
double decode_pass(const Encoded& in, WireEncoding enc, WireJsonDecoder& json, SymbolTable& symbols, uint64_t& sink) {
  const auto* base = reinterpret_cast<const uint8_t*>(in.bytes.data());
  WireEvent w;
  Event out;
  const int64_t t0 = mono_ns();
  for (const auto& [at, len] : in.spans) {
    const std::span<const uint8_t> b(base + at, len);
    const WireDecodeStatus s = enc == WireEncoding::kBinary ? wire_binary_decode(b, w) : json.decode(b, w);
    if (!s.ok()) continue;
    const SymbolId id = symbols.intern(w.symbol);
    if (w.prev_close > 0 && symbols.ref(id).prev_close != w.prev_close) symbols.set_prev_close(id, w.prev_close);
    out = w.event;
    out.symbol = id;
    sink += out.seq;
  }
  const int64_t t1 = mono_ns();
  return double(in.spans.size()) * 1e9 / double(t1 - t0);
}

nlohmann::json bench_decode(const std::vector<Event>& events, const SymbolTable& symbols, WireEncoding enc) {
  const Encoded in = encode_all(events, symbols, enc);
  WireJsonDecoder json;
  SymbolTable table;
  uint64_t sink = 0;
  (void)decode_pass(in, enc, json, table, sink);  // warm-up
  std::vector<double> rates;
  for (int i = 0; i < 7; ++i) rates.push_back(decode_pass(in, enc, json, table, sink));
  std::sort(rates.begin(), rates.end());
  std::printf("decode %-6s  %zu messages (%.1f bytes avg): median %.2f M msgs/s, slowest %.2f M  (%llu)\n",
              wire_encoding_name(enc), in.spans.size(), double(in.bytes.size()) / double(in.spans.size()),
              rates[3] / 1e6, rates[0] / 1e6, (unsigned long long)(sink & 1));
  return {{"system", "ticksentry"},
          {"case", {{"stage", "decode"}, {"encoding", wire_encoding_name(enc)}, {"data", "lobster-GOOG-2012-06-21"},
                    {"messages", in.spans.size()}, {"runs", 7}, {"threads", 1}}},
          {"metrics", {{"throughput_per_s", rates[3]}, {"slowest_per_s", rates[0]},
                       {"bytes_per_message", double(in.bytes.size()) / double(in.spans.size())}}}};
}

std::vector<Event> sim_events(SymbolTable& symbols, size_t n, int nsym, SimOptions so = {}) {
  so.symbols = nsym;
  so.seed = 11;
  so.duration_s = 0;
  Simulator sim(so, symbols);
  std::vector<Event> all, batch(4096);
  while (all.size() < n) {
    const size_t k = sim.next_batch(batch);
    all.insert(all.end(), batch.begin(), batch.begin() + std::min(k, n - all.size()));
  }
  return all;
}

nlohmann::json bench_consume(WireEncoding enc) {
  auto cluster = KafkaMockCluster::start(3);
  if (!cluster.is_ok()) return {};
  const std::string brokers = cluster.value()->bootstraps();
  (void)cluster.value()->create_topic("md", 16);
  SymbolTable symbols;
  const size_t n = enc == WireEncoding::kBinary ? 400000 : 100000;  // within 5 MiB per partition
  const std::vector<Event> events = sim_events(symbols, n, 64);
  auto prod = KafkaProducer::create({{"bootstrap.servers", brokers}, {"linger.ms", "5"}});
  std::string v;
  for (const Event& e : events) {
    const RefData& r = symbols.ref(e.symbol);
    v.clear();
    WireEvent w{e, r.name, r.prev_close, r.is_st};
    if (enc == WireEncoding::kBinary) wire_binary_append(w, v); else wire_json_append(w, v);
    (void)prod.value()->produce("md", r.name, v);
  }
  (void)prod.value()->flush(60000);
  SymbolTable table;
  InputErrors errors;
  KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = "md";
  o.group = "bench";
  o.exit_at_eof = true;
  o.eof_idle_ms = 300;
  o.props = {{"fetch.max.bytes", "52428800"}, {"queued.max.messages.kbytes", "262144"}};
  auto src = KafkaSource::open(o, table, errors);
  std::vector<Event> batch(1024);
  int64_t first_ns = 0, last_ns = 0;
  uint64_t got = 0;
  while (!src.value()->done()) {
    const size_t k = src.value()->next_batch(batch);
    if (k && !first_ns) first_ns = mono_ns();
    if (k) last_ns = mono_ns();
    got += k;
  }
  const double rate = last_ns > first_ns ? double(got) * 1e9 / double(last_ns - first_ns) : 0;
  std::printf("consume+decode %-6s through the mock cluster: %llu messages, %.2f M msgs/s (first to last message)\n",
              wire_encoding_name(enc), (unsigned long long)got, rate / 1e6);
  return {{"system", "ticksentry"},
          {"case", {{"stage", "consume+decode"}, {"encoding", wire_encoding_name(enc)}, {"data", "sim-64-symbols"},
                    {"messages", got}, {"partitions", 16}, {"broker", "librdkafka mock cluster, 3 brokers, loopback"}}},
          {"metrics", {{"throughput_per_s", rate}}}};
}

// Records wall-clock produce → sink latency of every alert (by its triggering event's seq).
class LatencySink : public AlertSink {
 public:
  LatencySink(const std::unordered_map<uint64_t, size_t>& index, const std::vector<std::atomic<int64_t>>& produced)
      : index_(index), produced_(produced) {}
  Status write(const Alert& a, const SymbolTable&) override {
    const int64_t now = wall_ns();
    if (auto it = index_.find(a.event_seq); it != index_.end()) {
      const int64_t t = produced_[it->second].load(std::memory_order_acquire);
      if (t > 0) lat_us.push_back(double(now - t) / 1e3);
    }
    return Status::ok();
  }
  Status flush() override { return Status::ok(); }
  std::vector<double> lat_us;

 private:
  const std::unordered_map<uint64_t, size_t>& index_;
  const std::vector<std::atomic<int64_t>>& produced_;
};

nlohmann::json bench_latency(double rate_per_s) {
  auto cluster = KafkaMockCluster::start(3);
  if (!cluster.is_ok()) return {};
  const std::string brokers = cluster.value()->bootstraps();
  (void)cluster.value()->create_topic("md", 16);
  SymbolTable gen_symbols;
  SimOptions so;
  so.symbols = 16;
  so.seed = 7;
  so.events_per_s = 1000;
  so.anomalies_per_hour = 120;
  so.anomaly_warmup_s = 20;
  const std::vector<Event> events = sim_events(gen_symbols, 300000, 16, so);
  std::unordered_map<uint64_t, size_t> index;
  for (size_t i = 0; i < events.size(); ++i) index.emplace(events[i].seq, i);
  std::vector<std::atomic<int64_t>> produced(events.size());

  Config config;
  SymbolTable symbols;
  PipelineOptions po;
  po.progress_s = 0;
  Pipeline pipeline(symbols, config, po);
  auto sink = std::make_shared<LatencySink>(index, produced);
  pipeline.add_sink("latency", sink);
  InputErrors errors;
  KafkaSourceOptions o;
  o.brokers = brokers;
  o.topic = "md";
  o.group = "latency";
  o.exit_at_eof = true;
  o.eof_idle_ms = 3000;
  o.props = {{"fetch.wait.max.ms", "5"}};
  auto src = KafkaSource::open(o, symbols, errors);
  std::thread producer([&] {
    auto prod = KafkaProducer::create({{"bootstrap.servers", brokers}, {"linger.ms", "0"}});
    std::this_thread::sleep_for(std::chrono::seconds(4));  // the consumer joins its group
    std::string v;
    const int64_t start = mono_ns();
    for (size_t i = 0; i < events.size(); ++i) {
      const int64_t due = start + int64_t(double(i) * 1e9 / rate_per_s);
      // Sleep, never spin: the brokers, the consumer and the shards share this machine's cores.
      if (const int64_t wait = due - mono_ns(); wait > 200'000) std::this_thread::sleep_for(std::chrono::nanoseconds(wait));
      const RefData& r = gen_symbols.ref(events[i].symbol);
      v.clear();
      wire_binary_append(WireEvent{events[i], r.name, r.prev_close, r.is_st}, v);
      produced[i].store(wall_ns(), std::memory_order_release);
      (void)prod.value()->produce("md", r.name, v);
      if ((i & 255) == 0) prod.value()->poll();
    }
    (void)prod.value()->flush(60000);
  });
  std::atomic<bool> stop{false};
  RunSummary summary = pipeline.run(*src.value(), errors, stop);
  producer.join();
  std::vector<double>& l = sink->lat_us;
  std::sort(l.begin(), l.end());
  auto q = [&](double p) { return l.empty() ? 0.0 : l[std::min(l.size() - 1, size_t(p * double(l.size())))]; };
  std::printf("produce→alert through the mock cluster at %.0f events/s: %zu alerts, p50 %.0f us, p99 %.0f us, "
              "max %.0f us (%llu events)\n",
              rate_per_s, l.size(), q(0.5), q(0.99), l.empty() ? 0.0 : l.back(), (unsigned long long)summary.events);
  return {{"system", "ticksentry"},
          {"case", {{"stage", "produce->alert"}, {"encoding", "binary"}, {"data", "sim-16-symbols"},
                    {"events", summary.events}, {"rate_per_s", rate_per_s}, {"partitions", 16},
                    {"broker", "librdkafka mock cluster, 3 brokers, loopback"}}},
          {"metrics", {{"alerts", l.size()}, {"p50_us", q(0.5)}, {"p99_us", q(0.99)},
                       {"max_us", l.empty() ? 0.0 : l.back()}}}};
}

}  // namespace
}  // namespace ts

int main(int argc, char** argv) {
  using namespace ts;
  init_logging("warn");
  const std::string out_dir = argc > 1 ? argv[1] : std::string(TICKSENTRY_SOURCE_DIR) + "/bench/results";
  nlohmann::json results = nlohmann::json::array();
  SymbolTable symbols;
  const std::vector<Event> goog = load_goog(symbols);
  if (goog.empty()) return 1;
  results.push_back(bench_decode(goog, symbols, WireEncoding::kBinary));
  results.push_back(bench_decode(goog, symbols, WireEncoding::kJson));
  results.push_back(bench_consume(WireEncoding::kBinary));
  results.push_back(bench_consume(WireEncoding::kJson));
  results.push_back(bench_latency(20000));
  const bench::Invocation run{bench::command_line(argc, argv),
                              {{"out_dir", out_dir}, {"decode_runs", 7}, {"consume_partitions", 16},
                               {"latency_messages", 20000}}};
  const std::string path = bench::write_results(out_dir, "kafka", run, results);
  std::printf("wrote %s\n", path.c_str());
  return 0;
}
