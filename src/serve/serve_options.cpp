#include "serve/serve_options.h"

#include <algorithm>
#include <climits>
#include <filesystem>

namespace ts::serve {

ServeOptions ServeOptions::from_config(const ConfigSection& s) {
  ServeOptions o;
  auto bad = [&](const std::string& what) { throw ConfigError("[" + s.name() + "] " + what); };
  o.path = s.get("path", o.path);
  o.name = s.get("name", o.name);
  o.version = uint32_t(s.get("version", int64_t(o.version)));
  o.registry = s.get("registry", o.registry);
  o.gate_data = s.get("gate_data", o.gate_data);
  o.gate_split = s.get("gate_split", o.gate_split);
  if (!o.registry.empty() && o.path.empty() && o.name.empty()) bad("registry needs the model's name");
  o.backend = s.get("backend", o.backend);
  if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda") bad("backend must be auto, cpu or cuda, not '" + o.backend + "'");
  o.precision = s.get("precision", o.precision);
  if (o.precision != "auto" && o.precision != "fp32" && o.precision != "fp16" && o.precision != "bf16") {
    bad("precision must be auto, fp32, fp16 or bf16, not '" + o.precision + "'");
  }
  o.window_rows = s.get("window_rows", o.window_rows);
  if (o.window_rows < 1 || o.window_rows > 120) bad("window_rows must be in 1..120");
  o.workers = s.get("workers", o.workers);
  if (o.workers < 0 || o.workers > 16) bad("workers must be in 0..16 (0: 4 on cuda, 1 on cpu)");
  o.cpu_threads = s.get("cpu_threads", o.cpu_threads);
  if (o.cpu_threads < 0 || o.cpu_threads > 1024) bad("cpu_threads must be in 0..1024 (0: every core)");
  o.deadline_us = s.get("deadline_us", o.deadline_us);
  if (o.deadline_us < 1) bad("deadline_us must be > 0");
  o.slots_per_shard = size_t(s.get("slots_per_shard", int64_t(o.slots_per_shard)));
  o.request_ring = size_t(s.get("request_ring", int64_t(o.request_ring)));
  o.batcher.max_batch = s.get("max_batch", o.batcher.max_batch);
  if (o.batcher.max_batch < 1) bad("max_batch must be >= 1");
  if (const int64_t d = s.get("max_delay_us", INT64_MIN); d != INT64_MIN) {  // absent: by backend (max_delay_auto)
    if (d < 0) bad("max_delay_us must be >= 0");
    o.batcher.max_delay_us = d;
    o.max_delay_auto = false;
  }
  o.batcher.max_queue = size_t(s.get("max_queue", int64_t(o.batcher.max_queue)));
  o.lossless = s.get("lossless", o.lossless);
  if (o.lossless != "auto" && o.lossless != "on" && o.lossless != "off") bad("lossless must be auto, on or off");
  o.pad_batches = s.get("pad_batches", o.pad_batches);
  if (o.pad_batches != "auto" && o.pad_batches != "on" && o.pad_batches != "off") bad("pad_batches must be auto, on or off");
  o.warm_up_pause_us = s.get("warm_up_pause_us", o.warm_up_pause_us);
  if (o.warm_up_pause_us < 0 || o.warm_up_pause_us > 100'000) bad("warm_up_pause_us must be in 0..100000");
  o.cpu_fallback = s.get("cpu_fallback", o.cpu_fallback);
  o.switch_to_cpu_after = s.get("switch_to_cpu_after", o.switch_to_cpu_after);
  return o;
}

void resolve_for_backend(ServeOptions& o, const std::string& backend) {
  if (o.workers == 0) o.workers = backend == "cuda" ? 4 : 1;
  if (o.max_delay_auto) o.batcher.max_delay_us = backend == "cuda" ? 50 : 200;
}

}  // namespace ts::serve
