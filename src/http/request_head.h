#pragma once
// What the connection gate (connection_gate.h) needs to know about a request before any thread
// of the server works on it: where its head ends, how its body is framed, and a de-chunker.
// Pure functions over bytes; nothing here touches a socket.
//
// The gate reads a whole request (head and body) off the socket itself and hands the server a
// complete request with a Content-Length body: a chunked body is decoded here as it arrives, so
// the body limit holds while reading (413 at the first byte over it, not after 300 MB).
#include <cstdint>
#include <string>
#include <string_view>

namespace ts::http {

// The offset just past the head's blank line ("\r\n\r\n"), or 0 while the head is incomplete.
size_t request_head_end(std::string_view bytes);

struct RequestHead {
  enum class Body { kNone, kLength, kChunked };
  Body body = Body::kNone;
  uint64_t content_length = 0;  // kLength only
  bool expect_continue = false; // "Expect: 100-continue"
  bool bad = false;             // malformed framing (both or repeated length headers, a bad number,
                                // a transfer coding other than chunked): 400
  std::string why;              // what was bad
};

// Reads the framing headers of `head` (request line and headers, ending in "\r\n\r\n").
RequestHead parse_request_head(std::string_view head);

// `head` with Transfer-Encoding and Expect removed and "Content-Length: body_bytes" in their
// place (the gate answers 100-continue itself and hands the server a decoded body).
std::string rewrite_request_head(std::string_view head, uint64_t body_bytes);

// Incremental decoder of a chunked body (RFC 9112 §7.1; extensions and trailers are skipped).
class ChunkedDecoder {
 public:
  enum class State { kMore, kDone, kBad, kTooLarge };
  explicit ChunkedDecoder(uint64_t max_body_bytes) : max_(max_body_bytes) {}
  // Consumes bytes from `in` (returns how many: on kDone, the bytes after the body are the next
  // request's), appending decoded data to `body`. kTooLarge as soon as the body would pass the
  // limit; kBad on malformed framing (also a size line or trailer longer than 4 KiB).
  State feed(std::string_view in, std::string* body, size_t* consumed);
  State state() const { return state_; }

 private:
  enum class Phase { kSize, kData, kDataEnd, kTrailer };
  uint64_t max_;
  Phase phase_ = Phase::kSize;
  State state_ = State::kMore;
  uint64_t remaining_ = 0;  // of the current chunk
  std::string line_;        // a size or trailer line being read
};

}  // namespace ts::http
