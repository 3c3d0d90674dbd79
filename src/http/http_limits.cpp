#include "http/http_limits.h"

#include "core/config.h"

namespace ts::http {

HttpLimits http_limits_from_config(const ConfigSection& s) {
  HttpLimits l;
  l.max_connections = s.get_in("max_connections", l.max_connections, 16, 65536);
  l.max_connections_per_client = s.get_in("max_connections_per_client", l.max_connections_per_client, 1, 65536);
  l.listen_backlog = s.get_in("listen_backlog", l.listen_backlog, 1, 65535);
  l.header_timeout_ms = s.get_in("header_timeout_ms", l.header_timeout_ms, 100, 600000);
  l.body_timeout_ms = s.get_in("body_timeout_ms", l.body_timeout_ms, 100, 600000);
  l.idle_timeout_ms = s.get_in("idle_timeout_ms", l.idle_timeout_ms, 100, 3600000);
  l.write_timeout_ms = s.get_in("write_timeout_ms", l.write_timeout_ms, 100, 600000);
  l.max_header_bytes = s.get_in("max_header_bytes", l.max_header_bytes, 1024, 1 << 20);
  l.max_body_bytes = s.get_in("max_body_bytes", l.max_body_bytes, int64_t(1024), int64_t(64) << 20);
  l.workers = s.get_in("workers", l.workers, 1, 256);
  l.max_streams = s.get_in("max_streams", l.max_streams, 1, 1024);
  return l;
}

}  // namespace ts::http
