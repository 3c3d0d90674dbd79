#include "core/metrics.h"

#include <prometheus/text_serializer.h>

#include <sstream>

namespace ts {

Metrics::Metrics() : registry_(std::make_shared<prometheus::Registry>()) {}

prometheus::Counter& Metrics::counter(const std::string& name, const std::string& help,
                                      const std::map<std::string, std::string>& labels) {
  auto& fam = counters_[name];
  if (!fam) fam = &prometheus::BuildCounter().Name("ticksentry_" + name).Help(help).Register(*registry_);
  return fam->Add(labels);
}

prometheus::Gauge& Metrics::gauge(const std::string& name, const std::string& help,
                                  const std::map<std::string, std::string>& labels) {
  auto& fam = gauges_[name];
  if (!fam) fam = &prometheus::BuildGauge().Name("ticksentry_" + name).Help(help).Register(*registry_);
  return fam->Add(labels);
}

prometheus::Histogram& Metrics::histogram(const std::string& name, const std::string& help,
                                          const std::vector<double>& buckets,
                                          const std::map<std::string, std::string>& labels) {
  auto& fam = histograms_[name];
  if (!fam) fam = &prometheus::BuildHistogram().Name("ticksentry_" + name).Help(help).Register(*registry_);
  return fam->Add(labels, prometheus::Histogram::BucketBoundaries(buckets));
}

std::string Metrics::serialize() const {
  prometheus::TextSerializer s;
  std::ostringstream out;
  s.Serialize(out, registry_->Collect());
  return out.str();
}

}  // namespace ts
