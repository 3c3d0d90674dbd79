#pragma once
// ticksentry's compact binary wire format, version 1: fixed little-endian layouts, one event per
// Kafka message (docs/kafka.md has the byte tables). A message is
//   header (32 bytes) | body (fixed size per kind) | symbol name (1..32 bytes)
// header: 'T' 'K' | version u8 | kind u8 | symbol_len u8 | flags u8 (bit 0: ST) |
//         body_bytes u16 | seq u64 | exch_ts_ns i64 | prev_close_ticks i64
// bodies: snapshot 360, trade 40, order_add/cancel/execute 32, status 8 bytes; padding is zero.
// Threading: free functions, no state; safe from any thread.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "ingest/wire_format.h"

namespace ts {

constexpr size_t kWireBinaryHeaderBytes = 32;
constexpr size_t kWireBinaryMaxSymbolBytes = 32;
// Body size of `kind` (0 for an unknown kind).
size_t wire_binary_body_bytes(EventKind kind);
// The largest message: header + snapshot body + longest symbol.
constexpr size_t kWireBinaryMaxBytes = kWireBinaryHeaderBytes + 360 + kWireBinaryMaxSymbolBytes;

// Writes `w` (its event and symbol) into `buf` and returns the bytes written, or 0 if `buf` is
// too small or the symbol is empty/longer than 32 bytes. Nothing is validated beyond that.
size_t wire_binary_encode(const WireEvent& w, std::span<uint8_t> buf);
// Appends the encoding to `out` (publish and tests; allocates).
void wire_binary_append(const WireEvent& w, std::string& out);

// Decodes one message. On success `out.symbol` points into `bytes`. Checks: length, magic,
// version, kind, sizes, zero padding and flags, then wire_validate().
WireDecodeStatus wire_binary_decode(std::span<const uint8_t> bytes, WireEvent& out);

}  // namespace ts
