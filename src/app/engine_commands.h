#pragma once
// The engine's trtexec-like subcommands of the `ticksentry` CLI:
//   build   --onnx M.onnx --saveEngine M.plan --backend cpu [--minShapes x:1x30x32
//           --optShapes x:64x60x32 --maxShapes x:1024x120x32] [--fp16|--bf16|--int8]
//           [--timingCacheFile F] [--memPoolSize workspace:1024M]
//           [--manifest M.manifest.json] [--threshold P] [--probabilityColumn N] [--noManifest]
//   bench   --loadEngine M.plan --shapes x:1x60x32 [--iterations N] [--duration S] [--warmUp MS]
//           [--percentile 90,95,99] [--pageable] [--useCudaGraph] [--noDeviceResident] [--json F]
//           host-to-host latency and throughput; on cuda also the device-resident H2D / compute /
//           D2H split (engine/bench.h); JSON with device, driver, precision, per-layer tactics
//   inspect M.plan                      the model manifest, layers, fusions, tactics, precisions, memory
//   infer   --loadEngine M.plan --input x=in.npy [--input ...] --output [y=]out.npy
// Exit codes as for every command: 0 success, 2 bad usage, unreadable or invalid files, engine
// errors (each printed as one clear line on stderr), 1 unexpected internal failure.
#include <optional>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace ts {

struct EngineBuildOptions {
  std::string onnx;
  std::string save_engine;
  std::string backend = "cpu";
  std::string min_shapes, opt_shapes, max_shapes;  // "x:1x30x32[,name:dims...]"
  bool fp16 = false, bf16 = false, int8 = false;
  bool tf32 = false;                               // FP32 GEMMs on TF32 tensor cores (cuda)
  std::string calib, calib_cache;                  // int8: windows .npy, calibration cache file
  double int8_max_rel_err = 5e-2;                  // int8: per-layer error above which FP16
  std::string precision_constraints = "prefer";    // int8: prefer (faster fused FP16 kernels) | obey
  std::string timing_cache_file;
  std::string mem_pool_size;                       // "workspace:1024M" (K, M, G; bare = MiB)
  // The plan's model manifest (app/build_manifest.h): a JSON file (default <model>.manifest.json
  // beside the ONNX when present), the evaluated threshold, the probability column, or none.
  std::string manifest;
  double threshold = -1;            // < 0: not given
  int64_t probability_column = -1;  // < 0: not given
  bool no_manifest = false;
};

// trtexec's measuring options and defaults (engine/bench.h says what each phase times).
struct EngineBenchOptions {
  std::string load_engine;
  std::string shapes;                 // "x:1x60x32"; needed for every input with dynamic dims
  int iterations = 10;                // at least this many timed calls
  double duration_s = 3;              // and at least this long
  double warm_up_ms = 200;            // untimed calls for at least this long first
  std::string percentiles = "90,95,99";
  bool pageable = false;              // cuda: pageable host buffers instead of page-locked
  bool use_cuda_graph = false;        // cuda: replay the engine's CUDA graphs
  bool no_device_phase = false;       // cuda: host-to-host only
  std::string json;                   // optional results file
};

struct EngineInspectOptions {
  std::string plan;
};

struct EngineInferOptions {
  std::string load_engine;
  std::vector<std::string> inputs;   // "name=file.npy"
  std::vector<std::string> outputs;  // "file.npy" (first output) or "name=file.npy"
};

int command_engine_build(const EngineBuildOptions& opts);
int command_engine_bench(const EngineBenchOptions& opts);
int command_engine_inspect(const EngineInspectOptions& opts);
int command_engine_infer(const EngineInferOptions& opts);

// Registers build, bench, inspect and infer on `app`; run() dispatches to the one parsed, if
// any. Must outlive app.parse().
class EngineCommands {
 public:
  explicit EngineCommands(CLI::App& app);
  // The exit code of the engine subcommand given on the command line, or nullopt if none was.
  std::optional<int> run() const;

 private:
  EngineBuildOptions build_;
  EngineBenchOptions bench_;
  EngineInspectOptions inspect_;
  EngineInferOptions infer_;
  CLI::App* build_cmd_ = nullptr;
  CLI::App* bench_cmd_ = nullptr;
  CLI::App* inspect_cmd_ = nullptr;
  CLI::App* infer_cmd_ = nullptr;
};

}  // namespace ts
