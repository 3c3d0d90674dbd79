// libFuzzer target for the TOML config (core/config.h, docs/config.md): the input is a config
// file. It is parsed, then the sections below are read by their own modules ([rules.*] with
// their ranges, [features], [sim], [pipeline], [model] (serving and the decision stage),
// [notify] with its receivers and routes, [kafka.consumer] and [kafka.producer] passed through
// to librdkafka), then the unknown keys are listed — as `ticksentry run --config` does before
// anything slow starts. A bad file or value must be a ConfigError (main prints it, exit 2), never
// a crash, a hang, another exception or an allocation that grows with a value.
// Not here: [http] (its reader is in the app, with the server; tests/e2e/cli_test.cpp checks
// its ranges) and [sinks] (paths the run opens).
//   build/fuzz/fuzz/config_fuzz -max_total_time=60 fuzz/corpus/config_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/config.h"
#include "detect/model_alert.h"
#include "detect/rule_options.h"
#include "features/feature_options.h"
#include "ingest/sim/sim_options.h"
#include "kafka/kafka_config.h"
#include "notify/notify_config.h"
#include "pipeline/pipeline.h"
#include "serve/serve_options.h"

namespace {

void read_everything(const ts::Config& config, const std::string& path) {
  (void)ts::RuleOptions::from_config(config);
  (void)ts::FeatureOptions::from_config(config.section("features"));
  (void)ts::SimOptions::from_config(config.section("sim"));
  (void)ts::PipelineOptions::from_config(config.section("pipeline"));
  const auto serve = ts::serve::ServeOptions::from_config(config.section("model"));
  (void)ts::ModelAlertOptions::from_config(config.section("model"), serve.window_rows);
  (void)ts::notify::read_notify_config(config);
  (void)ts::kafka_passthrough(config, path, "kafka.consumer");
  (void)ts::kafka_passthrough(config, path, "kafka.producer");
  (void)config.unread_keys();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string path = "config.toml";  // the name errors give; parsed from memory
  try {
    const ts::Config config = ts::Config::parse(text, path);
    read_everything(config, path);
  } catch (const ts::ConfigError&) {
    // a clear refusal: what a bad file must give
  } catch (...) {
    __builtin_trap();  // any other exception is not the "exit 2 naming the key" the docs promise
  }
  return 0;
}
