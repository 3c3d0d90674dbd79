#include "serve/serve_options.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <filesystem>

namespace ts::serve {

ServeOptions ServeOptions::from_config(const ConfigSection& s) {
  ServeOptions o;
  auto bad = [&](const std::string& what) { throw ConfigError("[" + s.name() + "] " + what); };
  o.path = s.get("path", o.path);
  o.name = s.get("name", o.name);
  o.version = uint32_t(s.get_in("version", int64_t(o.version), int64_t(1), int64_t(UINT32_MAX)));
  o.registry = s.get("registry", o.registry);
  o.gate_data = s.get("gate_data", o.gate_data);
  o.gate_split = s.get("gate_split", o.gate_split);
  if (!o.registry.empty() && o.path.empty() && o.name.empty()) bad("registry needs the model's name");
  o.backend = s.get("backend", o.backend);
  if (o.backend != "auto" && o.backend != "cpu" && o.backend != "cuda")
    bad("backend must be auto, cpu or cuda, not '" + o.backend + "'");
  o.precision = s.get("precision", o.precision);
  if (o.precision != "auto" && o.precision != "fp32" && o.precision != "fp16" && o.precision != "bf16") {
    bad("precision must be auto, fp32, fp16 or bf16, not '" + o.precision + "'");
  }
  o.window_rows = s.get_in("window_rows", o.window_rows, 1, 120);
  o.workers = s.get_in("workers", o.workers, 0, 16);  // 0: 4 on cuda, 1 on cpu
  o.cpu_threads = s.get_in("cpu_threads", o.cpu_threads, 0, 1024);  // 0: every core
  o.deadline_us = s.get_in("deadline_us", o.deadline_us, int64_t(1), int64_t(60'000'000));
  o.slots_per_shard = size_t(s.get_in("slots_per_shard", int64_t(o.slots_per_shard), int64_t(1), int64_t(1) << 20));
  o.request_ring = size_t(s.get_in("request_ring", int64_t(o.request_ring), int64_t(2), int64_t(1) << 22));
  o.batcher.max_batch = s.get_in("max_batch", o.batcher.max_batch, 1, 65536);
  if (const int64_t d = s.get("max_delay_us", INT64_MIN); d != INT64_MIN) {  // absent: by backend (max_delay_auto)
    o.batcher.max_delay_us = s.get_in("max_delay_us", d, int64_t(0), int64_t(10'000'000));
    o.max_delay_auto = false;
  }
  o.batcher.max_queue = size_t(s.get_in("max_queue", int64_t(o.batcher.max_queue), int64_t(1), int64_t(1) << 24));
  o.lossless = s.get("lossless", o.lossless);
  if (o.lossless != "auto" && o.lossless != "on" && o.lossless != "off") bad("lossless must be auto, on or off");
  o.pad_batches = s.get("pad_batches", o.pad_batches);
  if (o.pad_batches != "auto" && o.pad_batches != "on" && o.pad_batches != "off") bad("pad_batches must be auto, on or off");
  o.warm_up_pause_us = s.get_in("warm_up_pause_us", o.warm_up_pause_us, 0, 100'000);
  o.cpu_fallback = s.get("cpu_fallback", o.cpu_fallback);
  o.switch_to_cpu_after = s.get_in("switch_to_cpu_after", o.switch_to_cpu_after, 1, 1'000'000);
  return o;
}

void resolve_for_backend(ServeOptions& o, const std::string& backend) {
  if (o.workers == 0) o.workers = backend == "cuda" ? 4 : 1;
  if (o.max_delay_auto) o.batcher.max_delay_us = backend == "cuda" ? 50 : 200;
}

}  // namespace ts::serve
