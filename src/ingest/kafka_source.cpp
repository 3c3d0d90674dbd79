#include "ingest/kafka_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "core/clock.h"
#include "core/log.h"
#include "ingest/crypto/feed_counters.h"
#include "ingest/crypto/venue_decoder.h"
#include "ingest/wire_binary.h"
#include "ingest/wire_json.h"
#include "kafka/kafka_producer.h"

namespace ts {

struct KafkaSource::Impl {
  KafkaSourceOptions opt;
  SymbolTable& symbols;
  InputErrors& errors;
  Metrics* metrics = nullptr;
  rd_kafka_t* rk = nullptr;
  std::unique_ptr<KafkaProducer> dlq;
  WireJsonDecoder json;
  // A venue encoding: its decoder, and the events of the last message that did not fit a batch.
  std::unique_ptr<crypto::VenueDecoder> venue;
  std::vector<Event> venue_events;
  size_t venue_at = 0;
  std::string where;  // "topic[partition]" of the message being decoded, for error reports

  // Next offset to commit per partition (offset of the last message handed on + 1). Only
  // partitions this instance owns; a revoked partition's entry is dropped (rebalance_cb runs on
  // the source thread, inside rd_kafka_consumer_poll).
  std::map<int32_t, int64_t> next_offsets;
  std::set<int32_t> assigned;
  std::set<int32_t> at_eof;
  std::map<int32_t, int64_t> eof_offsets;  // the end offset each partition's last EOF event gave
  // Where each assigned partition must continue for nothing to be lost: the committed offset (0
  // for a group that never committed) until its first message, then the last offset read + 1.
  // Absent: unknown (the committed offset could not be read), not checked until a first message.
  std::map<int32_t, int64_t> expected;
  std::set<int32_t> started;  // partitions that gave a message since their assignment
  std::set<int32_t> need_committed;  // assigned; committed offset not asked yet (asked at the first message)
  bool assigned_once = false;
  int64_t last_message_ns = 0;  // mono_ns of the last message or EOF event

  KafkaSourceStats st;
  int64_t next_publish_ns = 0;
  KafkaSourceStats published;
  int64_t published_at_ns = 0;

  Impl(const KafkaSourceOptions& o, SymbolTable& s, InputErrors& e, Metrics* m)
      : opt(o), symbols(s), errors(e), metrics(m) {}

  // Decodes one message into `out`; false (counted, dead-lettered) when it is bad.
  bool decode(const rd_kafka_message_t* m, Event& out);
  // Decodes one venue message; hands on as many of its events as fit `out`, keeps the rest.
  size_t decode_venue(const rd_kafka_message_t* m, std::span<Event> out);
  size_t drain_venue(std::span<Event> out);
  // Counts a bad message (and reports it to `errors` unless the venue decoder already did) and
  // copies it to the dead-letter topic.
  void dead_letter(const rd_kafka_message_t* m, const WireDecodeStatus& why, bool reported = false);
  void on_rebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts);
  void publish_metrics(int64_t now_ns);
  void expect_committed(int32_t partition);
  void check_offset(int32_t partition, int64_t offset);
  int64_t compute_lag() const;
};

namespace {

bool is_binary(const rd_kafka_message_t* m) {
  const auto* p = static_cast<const uint8_t*>(m->payload);
  return m->len >= 2 && p[0] == 'T' && p[1] == 'K';
}

}  // namespace

bool KafkaSource::Impl::decode(const rd_kafka_message_t* m, Event& out) {
  WireEvent w;
  const std::span<const uint8_t> bytes(static_cast<const uint8_t*>(m->payload), m->payload ? m->len : 0);
  WireDecodeStatus s = is_binary(m) ? wire_binary_decode(bytes, w) : json.decode(bytes, w);
  SymbolId id = kInvalidSymbol;
  if (s.ok()) {
    id = symbols.intern(w.symbol);
    if (id == kInvalidSymbol) s = WireDecodeStatus::fail(InputError::kUnknownSymbol, "symbol table full");
  }
  if (!s.ok()) {
    dead_letter(m, s);
    return false;
  }
  Price prev_close = w.prev_close;
  if (w.event.kind == EventKind::kSnapshot && w.event.snapshot.prev_close > 0) prev_close = w.event.snapshot.prev_close;
  const RefData& ref = symbols.ref(id);
  if (w.is_st != ref.is_st) symbols.set_st(id, w.is_st);
  if (prev_close > 0 && ref.prev_close != prev_close) symbols.set_prev_close(id, prev_close);
  out = w.event;
  out.symbol = id;
  out.recv_ts_ns = 0;
  return true;
}

