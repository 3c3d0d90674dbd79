// Every numeric key of [pipeline], [sim], [model] and [notify] is range-checked at start-up: a
// value out of range, NaN, too large for its type or of the wrong type is a ConfigError that
// names the key (the CLI turns it into exit code 2; tests/e2e/cli_test.cpp checks a few through
// the binary). Ranges: docs/config.md.
#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "core/config.h"
#include "detect/model_alert.h"
#include "ingest/sim/sim_options.h"
#include "notify/notify_config.h"
#include "pipeline/pipeline.h"
#include "serve/serve_options.h"

namespace ts {
namespace {

struct BadValue {
  const char* section;  // [section] of the file
  const char* line;     // key = value
  const char* key;      // dotted name the error must give
};

// ctest lists each case by its line ("[pipeline] event_ring = -1"), not by the struct's bytes
// (which include pointer values that differ from one build to the next).
void PrintTo(const BadValue& b, std::ostream* os) { *os << "[" << b.section << "] " << b.line; }

// Reads `section` of a file holding `toml` with the reader that owns it.
void read_section(const std::string& section, const Config& c) {
  if (section == "pipeline") (void)PipelineOptions::from_config(c.section("pipeline"));
  if (section == "sim") (void)SimOptions::from_config(c.section("sim"));
  if (section == "model") {
    const auto o = serve::ServeOptions::from_config(c.section("model"));
    (void)ModelAlertOptions::from_config(c.section("model"), o.window_rows);
  }
  if (section.rfind("notify", 0) == 0) (void)notify::read_notify_config(c);
}

class ConfigRange : public ::testing::TestWithParam<BadValue> {};

TEST_P(ConfigRange, RefusedNamingTheKey) {
  const BadValue& b = GetParam();
  std::string text = "[" + std::string(b.section) + "]\n" + b.line + "\n";
  if (std::string(b.section).rfind("notify", 0) == 0) {
    // A minimal valid [notify] around the value under test.
    text = std::string("[notify]\n") + (std::string(b.section) == "notify" ? std::string(b.line) + "\n" : "") +
           "[[notify.receivers]]\nname = \"r\"\ntype = \"webhook\"\nurl = \"http://127.0.0.1:1/\"\n" +
           (std::string(b.section) == "notify.receivers" ? std::string(b.line) + "\n" : "") +
           "[notify.route]\nreceiver = \"r\"\n" +
           (std::string(b.section) == "notify.route" ? std::string(b.line) + "\n" : "");
  }
  const Config c = Config::parse(text);
  try {
    read_section(b.section, c);
    ADD_FAILURE() << "accepted: " << text;
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find(b.key), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(
    Keys, ConfigRange,
    ::testing::Values(
        BadValue{"pipeline", "event_ring = -1", "pipeline.event_ring"},
        BadValue{"pipeline", "alert_ring = -1", "pipeline.alert_ring"},
        BadValue{"pipeline", "event_ring = 9223372036854775807", "pipeline.event_ring"},
        BadValue{"pipeline", "alert_ring = 0", "pipeline.alert_ring"},
        BadValue{"pipeline", "shards = 100000", "pipeline.shards"},
        BadValue{"pipeline", "shards = 0", "pipeline.shards"},
        BadValue{"pipeline", "shards = 4294967297", "pipeline.shards"},
        BadValue{"pipeline", "speed = -1.0", "pipeline.speed"},
        BadValue{"pipeline", "speed = nan", "pipeline.speed"},
        BadValue{"pipeline", "rate = -5.0", "pipeline.rate"},
        BadValue{"pipeline", "rate = inf", "pipeline.rate"},
        BadValue{"pipeline", "duration_s = -1.0", "pipeline.duration_s"},
        BadValue{"pipeline", "progress_s = -1.0", "pipeline.progress_s"},
        BadValue{"pipeline", "metrics_s = nan", "pipeline.metrics_s"},
        BadValue{"pipeline", "shards = \"4\"", "pipeline.shards"},
        BadValue{"sim", "symbols = 4294967297", "sim.symbols"},
        BadValue{"sim", "symbols = 0", "sim.symbols"},
        BadValue{"sim", "seed = -1", "sim.seed"},
        BadValue{"sim", "duration_s = -1.0", "sim.duration_s"},
        BadValue{"sim", "events_per_s = 0.0", "sim.events_per_s"},
        BadValue{"sim", "events_per_s = nan", "sim.events_per_s"},
        BadValue{"sim", "start_ns = -1", "sim.start_ns"},
        BadValue{"sim", "anomalies_per_hour = -1.0", "sim.anomalies_per_hour"},
        BadValue{"sim", "anomaly_warmup_s = nan", "sim.anomaly_warmup_s"},
        BadValue{"sim", "anomaly_gap_s = -1.0", "sim.anomaly_gap_s"},
        BadValue{"sim", "vol_bps = 101.0", "sim.vol_bps"},
        BadValue{"sim", "hawkes_branching = 0.9", "sim.hawkes_branching"},
        BadValue{"sim", "hawkes_decay_s = 0.0", "sim.hawkes_decay_s"},
        BadValue{"sim", "st_fraction = 1.5", "sim.st_fraction"},
        BadValue{"model", "version = 4294967297", "model.version"},
        BadValue{"model", "window_rows = 0", "model.window_rows"},
        BadValue{"model", "workers = 4294967297", "model.workers"},
        BadValue{"model", "cpu_threads = -1", "model.cpu_threads"},
        BadValue{"model", "deadline_us = 0", "model.deadline_us"},
        BadValue{"model", "slots_per_shard = -1", "model.slots_per_shard"},
        BadValue{"model", "request_ring = -1", "model.request_ring"},
        BadValue{"model", "max_batch = 0", "model.max_batch"},
        BadValue{"model", "max_delay_us = -1", "model.max_delay_us"},
        BadValue{"model", "max_queue = -1", "model.max_queue"},
        BadValue{"model", "warm_up_pause_us = 100001", "model.warm_up_pause_us"},
        BadValue{"model", "switch_to_cpu_after = 0", "model.switch_to_cpu_after"},
        BadValue{"model", "min_rows = 61", "model.min_rows"},
        BadValue{"model", "every_n = 0", "model.every_n"},
        BadValue{"model", "threshold = nan", "model.threshold"},
        BadValue{"model", "cooldown_s = -1.0", "model.cooldown_s"},
        BadValue{"notify", "queue_capacity = 4294967297", "notify.queue_capacity"},
        BadValue{"notify", "drain_ms = -1", "notify.drain_ms"},
        BadValue{"notify.receivers", "max_alerts = 4294967297", "notify.receivers[0].max_alerts"},
        BadValue{"notify.receivers", "burst = 4294967297", "notify.receivers[0].burst"},
        BadValue{"notify.receivers", "rate_per_s = nan", "notify.receivers[0].rate_per_s"},
        BadValue{"notify.receivers", "timeout_ms = 0", "notify.receivers[0].timeout_ms"},
        BadValue{"notify.route", "group_wait_ms = -1", "notify.route.group_wait_ms"}));

TEST(ConfigRange, DefaultsAndBoundsAreAccepted) {
  const Config c = Config::parse(
      "[pipeline]\nshards = 256\nevent_ring = 4194304\nalert_ring = 2\n"
      "[sim]\nsymbols = 5000\nhawkes_branching = 0.8\n");
  const PipelineOptions p = PipelineOptions::from_config(c.section("pipeline"));
  EXPECT_EQ(p.shards, 256);
  EXPECT_EQ(p.event_ring, size_t(1) << 22);
  EXPECT_EQ(SimOptions::from_config(c.section("sim")).symbols, 5000);
  const Config empty;
  EXPECT_EQ(PipelineOptions::from_config(empty.section("pipeline")).event_ring, size_t(1) << 16);
}

}  // namespace
}  // namespace ts
