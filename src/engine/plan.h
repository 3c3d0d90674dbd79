#pragma once
// The plan file: what engine::build() writes and Engine::load() reads.
//
//   "TSPLAN\0\1" | u32 format version | u32 payload flags | payload | u32 CRC32
//   payload flags: bit 0 = TF32 allowed (kPlanFlagTf32); other bits must be 0.
//   payload: backend, target arch, precision, workspace_bytes, device_memory_bytes, profiles,
//            the optimized Graph (constants = weights; nodes with attrs, fused_from, tactic),
//            the builder's PassLog lines,
//            [version ≥ 2] the INT8 calibration table: per-tensor activation scales by value
//            name (empty unless precision is int8; the per-layer choice, input scale and
//            per-output-channel weight scales are attributes of the layer's node, quantize.h),
//            [version ≥ 3] the model manifest section (plan_manifest.h): u32 manifest version
//            (0 = none, else kManifestVersion), then input name, T, F, the F feature names,
//            output name, output columns, probability column, threshold (f64), model name and
//            version,
//            [version ≥ 4] the context memory per batch bucket, measured at build: u32 count, then
//            (i64 bucket batch, i64 bytes) pairs, buckets ascending (empty: not measured).
// Version 1 plans (before INT8) still load: they have no calibration table; versions 1 and 2
// (before the manifest) load without a manifest; versions 1–3 have no per-bucket memory (their
// single device_memory_bytes estimate is what inspect shows).
// Little-endian, length-prefixed strings and arrays. The CRC32 covers every byte before it.
// deserialize_plan() checks every read against the bytes that remain (a count can never ask
// for more than what is left), so corrupt or truncated input gives an error, never a crash or
// a huge allocation. Backend/arch compatibility is checked by Engine::load, not here.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/ir/graph.h"
#include "engine/plan_manifest.h"

namespace ts::engine {

constexpr uint32_t kPlanFormatVersion = 4;
constexpr uint32_t kPlanFormatVersionMin = 1;  // oldest version deserialize_plan reads
constexpr uint32_t kPlanFlagTf32 = 1u;
inline constexpr char kPlanMagic[8] = {'T', 'S', 'P', 'L', 'A', 'N', '\0', '\1'};

struct Plan {
  std::string backend;
  std::string target_arch;
  Precision precision = Precision::kFP32;
  bool tf32 = false;                 // payload flag bit 0
  int64_t workspace_bytes = 0;
  int64_t device_memory_bytes = 0;   // per-context scratch estimate at the max profile shapes
  std::vector<OptimizationProfile> profiles;
  Graph graph;
  std::vector<std::string> pass_log;
  std::map<std::string, float> activation_scales;  // int8: tensor name → scale (threshold / 127)
  std::optional<ModelManifest> manifest;           // version ≥ 3; none in older plans
  // Version ≥ 4: the device (cpu: host) memory one context held after it ran each batch bucket
  // (ascending, three runs each: eager, capture, replay), weights excluded — what a context whose
  // largest batch falls in that bucket holds. Only the buckets measured within the builder's
  // time budget; empty in older plans and where the model has no batch buckets.
  std::vector<BucketMemory> bucket_memory;
};

std::vector<uint8_t> serialize_plan(const Plan& plan);
// verify_checksum=false only for fuzzing the payload parser.
Result<Plan> deserialize_plan(std::span<const uint8_t> bytes, bool verify_checksum = true);

uint32_t crc32(std::span<const uint8_t> bytes);

// The model manifest section of plan bytes (plan_manifest.h), read and written without building
// an engine: `ticksentry build` adds it to the builder's plan, `inspect` and the model server's
// load check read it. A plan of format < 3 has none (nullopt). Errors as deserialize_plan's.
Result<std::optional<ModelManifest>> read_plan_manifest(std::span<const uint8_t> plan);
Result<std::optional<ModelManifest>> read_plan_manifest_file(const std::string& path);
// The same plan with `manifest` as its manifest section (nullopt: none), re-serialized at the
// current format version (every other field unchanged). A manifest that is not self-consistent
// (manifest_problem) is refused naming the problem.
Result<std::vector<uint8_t>> with_plan_manifest(std::span<const uint8_t> plan, const std::optional<ModelManifest>& manifest);

}  // namespace ts::engine
