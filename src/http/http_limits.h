#pragma once
// HttpLimits: what one client, and all of them together, may take from the HTTP server.
// Read from [http] at start-up (docs/config.md lists each key with its range; a value outside it
// is exit 2 naming the key); a change takes effect at the next start.
#include <cstdint>

namespace ts {
class ConfigSection;
}

namespace ts::http {

struct HttpLimits {
  int max_connections = 4096;            // open connections in total; more get 503 and are closed
  int max_connections_per_client = 64;   // per remote address; more get 429 and are closed
  int listen_backlog = 1024;             // accept queue (the kernel caps it at net.core.somaxconn)
  int header_timeout_ms = 10000;         // a request's head must arrive whole within this
  int body_timeout_ms = 10000;           // its body within this after the head
  int idle_timeout_ms = 60000;           // a kept-alive connection with no request is closed
  int write_timeout_ms = 10000;          // a response (or a stream message) not taken by then ends it
  int max_header_bytes = 16384;          // longer heads get 431
  int64_t max_body_bytes = 64 * 1024;    // larger bodies get 413, chunked ones too, while reading
  int workers = 8;                       // threads answering requests (live streams have their own)
  int max_streams = 32;                  // concurrent /api/stream connections; more get 503
};

// Reads [http]'s numeric limit keys (every one with get_in; throws ConfigError naming the key).
HttpLimits http_limits_from_config(const ConfigSection& s);

}  // namespace ts::http
