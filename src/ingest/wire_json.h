#pragma once
// ticksentry's JSON wire format, version 1 (docs/kafka.md): one object per message, e.g.
//   {"v":1,"kind":"trade","symbol":"GOOG","seq":12,"exch_ts_ns":1340285400012000000,
//    "ref":{"prev_close":57800,"st":false},"price":57812,"qty":100,"aggressor":"B",
//    "buy_order_id":0,"sell_order_id":0}
// Prices in integer ticks, sizes in shares, times in ns since the Unix epoch. Fields may come in
// any order; a field the kind does not have, a missing required field, a wrong type, a duplicate
// field or trailing content is an error (counted, with the reason).
// Threading: a WireJsonDecoder is used by one thread (it owns a simdjson parser and buffer).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "ingest/wire_format.h"

namespace ts {

// Appends the JSON encoding of `w` to `out` (no trailing newline).
void wire_json_append(const WireEvent& w, std::string& out);

class WireJsonDecoder {
 public:
  // Messages longer than `max_message_bytes` are refused (kMalformedLine, "message too large").
  // The parser and its padded copy buffer are allocated here, once.
  explicit WireJsonDecoder(size_t max_message_bytes = 64 * 1024);
  ~WireJsonDecoder();
  WireJsonDecoder(const WireJsonDecoder&) = delete;
  WireJsonDecoder& operator=(const WireJsonDecoder&) = delete;

  // Decodes one message. On success `out.symbol` points into the decoder's buffer and stays
  // valid until the next decode().
  WireDecodeStatus decode(std::span<const uint8_t> bytes, WireEvent& out);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ts
