#pragma once
// Raw TCP clients on loopback for the HTTP hardening tests and the HTTP benchmark: a client that
// sends half a request and waits, one from a chosen 127.0.0.x address, one that reads whatever
// comes back within a time limit. Blocking sockets with poll() timeouts; no HTTP library, so a
// test can send exactly the bytes an attacker would.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

namespace ts::testing {

// A connected socket to 127.0.0.1:port from `source_ip` (any 127.x.y.z is loopback), or -1.
inline int raw_connect(int port, const char* source_ip = "127.0.0.1") {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in src{};
  src.sin_family = AF_INET;
  inet_pton(AF_INET, source_ip, &src.sin_addr);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  dst.sin_port = htons(uint16_t(port));
  inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
  const int yes = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));
  if (::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof(src)) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&dst), sizeof(dst)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Sends all of `s`; false when the peer closed or reset (MSG_NOSIGNAL: no SIGPIPE).
inline bool raw_send(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (n <= 0) return false;
    off += size_t(n);
  }
  return true;
}

// Reads until one whole response (head + Content-Length body) has arrived, the peer closes, or
// `timeout_ms` passes; returns what arrived ("" = nothing).
inline std::string raw_read_response(int fd, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string got;
  char buf[4096];
  for (;;) {
    const size_t head_end = got.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t len = 0;
      const size_t cl = got.find("Content-Length: ");
      if (cl != std::string::npos && cl < head_end) len = std::stoul(got.substr(cl + 16));
      if (got.size() >= head_end + 4 + len) return got;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    if (left <= 0) return got;
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, int(left)) <= 0) return got;
    const ssize_t n = ::recv(fd, buf, sizeof(buf), 0);
    if (n <= 0) return got;
    got.append(buf, size_t(n));
  }
}

// The status code of a response read by raw_read_response ("HTTP/1.1 413 ..."), or 0.
inline int raw_status(const std::string& response) {
  if (response.rfind("HTTP/1.", 0) != 0 || response.size() < 12) return 0;
  return std::atoi(response.c_str() + 9);
}

// The status codes of the next `n` responses on `fd` (pipelined answers arrive together), fewer
// when the connection closes or `timeout_ms` passes first.
inline std::vector<int> raw_read_statuses(int fd, size_t n, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::vector<int> statuses;
  std::string got;
  char buf[4096];
  while (statuses.size() < n) {
    const size_t head_end = got.find("\r\n\r\n");
    if (head_end != std::string::npos) {
      size_t len = 0;
      const size_t cl = got.find("Content-Length: ");
      if (cl != std::string::npos && cl < head_end) len = std::stoul(got.substr(cl + 16));
      if (got.size() >= head_end + 4 + len) {
        statuses.push_back(raw_status(got));
        got.erase(0, head_end + 4 + len);
        continue;
      }
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
    pollfd p{fd, POLLIN, 0};
    if (left <= 0 || ::poll(&p, 1, int(left)) <= 0) break;
    const ssize_t r = ::recv(fd, buf, sizeof(buf), 0);
    if (r <= 0) break;
    got.append(buf, size_t(r));
  }
  return statuses;
}

// True when the peer has closed the connection within `timeout_ms` (recv returns 0 or an error).
inline bool raw_closed_within(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  if (::poll(&p, 1, timeout_ms) <= 0) return false;
  char buf[256];
  return ::recv(fd, buf, sizeof(buf), 0) <= 0;
}

}  // namespace ts::testing
