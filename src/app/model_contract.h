#pragma once
// The pipeline's model contract (docs/bring-your-own-model.md): one float32 input named "x",
// [batch, T, F] with T = [model] window_rows (60) and F = kFeatureCount (20) features in the order
// of features/feature_set.h; one float32 output holding the probability: one value per row
// ([batch] or [batch, 1]), or [batch, C] with the model manifest naming the probability column.
// Checked when a model is opened, before anything is built, so a model made for
// another contract is refused with the expected and the actual values instead of failing inside
// the builder ("profile names input x, the model has input_ids"): every input of the model is
// listed with its shape.
#include <cstdint>
#include <string>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/plan_manifest.h"

namespace ts {

// An .onnx file's graph inputs and outputs against the contract (dims given as symbols pass).
// `manifest_file`: the manifest JSON that serves with it ("" = none); without one an output of
// more than one column per row is refused (nothing says which column is the probability).
Status check_onnx_contract(const std::string& path, int64_t rows, int64_t features,
                           const std::string& manifest_file = "");

// A plan's model manifest (engine/plan_manifest.h) against the same contract: the input name,
// T (when the manifest fixes it), F and the feature order (when it names them), and the output
// serving reads (its column count as the plan's output has it; the probability column is then
// what the model server reads). Each refusal gives the expected and the actual value.
// A plan without a manifest (format < 3, or built with --noManifest) passes: it is checked as
// before, by the model server's own checks at load and warm-up.
// `manifest` null: no manifest. `plan`: the loaded engine (its bindings against the manifest's).
Status check_plan_contract(const engine::ModelManifest* manifest, const engine::Engine& plan, const std::string& path,
                           int64_t rows, int64_t features);

}  // namespace ts
