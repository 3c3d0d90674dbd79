#pragma once
// ConnectionGate: the HTTP server's front door. One I/O thread (epoll) accepts connections,
// holds every idle or half-sent one, and reads each request whole — head and body — before any
// worker sees it; a fixed pool of worker threads answers complete requests. So a client that
// sends slowly (or not at all) costs a file descriptor and a few KiB, never a thread: /healthz
// keeps answering while thousands of slow connections are held open.
//
// What it enforces (HttpLimits, http_limits.h; each refusal is counted through the callback):
//   - at most max_connections open (more: 503 and closed), max_connections_per_client from one
//     remote address (more: 429 and closed);
//   - the head within header_timeout_ms of the connection or of its first byte (408), the body
//     within body_timeout_ms after the head (408); a kept-alive connection idle for
//     idle_timeout_ms is closed;
//   - a head of at most max_header_bytes (431), a body of at most max_body_bytes (413 before
//     reading it when Content-Length says so; a chunked body is decoded as it arrives and
//     refused at the first chunk that passes the limit); malformed framing is 400.
// A refused connection is answered, its output shut down, and its input drained for up to 1 s
// or 1 MiB (so the client reads the answer instead of a reset), then closed.
//
// Threads: the I/O thread owns every Connection except while a worker answers it; the worker
// gets it through a queue and gives it back through another (an eventfd wakes the I/O thread).
// Only the I/O thread closes connections.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "http/http_limits.h"
#include "http/request_framer.h"

namespace ts::http {

// One client connection.
struct Connection {
  int fd = -1;
  std::string peer_ip;
  int peer_port = 0;
  std::string request;  // for the worker: one complete request, Content-Length framed
  uint64_t requests = 0;  // answered on this connection before this one

  // The I/O thread's reading state.
  std::string in;            // bytes read, not yet part of a handed-on request
  int64_t deadline_ns = 0;
  bool head_started = false;  // a byte of the next request has arrived
  RequestFramer framer;       // the request being read out of `in`
  bool busy = false;      // with a worker
  bool lingering = false; // refused: draining input until closed
  size_t drained = 0;     // bytes discarded while lingering
  bool keep_alive = false; // the worker's verdict
};

// GateRefusal and gate_refusal_name(): request_framer.h.

class ConnectionGate {
 public:
  // Answers the request in c.request on a worker thread, writing the response to c.fd; returns
  // whether the connection may be kept alive. Must not close c.fd.
  using Handler = std::function<bool(Connection& c)>;
  using RefusalCounter = std::function<void(GateRefusal)>;  // called on the I/O thread

  // `worker_threads`: the pool answering requests (a live stream holds one for its lifetime).
  ConnectionGate(HttpLimits limits, int worker_threads, Handler handler, RefusalCounter count);
  ~ConnectionGate();  // stop()

  // Takes ownership of the non-blocking listening socket `listen_fd` and starts the threads.
  Status start(int listen_fd);
  // Stops accepting, closes every connection, joins the threads (a worker answering a request
  // finishes it first: end long responses before calling this). Idempotent.
  void stop();
  int open_connections() const { return open_.load(std::memory_order_relaxed); }

 private:
  void io_loop();
  void worker_loop();
  void accept_all(int64_t now);
  void on_readable(Connection& c, int64_t now);
  void advance(Connection& c, int64_t now);
  void hand_off(Connection& c);
  void take_returned(int64_t now);
  void sweep(int64_t now);
  void refuse(Connection& c, GateRefusal why, int status, const std::string& message, int64_t now);
  void close_connection(int fd);
  void watch(int fd, bool on);

  HttpLimits limits_;
  int worker_threads_;
  Handler handler_;
  RefusalCounter count_;
  int listen_fd_ = -1;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;
  bool listen_paused_ = false;   // out of file descriptors: accept again later
  int64_t listen_resume_ns_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> open_{0};
  std::thread io_thread_;
  std::vector<std::thread> workers_;
  // I/O thread only:
  std::unordered_map<int, std::unique_ptr<Connection>> conns_;
  std::unordered_map<std::string, int> per_client_;
  // Between the I/O thread and the workers:
  std::mutex mu_;
  std::condition_variable work_cv_;
  std::deque<Connection*> work_;
  std::vector<Connection*> returned_;
  bool workers_quit_ = false;
};

}  // namespace ts::http
