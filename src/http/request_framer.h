#pragma once
// RequestFramer: the connection gate's reading of one request after another out of a
// connection's input bytes (connection_gate.h), without the socket, the clock or the threads, so
// that tests and the HTTP fuzz target (fuzz/http_fuzz.cpp) run the gate's own framing:
//   - the head, up to HttpLimits::max_header_bytes with its blank line (longer: 431, however the
//     bytes arrive);
//   - its framing headers (request_head.h; malformed: 400);
//   - the body: Content-Length (over max_body_bytes: 413 before a byte of it is read) or chunked
//     (decoded as it arrives; 413 at the first chunk past max_body_bytes, never read whole);
//   - the request handed on with a Content-Length body (Transfer-Encoding and Expect removed).
// Pipelined requests come out one per call. Pure; one thread at a time (the gate's I/O thread).
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "http/http_limits.h"
#include "http/request_head.h"

namespace ts::http {

enum class GateRefusal {
  kTooManyConnections,  // 503
  kTooManyFromClient,   // 429
  kTimeout,             // 408 (head or body too slow)
  kHeaderTooLarge,      // 431
  kBodyTooLarge,        // 413
  kBadFraming,          // 400
};
// The http_errors_total kind: "too_many_connections", "too_many_from_client", "timeout",
// "header_too_large", "body_too_large", "bad_request".
const char* gate_refusal_name(GateRefusal r);

class RequestFramer {
 public:
  enum class Step {
    kMore,     // the request is not whole yet: wait for more bytes
    kRequest,  // take_request() holds one whole request; the framer reads the next one next
    kRefuse,   // refusal() says why; the connection reads nothing more
  };
  struct Refusal {
    GateRefusal kind = GateRefusal::kBadFraming;
    int status = 400;
    std::string why;
  };

  // Reads from `in`, the connection's unread bytes: a whole request's bytes are erased from it
  // (what follows is the next request's); the bytes of a chunked body are erased as they are
  // decoded. `limits` must be the same on every call.
  Step advance(std::string& in, const HttpLimits& limits);
  // The request a kRequest step read: its head (Transfer-Encoding and Expect removed when the
  // body was chunked or the client expected 100-continue) and body, Content-Length framed.
  std::string take_request() { return std::move(request_); }
  const Refusal& refusal() const { return refusal_; }
  // The current request's head was read whole (the gate's body timeout runs from here).
  bool head_read() const { return head_len_ != 0; }
  // True once for each head with "Expect: 100-continue" and a body: the gate answers
  // "HTTP/1.1 100 Continue" then (before the refusal when the same bytes also brought a bad body).
  bool take_continue() { return std::exchange(continue_due_, false); }
  // Forgets a half-read request (the connection was refused or timed out).
  void reset();

 private:
  Step refuse(GateRefusal kind, int status, std::string why);

  size_t head_len_ = 0;  // 0 while the head is incomplete
  RequestHead head_;
  std::unique_ptr<ChunkedDecoder> chunked_;
  size_t chunk_pos_ = 0;  // offset in `in` the decoder reads next
  std::string body_;      // decoded chunked body
  bool continue_due_ = false;
  std::string request_;
  Refusal refusal_;
};

}  // namespace ts::http
