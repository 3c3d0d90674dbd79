#pragma once
// One line of a crypto capture file, split into its receive time, its role and the venue JSON.
// Accepted forms (docs/formats.md, "Crypto venues"):
//   <json>                               a venue message, no receive time
//   <ns> <json>                          receive time in ns since the epoch (19 digits; 13 = ms,
//                                        10 = s are read by their size)
//   <epoch seconds>: <json>              receive time as decimal seconds (cryptofeed)
//   <ms> <event> <json>                  Bitstamp's 2015 order-level log ("order_created", ...)
//   <url> <-> <epoch>                    cryptofeed: a connection was opened
//   <url> <- <epoch>: <json>             cryptofeed: a message WE sent (subscribe): not data
//   <url> -> <epoch>: <json>             cryptofeed: a REST response body (depth snapshot)
// Pure function; safe from any thread.
#include <cstdint>
#include <string_view>

namespace ts::crypto {

enum class CaptureKind : uint8_t {
  kMessage = 0,  // a received venue message
  kRest,         // a REST body (url set)
  kSent,         // a message the recorder sent
  kConnect,      // a connection marker
  kBlank,        // empty or whitespace-only
  kBad,          // none of the forms above (detail in `why`)
};

struct CaptureLine {
  CaptureKind kind = CaptureKind::kBad;
  int64_t recv_ns = 0;          // 0 = the line has no receive time
  std::string_view url;         // kRest/kSent/kConnect
  std::string_view event;       // Bitstamp L3: the word before the JSON
  std::string_view json;        // kMessage/kRest/kSent
  const char* why = nullptr;    // kBad: what is wrong
};

CaptureLine parse_capture_line(std::string_view line);

}  // namespace ts::crypto
