// libFuzzer target for the HTTP server's own request handling (src/http): the bytes one client
// sends on a connection, read by RequestFramer (http/request_framer.h) — the connection gate's
// framing: head end and max_header_bytes (431), Content-Length and chunked bodies against
// max_body_bytes (413, chunked ones while decoding), ambiguous framing (400), 100-continue,
// pipelined requests — then each request it hands on is checked and given to the token check
// (http_auth.h: Bearer header, token parameter, cookie, the CSRF header) and the login link's
// redirect target, as the server's pre-routing handler does.
// Not here: cpp-httplib's own request-line and header parsing and the routes behind it (the
// library's; tests/http drive them over loopback).
//
// Input: byte 0 picks max_header_bytes (1024 + 256 * (b & 15)), byte 1 max_body_bytes
// (1024 + 64 * b), byte 2 how the bytes arrive (pieces of 1 + b % 61 bytes); the rest is what the
// client sends. Checks:
//   - the bytes read whole and read in pieces give the same requests, 100-continues and refusal
//     (framing must not depend on how TCP cuts the stream: a difference is a smuggling shape);
//   - every request handed on is framed by Content-Length alone (parse_request_head: not bad, no
//     chunked, the length equal to the body), its body within max_body_bytes;
//   - the token check says ok only for a request that carries the token; a redirect target is a
//     path on this server ("/...", not "//" or "/\", no control characters).
//   build/fuzz/fuzz/http_fuzz -max_total_time=60 fuzz/corpus/http_fuzz   (bench/fuzz.sh)
#include <httplib.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "http/framing_util.h"  // tests/http: the reading loop the unit tests use
#include "http/http_auth.h"
#include "http/request_framer.h"

namespace {

constexpr const char* kToken = "fz6token";

using ts::http::testing::Framed;

// Every request, 100-continue and refusal of `wire` read in pieces of `piece` bytes (0: whole).
Framed frame(std::string_view wire, size_t piece, const ts::http::HttpLimits& limits) {
  Framed out = ts::http::testing::frame(wire, piece, limits);
  if (out.requests.size() > wire.size()) __builtin_trap();  // requests out of nothing
  if (out.refused_status != 0 && out.refused_status != 400 && out.refused_status != 413 && out.refused_status != 431) {
    __builtin_trap();
  }
  return out;
}

// The request as cpp-httplib hands it to the pre-routing handler, read simply: method, path,
// query parameters, headers.
httplib::Request as_httplib(std::string_view request) {
  httplib::Request req;
  const size_t line_end = request.find("\r\n");
  const std::string_view line = request.substr(0, line_end);
  const size_t sp1 = line.find(' ');
  req.method = std::string(line.substr(0, sp1));
  const std::string_view rest = sp1 == std::string_view::npos ? std::string_view() : line.substr(sp1 + 1);
  const std::string_view target = rest.substr(0, rest.find(' '));
  const size_t q = target.find('?');
  req.path = std::string(target.substr(0, q));
  if (q != std::string_view::npos) {
    std::string_view query = target.substr(q + 1);
    while (!query.empty()) {
      const std::string_view kv = query.substr(0, query.find('&'));
      const size_t eq = kv.find('=');
      req.params.emplace(std::string(kv.substr(0, eq)), eq == std::string_view::npos ? "" : std::string(kv.substr(eq + 1)));
      query.remove_prefix(std::min(query.size(), kv.size() + 1));
    }
  }
  size_t pos = line_end == std::string_view::npos ? request.size() : line_end + 2;
  while (pos < request.size()) {
    const size_t end = request.find("\r\n", pos);
    if (end == std::string_view::npos || end == pos) break;
    const std::string_view h = request.substr(pos, end - pos);
    const size_t colon = h.find(':');
    if (colon != std::string_view::npos) {
      std::string_view v = h.substr(colon + 1);
      while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      req.headers.emplace(std::string(h.substr(0, colon)), std::string(v));
    }
    pos = end + 2;
  }
  return req;
}

void check_request(const std::string& request, const ts::http::HttpLimits& limits) {
  const size_t head_end = ts::http::request_head_end(request);
  if (head_end == 0) __builtin_trap();  // handed on without a whole head
  const ts::http::RequestHead head = ts::http::parse_request_head(std::string_view(request).substr(0, head_end));
  const size_t body = request.size() - head_end;
  if (head.bad || head.body == ts::http::RequestHead::Body::kChunked) __builtin_trap();
  if (head.body == ts::http::RequestHead::Body::kLength ? head.content_length != body : body != 0) __builtin_trap();
  if (body > uint64_t(limits.max_body_bytes)) __builtin_trap();

  const httplib::Request req = as_httplib(request);
  if (ts::http::check_token(req, kToken) == ts::http::AuthResult::kOk && request.find(kToken) == std::string::npos) {
    __builtin_trap();  // let in without the token
  }
  const std::string target = ts::http::login_redirect_target(req.path);
  if (target.empty() || target[0] != '/' || (target.size() > 1 && (target[1] == '/' || target[1] == '\\'))) __builtin_trap();
  for (unsigned char c : target) {
    if (c < 0x20 || c == 0x7f || c == '\\') __builtin_trap();
  }
  if (target != "/" && target != req.path) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3) return 0;
  ts::http::HttpLimits limits;
  limits.max_header_bytes = 1024 + 256 * (data[0] & 15);
  limits.max_body_bytes = 1024 + 64 * int64_t(data[1]);
  const size_t piece = 1 + data[2] % 61;
  const std::string_view wire(reinterpret_cast<const char*>(data) + 3, size - 3);
  const Framed whole = frame(wire, 0, limits);
  const Framed pieces = frame(wire, piece, limits);
  if (std::getenv("HTTP_FUZZ_VERBOSE")) {  // what each reading gave (to read a finding)
    for (const Framed* f : {&whole, &pieces}) {
      std::fprintf(stderr, "http_fuzz: %s: %zu requests, %d continues, refused %d, %zu bytes left\n",
                   f == &whole ? "whole" : "pieces", f->requests.size(), f->continues, f->refused_status, f->left.size());
    }
  }
  if (!(whole == pieces)) __builtin_trap();  // the framing depends on how the bytes arrive
  for (const std::string& r : whole.requests) check_request(r, limits);
  return 0;
}
