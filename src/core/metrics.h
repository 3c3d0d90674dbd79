#pragma once
// The process's metric registry (prometheus-cpp). Served over HTTP by a later issue; counted
// from now on. Prometheus counters are atomics: hot-path stages keep plain local counts and
// publish them here periodically and at the end (see `publish` helpers in each stage).
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace ts {

class Metrics {
 public:
  Metrics();
  prometheus::Registry& registry() { return *registry_; }
  std::shared_ptr<prometheus::Registry> registry_ptr() { return registry_; }

  // Families are created on first use; a name is always "ticksentry_<name>".
  prometheus::Counter& counter(const std::string& name, const std::string& help,
                               const std::map<std::string, std::string>& labels = {});
  prometheus::Gauge& gauge(const std::string& name, const std::string& help,
                           const std::map<std::string, std::string>& labels = {});
  // Buckets are upper bounds in the metric's unit (seconds for *_seconds), ascending.
  prometheus::Histogram& histogram(const std::string& name, const std::string& help,
                                   const std::vector<double>& buckets,
                                   const std::map<std::string, std::string>& labels = {});
  // Text exposition format (what /metrics will serve).
  std::string serialize() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  std::map<std::string, prometheus::Family<prometheus::Counter>*> counters_;
  std::map<std::string, prometheus::Family<prometheus::Gauge>*> gauges_;
  std::map<std::string, prometheus::Family<prometheus::Histogram>*> histograms_;
};

}  // namespace ts
