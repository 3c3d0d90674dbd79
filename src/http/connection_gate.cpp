#include "http/connection_gate.h"

#include <cerrno>
#include <cstring>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/clock.h"

namespace ts::http {

namespace {
constexpr int64_t kMs = 1'000'000;
constexpr int64_t kLingerNs = 1000 * kMs;  // how long a refused connection's input is drained
constexpr size_t kLingerMaxBytes = 1 << 20;  // and at most this much of it
constexpr int64_t kSweepNs = 20 * kMs;      // deadline resolution
constexpr size_t kReadChunk = 16 * 1024;
constexpr size_t kReadPerEvent = 64 * 1024;  // fairness: one connection's burst per wake-up

const char* reason_phrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Content Too Large";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
  }
  return "Error";
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out;
}

// The whole answer to a refused request: JSON like the server's other errors, then close.
std::string refusal_response(int status, const char* kind, const std::string& message) {
  const std::string body = "{\"error\":\"" + std::string(kind) + "\",\"message\":\"" + json_escape(message) + "\"}";
  return "HTTP/1.1 " + std::to_string(status) + " " + reason_phrase(status) +
         "\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

// Best effort on a non-blocking socket: what does not fit in the send buffer is dropped (a
// refusal is short; a fresh socket's buffer takes it).
void send_now(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n <= 0) return;
    off += size_t(n);
  }
}

void drain_now(int fd) {
  char buf[4096];
  for (int i = 0; i < 16 && ::recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0; ++i) {
  }
}

std::string peer_address(const sockaddr_storage& ss, int* port) {
  char ip[INET6_ADDRSTRLEN] = {};
  if (ss.ss_family == AF_INET) {
    const auto* a = reinterpret_cast<const sockaddr_in*>(&ss);
    inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
    *port = ntohs(a->sin_port);
  } else if (ss.ss_family == AF_INET6) {
    const auto* a = reinterpret_cast<const sockaddr_in6*>(&ss);
    inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof(ip));
    *port = ntohs(a->sin6_port);
  }
  return ip;
}
}  // namespace

ConnectionGate::ConnectionGate(HttpLimits limits, int worker_threads, Handler handler, RefusalCounter count)
    : limits_(limits), worker_threads_(worker_threads), handler_(std::move(handler)), count_(std::move(count)) {}

ConnectionGate::~ConnectionGate() { stop(); }

Status ConnectionGate::start(int listen_fd) {
  listen_fd_ = listen_fd;
  epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return {StatusCode::kIoError, std::string("http: epoll/eventfd: ") + std::strerror(errno)};
  }
  watch(listen_fd_, true);
  watch(wake_fd_, true);
  for (int i = 0; i < worker_threads_; ++i) workers_.emplace_back([this] { worker_loop(); });
  io_thread_ = std::thread([this] { io_loop(); });
  return Status::ok();
}

void ConnectionGate::stop() {
  if (stopping_.exchange(true)) return;
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
  if (io_thread_.joinable()) io_thread_.join();
  {
    std::lock_guard<std::mutex> lock(mu_);
    workers_quit_ = true;
  }
  work_cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
  // Every thread is gone: whatever is still open (queued, returned, lingering) closes here.
  for (auto& [fd, c] : conns_) ::close(fd);
  conns_.clear();
  per_client_.clear();
  open_.store(0);
  for (int* fd : {&listen_fd_, &epoll_fd_, &wake_fd_}) {
    if (*fd >= 0) ::close(*fd);
    *fd = -1;
  }
}

void ConnectionGate::watch(int fd, bool on) {
  if (on) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fd;
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  } else {
    ::epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  }
}

void ConnectionGate::io_loop() {
  std::vector<epoll_event> events(256);
  int64_t next_sweep = mono_ns() + kSweepNs;
  while (!stopping_.load(std::memory_order_relaxed)) {
    const int n = ::epoll_wait(epoll_fd_, events.data(), int(events.size()), int(kSweepNs / kMs));
    const int64_t now = mono_ns();
    for (int i = 0; i < n; ++i) {
      const int fd = events[i].data.fd;
      if (fd == listen_fd_) {
        accept_all(now);
      } else if (fd == wake_fd_) {
        uint64_t v;
        while (::read(wake_fd_, &v, sizeof(v)) > 0) {
        }
      } else if (auto it = conns_.find(fd); it != conns_.end() && !it->second->busy) {
        on_readable(*it->second, now);
      }
    }
    take_returned(now);
    if (now >= next_sweep) {
      sweep(now);
      next_sweep = now + kSweepNs;
    }
  }
}

void ConnectionGate::accept_all(int64_t now) {
  for (;;) {
    sockaddr_storage ss{};
    socklen_t len = sizeof(ss);
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&ss), &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of descriptors: leave the rest in the backlog and try again shortly.
        watch(listen_fd_, false);
        listen_paused_ = true;
        listen_resume_ns_ = now + 100 * kMs;
        count_(GateRefusal::kTooManyConnections);
      }
      return;  // EAGAIN: all accepted; other errors (a reset peer) concern that connection only
    }
    int port = 0;
    std::string ip = peer_address(ss, &port);
    GateRefusal why;
    int status = 0;
    std::string message;
    if (int(conns_.size()) >= limits_.max_connections) {
      why = GateRefusal::kTooManyConnections;
      status = 503;
      message = "the server holds its maximum of " + std::to_string(limits_.max_connections) + " connections";
    } else if (per_client_[ip] >= limits_.max_connections_per_client) {
      why = GateRefusal::kTooManyFromClient;
      status = 429;
      message = "at most " + std::to_string(limits_.max_connections_per_client) + " connections from one address";
    }
    if (status) {
      drain_now(fd);
      send_now(fd, refusal_response(status, gate_refusal_name(why), message));
      ::shutdown(fd, SHUT_WR);
      drain_now(fd);
      ::close(fd);
      count_(why);
      continue;
    }
    const int yes = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof(yes));  // small answers, kept alive
    auto c = std::make_unique<Connection>();
    c->fd = fd;
    c->peer_ip = std::move(ip);
    c->peer_port = port;
    c->deadline_ns = now + int64_t(limits_.header_timeout_ms) * kMs;
    ++per_client_[c->peer_ip];
    conns_.emplace(fd, std::move(c));
    open_.store(int(conns_.size()), std::memory_order_relaxed);
    watch(fd, true);
  }
}