size_t KafkaSource::Impl::drain_venue(std::span<Event> out) {
  const size_t k = std::min(out.size(), venue_events.size() - venue_at);
  std::copy_n(venue_events.begin() + std::ptrdiff_t(venue_at), k, out.begin());
  venue_at += k;
  st.decoded += k;
  return k;
}

size_t KafkaSource::Impl::decode_venue(const rd_kafka_message_t* m, std::span<Event> out) {
  venue_events.clear();
  venue_at = 0;
  where = opt.topic + "[" + std::to_string(m->partition) + "]";
  crypto::MessageContext ctx;
  ctx.file = where;
  ctx.line = uint64_t(m->offset);
  rd_kafka_timestamp_type_t type;
  const int64_t ts_ms = rd_kafka_message_timestamp(m, &type);
  ctx.recv_ns = ts_ms > 0 ? ts_ms * 1'000'000 : wall_ns();
  const std::string_view key(static_cast<const char*>(m->key), m->key ? m->key_len : 0);
  if (key.starts_with("http://") || key.starts_with("https://")) {
    ctx.is_rest = true;
    ctx.url = key;
  }
  const std::string_view value(static_cast<const char*>(m->payload), m->payload ? m->len : 0);
  if (!venue->decode(value, ctx, venue_events)) {
    dead_letter(m, WireDecodeStatus::fail(InputError::kMalformedLine, "venue message rejected"), true);
    return 0;
  }
  for (Event& e : venue_events) e.recv_ts_ns = 0;
  return drain_venue(out);
}

void KafkaSource::Impl::dead_letter(const rd_kafka_message_t* m, const WireDecodeStatus& why, bool reported) {
  ++st.decode_errors;
  where = opt.topic + "[" + std::to_string(m->partition) + "]";
  if (!reported) errors.report(why.kind, where, uint64_t(m->offset), why.reason);
  if (!dlq) return;
  const std::string partition = std::to_string(m->partition), offset = std::to_string(m->offset);
  const KafkaProducer::Header headers[] = {
      {"ticksentry.error.kind", input_error_name(why.kind)},
      {"ticksentry.error.reason", why.reason},
      {"ticksentry.source.topic", opt.topic},
      {"ticksentry.source.partition", partition},
      {"ticksentry.source.offset", offset},
  };
  const std::string_view key(static_cast<const char*>(m->key), m->key ? m->key_len : 0);
  const std::span<const uint8_t> value(static_cast<const uint8_t*>(m->payload), m->payload ? m->len : 0);
  if (Status s = dlq->produce(opt.dlq_topic, key, value, headers, /*block_ms=*/1000); s.is_ok()) {
    ++st.dlq;
  } else {
    spdlog::warn("kafka: dead-letter {} offset {}: {}", where, m->offset, s.to_string());
  }
}

