#include "http/alert_stream.h"

#include "audit/alert_json.h"
#include "core/clock.h"

namespace ts::http {

const char* latency_stage_name(LatencyStage s) {
  switch (s) {
    case LatencyStage::kBook: return "book";
    case LatencyStage::kFeatures: return "features";
    case LatencyStage::kDetect: return "detect";
    case LatencyStage::kEmit: return "emit";
    case LatencyStage::kTotal: return "total";
    case LatencyStage::kCount: break;
  }
  return "?";
}

AlertStream::AlertStream(EventHub& hub, Metrics& metrics, SilenceAdmin* silences, size_t recent_capacity)
    : hub_(hub), silences_(silences), recent_capacity_(recent_capacity) {
  // 1 µs .. 100 ms: the stages take ~100 ns to a few µs, receive → alert up to a few ms when loaded.
  const std::vector<double> buckets = {1e-6, 2e-6, 5e-6, 10e-6, 20e-6, 50e-6, 100e-6, 200e-6,
                                       500e-6, 1e-3, 2e-3, 5e-3, 10e-3, 100e-3};
  for (int s = 0; s < kLatencyStageCount; ++s) {
    latency_seconds_[s] = &metrics.histogram(
        "alert_latency_seconds", "Time each stage took for the events that raised alerts (total: receive to emit)",
        buckets, {{"stage", latency_stage_name(static_cast<LatencyStage>(s))}});
  }
  silenced_total_ = &metrics.counter("alerts_silenced_total", "Alerts that matched an active silence");
}

Status AlertStream::write(const Alert& a, const SymbolTable& symbols) {
  nlohmann::json j = alert_to_json(a, symbols);
  j.erase("features");
  const int64_t now_ms = wall_ns() / 1'000'000;
  j["wall_ms"] = now_ms;
  bool silenced = false;
  if (silences_) {
    if (auto id = silences_->match(a, symbols, now_ms)) {
      j["silenced_by"] = *id;
      silenced = true;
      silenced_total_->Increment();
    }
  }
  const StageTimes& t = a.t;
  const int64_t ns[kLatencyStageCount] = {t.book_ns - t.recv_ns, t.features_ns - t.book_ns,
                                          t.detect_ns - t.features_ns, t.emit_ns - t.detect_ns,
                                          t.emit_ns - t.recv_ns};
  const bool stamped = t.recv_ns > 0 && t.book_ns > 0 && t.features_ns > 0 && t.detect_ns > 0 && t.emit_ns > 0;
  std::string text = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++seen_;
    ++window_.alerts;
    if (silenced) ++window_.silenced;
    if (stamped) {
      for (int s = 0; s < kLatencyStageCount; ++s) window_.stage[s].record(ns[s]);
    }
    recent_.push_back(text);
    while (recent_.size() > recent_capacity_) recent_.pop_front();
  }
  if (stamped) {
    for (int s = 0; s < kLatencyStageCount; ++s) latency_seconds_[s]->Observe(double(ns[s]) * 1e-9);
  }
  hub_.publish("alert", std::move(text));
  return Status::ok();
}

LatencyWindow AlertStream::take_window() {
  std::lock_guard<std::mutex> lock(mu_);
  LatencyWindow w = window_;
  window_ = LatencyWindow();
  return w;
}

std::string AlertStream::recent_json() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out = "[";
  for (size_t i = 0; i < recent_.size(); ++i) {
    if (i) out += ',';
    out += recent_[i];
  }
  out += ']';
  return out;
}

uint64_t AlertStream::alerts_seen() const {
  std::lock_guard<std::mutex> lock(mu_);
  return seen_;
}

}  // namespace ts::http
