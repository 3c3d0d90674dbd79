#pragma once
// The HTTP server's listening socket, bound exclusively: SO_REUSEADDR (a restart may bind while
// the last run's connections sit in TIME_WAIT) but never SO_REUSEPORT, so a second process
// asking for a port that is taken gets EADDRINUSE instead of a share of the connections.
#include <string>

#include "core/status.h"

namespace ts::http {

// A non-blocking listening TCP socket on host:port (port 0 = any free port) with `backlog`
// pending connections (the kernel caps it at net.core.somaxconn). The error names the address
// and, for a taken port, says so.
Result<int> listen_tcp(const std::string& host, int port, int backlog);

// The port a bound socket listens on (after port 0), or 0.
int socket_port(int fd);

}  // namespace ts::http