void KafkaSource::Impl::on_rebalance(rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts) {
  const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
  std::string list;
  for (int i = 0; i < parts->cnt; ++i) {
    if (i) list += ',';
    list += std::to_string(parts->elems[i].partition);
  }
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    spdlog::info("kafka: assigned {} partitions [{}]", opt.topic, list);
    for (int i = 0; i < parts->cnt; ++i) {
      assigned.insert(parts->elems[i].partition);
      at_eof.erase(parts->elems[i].partition);
    }
    assigned_once = true;
    for (int i = 0; i < parts->cnt; ++i) {
      // The committed offset is asked at the partition's first message, not here: a blocking
      // call in the rebalance callback would hold up the group's rebalance.
      started.erase(parts->elems[i].partition);
      expected.erase(parts->elems[i].partition);
      need_committed.insert(parts->elems[i].partition);
    }
    last_message_ns = mono_ns();  // idle time counts from the assignment
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_assign(rk, parts)) {
        spdlog::error("kafka: incremental assign: {}", rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
      }
    } else {
      rd_kafka_assign(rk, parts);
    }
  } else {
    spdlog::info("kafka: revoked {} partitions [{}]", opt.topic, list);
    for (int i = 0; i < parts->cnt; ++i) {
      // Not committed here: events already handed on may still be in the pipeline. The next
      // owner re-reads from the last committed offset; alert ids dedupe (docs/kafka.md).
      assigned.erase(parts->elems[i].partition);
      next_offsets.erase(parts->elems[i].partition);
      eof_offsets.erase(parts->elems[i].partition);
      at_eof.erase(parts->elems[i].partition);
      expected.erase(parts->elems[i].partition);
      started.erase(parts->elems[i].partition);
      need_committed.erase(parts->elems[i].partition);
    }
    if (cooperative) {
      if (rd_kafka_error_t* e = rd_kafka_incremental_unassign(rk, parts)) rd_kafka_error_destroy(e);
    } else {
      rd_kafka_assign(rk, nullptr);
    }
  }
}

void KafkaSource::Impl::expect_committed(int32_t p) {
  rd_kafka_topic_partition_list_t* c = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(c, opt.topic.c_str(), p);
  const rd_kafka_resp_err_t err = rd_kafka_committed(rk, c, /*timeout_ms=*/10000);
  if (err || c->elems[0].err) {
    spdlog::warn("kafka: {}[{}]: committed offset unknown ({}): a loss before its first message is not checked",
                 opt.topic, p, rd_kafka_err2str(err ? err : c->elems[0].err));
    expected.erase(p);
  } else {
    expected[p] = c->elems[0].offset >= 0 ? c->elems[0].offset : 0;  // never committed: from 0
  }
  rd_kafka_topic_partition_list_destroy(c);
}

void KafkaSource::Impl::check_offset(int32_t p, int64_t offset) {
  if (need_committed.erase(p)) expect_committed(p);
  const bool first = started.insert(p).second;
  auto it = expected.find(p);
  if (it != expected.end() && offset > it->second) {
    const int64_t from = it->second;
    bool lost = first;  // the start itself skipped offsets: retention or an offset reset
    int64_t lo = -1, hi = -1;
    if (!first) {
      // Mid-stream: a loss only when the broker deleted what was skipped; a jump over offsets
      // still in the log is compaction or transaction markers.
      const rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, opt.topic.c_str(), p, &lo, &hi, 5000);
      lost = err || from < lo;
    }
    if (lost) {
      const uint64_t n = uint64_t(offset - from);
      st.lost_messages += n;
      spdlog::error("kafka: {}[{}]: offsets {}..{} lost ({} messages, never read): {}", opt.topic, p, from,
                    offset - 1, n,
                    first ? "the partition now begins later (deleted by retention before this group read them, "
                            "or skipped by auto.offset.reset)"
                          : "deleted by retention while this consumer was behind");
    }
  }
  expected[p] = offset + 1;
}

int64_t KafkaSource::Impl::compute_lag() const {
  int64_t lag = 0;
  bool known = false;
  for (int32_t p : assigned) {
    int64_t lo = 0, hi = 0;
    if (rd_kafka_get_watermark_offsets(rk, opt.topic.c_str(), p, &lo, &hi) || hi < 0) continue;
    // Position: after the last message handed on, or the end an EOF event reported (a partition
    // resumed at its committed end hands nothing on), else the low watermark.
    int64_t pos = lo;
    if (auto it = next_offsets.find(p); it != next_offsets.end()) pos = std::max(pos, it->second);
    if (auto it = eof_offsets.find(p); it != eof_offsets.end()) pos = std::max(pos, it->second);
    lag += std::max<int64_t>(0, hi - pos);
    known = true;
  }
  return known ? lag : -1;
}

