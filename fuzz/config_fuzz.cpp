// libFuzzer target for the TOML config (core/config.h, docs/config.md): the input is a config
// file. It is parsed, then every section the program reads is read by its own module, with the
// code `ticksentry run --config` runs before anything slow starts:
//   [rules] and [rules.*] (ranges, groups), [features], [sim], [pipeline], [model] (serving and the
//   decision stage, [[model.groups]]), [notify] with its receivers and routes, [http] (the
//   dashboard: bind, port, tokens, web_root and the connection limits of http_limits.h),
//   [silences] (db, [[silences.declared]]), [sinks] (stdout, append, audit_backend, audit_db,
//   postgres_dsn, jsonl), [kafka] (brokers, topic, group, dlq_topic, encoding, eof_idle_ms,
//   alerts_topic), [kafka.consumer] / [kafka.producer] passed through to librdkafka,
//   [instruments] (default_market, crypto_venue) and [calendars] (the built-in ones),
// then the unknown keys are listed. A bad file or value must be a ConfigError (main prints it,
// exit 2) or the reader's own refusal (MarketWiring::build returns false), never a crash, a hang,
// another exception or an allocation that grows with a value.
// Files are not opened: an input naming [instruments] path or [calendars] dir skips
// MarketWiring::build (the file readers have their own targets, instrument_fuzz), and [sinks]
// paths are only resolved (no --out-dir, so no folder is made). The alerts topic's producer is
// not made (make_kafka_alert_sink would connect); its key is read with the same kafka_key.
//   build/fuzz/fuzz/config_fuzz -max_total_time=60 fuzz/corpus/config_fuzz   (bench/fuzz.sh)
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "app/commands.h"
#include "app/kafka_commands.h"
#include "app/market_wiring.h"
#include "app/run_outputs.h"
#include "app/silence_config.h"
#include "core/config.h"
#include "fuzz_files.h"
#include "core/input_errors.h"
#include "core/log.h"
#include "core/symbol_table.h"
#include "detect/model_alert.h"
#include "detect/rule_options.h"
#include "features/feature_options.h"
#include "http/dashboard.h"
#include "ingest/sim/sim_options.h"
#include "kafka/kafka_config.h"
#include "notify/notify_config.h"
#include "pipeline/pipeline.h"
#include "serve/serve_options.h"

namespace {

// CONFIG_FUZZ_VERBOSE=1: print each input's refusal and unread keys (to check that a seed reaches
// the readers it is meant for instead of stopping at its first bad value).
bool g_verbose = false;

// [instruments] and [calendars] as `run` reads them, unless they name a file or folder. Only for
// an input that names either section: MarketWiring loads the exchange calendars each time, a
// third of an input's time, and other inputs have nothing there for it to read.
void read_markets(const ts::Config& config, std::string_view text) {
  if (text.find("instruments") == std::string_view::npos && text.find("calendars") == std::string_view::npos) return;
  if (!config.section("instruments").get("path", "").empty() || !config.section("calendars").get("dir", "").empty()) {
    return;
  }
  ts::SymbolTable symbols;
  ts::InputErrors errors;
  errors.set_quiet(true);
  ts::MarketWiring markets;
  (void)markets.build(config, ts::CommonOptions{}, symbols, errors);
}

void read_everything(const ts::Config& config, const std::string& path, std::string_view text) {
  (void)ts::RuleOptions::from_config(config);
  (void)ts::FeatureOptions::from_config(config.section("features"));
  (void)ts::SimOptions::from_config(config.section("sim"));
  (void)ts::PipelineOptions::from_config(config.section("pipeline"));
  const auto serve = ts::serve::ServeOptions::from_config(config.section("model"));
  (void)ts::ModelAlertOptions::from_config(config.section("model"), serve.window_rows);
  (void)ts::notify::read_notify_config(config);
  (void)ts::http::DashboardOptions::from_config(config.section("http"), true);
  (void)ts::read_silences_config(config);
  (void)ts::run_outputs(config, ts::CommonOptions{});
  (void)config.section("sinks").get("stdout", true);
  (void)ts::kafka_source_options(config, path, ts::KafkaRunOptions{});  // [kafka.consumer], [kafka.producer] too
  (void)ts::kafka_key(config, std::nullopt, "alerts_topic", "");
  read_markets(config, text);
  const auto unread = config.unread_keys();
  if (g_verbose) {
    for (const auto& k : unread) std::fprintf(stderr, "config_fuzz: unread key %s\n", k.c_str());
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);  // MarketWiring logs the calendars it loads, per input
  g_verbose = std::getenv("CONFIG_FUZZ_VERBOSE") != nullptr;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The input is the file's content: Config::parse reads it in memory, kafka_passthrough opens
  // the path again (an input given only in memory stopped every run there, before [kafka] and
  // the unknown keys were read).
  ts::fuzz::MemFile& file = ts::fuzz::MemFile::get();
  file.replace(text);
  const std::string& path = file.path();
  try {
    const ts::Config config = ts::Config::parse(text, path);
    read_everything(config, path, text);
  } catch (const ts::ConfigError& e) {
    // a clear refusal: what a bad file must give
    if (g_verbose) std::fprintf(stderr, "config_fuzz: refused: %s\n", e.what());
  } catch (...) {
    __builtin_trap();  // any other exception is not the "exit 2 naming the key" the docs promise
  }
  return 0;
}
