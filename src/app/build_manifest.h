#pragma once
// The model manifest `ticksentry build` writes into a plan (engine/plan_manifest.h;
// docs/bring-your-own-model.md), made from three sources, later ones winning:
//   1. the ONNX graph and the pipeline's contract: input name, T and F from the input's static
//      dims (T = 0 when dynamic; `build` then fits T to the plan's profiles, fit_manifest_window),
//      output name and its columns, F names from features/feature_set.h when F is the pipeline's
//      width;
//   2. a manifest JSON: --manifest FILE, else <model>.manifest.json beside the ONNX when it exists
//      (keys: input, window_rows, features (a count or the list of names), output,
//      output_columns, probability_column, threshold, name, version; an unknown key is an error
//      naming the valid ones);
//   3. the flags --threshold and --probabilityColumn.
// A model that is not a window model (not one input of rank 3) gets no manifest unless a file or
// a flag asks for one. Errors (unreadable or invalid JSON, a wrong type, an inconsistent
// manifest) name the file and the key.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/plan_manifest.h"

namespace ts {

struct BuildManifestOptions {
  std::string manifest_path;       // --manifest; "" = <model>.manifest.json if present
  std::optional<double> threshold;  // --threshold
  std::optional<int64_t> probability_column;  // --probabilityColumn
  bool none = false;               // --noManifest: write no manifest
};

// nullopt: no manifest for this model (and what `why_none` says why, for the build's output).
Result<std::optional<engine::ModelManifest>> make_build_manifest(const std::string& onnx_path,
                                                                 const BuildManifestOptions& o, std::string* why_none);

// The manifest's T made the one the built plan accepts (`plan`: the builder's plan bytes): the
// input's static T, else the T its optimization profiles fix (every profile min = max = T, as
// `--minShapes x:1x60x20 --maxShapes x:64x60x20` does). A T the manifest already has (from the
// ONNX or the manifest JSON) must be one the plan accepts, else an error naming both; profiles
// that leave a range of T keep T = 0 ("any": the server checks its window against the profiles).
Status fit_manifest_window(engine::ModelManifest& m, std::span<const uint8_t> plan);

// The pipeline's feature names (features/feature_set.h order).
std::vector<std::string> pipeline_feature_names();

}  // namespace ts
