// NVML telemetry (label gpu): on a machine with an NVIDIA driver every GPU's gauges appear on the
// registry with plausible values; without one, open() says why and the test is skipped.
#include <gtest/gtest.h>

#include <cstdio>

#include "core/metrics.h"
#include "http/gpu_telemetry.h"

namespace ts::testing {
namespace {

double gauge_value(Metrics& m, const std::string& family, const std::string& gpu) {
  for (const auto& fam : m.registry().Collect()) {
    if (fam.name != family) continue;
    for (const auto& metric : fam.metric) {
      for (const auto& l : metric.label) {
        if (l.name == "gpu" && l.value == gpu) return metric.gauge.value;
      }
    }
  }
  return -1;
}

TEST(GpuTelemetry, GaugesPerGpuWhenNvmlIsPresent) {
  Metrics metrics;
  std::string why;
  auto gpu = http::GpuTelemetry::open(metrics, &why);
  if (!gpu) GTEST_SKIP() << "no GPU telemetry here: " << why;
  ASSERT_GE(gpu->gpu_count(), 1u);
  gpu->sample();
  const double total = gauge_value(metrics, "ticksentry_gpu_memory_total_bytes", "0");
  const double used = gauge_value(metrics, "ticksentry_gpu_memory_used_bytes", "0");
  const double temp = gauge_value(metrics, "ticksentry_gpu_temperature_celsius", "0");
  const double power = gauge_value(metrics, "ticksentry_gpu_power_watts", "0");
  const double util = gauge_value(metrics, "ticksentry_gpu_utilization_ratio", "0");
  std::printf("gpu0: memory %.1f / %.1f GiB, %.0f C, %.1f W, utilisation %.2f\n", used / (1 << 30), total / (1 << 30),
              temp, power, util);
  EXPECT_GT(total, 1e9);
  EXPECT_GE(used, 0);
  EXPECT_LE(used, total);
  EXPECT_GT(temp, 0);
  EXPECT_LT(temp, 120);
  EXPECT_GT(power, 0);
  EXPECT_GE(util, 0);
  EXPECT_LE(util, 1);
}

}  // namespace
}  // namespace ts::testing
