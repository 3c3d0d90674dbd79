#pragma once
// Helpers shared by the whole-model, conformance and CLI tests: where the generated fixtures
// live (written by models/*.py in the ctest fixture step), manifest loading, and tensor
// comparison with a stated tolerance.
#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "engine/npy.h"
#include "test_data.h"

namespace ts::engine::testing {

namespace fs = std::filesystem;

// <build>/engine-fixtures (models/fixtures.py) and <build>/onnx-node-tests (onnx_node_tests.py).
inline fs::path fixtures_dir() { return fs::path(TICKSENTRY_BINARY_DIR) / "engine-fixtures"; }
inline fs::path node_tests_dir() { return fs::path(TICKSENTRY_BINARY_DIR) / "onnx-node-tests"; }

// Parses <dir>/manifest.json; an empty object if missing (the caller fails with a hint).
inline nlohmann::json read_manifest(const fs::path& dir) {
  std::ifstream f(dir / "manifest.json");
  if (!f) return nlohmann::json::object();
  return nlohmann::json::parse(f, nullptr, /*allow_exceptions=*/false);
}

// Element-wise comparison result: worst errors and the first element out of tolerance.
struct Comparison {
  bool ok = true;
  std::string message;     // first mismatch (index, got, want) or shape/dtype mismatch
  double max_abs_err = 0;
  double max_rel_err = 0;  // |a-b| / max(1, |b|)
  int64_t mismatches = 0;
};

inline double element_as_double(const HostTensor& t, int64_t i) {
  switch (t.dtype) {
    case DType::kF32: return t.as<float>()[i];
    case DType::kF64: return t.as<double>()[i];
    case DType::kI64: return double(t.as<int64_t>()[i]);
    case DType::kI32: return t.as<int32_t>()[i];
    case DType::kI8: return t.as<int8_t>()[i];
    case DType::kU8: case DType::kBool: return t.as<uint8_t>()[i];
    case DType::kF16: {  // IEEE half → double
      const uint16_t h = t.as<uint16_t>()[i];
      const int e = (h >> 10) & 0x1f, m = h & 0x3ff;
      const double s = (h & 0x8000) ? -1.0 : 1.0;
      if (e == 0) return s * std::ldexp(m, -24);
      if (e == 31) return m ? NAN : s * INFINITY;
      return s * std::ldexp(1024 + m, e - 25);
    }
    case DType::kBF16: {
      uint32_t bits = uint32_t(t.as<uint16_t>()[i]) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
  }
  return NAN;
}

// Passes when |got - want| <= atol + rtol * |want| for every element (NaN matches NaN);
// integer and bool tensors must match exactly.
inline Comparison compare_tensors(const HostTensor& got, const HostTensor& want, double rtol,
                                  double atol) {
  Comparison c;
  auto dims_text = [](const std::vector<int64_t>& d) {
    std::string s = "(";
    for (size_t i = 0; i < d.size(); ++i) {
      if (i) s.push_back(',');
      s.append(std::to_string(d[i]));
    }
    return s + ")";
  };
  if (got.dtype != want.dtype || got.dims != want.dims) {
    c.ok = false;
    c.message = std::string("got ") + dtype_name(got.dtype) + dims_text(got.dims) + ", want " +
                dtype_name(want.dtype) + dims_text(want.dims);
    return c;
  }
  const bool exact = !(want.dtype == DType::kF32 || want.dtype == DType::kF64 ||
                       want.dtype == DType::kF16 || want.dtype == DType::kBF16);
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double a = element_as_double(got, i), b = element_as_double(want, i);
    if (std::isnan(a) && std::isnan(b)) continue;
    const double err = std::fabs(a - b);
    const bool bad = exact ? a != b : !(err <= atol + rtol * std::fabs(b));
    if (!std::isnan(err)) {
      c.max_abs_err = std::max(c.max_abs_err, err);
      c.max_rel_err = std::max(c.max_rel_err, err / std::max(1.0, std::fabs(b)));
    }
    if (bad) {
      if (c.ok) {
        c.message = "element " + std::to_string(i) + ": got " + std::to_string(a) + ", want " +
                    std::to_string(b);
      }
      c.ok = false;
      ++c.mismatches;
    }
  }
  if (!c.ok) c.message += " (" + std::to_string(c.mismatches) + " of " +
                          std::to_string(want.numel()) + " elements out of tolerance)";
  return c;
}

}  // namespace ts::engine::testing