void ConnectionGate::on_readable(Connection& c, int64_t now) {
  char buf[kReadChunk];
  size_t got = 0;
  while (got < kReadPerEvent) {
    const ssize_t n = ::recv(c.fd, buf, sizeof(buf), 0);
    if (n > 0) {
      got += size_t(n);
      if (!c.lingering) {
        c.in.append(buf, size_t(n));
      } else if ((c.drained += size_t(n)) > kLingerMaxBytes) {
        break;
      }
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) break;
    close_connection(c.fd);  // the peer closed, or reset
    return;
  }
  if (!c.lingering) {
    advance(c, now);
  } else if (c.drained > kLingerMaxBytes) {
    close_connection(c.fd);
  }
}

void ConnectionGate::advance(Connection& c, int64_t now) {
  if (c.in.empty() && !c.framer.head_read()) return;
  if (!c.head_started) {
    c.head_started = true;
    c.deadline_ns = now + int64_t(limits_.header_timeout_ms) * kMs;
  }
  const bool had_head = c.framer.head_read();
  const RequestFramer::Step step = c.framer.advance(c.in, limits_);
  if (c.framer.take_continue()) send_now(c.fd, "HTTP/1.1 100 Continue\r\n\r\n");
  if (step == RequestFramer::Step::kRefuse) {
    const RequestFramer::Refusal& r = c.framer.refusal();
    return refuse(c, r.kind, r.status, r.why, now);
  }
  if (!had_head && (c.framer.head_read() || step == RequestFramer::Step::kRequest)) {
    c.deadline_ns = now + int64_t(limits_.body_timeout_ms) * kMs;
  }
  if (step == RequestFramer::Step::kMore) return;
  c.request = c.framer.take_request();
  hand_off(c);
}

void ConnectionGate::hand_off(Connection& c) {
  watch(c.fd, false);
  c.busy = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    work_.push_back(&c);
  }
  work_cv_.notify_one();
}

void ConnectionGate::worker_loop() {
  for (;;) {
    Connection* c = nullptr;
    {
      std::unique_lock<std::mutex> lock(mu_);
      work_cv_.wait(lock, [this] { return workers_quit_ || !work_.empty(); });
      if (workers_quit_) return;  // stop() closes whatever is still queued
      c = work_.front();
      work_.pop_front();
    }
    bool keep = false;
    if (!stopping_.load(std::memory_order_relaxed)) keep = handler_(*c);
    c->keep_alive = keep;
    c->request.clear();
    {
      std::lock_guard<std::mutex> lock(mu_);
      returned_.push_back(c);
    }
    const uint64_t one = 1;
    (void)!::write(wake_fd_, &one, sizeof(one));
  }
}

void ConnectionGate::take_returned(int64_t now) {
  std::vector<Connection*> back;
  {
    std::lock_guard<std::mutex> lock(mu_);
    back.swap(returned_);
  }
  for (Connection* c : back) {
    c->busy = false;
    if (!c->keep_alive) {
      close_connection(c->fd);
      continue;
    }
    ++c->requests;
    c->head_started = false;
    c->deadline_ns = now + int64_t(limits_.idle_timeout_ms) * kMs;
    watch(c->fd, true);
    advance(*c, now);  // a pipelined request may be waiting whole
  }
}

void ConnectionGate::sweep(int64_t now) {
  if (listen_paused_ && now >= listen_resume_ns_) {
    listen_paused_ = false;
    watch(listen_fd_, true);
  }
  std::vector<Connection*> expired;
  for (auto& [fd, c] : conns_) {
    if (!c->busy && now >= c->deadline_ns) expired.push_back(c.get());
  }
  for (Connection* c : expired) {
    if (c->lingering || !c->head_started) {
      close_connection(c->fd);  // drained long enough, or idle: nothing to answer
    } else {
      refuse(*c, GateRefusal::kTimeout, 408,
             c->framer.head_read() ? "the request body did not arrive in time" : "the request head did not arrive in time", now);
    }
  }
}

void ConnectionGate::refuse(Connection& c, GateRefusal why, int status, const std::string& message, int64_t now) {
  count_(why);
  send_now(c.fd, refusal_response(status, gate_refusal_name(why), message));
  ::shutdown(c.fd, SHUT_WR);
  c.lingering = true;
  c.in.clear();
  c.framer.reset();
  c.deadline_ns = now + kLingerNs;
}

void ConnectionGate::close_connection(int fd) {
  auto it = conns_.find(fd);
  if (it == conns_.end()) return;
  watch(fd, false);
  ::close(fd);
  if (auto pc = per_client_.find(it->second->peer_ip); pc != per_client_.end() && --pc->second <= 0) {
    per_client_.erase(pc);
  }
  conns_.erase(it);
  open_.store(int(conns_.size()), std::memory_order_relaxed);
}

}  // namespace ts::http
