// libFuzzer target for the websocket feed (`run --source ws`, docs/formats.md "Websocket
// source"): the bytes a venue's server sends after the handshake, read as the client reads them.
// The frames are decoded by Boost.Beast's websocket::stream (the client has no frame parser of
// its own): header bits, opcodes, masking (a masked frame from a server is a protocol error),
// 7/16/64-bit lengths, fragmentation and continuation, control frames between fragments
// (pings answered, close codes), text and binary, under ws_stream_limits.h's limits, in the
// client role, after a real handshake; each message then goes through WsFeed (ws/ws_feed.h), the
// code WsSource runs per message: the venue's decoder, non-decreasing exchange times.
// Here the connection is Beast's in-memory test stream instead of a socket, and the reads are
// synchronous (the client's coroutines do not build with clang 14): the same stream, frame and
// message code.
//
// Input: a venue byte (mod 5, crypto::Venue), then three parts (fuzz_files.h, "\n@@\n"):
//   the REST snapshot URL @@ its body (none when empty) @@ the server's bytes after its 101.
// Checks: every read ends (the bytes end in EOF); no message is longer than the bytes given;
// events name known symbols, never go back in time and are accepted or refused by a BookSet;
// the decoder counts every message handed to it; a crash, a hang, a read past a buffer or an
// allocation that grows with a declared length (a 64-bit length with no payload) is a finding.
//   build/fuzz/fuzz/ws_fuzz -max_total_time=60 fuzz/corpus/ws_fuzz   (bench/fuzz.sh)
#include <boost/beast/_experimental/test/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/websocket.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "book/book_set.h"
#include "fuzz_files.h"
#include "ingest/ws/ws_feed.h"
#include "ingest/ws/ws_stream_limits.h"

namespace {

namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace net = boost::asio;

// The server's answer to the client's handshake request (`request`, as written by Beast).
std::string switching_protocols(beast::string_view request) {
  beast::string_view key;
  const beast::string_view name = "Sec-WebSocket-Key: ";
  const size_t at = request.find(name);
  if (at != std::string_view::npos) {
    const size_t start = at + name.size();
    key = request.substr(start, request.find("\r\n", start) - start);
  }
  websocket::detail::sec_ws_accept_type accept;
  websocket::detail::make_sec_ws_accept(accept, key);
  return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\nSec-WebSocket-Accept: " +
         std::string(accept.data(), accept.size()) + "\r\n\r\n";
}

struct FeedCheck {
  ts::SymbolTable& symbols;
  ts::BookSet books;
  ts::InputErrors book_errors;
  int64_t last_ts = INT64_MIN;
  uint64_t events = 0;

  explicit FeedCheck(ts::SymbolTable& s) : symbols(s), books(s) { book_errors.set_quiet(true); }

  void take(const std::vector<ts::Event>& batch) {
    for (const ts::Event& e : batch) {
      if (e.symbol >= symbols.size()) __builtin_trap();  // an event for a symbol nobody interned
      if (e.exch_ts_ns < last_ts) __builtin_trap();     // time went backwards past the feed
      if (e.recv_ts_ns != 0) __builtin_trap();          // the replayer's to set
      last_ts = e.exch_ts_ns;
      books.apply(e, book_errors);
    }
    events += batch.size();
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool quiet = ts::fuzz::quiet_logs();
  (void)quiet;
  // WS_FUZZ_VERBOSE=1: how each input's connection ended and what the decoder made of it (to check
  // that a seed reaches the frames and messages it is meant for).
  static const bool verbose = std::getenv("WS_FUZZ_VERBOSE") != nullptr;
  if (size == 0) return 0;
  const auto venue = static_cast<ts::crypto::Venue>(data[0] % ts::crypto::kVenueCount);
  const auto parts = ts::fuzz::split_parts(std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1), 3);
  const std::string_view url = parts[0], rest_body = parts[1], server_bytes = parts[2];

  ts::SymbolTable symbols;
  ts::WsFeed feed(venue, symbols);
  FeedCheck check(symbols);
  std::vector<ts::Event> batch;
  int64_t recv_ns = 1'700'000'000'000'000'000;
  uint64_t handed = 0;

  // After every connection the REST snapshot comes first (ws_client.h).
  if (!rest_body.empty()) {
    batch.clear();
    feed.decode(ts::WsMessage{ts::WsMessage::Kind::kSnapshot, rest_body, recv_ns, 1, url}, batch);
    ++handed;
    check.take(batch);
  }

  net::io_context ioc;
  beast::test::stream client_end(ioc), server_end(ioc);
  client_end.connect(server_end);
  websocket::stream<beast::test::stream&> ws(client_end);
  ts::apply_ws_read_limits(ws);
  // The handshake: Beast writes its request (a fresh key), the server's 101 answers that key,
  // then come the fuzzed bytes and the end of the connection.
  beast::error_code handshake_ec = net::error::would_block;
  ws.async_handshake("stream.venue.example:443", "/ws", [&](beast::error_code ec) { handshake_ec = ec; });
  ioc.poll();
  client_end.append(switching_protocols(server_end.str()));
  client_end.append(beast::string_view(server_bytes.data(), server_bytes.size()));
  client_end.close_remote();
  ioc.run();
  if (handshake_ec) __builtin_trap();  // a correct 101 must open the stream

  beast::flat_buffer buf;
  size_t message_bytes = 0;
  for (size_t reads = 0;; ++reads) {
    if (reads > server_bytes.size()) __builtin_trap();  // a frame is at least 2 bytes: no end in sight
    buf.clear();
    beast::error_code ec;
    ws.read(buf, ec);
    if (ec) {  // closed, EOF, or a protocol error: the connection ends (the client reconnects)
      if (verbose) std::fprintf(stderr, "ws_fuzz: %zu messages, then %s\n", size_t(handed), ec.message().c_str());
      break;
    }
    const auto bytes = buf.cdata();
    const std::string_view text(static_cast<const char*>(bytes.data()), bytes.size());
    message_bytes += text.size();
    if (message_bytes > server_bytes.size()) __builtin_trap();  // more payload than was sent
    recv_ns += 1000;
    batch.clear();
    feed.decode(ts::WsMessage{ts::WsMessage::Kind::kStream, text, recv_ns, 1, {}}, batch);
    ++handed;
    check.take(batch);
  }
  const ts::crypto::DecoderCounters& c = feed.counters();
  if (c.messages != handed || feed.messages() != handed) __builtin_trap();  // a message lost or doubled
  if (c.events != check.events) __builtin_trap();
  if (c.bad_messages > c.messages || c.ignored > c.messages) __builtin_trap();
  if (verbose) {
    std::fprintf(stderr, "ws_fuzz: decoder messages %llu events %llu ignored %llu bad %llu\n", (unsigned long long)c.messages,
                 (unsigned long long)c.events, (unsigned long long)c.ignored, (unsigned long long)c.bad_messages);
  }
  return 0;
}