void KafkaSource::Impl::publish_metrics(int64_t now_ns) {
  const int64_t lag = compute_lag();
  st.lag_messages = lag;
  if (metrics) {
    metrics->counter("kafka_messages_total", "Kafka messages consumed").Increment(double(st.messages - published.messages));
    metrics->counter("kafka_decode_errors_total", "Kafka messages that failed to decode")
        .Increment(double(st.decode_errors - published.decode_errors));
    metrics->counter("kafka_dlq_total", "Bad Kafka messages sent to the dead-letter topic")
        .Increment(double(st.dlq - published.dlq));
    metrics->counter("kafka_lost_messages_total", "Kafka offsets skipped unread (retention, offset reset)")
        .Increment(double(st.lost_messages - published.lost_messages));
    metrics->gauge("kafka_lag_messages", "Messages behind the high watermark, over assigned partitions").Set(double(lag));
    if (published_at_ns > 0 && now_ns > published_at_ns) {
      metrics->gauge("kafka_consume_rate_per_s", "Kafka messages consumed per second")
          .Set(double(st.messages - published.messages) * 1e9 / double(now_ns - published_at_ns));
    }
  }
  published = st;
  published_at_ns = now_ns;
}

Result<std::unique_ptr<KafkaSource>> KafkaSource::open(const KafkaSourceOptions& o, SymbolTable& symbols,
                                                       InputErrors& errors, Metrics* metrics) {
  if (o.topic.empty()) return Status(StatusCode::kInvalidArgument, "kafka source: --topic is required");
  crypto::Venue venue{};
  if (!o.encoding.empty() && !crypto::parse_venue(o.encoding, venue)) {
    return Status(StatusCode::kInvalidArgument,
                  "kafka source: unknown --encoding '" + o.encoding +
                      "' (ticksentry, binance-json, coinbase-json, kraken-json, bitstamp-json, bitstamp-l3)");
  }
  KafkaProps props = {{"group.id", o.group},
                      {"enable.auto.commit", "false"},
                      {"auto.offset.reset", "earliest"},
                      {"partition.assignment.strategy", "cooperative-sticky"},
                      {"enable.partition.eof", o.exit_at_eof ? "true" : "false"}};
  for (const auto& [k, v] : o.props) props[k] = v;
  if (!o.brokers.empty()) props["bootstrap.servers"] = o.brokers;
  if (!props.count("bootstrap.servers")) {
    return Status(StatusCode::kInvalidArgument, "kafka source: --brokers (or kafka.consumer bootstrap.servers) is required");
  }
  auto impl = std::make_unique<Impl>(o, symbols, errors, metrics);
  if (!o.encoding.empty()) impl->venue = crypto::make_venue_decoder(venue, symbols, errors);
  if (!o.dlq_topic.empty()) {
    KafkaProps dp = o.dlq_props;
    dp["bootstrap.servers"] = props["bootstrap.servers"];
    auto p = KafkaProducer::create(dp);
    if (!p.is_ok()) return p.status().with_context("kafka dead-letter producer");
    impl->dlq = std::move(p).value();
  }
  auto conf = kafka_conf(props);
  if (!conf.is_ok()) return conf.status().with_context("kafka source");
  rd_kafka_conf_set_opaque(conf.value(), impl.get());
  rd_kafka_conf_set_rebalance_cb(conf.value(), [](rd_kafka_t*, rd_kafka_resp_err_t err,
                                                  rd_kafka_topic_partition_list_t* parts, void* opaque) {
    static_cast<Impl*>(opaque)->on_rebalance(err, parts);
  });
  char err[512];
  impl->rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf.value(), err, sizeof err);
  if (!impl->rk) {
    rd_kafka_conf_destroy(conf.value());
    return Status(StatusCode::kInvalidArgument, std::string("kafka source: ") + err);
  }
  rd_kafka_poll_set_consumer(impl->rk);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, o.topic.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t serr = rd_kafka_subscribe(impl->rk, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (serr) {
    rd_kafka_destroy(impl->rk);
    impl->rk = nullptr;
    return Status(StatusCode::kInvalidArgument, "kafka source: subscribe " + o.topic + ": " + rd_kafka_err2str(serr));
  }
  return std::unique_ptr<KafkaSource>(new KafkaSource(std::move(impl)));
}

