#pragma once
// Tensors of the engine's graph IR: element types, shapes with symbolic dimensions, and
// host-resident constant data (initializers, folded constants).
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace ts::engine {

enum class DType : uint8_t { kF32 = 0, kF16, kBF16, kI8, kU8, kI32, kI64, kBool, kF64 };
const char* dtype_name(DType t);
size_t dtype_size(DType t);

// A dimension: a known size, or a symbol ("batch", "seq") resolved at enqueue time.
struct Dim {
  int64_t value = -1;     // >= 0 when known
  std::string symbol;     // non-empty when symbolic (value < 0)
  static Dim known(int64_t v) { return Dim{v, {}}; }
  static Dim sym(std::string s) { return Dim{-1, std::move(s)}; }
  bool is_known() const { return value >= 0; }
  bool operator==(const Dim&) const = default;
};
using Shape = std::vector<Dim>;
std::string shape_to_string(const Shape& s);       // "[batch,60,32]"
std::string dims_str(std::span<const int64_t> d);  // concrete dims: "[2,3]"
std::string dims_x_str(std::span<const int64_t> d);  // trtexec's form: "2x3" (also timing-cache keys)
bool shape_is_known(const Shape& s);
int64_t shape_numel(const std::vector<int64_t>& dims);
// ONNX Shape's start/end (negative counts from the end; both clamped to [0, rank]) as the
// half-open range [first, second) of dims it returns, first <= second. No end: pass rank.
std::pair<int64_t, int64_t> shape_op_range(int64_t start, int64_t end, int64_t rank);

// A value flowing through the graph (an edge). Constants carry their data.
struct Value {
  std::string name;
  DType dtype = DType::kF32;
  Shape shape;                    // may be empty with rank_known = false before shape inference
  bool rank_known = false;
  bool is_constant = false;
  std::vector<uint8_t> data;      // row-major, dtype_size(dtype) * numel bytes when constant
  std::vector<int64_t> const_dims() const;  // concrete dims of a constant
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
  int64_t numel() const { return shape_numel(const_dims()); }  // of a constant
};

// Constant helpers (builder only, not the hot path).
// A constant of `dtype` and `dims` whose elements are `elems` converted to dtype (bool: != 0).
Value make_constant(std::string name, DType dtype, std::vector<int64_t> dims,
                    const std::vector<double>& elems);
Value make_constant_i64(std::string name, std::vector<int64_t> dims, const std::vector<int64_t>& elems);
// Elements of a constant converted to i64 / f64 (f16/bf16 decoded). Empty if not constant.
std::vector<int64_t> constant_as_i64(const Value& v);
std::vector<double> constant_as_f64(const Value& v);
// Shape of concrete dims.
Shape shape_of(const std::vector<int64_t>& dims);

// IEEE binary16 and bfloat16 element conversions. To 16 bits rounds to nearest even (numpy's
// astype): overflow gives ±inf, NaN stays NaN, tiny values become subnormals or ±0. f16 from
// a double rounds once, directly (not via f32, which could round twice).
float f16_to_f32(uint16_t h);
float bf16_to_f32(uint16_t h);
uint16_t f16_from_f64(double x);
uint16_t bf16_from_f32(float x);

}  // namespace ts::engine
