#pragma once
// The model manifest `ticksentry build` writes into a plan (engine/plan_manifest.h;
// docs/bring-your-own-model.md), made from three sources, later ones winning:
//   1. the ONNX graph and the pipeline's contract: input name, T and F from the input's static
//      dims (T = 0 when dynamic), output name and its columns, F names from features/feature_set.h
//      when F is the pipeline's width;
//   2. a manifest JSON: --manifest FILE, else <model>.manifest.json beside the ONNX when it exists
//      (keys: input, window_rows, features (a count or the list of names), output,
//      output_columns, probability_column, threshold, name, version; an unknown key is an error
//      naming the valid ones);
//   3. the flags --threshold and --probabilityColumn.
// A model that is not a window model (not one input of rank 3) gets no manifest unless a file or
// a flag asks for one. Errors (unreadable or invalid JSON, a wrong type, an inconsistent
// manifest) name the file and the key.
#include <optional>
#include <string>

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

// The pipeline's feature names (features/feature_set.h order).
std::vector<std::string> pipeline_feature_names();

}  // namespace ts
