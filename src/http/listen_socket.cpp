#include "http/listen_socket.h"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ts::http {

Result<int> listen_tcp(const std::string& host, int port, int backlog) {
  const std::string where = host + ":" + std::to_string(port);
  if (port < 0 || port > 65535) return Status{StatusCode::kInvalidArgument, "http: port out of range in " + where};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res); rc != 0) {
    return Status{StatusCode::kInvalidArgument, "http: cannot resolve bind address " + where + ": " + gai_strerror(rc)};
  }
  std::string error = "no address";
  for (addrinfo* a = res; a; a = a->ai_next) {
    const int fd = ::socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      error = std::strerror(errno);
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (::bind(fd, a->ai_addr, a->ai_addrlen) == 0 && ::listen(fd, backlog) == 0) {
      freeaddrinfo(res);
      return fd;
    }
    const int err = errno;
    ::close(fd);
    error = err == EADDRINUSE ? "port " + std::to_string(port) + " is in use (another ticksentry or another server)"
                              : std::string(std::strerror(err));
    if (err == EADDRINUSE) break;
  }
  freeaddrinfo(res);
  return Status{StatusCode::kIoError, "http: cannot listen on " + where + ": " + error};
}

int socket_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return 0;
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return 0;
}

}  // namespace ts::http
