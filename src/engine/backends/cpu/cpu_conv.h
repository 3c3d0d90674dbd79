#pragma once
// Internal to the CPU backend: Conv attributes (checked once when the kernel is made) and the
// geometry of one run (auto_pad resolved against the actual input dims), shared by the direct
// 1-D kernel (cpu_conv.cpp) and the oneDNN kernel for 1..3 spatial dims (cpu_conv_onednn.cpp).
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/backends/cpu/cpu_kernels.h"

namespace ts::engine::cpu {

constexpr int kMaxConvSpatial = 3;

struct ConvAttrs {
  std::string auto_pad = "NOTSET";  // NOTSET, SAME_UPPER, SAME_LOWER or VALID
  std::vector<int64_t> kernel_shape, strides, dilations, pads;  // as given; empty = default
  int64_t group = 1;
};

// One run's geometry: X [n, c, in...], W [m, c/group, k...], Y [n, m, out...].
struct ConvGeom {
  int spatial = 0;
  int64_t n = 0, c = 0, m = 0, group = 1;
  std::array<int64_t, kMaxConvSpatial> in{}, k{}, stride{}, dilation{}, pad_begin{}, pad_end{}, out{};
};

// The node's attributes; kUnsupported naming the node and attribute when one is invalid
// (auto_pad value, non-positive strides/dilations/group, negative or odd-length pads).
Result<ConvAttrs> conv_attrs(const Node& n);
// Spatial rank from kernel_shape or W's rank; 0 when neither is known.
int conv_spatial(const Graph& g, const Node& n);
// Checks X, W and B (dtype f32, ranks, channels, attribute lengths) and resolves pads;
// kInvalidArgument saying what does not fit.
Status conv_geometry(const ConvAttrs& at, const RtTensor* x, const RtTensor* w, const RtTensor* b,
                     ConvGeom* g);
// oneDNN convolution_forward. With constant weights they are reordered once per context and
// shape into the layout oneDNN prefers; runtime weights are read in ONNX's plain layout.
Result<KernelPtr> make_conv_onednn(ConvAttrs at, bool const_weights);

}  // namespace ts::engine::cpu
