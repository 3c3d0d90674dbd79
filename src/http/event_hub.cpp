#include "http/event_hub.h"

#include <chrono>

namespace ts::http {

void EventHub::publish(std::string event, std::string data) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    ring_.push_back(SseMessage{next_seq_++, std::move(event), std::move(data)});
    while (ring_.size() > capacity_) ring_.pop_front();
  }
  cv_.notify_all();
}

uint64_t EventHub::head() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_ - 1;
}

uint64_t EventHub::wait_next(uint64_t* cursor, std::vector<SseMessage>* out, int timeout_ms, size_t max_messages) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms),
               [&] { return closed_ || next_seq_ - 1 > *cursor; });
  if (closed_ || ring_.empty() || next_seq_ - 1 <= *cursor) return 0;
  uint64_t skipped = 0;
  const uint64_t oldest = ring_.front().seq;
  if (*cursor + 1 < oldest) {
    skipped = oldest - (*cursor + 1);
    dropped_ += skipped;
    *cursor = oldest - 1;
  }
  // ring_ holds consecutive sequence numbers: index = seq - oldest.
  for (size_t i = size_t(*cursor + 1 - oldest); i < ring_.size() && out->size() < max_messages; ++i) {
    out->push_back(ring_[i]);
    *cursor = ring_[i].seq;
  }
  return skipped;
}

void EventHub::close() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
  }
  cv_.notify_all();
}

bool EventHub::closed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return closed_;
}

uint64_t EventHub::published() const {
  std::lock_guard<std::mutex> lock(mu_);
  return next_seq_ - 1;
}

uint64_t EventHub::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

std::string EventHub::format(const SseMessage& m) {
  std::string s;
  s.reserve(m.event.size() + m.data.size() + 40);
  s += "event: ";
  s += m.event;
  s += "\ndata: ";
  s += m.data;
  s += "\nid: ";
  s += std::to_string(m.seq);
  s += "\n\n";
  return s;
}

}  // namespace ts::http
