#pragma once
// The `kafka` source: a librdkafka consumer-group member reading market data from one topic
// (docs/kafka.md). Each message holds one event in the JSON or the binary wire format
// (ingest/wire_format.h), told apart per message by its first bytes ('T','K' = binary), keyed by
// symbol. Symbols are interned by name as they arrive; a message's reference data (prev_close,
// ST) and a snapshot's prev_close update the symbol table, as the csv source does.
//
// With a venue encoding (KafkaSourceOptions::encoding) the messages are the venue's own JSON.
// Bad messages are counted in `errors` (kind per docs/kafka.md; "file" = topic[partition],
// "line" = offset), and, when `dlq_topic` is set, copied unchanged (key and value) to the dead-
// letter topic with headers ticksentry.error.kind, ticksentry.error.reason,
// ticksentry.source.topic, .partition, .offset.
//
// Scale-out: several instances with one group.id split the topic's partitions (librdkafka's
// consumer-group protocol, cooperative-sticky assignment unless [kafka.consumer] says otherwise).
//
// A live source is never done(), unless exit_at_eof: then done() once every assigned partition
// has reached its end and no message has arrived for eof_idle_ms (tests, benchmarks, catching up
// a backlog; the idle time lets a consumer that keeps pace with a producer see its last message).
// Lost messages: the source knows where each assigned partition should continue (the group's
// committed offset, or offset 0 for a group that never committed) and counts every offset it
// skips as lost — a start behind the topic's retention (the first offsets were deleted before
// they were read), an offset reset (auto.offset.reset after an out-of-range position), or a
// mid-stream jump past offsets the broker deleted. Each loss is logged with the partition and the
// offset range. A jump over offsets that are still in the log (compaction, transaction markers)
// is not a loss.
// Metrics (when given a registry; published about once a second from the source thread):
// ticksentry_kafka_messages_total, ticksentry_kafka_decode_errors_total,
// ticksentry_kafka_dlq_total, ticksentry_kafka_lost_messages_total, ticksentry_kafka_lag_messages,
// ticksentry_kafka_consume_rate_per_s.
// Offsets: auto-commit is off. commit() commits the offsets of every event handed on so far; the
// caller calls it only once the alerts derived from those events are durable (after the pipeline
// has drained and its sinks have flushed): at-least-once delivery (docs/kafka.md).
// Threading: every method on one thread (the pipeline's source thread, or after the run).
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/metrics.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/source.h"
#include "kafka/kafka_config.h"

namespace ts {

struct KafkaSourceOptions {
  std::string brokers;            // bootstrap.servers (overrides props)
  std::string topic;              // market-data topic (required)
  std::string group = "ticksentry";  // group.id
  std::string dlq_topic;          // dead-letter topic; "" = bad messages are only counted
  // "" (default): ticksentry's wire formats (json/binary by first bytes). A venue encoding
  // ("binance-json", "coinbase-json", "kraken-json", "bitstamp-json", "bitstamp-l3"): each message
  // is one venue message as the venue sent it, decoded by that venue's VenueDecoder
  // (ingest/crypto/venue_decoder.h); its receive time is the Kafka message timestamp. A REST
  // depth snapshot travels on the same topic with its request URL as the message key
  // ("https://api.binance.com/api/v3/depth?symbol=BTCUSDT&limit=1000"). Gaps and checksum
  // mismatches are handled as in file replay (stale book until the next snapshot).
  std::string encoding;
  bool exit_at_eof = false;       // done() once all assigned partitions are at their end ...
  int eof_idle_ms = 2000;         // ... and nothing arrived for this long
  int poll_timeout_ms = 5;        // how long next_batch() waits when nothing is buffered
  KafkaProps props;               // librdkafka properties from [kafka.consumer]
  KafkaProps dlq_props;           // librdkafka properties from [kafka.producer]
};

struct KafkaSourceStats {
  uint64_t messages = 0;       // messages consumed (good and bad)
  uint64_t decoded = 0;        // events handed on
  uint64_t decode_errors = 0;  // bad messages
  uint64_t dlq = 0;            // bad messages sent to the dead-letter topic
  int64_t lag_messages = -1;   // high watermark − position over assigned partitions; -1 unknown
  uint64_t lost_messages = 0;  // offsets skipped (retention, offset reset): never read, see above
};

class KafkaSource : public Source {
 public:
  // Creates the consumer and subscribes. Errors: kInvalidArgument for a missing topic/brokers
  // or a property librdkafka rejects.
  static Result<std::unique_ptr<KafkaSource>> open(const KafkaSourceOptions& options, SymbolTable& symbols,
                                                   InputErrors& errors, Metrics* metrics = nullptr);
  ~KafkaSource() override;

  size_t next_batch(std::span<Event> out) override;
  bool done() const override;
  std::string describe() const override;
  // With a venue encoding: the decoder's counters under the venue's name (sequence_gap, ...).
  void feed_counters(FeedCounters& out) const override;
  // Counters so far; lag is computed now from the cached high watermarks.
  KafkaSourceStats stats();
  // Publishes the counters to the metric registry now (also done about once a second by
  // next_batch()); call once more at the end of a run.
  void flush_metrics();
  // Commits (synchronously) the next offset of every owned partition that handed on events.
  Status commit();
  // True when [kafka.consumer] left auto.offset.reset at its default: a loss is then an error
  // the caller must not let pass (the run exits non-zero); set it to accept starting wherever
  // the topic now begins.
  bool loss_is_error() const;

 private:
  struct Impl;
  explicit KafkaSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts
