#include "app/run_summary.h"

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
  return {{"p50", us(h.quantile_ns(0.50))},  {"p99", us(h.quantile_ns(0.99))},
          {"p999", us(h.quantile_ns(0.999))}, {"max", us(h.max_ns())},
          {"mean", h.mean_ns() / 1000.0},     {"count", h.count()}};
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
  j["source_stalls"] = source_stalls;
  j["interrupted"] = interrupted;
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
  std::fprintf(out, "events      %llu in %.2f s (%.0f events/s)%s\n", (unsigned long long)events, wall_s,
               events_per_s(), interrupted ? "  [stopped early]" : "");
  std::fprintf(out, "alerts      %llu", (unsigned long long)alert_total());
  for (auto& [k, v] : alerts) std::fprintf(out, "  %s=%llu", k.c_str(), (unsigned long long)v);
  std::fprintf(out, "\nerrors      ");
  if (errors.empty()) std::fprintf(out, "none");
  for (auto& [k, v] : errors) std::fprintf(out, "%s=%llu  ", k.c_str(), (unsigned long long)v);
  auto us = [](int64_t ns) { return double(ns) / 1000.0; };
  std::fprintf(out, "\nlatency     receive→alert  p50 %.1f us  p99 %.1f us  p999 %.1f us  (%llu alerts)\n",
               us(alert_latency.quantile_ns(0.5)), us(alert_latency.quantile_ns(0.99)),
               us(alert_latency.quantile_ns(0.999)), (unsigned long long)alert_latency.count());
  std::fprintf(out, "            receive→rules  p50 %.1f us  p99 %.1f us  p999 %.1f us  (%llu events)\n",
               us(event_latency.quantile_ns(0.5)), us(event_latency.quantile_ns(0.99)),
               us(event_latency.quantile_ns(0.999)), (unsigned long long)event_latency.count());
}

}  // namespace ts
