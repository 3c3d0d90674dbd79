#pragma once
// The pipeline's model contract (docs/bring-your-own-model.md): one float32 input named "x",
// [batch, T, F] with T = [model] window_rows (60) and F = kFeatureCount (20) features in the order
// of features/feature_set.h; one float32 output holding one probability per row ([batch] or
// [batch, 1]). Checked when a model is opened, before anything is built, so a model made for
// another contract is refused with the expected and the actual values instead of failing inside
// the builder ("profile names input x, the model has input_ids"): every input of the model is
// listed with its shape.
#include <cstdint>
#include <string>

#include "core/status.h"

namespace ts {

// An .onnx file's graph inputs and outputs against the contract (dims given as symbols pass).
Status check_onnx_contract(const std::string& path, int64_t rows, int64_t features);

}  // namespace ts