KafkaSource::KafkaSource(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KafkaSource::~KafkaSource() {
  if (impl_->rk) {
    rd_kafka_consumer_close(impl_->rk);
    rd_kafka_destroy(impl_->rk);
  }
}

size_t KafkaSource::next_batch(std::span<Event> out) {
  Impl& m = *impl_;
  size_t n = 0;
  int timeout_ms = m.opt.poll_timeout_ms;
  if (m.venue) n += m.drain_venue(out);
  while (n < out.size()) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(m.rk, timeout_ms);
    if (!msg) break;
    timeout_ms = 0;  // take what is buffered, do not wait again within one batch
    if (msg->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) m.last_message_ns = mono_ns();
    if (msg->err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      // A partition that starts past its expected offset and holds nothing more lost the gap too.
      m.check_offset(msg->partition, msg->offset);
      m.expected[msg->partition] = msg->offset;
      m.at_eof.insert(msg->partition);
      m.eof_offsets[msg->partition] = msg->offset;
    } else if (msg->err) {
      spdlog::warn("kafka: {}", rd_kafka_message_errstr(msg));
    } else {
      ++m.st.messages;
      m.check_offset(msg->partition, msg->offset);
      m.at_eof.erase(msg->partition);
      m.next_offsets[msg->partition] = msg->offset + 1;
      if (m.venue) {
        n += m.decode_venue(msg, out.subspan(n));
      } else if (m.decode(msg, out[n])) {
        ++m.st.decoded;
        ++n;
      }
    }
    rd_kafka_message_destroy(msg);
  }
  if (m.dlq) m.dlq->poll();
  const int64_t now = mono_ns();
  if (now >= m.next_publish_ns) {
    m.next_publish_ns = now + 1'000'000'000;
    m.publish_metrics(now);
  }
  return n;
}

bool KafkaSource::done() const {
  const Impl& m = *impl_;
  if (!m.opt.exit_at_eof || !m.assigned_once || m.assigned.empty()) return false;
  if (m.venue && m.venue_at < m.venue_events.size()) return false;
  if (mono_ns() - m.last_message_ns < int64_t(m.opt.eof_idle_ms) * 1'000'000) return false;
  for (int32_t p : m.assigned) {
    if (!m.at_eof.count(p)) return false;
  }
  // An EOF seen before newer messages arrived is stale: the cached high watermarks say so.
  return m.compute_lag() <= 0;
}

bool KafkaSource::loss_is_error() const { return !impl_->opt.props.count("auto.offset.reset"); }

std::string KafkaSource::describe() const {
  return "kafka topic " + impl_->opt.topic + " group " + impl_->opt.group;
}

void KafkaSource::feed_counters(FeedCounters& out) const {
  if (impl_->venue) crypto::add_decoder_counters(impl_->venue->venue(), impl_->venue->counters(), out);
}

KafkaSourceStats KafkaSource::stats() {
  impl_->st.lag_messages = impl_->compute_lag();
  return impl_->st;
}

void KafkaSource::flush_metrics() { impl_->publish_metrics(mono_ns()); }

Status KafkaSource::commit() {
  Impl& m = *impl_;
  if (m.next_offsets.empty()) return Status::ok();
  rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(int(m.next_offsets.size()));
  for (const auto& [p, off] : m.next_offsets) {
    rd_kafka_topic_partition_list_add(list, m.opt.topic.c_str(), p)->offset = off;
  }
  const rd_kafka_resp_err_t err = rd_kafka_commit(m.rk, list, /*async=*/0);
  rd_kafka_topic_partition_list_destroy(list);
  if (err) return Status(StatusCode::kIoError, "kafka commit " + m.opt.topic + ": " + rd_kafka_err2str(err));
  return Status::ok();
}

}  // namespace ts
