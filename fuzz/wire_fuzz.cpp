// libFuzzer target for the Kafka wire codecs (ingest/wire_format.h, docs/kafka.md): every input
// is decoded as a binary message and as a JSON message. A decode may refuse (with a reason);
// none may crash, read past the message or throw. What decodes must survive the round trip:
//   - binary: re-encoding gives back the very same bytes (the layout is canonical: zero
//     padding, flags and lengths are checked), and its JSON encoding decodes to the same event;
//   - JSON: the JSON and binary encodings of the event decode to the same event again.
//   build/fuzz/fuzz/wire_fuzz -max_total_time=60 fuzz/corpus/wire_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "ingest/wire_binary.h"
#include "ingest/wire_json.h"
#include "same_event.h"

namespace {

bool same_wire(const ts::WireEvent& a, const ts::WireEvent& b) {
  return a.symbol == b.symbol && a.prev_close == b.prev_close && a.is_st == b.is_st &&
         ts::fuzz::same_event(a.event, b.event);
}

std::span<const uint8_t> as_bytes(const std::string& s) {
  return {reinterpret_cast<const uint8_t*>(s.data()), s.size()};
}

// Both encodings of `w` decode to `w` again.
void round_trip(const ts::WireEvent& w, ts::WireJsonDecoder& json) {
  const std::string sym(w.symbol);  // `w.symbol` may point into the decoder's buffer
  ts::WireEvent copy = w;
  copy.symbol = sym;
  std::string bin;
  ts::wire_binary_append(copy, bin);
  ts::WireEvent back;
  if (!ts::wire_binary_decode(as_bytes(bin), back).ok() || !same_wire(copy, back)) __builtin_trap();
  std::string text;
  ts::wire_json_append(copy, text);
  if (!json.decode(as_bytes(text), back).ok() || !same_wire(copy, back)) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static ts::WireJsonDecoder json;
  const std::span<const uint8_t> bytes(data, size);
  ts::WireEvent w;
  if (ts::wire_binary_decode(bytes, w).ok()) {
    std::string again;
    ts::wire_binary_append(w, again);
    if (again.size() != size || std::memcmp(again.data(), data, size) != 0) __builtin_trap();
    round_trip(w, json);
  }
  ts::WireEvent j;
  if (json.decode(bytes, j).ok()) round_trip(j, json);
  return 0;
}
