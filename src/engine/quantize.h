#pragma once
// INT8 post-training quantization of an optimized graph, as TensorRT's INT8 builder mode with
// IInt8EntropyCalibrator2 does it:
//
//   1. The FP32 graph runs on the CPU backend over the calibration windows (≥ 1,000 real
//      feature windows, [N, T, F] float32 fed to the graph's one input) twice: the first pass
//      finds max |x| of every calibrated tensor, the second fills its 2048-bin histogram
//      (EntropyHistogram, calibrate.h). Calibrated tensors: the input and the output of every
//      INT8-eligible layer (a GEMM with a constant 2-D f32 weight: FusedGemm, Gemm, MatMul).
//      The threshold minimizing KL(P ‖ Q) gives the tensor's scale, threshold / 127.
//   2. Each eligible layer is simulated in INT8 on the host (input quantized per tensor at its
//      scale, weights per output channel, INT32 accumulation, dequantize + bias + activation)
//      on up to kErrorRows rows of its calibration inputs and compared with FP32: the relative
//      L2 error ‖y_int8 − y_fp32‖ / ‖y_fp32‖, at the entropy threshold and at wider clips
//      (1.5×, 2×, 3×, 4×, 8×, 16× it, and max |x|): entropy
//      calibration minimizes the input's information loss, but clipped outliers can dominate a
//      layer's output error (a normalized feature's rare large values); the smallest measured
//      error wins. A layer whose error still exceeds max_rel_err falls back to FP16, as do
//      layers that are not eligible; recurrent layers (GRU, LSTM) stay FP16.
//   3. The choice is written on the layer's node as attributes (kAttrQ*), which the plan
//      stores with the graph and backends read when they make kernels; the tensor scales go
//      into the plan's calibration table.
//
// The calibration cache (like TensorRT's calibration table file) keeps the thresholds and the
// measured per-layer errors with a fingerprint of the graph, so that a rebuild of the same
// model reads it and needs neither the windows nor a calibration run; a cache made for another
// model is refused with a message saying so.
//
// Threading: every function is pure or owns what it touches; none is meant for the hot path.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/ir/graph.h"
#include "engine/npy.h"

namespace ts::engine {

// Node attributes an INT8 build writes on every eligible layer.
inline constexpr char kAttrQPrecision[] = "q_precision";  // string: "int8" | "fp16"
inline constexpr char kAttrQReason[] = "q_reason";        // string: "rel err 3.1e-03" / "fallback: ..."
inline constexpr char kAttrQInScale[] = "q_in_scale";     // float: INT8 scale of input 0
inline constexpr char kAttrQWScales[] = "q_w_scales";     // floats: per output channel
inline constexpr char kAttrQRelErr[] = "q_rel_err";       // float: measured output error

constexpr int64_t kMinCalibrationWindows = 1000;
constexpr int64_t kErrorRows = 32768;  // rows per layer in the error check (evenly strided)

struct CalibrationOptions {
  int64_t min_windows = kMinCalibrationWindows;
  int bins = 2048;
  // A layer whose INT8 output error (relative L2 vs FP32) exceeds this falls back to FP16.
  double max_rel_err = 5e-2;
  int64_t batch = 128;  // windows per CPU run
};

// What calibration measured, keyed by value / node name.
struct CalibrationTable {
  uint32_t fingerprint = 0;                    // graph_fingerprint() of the graph calibrated
  int64_t windows = 0;                         // how many windows it saw
  std::map<std::string, float> thresholds;     // tensor → clip threshold (scale = threshold/127)
  std::map<std::string, double> layer_rel_err; // eligible node → INT8 output error
  std::map<std::string, float> layer_in_threshold;  // eligible node → clip of its input
};

// The per-layer decision of an INT8 build.
struct LayerQuant {
  std::string node;
  bool int8 = false;
  std::string reason;    // "rel err 3.1e-03 ≤ 5.0e-02" or "fallback: rel err 7.2e-02 > 5.0e-02"
  float in_scale = 1.0f;
  std::vector<float> w_scales;
  double rel_err = 0.0;
};

// Whether node `n` can run as an INT8 GEMM: FusedGemm / Gemm (transA 0, alpha = beta = 1) /
// MatMul with a constant 2-D f32 weight and an f32 bias of N values or none.
bool int8_eligible(const Graph& g, const Node& n);

// CRC32 over the eligible layers' names, ops and weights (what a calibration depends on).
uint32_t graph_fingerprint(const Graph& g);

// Checks the windows: f32 rank 3, ≥ min_windows ("need ≥ 1000 windows, got N"), last two
// dims matching the graph's single input where the model fixes them.
Status check_calibration_windows(const Graph& g, const HostTensor& windows, const CalibrationOptions& o);

// Steps 1 and 2 above: histograms and thresholds, then per-layer errors.
Result<CalibrationTable> calibrate(const Graph& g, const HostTensor& windows, const CalibrationOptions& o);

// Step 3's decisions from a table (also one read from a cache).
Result<std::vector<LayerQuant>> choose_layer_precisions(const Graph& g, const CalibrationTable& t,
                                                        const CalibrationOptions& o);
// Writes the decisions on the nodes (kAttrQ*).
void apply_layer_precisions(Graph& g, const std::vector<LayerQuant>& layers);

// Cache file: text, one entry a line; see quantize.cpp.
Status write_calibration_cache(const std::string& path, const CalibrationTable& t);
Result<CalibrationTable> read_calibration_cache(const std::string& path);

// The whole INT8 step of a build: reads the cache when `cache_path` names a file made for
// this graph, else calibrates on `calib_path` (an .npy of windows) and writes the cache when a
// path is given; decides and applies. `log` gains one line per eligible layer.
// Errors: "int8 needs calibration data: give --calib ..." when neither is usable; the npy
// reader's error for a missing file; "need ≥ 1000 windows, got N".
Result<CalibrationTable> quantize_graph(Graph& g, const std::string& calib_path, const std::string& cache_path,
                                        const CalibrationOptions& o, std::vector<std::string>* log);

}  // namespace ts::engine
