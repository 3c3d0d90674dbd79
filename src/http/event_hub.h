#pragma once
// EventHub: fans Server-Sent Events out to every connected browser.
//
// Publishers (the alert sink thread, the live-feed thread) append messages to one bounded
// ring of recent messages, each with an increasing sequence number; every SSE connection keeps
// its own cursor into that ring and waits on a condition variable for newer messages. A client
// that falls more than `capacity` messages behind skips ahead to the oldest kept message and
// the skipped messages are counted (dropped(), per hub) — a slow browser never slows a
// publisher down or makes the ring grow.
//
// Threading: publish() from any thread; wait_next() from the HTTP server's connection threads.
// Neither runs on a shard thread (publishers are off the hot path), so a mutex is fine here.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace ts::http {

struct SseMessage {
  uint64_t seq = 0;
  std::string event;  // SSE "event:" name ("alert", "ticks", "scores", "stats")
  std::string data;   // one line of JSON
};

class EventHub {
 public:
  explicit EventHub(size_t capacity = 4096) : capacity_(capacity) {}

  // Appends a message and wakes every waiting connection. `data` must not contain newlines
  // (compact JSON never does).
  void publish(std::string event, std::string data);

  // The sequence number a new connection starts after (only messages published later reach it).
  uint64_t head() const;

  // Appends to `out` the messages with seq > *cursor (at most `max_messages`), waiting up to
  // `timeout_ms` for the first one, and advances *cursor. Returns the number of messages
  // skipped because the cursor had fallen out of the ring. Returns at once after close().
  uint64_t wait_next(uint64_t* cursor, std::vector<SseMessage>* out, int timeout_ms, size_t max_messages = 256);

  // Wakes every waiter for good (server shutdown).
  void close();
  bool closed() const;

  uint64_t published() const;
  uint64_t dropped() const;  // messages skipped by slow clients, all clients together

  // "event: <name>\ndata: <json>\nid: <seq>\n\n"
  static std::string format(const SseMessage& m);

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SseMessage> ring_;
  uint64_t next_seq_ = 1;
  uint64_t dropped_ = 0;
  bool closed_ = false;
};

}  // namespace ts::http
