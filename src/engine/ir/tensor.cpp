#include "engine/ir/tensor.h"

#include <algorithm>

#include <cstring>

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

std::string dims_str(std::span<const int64_t> d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(d[i]);
  }
  return s + "]";
}

std::string dims_x_str(std::span<const int64_t> d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += "x";
    s += std::to_string(d[i]);
  }
  return s;
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

namespace ts::engine {

float f16_to_f32(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) { mant <<= 1; --exp; }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

float bf16_to_f32(uint16_t h) {
  uint32_t bits = uint32_t(h) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t f16_from_f64(double x) {
  uint64_t b;
  std::memcpy(&b, &x, 8);
  const uint16_t sign = uint16_t((b >> 48) & 0x8000);
  const int exp = int((b >> 52) & 0x7ff);
  const uint64_t man = b & ((uint64_t(1) << 52) - 1);
  if (exp == 0x7ff) return uint16_t(sign | 0x7c00 | (man ? 0x200 : 0));  // inf, NaN (quiet)
  const int e = exp - 1023 + 15;                                        // biased f16 exponent
  if (e >= 31) return uint16_t(sign | 0x7c00);
  uint64_t m, rem, half;
  if (e <= 0) {
    // Subnormal f16: x = m * 2^-24 with m = full >> (43 - e); below 2^-25 everything rounds to 0.
    if (e < -10) return sign;
    const uint64_t full = man | (uint64_t(1) << 52);
    const int shift = 43 - e;
    m = full >> shift;
    rem = full & ((uint64_t(1) << shift) - 1);
    half = uint64_t(1) << (shift - 1);
  } else {
    m = (uint64_t(e) << 10) | (man >> 42);
    rem = man & ((uint64_t(1) << 42) - 1);
    half = uint64_t(1) << 41;
  }
  // Round to nearest even; a carry out of the mantissa bumps the exponent (up to inf).
  if (rem > half || (rem == half && (m & 1))) ++m;
  return uint16_t(sign | m);
}

uint16_t bf16_from_f32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  if ((b & 0x7fffffffu) > 0x7f800000u) return uint16_t((b >> 16) | 0x40);  // NaN stays NaN
  return uint16_t((b + 0x7fff + ((b >> 16) & 1)) >> 16);
}

namespace {

template <typename T>
T load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof(T));
  return x;
}

double element_as_f64(DType t, const uint8_t* p) {
  switch (t) {
    case DType::kF32: return load<float>(p);
    case DType::kF64: return load<double>(p);
    case DType::kF16: return f16_to_f32(load<uint16_t>(p));
    case DType::kBF16: return bf16_to_f32(load<uint16_t>(p));
    case DType::kI8: return load<int8_t>(p);
    case DType::kU8: return load<uint8_t>(p);
    case DType::kBool: return load<uint8_t>(p) ? 1 : 0;
    case DType::kI32: return load<int32_t>(p);
    case DType::kI64: return double(load<int64_t>(p));
  }
  return 0;
}

}  // namespace

Shape shape_of(const std::vector<int64_t>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (auto d : dims) s.push_back(Dim::known(d));
  return s;
}

Value make_constant(std::string name, DType dtype, std::vector<int64_t> dims,
                    const std::vector<double>& elems) {
  Value v;
  v.name = std::move(name);
  v.dtype = dtype;
  v.shape = shape_of(dims);
  v.rank_known = true;
  v.is_constant = true;
  size_t es = dtype_size(dtype);
  v.data.resize(es * elems.size());
  for (size_t i = 0; i < elems.size(); ++i) {
    uint8_t* p = v.data.data() + i * es;
    double x = elems[i];
    switch (dtype) {
      case DType::kF32: { float f = float(x); std::memcpy(p, &f, 4); break; }
      case DType::kF64: std::memcpy(p, &x, 8); break;
      case DType::kI64: { int64_t k = int64_t(x); std::memcpy(p, &k, 8); break; }
      case DType::kI32: { int32_t k = int32_t(x); std::memcpy(p, &k, 4); break; }
      case DType::kI8: { int8_t k = int8_t(x); std::memcpy(p, &k, 1); break; }
      case DType::kU8: { uint8_t k = uint8_t(x); std::memcpy(p, &k, 1); break; }
      case DType::kBool: *p = x != 0 ? 1 : 0; break;
      case DType::kF16: case DType::kBF16: {
        uint16_t h = dtype == DType::kF16 ? f16_from_f64(x) : bf16_from_f32(float(x));
        std::memcpy(p, &h, 2);
        break;
      }
    }
  }
  return v;
}

Value make_constant_i64(std::string name, std::vector<int64_t> dims, const std::vector<int64_t>& elems) {
  Value v;
  v.name = std::move(name);
  v.dtype = DType::kI64;
  v.shape = shape_of(dims);
  v.rank_known = true;
  v.is_constant = true;
  v.data.resize(8 * elems.size());
  if (!elems.empty()) std::memcpy(v.data.data(), elems.data(), v.data.size());
  return v;
}

std::vector<int64_t> constant_as_i64(const Value& v) {
  std::vector<int64_t> out;
  if (!v.is_constant) return out;
  size_t es = dtype_size(v.dtype), n = es ? v.data.size() / es : 0;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const uint8_t* p = v.data.data() + i * es;
    if (v.dtype == DType::kI64) out.push_back(load<int64_t>(p));
    else out.push_back(int64_t(element_as_f64(v.dtype, p)));
  }
  return out;
}

std::vector<double> constant_as_f64(const Value& v) {
  std::vector<double> out;
  if (!v.is_constant) return out;
  size_t es = dtype_size(v.dtype), n = es ? v.data.size() / es : 0;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) out.push_back(element_as_f64(v.dtype, v.data.data() + i * es));
  return out;
}

std::pair<int64_t, int64_t> shape_op_range(int64_t start, int64_t end, int64_t rank) {
  const int64_t s = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
  const int64_t e = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
  return {s, std::max(s, e)};
}

}  // namespace ts::engine
