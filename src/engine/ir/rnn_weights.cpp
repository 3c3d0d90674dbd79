#include "engine/ir/rnn_weights.h"

namespace ts::engine {

std::vector<float> rnn_bias(const Graph& g, const Node& n, int64_t gates, int64_t hidden) {
  std::vector<float> bias(size_t(2 * gates * hidden), 0.0f);
  if (n.inputs.size() > 3 && n.inputs[3] != kNoValue) {
    const float* b = g.value(n.inputs[3]).as<float>();
    bias.assign(b, b + 2 * gates * hidden);
  }
  return bias;
}

std::vector<float> rnn_input_bias(const std::vector<float>& bias, int64_t gates, int64_t hidden,
                                  bool linear_before_reset) {
  std::vector<float> in_bias(size_t(gates * hidden));
  for (int64_t j = 0; j < gates * hidden; ++j) {
    const bool keep_rb = !(linear_before_reset && j >= 2 * hidden);
    in_bias[size_t(j)] = bias[size_t(j)] + (keep_rb ? bias[size_t(gates * hidden + j)] : 0.0f);
  }
  return in_bias;
}

RnnStackLayout rnn_stack_layout(const Node& n) {
  RnnStackLayout l;
  l.lstm = n.op == "LSTMStack";
  l.states = n.attr_i("initial_states", 0) != 0;
  l.head = n.has_attr("head_activation");
  const size_t per = 3 + (l.states ? (l.lstm ? 2 : 1) : 0), fixed = 1 + (l.head ? 2 : 0);
  if (n.inputs.size() < fixed + per || (n.inputs.size() - fixed) % per != 0) return l;
  l.layers = int64_t((n.inputs.size() - fixed) / per);
  return l;
}

}  // namespace ts::engine
