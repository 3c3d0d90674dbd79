#pragma once
// Reads every request out of a connection's bytes with RequestFramer, the bytes arriving in
// pieces of a given size: shared by tests/http/request_framer_test.cpp and fuzz/http_fuzz.cpp.
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "http/request_framer.h"

namespace ts::http::testing {

struct Framed {
  std::vector<std::string> requests;
  int continues = 0;       // "100 Continue" answers due
  int refused_status = 0;  // 400, 413 or 431 when the connection was refused
  std::string left;        // bytes not yet part of a request

  // The same reading (the bytes left only matter when nothing was refused).
  bool operator==(const Framed& o) const {
    return requests == o.requests && continues == o.continues && refused_status == o.refused_status &&
           (refused_status != 0 || left == o.left);
  }
};

// Feeds `wire` in pieces of `piece` bytes (0: whole), reading every request it completes, until
// the bytes end or the connection is refused.
inline Framed frame(std::string_view wire, size_t piece, const HttpLimits& limits) {
  Framed out;
  RequestFramer f;
  std::string in;
  for (size_t at = 0; at < wire.size() && out.refused_status == 0;) {
    const size_t n = piece == 0 ? wire.size() : std::min(piece, wire.size() - at);
    in.append(wire.substr(at, n));
    at += n;
    for (;;) {
      const auto step = f.advance(in, limits);
      out.continues += f.take_continue() ? 1 : 0;
      if (step == RequestFramer::Step::kRequest) {
        out.requests.push_back(f.take_request());
        continue;
      }
      if (step == RequestFramer::Step::kRefuse) out.refused_status = f.refusal().status;
      break;
    }
  }
  out.left = in;
  return out;
}

}  // namespace ts::http::testing
