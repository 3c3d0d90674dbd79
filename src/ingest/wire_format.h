#pragma once
// ticksentry's Kafka wire formats, version 1 (docs/kafka.md is the reference):
//   - "json":   one JSON object per message, decoded with simdjson (ingest/wire_json.h);
//   - "binary": a fixed little-endian layout per event kind (ingest/wire_binary.h).
// Both carry one normalized Event plus the symbol's name and the reference data a consumer
// needs to rebuild the symbol's limit band (prev_close, ST flag). Messages are keyed by symbol.
//
// Decoding never throws and never allocates: a bad message yields a WireDecodeStatus with the
// InputError kind it is counted as and a static reason string ("binary: body length 12 != 40
// for trade" style details are not built on the hot path; the reason names the failed check).
#include <cstdint>
#include <string_view>

#include "core/event.h"
#include "core/input_errors.h"

namespace ts {

enum class WireEncoding : uint8_t { kJson = 0, kBinary };
const char* wire_encoding_name(WireEncoding e);  // "json", "binary"
// Parses "json" / "binary"; false for anything else.
bool parse_wire_encoding(std::string_view s, WireEncoding& out);

constexpr uint8_t kWireVersion = 1;

// A decoded message. `symbol` points into the message bytes (valid while they are), and
// `event.symbol` is left kInvalidSymbol: the consumer interns the name.
struct WireEvent {
  Event event;
  std::string_view symbol;
  Price prev_close = 0;  // ticks; 0 = not known to the producer
  bool is_st = false;    // A-share special treatment (±5% band)
};

// The outcome of a decode: ok, or the kind it counts as and why (a string literal).
struct WireDecodeStatus {
  InputError kind = InputError::kMalformedLine;
  const char* reason = nullptr;  // nullptr = ok
  bool ok() const { return reason == nullptr; }
  static WireDecodeStatus success() { return {}; }
  static WireDecodeStatus fail(InputError k, const char* why) { return {k, why}; }
};

// Checks a decoded event the same way the csv source does (docs/formats.md): valid symbol
// name, prices and sizes in range, sides and phases known, no crossed snapshot, no NaN.
WireDecodeStatus wire_validate(const WireEvent& w);

}  // namespace ts
