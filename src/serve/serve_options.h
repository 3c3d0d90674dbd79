#pragma once
// Options of model serving: section [model] of the config file. Every key has a default;
// model alerts are on when a model is given (`path`, or --model on the command line). The same
// section's trigger and decision keys (min_rows, trigger, every_n, threshold, hysteresis,
// cooldown_s, [[model.groups]]) are the model alerts' own: detect/model_alert.h.
// Read at start-up; a change takes effect at the next start (promotions swap the model itself).
#include <cstdint>
#include <string>
#include <vector>

#include "core/config.h"
#include "serve/batcher.h"

namespace ts::serve {

struct ServeOptions {
  std::string path;                 // .onnx (built at start) or .plan; "" = the registry's prod, or no model alerts
  std::string name;                 // model name in alerts (and in the registry); "" = the file's stem
  uint32_t version = 1;             // registry version shown in alerts (set from the registry when serving from it)
  // Serving from the model registry (models/registry.json, src/serve/model_registry.h): with
  // `registry` and `name` set and no `path`, the prod version serves (its shadow too), and
  // promotions through the admin API swap it live. The gate checks on `gate_data` (a
  // `ticksentry features --export` directory), split `gate_split`.
  std::string registry;
  std::string gate_data;
  std::string gate_split = "validation";
  std::string backend = "auto";     // auto | cpu | cuda (auto: cuda when a GPU is present and the plan fits)
  std::string precision = "auto";   // auto (fp16 on cuda, fp32 on cpu) | fp32 | fp16 | bf16
  int window_rows = 60;             // T fed to the model
  int workers = 0;                  // execution contexts (CUDA streams), one thread each; 0 = auto:
                                    // 4 on cuda (batches overlap on the device: each runs on its
                                    // share of the SMs, engine/device_share.h), 1 on cpu
  int cpu_threads = 1;              // threads one worker's CPU engine may use (oneDNN/OpenMP); 0 = all
                                    // cores. 1: workers are the parallelism, and idle OpenMP threads
                                    // would spin on the cores the shards need.
  int64_t deadline_us = 20'000;     // a request not run within this is dropped (counted)
  size_t slots_per_shard = 2048;    // windows a shard may have out at once
  size_t request_ring = 4096;       // shard → scheduler ring, requests
  BatcherOptions batcher;           // max_batch (256), max_delay_us, max_queue (65536)
  // max_delay_us absent from the config: 50 on cuda (batches overlap, so a short wait costs no
  // throughput and keeps receive → score P99 under 500 µs at 1 M events/s), 200 on cpu (one
  // worker: fuller batches are its throughput). Resolved with the backend (resolve_for_backend).
  bool max_delay_auto = true;
  // Lossless: every request is scored — no latest-wins, no deadline, and a shard waits for a free
  // window slot instead of dropping. The default for unpaced replay (results must not depend on
  // the machine's speed); live runs keep the latency-first policies. "auto" | "on" | "off".
  std::string lossless = "auto";
  // Pad batches to power-of-two sizes (CUDA graphs per shape, all captured at warm-up):
  // "auto" (on for the cuda backend) | "on" | "off".
  std::string pad_batches = "auto";
  // A swap's warm-up runs beside live serving; a pause after each warm-up batch leaves the
  // device (and the driver) to the serving batches in between: a longer swap, a lower P99 during
  // it. H200, GRU-2x128 FP16, 4 workers, before the block cache: 500 µs → swaps of 25-46 ms with
  // P99 in the 0.5 s around them 1.7-2.0x the rest of the run's (0: 20-45 ms, 1.7-2.2x); with it
  // (56691c3): 19-21 ms, 0.91-1.04x.
  int warm_up_pause_us = 500;
  bool cpu_fallback = true;         // retry a failed batch once on the CPU backend
  int switch_to_cpu_after = 3;      // consecutive failed batches before serving from the CPU

  static ServeOptions from_config(const ConfigSection& s);  // throws ConfigError on bad values
};

// Resolves what 0 and max_delay_auto leave to the backend ("cpu" or "cuda"): workers 0 → 4 on
// cuda, 1 on cpu; max_delay_us (when max_delay_auto) → 50 on cuda, 200 on cpu. The product
// (app/model_wiring.cpp) and bench/serve_bench both call it, so the bench runs what ships.
void resolve_for_backend(ServeOptions& o, const std::string& backend);

}  // namespace ts::serve
