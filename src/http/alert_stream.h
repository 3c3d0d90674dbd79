#pragma once
// AlertStream: the AlertSink that puts every alert on the dashboard.
//
// For each alert (on the AlertDispatcher's sink thread, never a shard thread) it
//  - asks the SilenceAdmin (if any) whether a silence mutes it and marks it so ("silenced_by");
//    a muted alert is still shown, greyed, and still counted — the silence mutes notifications;
//  - publishes it as an SSE "alert" message (src/audit/alert_json.h schema without the feature
//    row, plus "wall_ms": when the sink saw it, Unix ms);
//  - records its receive → emit latency and each stage's share into the current one-second
//    window (take_window()) and into Prometheus histograms
//    ticksentry_alert_latency_seconds{stage="book|features|detect|emit|total"};
//  - keeps the last `recent_capacity` alerts for a browser that connects later (recent_json()).
// Threading: write()/flush() on the sink thread; take_window(), recent_json() from any thread
// (one mutex, held briefly; the hot path never touches it).
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>

#include <prometheus/histogram.h>

#include "core/latency_histogram.h"
#include "core/metrics.h"
#include "detect/alert_sink.h"
#include "http/admin_api.h"
#include "http/event_hub.h"

namespace ts::http {

enum class LatencyStage : int { kBook = 0, kFeatures, kDetect, kEmit, kTotal, kCount };
constexpr int kLatencyStageCount = static_cast<int>(LatencyStage::kCount);
const char* latency_stage_name(LatencyStage s);  // "book", ..., "total"

// Alerts and their latencies over one window.
struct LatencyWindow {
  uint64_t alerts = 0;
  uint64_t silenced = 0;
  LatencyHistogram stage[kLatencyStageCount];  // ns
};

class AlertStream : public AlertSink {
 public:
  // `hub` and `metrics` must outlive the stream; `silences` may be null (no silences).
  AlertStream(EventHub& hub, Metrics& metrics, SilenceAdmin* silences, size_t recent_capacity = 500);

  Status write(const Alert& a, const SymbolTable& symbols) override;
  Status flush() override { return Status::ok(); }

  // Returns the window since the previous call and starts a new one.
  LatencyWindow take_window();
  // The most recent alerts as a JSON array text, newest last.
  std::string recent_json() const;
  uint64_t alerts_seen() const;

 private:
  EventHub& hub_;
  SilenceAdmin* silences_;
  const size_t recent_capacity_;
  prometheus::Histogram* latency_seconds_[kLatencyStageCount];
  prometheus::Counter* silenced_total_;
  mutable std::mutex mu_;
  LatencyWindow window_;
  std::deque<std::string> recent_;
  uint64_t seen_ = 0;
};

}  // namespace ts::http
