#pragma once
// WsSource: `run --source ws --venue binance --url ...` — a live venue websocket (WsClient)
// decoded by the venue's decoder (ingest/crypto/venue_decoder.h, the one the capture files and
// Kafka topics use) into events.
//
// - The client's thread decodes each message as it arrives (REST snapshots first after every
//   (re)connection, so the decoder resynchronises its books: a gap while the link was down is
//   counted and the book stays stale until the snapshot) and queues the events; next_batch()
//   hands them on from the pipeline's thread.
// - exch_ts_ns is kept non-decreasing over the stream (as the capture source does); seq is the
//   message number; recv_ts_ns is left to the replayer.
// - done() once the client gave up (max_attempts failed connections in a row, or at once on a
//   certificate that does not verify) and the queue is empty; with max_attempts 0 it never is
//   (stop with --duration or Ctrl-C).
// Threading: SymbolTable::intern and the InputErrors run on the client thread (the source's
// thread); next_batch() on one consumer thread.
#include <memory>
#include <string>

#include "core/input_errors.h"
#include "core/status.h"
#include "core/symbol_table.h"
#include "ingest/crypto/venue_decoder.h"
#include "ingest/source.h"
#include "ingest/ws/ws_client.h"

namespace ts {

class WsSource : public Source {
 public:
  // Errors: kInvalidArgument (unknown venue, bad URL, unreadable --ca-file).
  static Result<std::unique_ptr<WsSource>> open(const std::string& venue, WsClientOptions options,
                                                SymbolTable& symbols, InputErrors& errors);
  ~WsSource() override;

  size_t next_batch(std::span<Event> out) override;
  bool done() const override;
  std::string describe() const override;
  // The venue decoder's counters (as of the last decoded message) under the venue's name, and
  // the connection's under "ws": connections, disconnects, failed_connects, messages,
  // snapshots, bytes, tls_failures. Any thread.
  void feed_counters(FeedCounters& out) const override;
  // Stops the client (joins its thread); the decoder's counters are then stable.
  void stop();
  const crypto::DecoderCounters& counters() const;
  const WsClientStats& client_stats() const;
  std::string last_error() const;
  // The client ended on an error retrying cannot fix (a certificate that does not verify).
  bool fatal() const;

 private:
  struct Impl;
  explicit WsSource(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts
