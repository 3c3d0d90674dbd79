#include "engine/ir/tensor.h"

namespace ts::engine {

const char* dtype_name(DType t) {
  switch (t) {
    case DType::kF32: return "f32";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
    case DType::kI8: return "i8";
    case DType::kU8: return "u8";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kBool: return "bool";
    case DType::kF64: return "f64";
  }
  return "unknown";
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::kF32: case DType::kI32: return 4;
    case DType::kF16: case DType::kBF16: return 2;
    case DType::kI8: case DType::kU8: case DType::kBool: return 1;
    case DType::kI64: case DType::kF64: return 8;
  }
  return 0;
}

std::string shape_to_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += s[i].is_known() ? std::to_string(s[i].value) : (s[i].symbol.empty() ? "?" : s[i].symbol);
  }
  return out + "]";
}

bool shape_is_known(const Shape& s) {
  for (auto& d : s) {
    if (!d.is_known()) return false;
  }
  return true;
}

int64_t shape_numel(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (auto d : dims) n *= d;
  return n;
}

std::vector<int64_t> Value::const_dims() const {
  std::vector<int64_t> d;
  d.reserve(shape.size());
  for (auto& x : shape) d.push_back(x.value);
  return d;
}

}  // namespace ts::engine
