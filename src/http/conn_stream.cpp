#include "http/conn_stream.h"

#include <cerrno>
#include <chrono>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

namespace ts::http {

bool ConnStream::is_writable() const {
  pollfd p{fd_, POLLOUT, 0};
  return !write_failed_ && ::poll(&p, 1, write_timeout_ms_) > 0 && (p.revents & (POLLERR | POLLHUP)) == 0;
}

ssize_t ConnStream::read(char* ptr, size_t size) {
  const size_t n = std::min(size, request_.size() - pos_);
  std::memcpy(ptr, request_.data() + pos_, n);
  pos_ += n;
  return ssize_t(n);
}

ssize_t ConnStream::write(const char* ptr, size_t size) {
  if (write_failed_) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(write_timeout_ms_);
  size_t off = 0;
  while (off < size) {
    const ssize_t n = ::send(fd_, ptr + off, size - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      off += size_t(n);
      continue;
    }
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) break;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd p{fd_, POLLOUT, 0};
    if (left.count() <= 0 || ::poll(&p, 1, int(left.count())) <= 0) break;
  }
  if (off < size) {
    write_failed_ = true;
    return -1;
  }
  return ssize_t(size);
}

namespace {
void address_of(const sockaddr_storage& ss, std::string& ip, int& port) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof(buf));
    port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof(buf));
    port = ntohs(a->sin6_port);
  }
  ip = buf;
}
}  // namespace

void ConnStream::get_remote_ip_and_port(std::string& ip, int& port) const {
  ip = peer_ip_;
  port = peer_port_;
}

void ConnStream::get_local_ip_and_port(std::string& ip, int& port) const {
  sockaddr_storage ss{};
  socklen_t len = sizeof(ss);
  ip.clear();
  port = 0;
  if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len) == 0) address_of(ss, ip, port);
}

}  // namespace ts::http
