#pragma once
// The model manifest a plan carries (like Triton's config.pbtxt): what the model expects and
// what it answers, so that a server can check a plan against its pipeline before serving it,
// and `ticksentry inspect` can say what a plan is for. Written by `ticksentry build` (from the
// ONNX graph, a manifest JSON beside the model and flags, app/build_manifest.h;
// docs/bring-your-own-model.md) with with_plan_manifest, read back with read_plan_manifest
// (plan.h); the engine itself does not use it. Plans made before the manifest have none.
//
// Stored as the plan's manifest section (plan format ≥ 3, plan.h): a u32 section version
// (kManifestVersion; 0 = no manifest) and the fields below, covered by the plan's CRC32 like
// every other byte. A section version this build does not know is an error naming it.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace ts::engine {

constexpr uint32_t kManifestVersion = 1;

struct ModelManifest {
  std::string input_name = "x";              // the one input the pipeline feeds
  int64_t window_rows = 0;                   // T of [batch, T, F]; 0 = any (dynamic)
  int64_t features = 0;                      // F of [batch, T, F]
  std::vector<std::string> feature_names;    // F names, column order (empty = not declared)
  std::string output_name;                   // the output serving reads
  int64_t output_columns = 1;                // values per row in that output ([batch] or [batch, 1]: 1)
  int64_t probability_column = 0;            // which of them is the probability, 0-based
  double threshold = 0;                      // the decision threshold it was evaluated at; 0 = not given
  std::string model_name;                    // free text: name and version of the model ("" = not given)
  std::string model_version;

  bool operator==(const ModelManifest&) const = default;
};

// "" when the manifest is self-consistent, else the first problem ("probability_column 2 is
// outside the output's 2 columns"). Checked when writing it into a plan and when reading it.
std::string manifest_problem(const ModelManifest& m);

// Human-readable lines for `ticksentry inspect` ("manifest: input x [batch, 60, 20] ...").
std::string describe_manifest(const ModelManifest& m);

}  // namespace ts::engine
