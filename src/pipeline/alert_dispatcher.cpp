#include "pipeline/alert_dispatcher.h"

#include <algorithm>
#include <cstring>
#include <exception>

#include "core/clock.h"
#include "core/log.h"

namespace ts {

AlertDispatcher::AlertDispatcher(const SymbolTable& symbols, int shard_count, DispatcherOptions opts)
    : symbols_(symbols), opts_(opts) {
  for (int i = 0; i < (shard_count > 0 ? shard_count : 1); ++i) {
    shards_.push_back(std::make_unique<Shard>(opts_.ring_capacity));
  }
}

AlertDispatcher::~AlertDispatcher() { stop(); }

void AlertDispatcher::add_sink(std::string name, std::shared_ptr<AlertSink> sink) {
  auto slot = std::make_unique<SinkSlot>();
  slot->name = std::move(name);
  slot->sink = std::move(sink);
  sinks_.push_back(std::move(slot));
}

void AlertDispatcher::start() {
  if (started_ || stopped_) return;
  started_ = true;
  thread_ = std::thread([this] { run(); });
}

namespace {
template <typename T>
void push_waiting(SpscRing<T>& ring, const T& v, std::atomic<uint64_t>& waits) {
  if (ring.try_push(v)) return;
  waits.fetch_add(1, std::memory_order_relaxed);
  unsigned spins = 0;
  while (!ring.try_push(v)) {
    if (++spins < 64) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}
}  // namespace

bool AlertDispatcher::try_publish(int shard, const Alert& a, const float* window) {
  Shard& s = *shards_[static_cast<size_t>(shard)];
  // Dekker-style handshake with stop(): announce, then check. Either stop() sees us in flight
  // and waits, or we see it stopping and back out.
  s.in_flight.fetch_add(1, std::memory_order_seq_cst);
  if (!accepting_.load(std::memory_order_seq_cst)) {
    s.in_flight.fetch_sub(1, std::memory_order_release);
    return false;
  }
  Alert copy = a;
  if (window && copy.model.window_rows > 0) {
    // Alerts are rare: a 9.6 KB window on the stack and one copy is fine here.
    thread_local ModelWindow w;
    w.rows = std::min<int>(copy.model.window_rows, kMaxWindowRows);
    copy.model.window_rows = uint16_t(w.rows);
    std::memcpy(w.data, window, sizeof(float) * size_t(w.rows) * kFeatureCount);
    push_waiting(s.windows, w, s.waits);
  } else {
    copy.model.window_rows = 0;
  }
  copy.t.emit_ns = mono_ns();
  push_waiting(s.ring, copy, s.waits);
  s.published.fetch_add(1, std::memory_order_relaxed);
  s.in_flight.fetch_sub(1, std::memory_order_release);
  return true;
}

bool AlertDispatcher::producers_idle() const {
  for (const auto& s : shards_) {
    if (s->in_flight.load(std::memory_order_seq_cst) != 0) return false;
  }
  return true;
}

size_t AlertDispatcher::drain(size_t max_per_ring) {
  size_t n = 0;
  Alert a;
  thread_local ModelWindow w;
  for (auto& s : shards_) {
    for (size_t i = 0; i < max_per_ring && s->ring.try_pop(a); ++i) {
      // The window was pushed before its alert, so it is there now.
      const bool has_window = a.model.window_rows > 0 && s->windows.try_pop(w);
      write_one(a, has_window ? &w : nullptr);
      ++n;
      if (since_flush_ >= uint64_t(opts_.flush_max_alerts)) flush_all();
    }
  }
  return n;
}

void AlertDispatcher::write_one(const Alert& a, const ModelWindow* window) {
  for (auto& slot : sinks_) {
    if (a.model.shadow && !slot->sink->records_shadow()) continue;
    try {
      Status st = slot->sink->write(a, symbols_);
      if (!st) sink_error(*slot, st, "write");
      if (window) {
        st = slot->sink->write_model_input(a, window->data, window->rows, kFeatureCount);
        if (!st) sink_error(*slot, st, "write_model_input");
      }
    } catch (const std::exception& e) {
      sink_error(*slot, Status(StatusCode::kInternal, e.what()), "write");
    }
  }
  if (int(a.type) < kAlertTypeCount) by_type_[int(a.type)].fetch_add(1, std::memory_order_relaxed);
  written_.fetch_add(1, std::memory_order_relaxed);
  ++since_flush_;
}

void AlertDispatcher::flush_all() {
  for (auto& slot : sinks_) {
    try {
      Status st = slot->sink->flush();
      if (!st) sink_error(*slot, st, "flush");
    } catch (const std::exception& e) {
      sink_error(*slot, Status(StatusCode::kInternal, e.what()), "flush");
    }
  }
  since_flush_ = 0;
  flushes_.fetch_add(1, std::memory_order_relaxed);
}

void AlertDispatcher::close_all() {
  for (auto& slot : sinks_) {
    try {
      Status st = slot->sink->close();
      if (!st) sink_error(*slot, st, "close");
    } catch (const std::exception& e) {
      sink_error(*slot, Status(StatusCode::kInternal, e.what()), "close");
    }
  }
}

void AlertDispatcher::sink_error(SinkSlot& s, const Status& st, const char* what) {
  s.errors.fetch_add(1, std::memory_order_relaxed);
  const int64_t now = mono_ns();
  if (s.last_log_ns != 0 && now - s.last_log_ns < opts_.error_log_interval_ms * kNsPerMs) {
    ++s.unlogged;
    return;
  }
  spdlog::warn("alert sink {}: {} failed: {} ({} similar errors not logged)", s.name, what, st.to_string(), s.unlogged);
  s.last_log_ns = now;
  s.unlogged = 0;
}

void AlertDispatcher::run() {
  // The sink thread is off the hot path: it must not spin on a core the shards need (on a
  // 2-core box a 200 µs spin after each alert showed as a 311 µs receive→alert p99).
  // Sleeping at once costs an alert at most ~50 µs more before it is written, not emitted.
  BackoffIdle idle(/*spin_ns=*/0, /*yield_ns=*/0);
  int64_t last_flush_ns = mono_ns();
  for (;;) {
    const bool stopping = !accepting_.load(std::memory_order_seq_cst);
    const size_t n = drain(256);
    const int64_t now = mono_ns();
    if (since_flush_ > 0 && now - last_flush_ns >= opts_.flush_interval_ms * kNsPerMs) {
      flush_all();
      last_flush_ns = now;
    } else if (since_flush_ == 0) {
      last_flush_ns = now;
    }
    if (stopping && n == 0 && producers_idle()) break;
    idle.idle(n);
  }
  // Every producer is out of try_publish and no new one gets in: what is queued is all there is.
  while (drain(SIZE_MAX) > 0) {
  }
  flush_all();
  close_all();
}

void AlertDispatcher::stop() {
  if (stopped_) return;
  stopped_ = true;
  accepting_.store(false, std::memory_order_seq_cst);
  if (started_) {
    thread_.join();
  } else {
    // Never started: drain here (a producer may be waiting on a full ring).
    while (!producers_idle()) {
      if (drain(SIZE_MAX) == 0) std::this_thread::yield();
    }
    while (drain(SIZE_MAX) > 0) {
    }
    flush_all();
    close_all();
  }
}

uint64_t AlertDispatcher::published() const {
  uint64_t n = 0;
  for (const auto& s : shards_) n += s->published.load(std::memory_order_relaxed);
  return n;
}

uint64_t AlertDispatcher::publish_waits() const {
  uint64_t n = 0;
  for (const auto& s : shards_) n += s->waits.load(std::memory_order_relaxed);
  return n;
}

uint64_t AlertDispatcher::sink_errors() const {
  uint64_t n = 0;
  for (const auto& s : sinks_) n += s->errors.load(std::memory_order_relaxed);
  return n;
}

uint64_t AlertDispatcher::sink_errors(size_t sink_index) const {
  return sink_index < sinks_.size() ? sinks_[sink_index]->errors.load(std::memory_order_relaxed) : 0;
}

}  // namespace ts

namespace ts {

void AlertDispatcher::publish_metrics(Metrics& metrics) {
  for (int i = 0; i < kAlertTypeCount; ++i) {
    const uint64_t now = alerts_by_type(AlertType(i));
    if (now > exported_by_type_[i]) {
      metrics.counter("alerts_total", "Alerts written to the sinks, by type",
                      {{"type", alert_type_name(AlertType(i))}})
          .Increment(double(now - exported_by_type_[i]));
      exported_by_type_[i] = now;
    }
  }
  exported_sink_errors_.resize(sinks_.size(), 0);
  for (size_t i = 0; i < sinks_.size(); ++i) {
    const uint64_t now = sink_errors(i);
    auto& c = metrics.counter("alert_sink_errors_total", "Failed sink writes/flushes/closes, by sink",
                              {{"sink", sinks_[i]->name}});
    if (now > exported_sink_errors_[i]) {
      c.Increment(double(now - exported_sink_errors_[i]));
      exported_sink_errors_[i] = now;
    }
  }
  const uint64_t waits = publish_waits();
  auto& w = metrics.counter("alert_publish_waits_total", "Times a shard found its alert ring full and waited");
  if (waits > exported_waits_) {
    w.Increment(double(waits - exported_waits_));
    exported_waits_ = waits;
  }
}

}  // namespace ts
