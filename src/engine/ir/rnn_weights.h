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

// Where a GRUStack / LSTMStack node (passes/fuse_rnn_stack.cpp) keeps its inputs: X; W, R, B of
// each layer; with attribute initial_states = 1 each layer's initial_h (and, LSTMStack, then each
// layer's initial_c), any of them absent (kNoValue: zeros); with attribute head_activation the
// head's W and bias last. layers = 0 when the input count fits no such layout.
struct RnnStackLayout {
  int64_t layers = 0;
  bool states = false, head = false, lstm = false;
  size_t w(int64_t l) const { return size_t(1 + 3 * l); }  // R at w(l) + 1, B at w(l) + 2
  size_t initial_h(int64_t l) const { return size_t(1 + 3 * layers + l); }
  size_t initial_c(int64_t l) const { return size_t(1 + 4 * layers + l); }  // LSTMStack
  size_t head_w() const { return size_t(1 + (3 + (states ? (lstm ? 2 : 1) : 0)) * layers); }  // bias after it
};
RnnStackLayout rnn_stack_layout(const Node& n);

}  // namespace ts::engine
