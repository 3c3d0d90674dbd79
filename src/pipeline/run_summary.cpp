#include "pipeline/run_summary.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace ts {

uint64_t RunSummary::alert_total() const {
  uint64_t n = 0;
  for (auto& [k, v] : alerts) n += v;
  return n;
}

namespace {
nlohmann::json latency_json(const LatencyHistogram& h) {
  auto us = [](int64_t ns) { return double(ns) / 1000.0; };
  return {{"p50", us(h.quantile_ns(0.50))}, {"p99", us(h.quantile_ns(0.99))}, {"p999", us(h.quantile_ns(0.999))},
          {"max", us(h.max_ns())},          {"mean", h.mean_ns() / 1000.0},   {"count", h.count()}};
}
}  // namespace

std::string RunSummary::to_json() const {
  nlohmann::json j;
  j["events"] = events;
  j["events_processed"] = events_processed;
  j["events_per_s"] = events_per_s();
  j["wall_s"] = wall_s;
  j["events_by_kind"] = events_by_kind;
  j["alerts"] = nlohmann::json::object();
  for (auto& [k, v] : alerts) j["alerts"][k] = v;
  j["alerts_total"] = alert_total();
  j["errors"] = nlohmann::json::object();
  for (auto& [k, v] : errors) j["errors"][k] = v;
  j["latency_us"] = latency_json(alert_latency);
  j["event_latency_us"] = latency_json(event_latency);
  j["phases"] = nlohmann::json::object();
  for (auto& [k, v] : phases) j["phases"][k] = v;
  j["instruments"] = nlohmann::json::object();
  for (auto& [k, v] : instruments) j["instruments"][k] = v;
  j["feed"] = nlohmann::json::object();
  for (auto& [name, counters] : feed) j["feed"][name] = counters;
  j["source_stalls"] = source_stalls;
  j["interrupted"] = interrupted;
  j["latency_includes_queueing"] = unpaced_replay;
  if (has_model) {
    nlohmann::json m;
    m["name"] = model.name;
    m["version"] = model.version;
    m["backend"] = model.backend;
    m["requests"] = model.requests;
    m["results"] = model.results_ok;
    m["fallback_results"] = model.fallback_ok;
    m["batches"] = model.batches;
    m["mean_batch"] = model.mean_batch();
    m["failures"] = model.failed_batches;
    m["backend_switches"] = model.backend_switches;
    m["swaps"] = model.swaps;
    m["drops"] = nlohmann::json::object();
    for (auto& [k, v] : model.drops) m["drops"][k] = v;
    m["batch_sizes"] = nlohmann::json::object();
    for (auto& [k, v] : model.batch_sizes) m["batch_sizes"][std::to_string(k)] = v;
    m["inference_latency_us"] = latency_json(model.inference);
    m["queue_wait_us"] = latency_json(model.queue_wait);
    m["receive_to_score_us"] = latency_json(model.receive_to_score);
    m["compute_us"] = latency_json(model.compute);
    j["model"] = m;
  }
  return j.dump(2);
}

Status RunSummary::write_json(const std::string& path) const {
  std::ofstream f(path);
  if (!f) return Status(StatusCode::kIoError, "cannot write summary to " + path);
  f << to_json() << "\n";
  if (!f) return Status(StatusCode::kIoError, "write failed: " + path);
  return Status::ok();
}

void RunSummary::print(std::FILE* out) const {
  std::fprintf(out, "\n== ticksentry summary ==\n");
  std::fprintf(out, "events      %llu in %.2f s (%.0f events/s)%s\n", (unsigned long long)events, wall_s, events_per_s(),
               interrupted ? "  [stopped early]" : "");
  std::fprintf(out, "alerts      %llu", (unsigned long long)alert_total());
  for (auto& [k, v] : alerts) std::fprintf(out, "  %s=%llu", k.c_str(), (unsigned long long)v);
  std::fprintf(out, "\nerrors      ");
  if (errors.empty()) std::fprintf(out, "none");
  for (auto& [k, v] : errors) std::fprintf(out, "%s=%llu  ", k.c_str(), (unsigned long long)v);
  if (!phases.empty()) {
    std::fprintf(out, "\nphases      ");
    for (auto& [k, v] : phases) std::fprintf(out, "%s=%llu  ", k.c_str(), (unsigned long long)v);
  }
  if (!instruments.empty()) {
    std::fprintf(out, "\ninstruments ");
    for (auto& [k, v] : instruments) std::fprintf(out, "%s=%llu  ", k.c_str(), (unsigned long long)v);
  }
  for (auto& [name, counters] : feed) {  // the non-zero ones
    std::fprintf(out, "\nfeed        %s:", name.c_str());
    for (auto& [k, v] : counters) {
      if (v) std::fprintf(out, " %s=%llu", k.c_str(), (unsigned long long)v);
    }
  }
  auto us = [](int64_t ns) { return double(ns) / 1000.0; };
  if (unpaced_replay) {
    std::fprintf(out, "\nlatency     unpaced replay: receive→alert includes queueing behind the file's backlog "
                      "(--speed 1 for a live-like figure)");
  }
  std::fprintf(out, "\nlatency     receive→alert  p50 %.1f us  p99 %.1f us  p999 %.1f us  (%llu alerts)\n",
               us(alert_latency.quantile_ns(0.5)), us(alert_latency.quantile_ns(0.99)), us(alert_latency.quantile_ns(0.999)),
               (unsigned long long)alert_latency.count());
  std::fprintf(out, "            receive→rules  p50 %.1f us  p99 %.1f us  p999 %.1f us  (%llu events)\n",
               us(event_latency.quantile_ns(0.5)), us(event_latency.quantile_ns(0.99)), us(event_latency.quantile_ns(0.999)),
               (unsigned long long)event_latency.count());
  if (has_model) {
    uint64_t dropped = 0;
    for (auto& [k, v] : model.drops) dropped += v;
    std::fprintf(out, "model       %s v%u on %s: %llu requests, %llu answered in %llu batches (mean %.1f), %llu dropped",
                 model.name.c_str(), model.version, model.backend.c_str(), (unsigned long long)model.requests,
                 (unsigned long long)model.results_ok, (unsigned long long)model.batches, model.mean_batch(),
                 (unsigned long long)dropped);
    for (auto& [k, v] : model.drops) std::fprintf(out, " %s=%llu", k.c_str(), (unsigned long long)v);
    std::fprintf(out, ", %llu failed batches\n", (unsigned long long)model.failed_batches);
    std::fprintf(
        out, "            inference      p50 %.1f us  p99 %.1f us  p999 %.1f us  (queue p99 %.1f us, compute p99 %.1f us)\n",
        us(model.inference.quantile_ns(0.5)), us(model.inference.quantile_ns(0.99)), us(model.inference.quantile_ns(0.999)),
        us(model.queue_wait.quantile_ns(0.99)), us(model.compute.quantile_ns(0.99)));
    if (model.receive_to_score.count() > 0) {
      std::fprintf(out, "            receive→score  p50 %.1f us  p99 %.1f us  p999 %.1f us\n",
                   us(model.receive_to_score.quantile_ns(0.5)), us(model.receive_to_score.quantile_ns(0.99)),
                   us(model.receive_to_score.quantile_ns(0.999)));
    }
  }
}

}  // namespace ts
