#pragma once
// ONNX GRU/LSTM bias semantics shared by every backend's recurrent kernels.
#include <cstdint>
#include <vector>

#include "engine/ir/graph.h"

namespace ts::engine {

// The node's B input ([1, 2·G·H]: Wb then Rb, ONNX gate order), or zeros where B is omitted.
std::vector<float> rnn_bias(const Graph& g, const Node& n, int64_t gates, int64_t hidden);

// The bias added to the input projection X·Wᵀ ([G·H]): Wb + Rb for every gate, except GRU with
// linear_before_reset=1, whose candidate gate keeps Rbh inside r ⊙ (h·Rhᵀ + Rbh) (only Wbh here).
std::vector<float> rnn_input_bias(const std::vector<float>& bias, int64_t gates, int64_t hidden,
                                  bool linear_before_reset);

}  // namespace ts::engine
