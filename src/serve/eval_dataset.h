#pragma once
// A labelled window set written by `ticksentry features --export DIR` (the dataset contract in
// docs/labels.md), loaded and checked for consistency, and a model's scores on its windows.
// `ticksentry eval` and the promotion gate (serve/promotion_gate.h) both read data this way, so
// a model is scored on exactly the same windows by both.
//
// Not for the hot path: loading reads every array into memory and scoring allocates. An
// EvalDataset is immutable once loaded and may be read from several threads; score_windows
// creates its own execution context, so concurrent calls on one engine are safe.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/npy.h"
#include "serve/eval_metrics.h"

namespace ts {

struct EvalDataset {
  std::string dir;
  nlohmann::json manifest;
  engine::HostTensor windows;   // float32 [n, t, f]
  engine::HostTensor labels;    // uint8 [n]
  engine::HostTensor symbol;    // int32 [n], index into manifest "symbols"
  engine::HostTensor end_ts;    // int64 [n], ns, non-decreasing
  engine::HostTensor event_ts;  // int64 [n], ns, -1 without an onset
  engine::HostTensor rule;      // float32 [n]
  engine::HostTensor zscore;    // float32 [n]
  int64_t n = 0, t = 0, f = 0;
  int64_t first_ns = 0, last_ns = 0;  // manifest time_range_ns
  double horizon_s = 0;               // label horizon (the alert cooldown in eval)
  double stride_s = 0;                // seconds of data one window stands for
};

// Reads DIR; a missing directory or file, a wrong dtype or rank, arrays of different lengths,
// symbol indices outside the manifest or rows out of time order → error naming the file.
// task: "any" (labels.npy, event_ts_ns.npy), "detect" or "forecast" (labels_<task>.npy and
// event_ts_<task>_ns.npy: the two tasks of docs/labels.md); anything else → error.
Result<EvalDataset> load_eval_dataset(const std::string& dir, const std::string& task = "any");

// Parses "train" | "validation" | "test" | "all" (nullopt = all); anything else → error.
Result<std::optional<Split>> parse_split(const std::string& name);
// Row indices of one split (all rows for nullopt), in time order.
std::vector<size_t> split_rows(const EvalDataset& d, std::optional<Split> split);
// The labels of `rows`, in that order.
std::vector<uint8_t> labels_of(const EvalDataset& d, const std::vector<size_t>& rows);

// Builds `onnx_path` into an engine for windows [1..max_batch, t, f], optimized for max_batch.
// time_tactics: time candidate kernels (an engine that will serve; ~1 s more for the default
// model) or not (eval and references need scores, not the fastest kernel). Errors carry
// "building <path>".
Result<std::shared_ptr<engine::Engine>> build_window_engine(const std::string& onnx_path, int64_t t, int64_t f,
                                                            int64_t max_batch, const std::string& backend = "cpu",
                                                            engine::Precision precision = engine::Precision::kFP32,
                                                            bool time_tactics = false);
// A .onnx is built (CPU, FP32, as above); anything else is loaded as a plan ("loading <path>: ...").
Result<std::shared_ptr<engine::Engine>> load_window_model(const std::string& path, int64_t t, int64_t f, int64_t max_batch);

// One probability per row of `rows`, computed `batch` windows per call (capped at the engine's
// profile maximum). The engine must take one input [batch, T, F] of the data set's T and F and
// give a float32 [batch, 1] output (named "prob", else the first); anything else, or a
// non-finite output, is an error naming `model_name`.
Result<std::vector<float>> score_windows(const engine::Engine& eng, const EvalDataset& d, const std::vector<size_t>& rows,
                                         int64_t batch, const std::string& model_name);

}  // namespace ts
