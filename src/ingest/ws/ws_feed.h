#pragma once
// WsFeed: what `run --source ws` does with each websocket message (ws_client.h's WsMessage: a
// stream frame's text or a REST snapshot body) once Boost.Beast has read it off the connection:
// the venue's decoder (ingest/crypto/venue_decoder.h, the one capture files and Kafka topics use)
// turns it into events, exch_ts_ns is kept non-decreasing over the feed (as the capture source
// does), seq is the message number and recv_ts_ns is left to the replayer (0).
//
// Pure: no socket, no thread, no coroutine. WsSource calls it on the client's thread; the
// websocket fuzz target (fuzz/ws_fuzz.cpp) feeds it the messages Beast decodes from fuzzed frames,
// with a compiler (clang 14) that cannot build the coroutine client.
// Threading: one thread at a time (the decoder and the SymbolTable interning are not shared).
#include <cstdint>
#include <memory>
#include <vector>

#include "core/event.h"
#include "core/input_errors.h"
#include "core/symbol_table.h"
#include "ingest/crypto/venue_decoder.h"
#include "ingest/ws/ws_client.h"

namespace ts {

class WsFeed {
 public:
  WsFeed(crypto::Venue venue, SymbolTable& symbols);
  WsFeed(const WsFeed&) = delete;
  WsFeed& operator=(const WsFeed&) = delete;

  // Decodes one message and appends its events to `out`. A bad message adds no event: it is
  // counted in errors() (reported as file "ws", line = its message number) and in counters().
  void decode(const WsMessage& m, std::vector<Event>& out);

  crypto::Venue venue() const { return decoder_->venue(); }
  const crypto::DecoderCounters& counters() const { return decoder_->counters(); }
  // The bad input seen so far (logged as it is reported).
  const InputErrors& errors() const { return errors_; }
  // Messages decoded so far (the last one's number).
  uint64_t messages() const { return messages_; }

 private:
  InputErrors errors_;  // before the decoder, which holds a reference to it
  std::unique_ptr<crypto::VenueDecoder> decoder_;
  uint64_t messages_ = 0;
  int64_t last_ts_ns_ = 0;
};

}  // namespace ts
