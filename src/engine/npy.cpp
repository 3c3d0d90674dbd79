#include "engine/npy.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string_view>

namespace ts::engine {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLen = 6;

Status npy_error(const std::string& what) {
  return Status(StatusCode::kParseError, "npy: " + what);
}

struct DescrMap {
  const char* descr;
  DType dtype;
};
// Byte-sized types have no byte order: numpy writes '|', accept '<' and '=' too.
constexpr DescrMap kDescrs[] = {
    {"<f4", DType::kF32}, {"<f8", DType::kF64}, {"<f2", DType::kF16}, {"<i8", DType::kI64},
    {"<i4", DType::kI32}, {"|i1", DType::kI8},  {"|u1", DType::kU8},  {"|b1", DType::kBool},
};

// numpy has no bfloat16: bf16 travels as its 16-bit patterns, numpy's uint16.
constexpr const char* kBf16Descr = "<u2";

Result<DType> dtype_of_descr(std::string_view d, const NpyOptions& o) {
  std::string norm(d);
  if (norm.size() == 3 && norm[2] == '1' && std::strchr("<>=|", norm[0])) {
    norm[0] = '|';  // byte-sized: order does not matter
  } else if (!norm.empty() && norm[0] == '=') {
    norm[0] = '<';  // native order; this program only runs on little-endian machines
  }
  for (auto& m : kDescrs) {
    if (norm == m.descr) return m.dtype;
  }
  if (norm == kBf16Descr) {
    if (o.u2_as_bf16) return DType::kBF16;
    return npy_error("dtype '<u2' (uint16) is not one the engine computes; bf16 tensors are stored as '<u2' "
                     "bit patterns: read them with the bf16 flag (NpyOptions::u2_as_bf16)");
  }
  if (!norm.empty() && norm[0] == '>') {
    return npy_error("big-endian dtype '" + std::string(d) + "' is not supported");
  }
  return npy_error("unsupported dtype '" + std::string(d) + "'");
}

const char* descr_of_dtype(DType t) {
  if (t == DType::kBF16) return kBf16Descr;
  for (auto& m : kDescrs) {
    if (m.dtype == t) return m.descr;
  }
  return nullptr;
}

// Finds `'key':` (single or double quotes) in the header dict; returns the position after ':'.
size_t find_key(std::string_view h, std::string_view key) {
  for (char q : {'\'', '"'}) {
    std::string pat(1, q);
    pat.append(key);
    pat.push_back(q);
    size_t p = h.find(pat);
    if (p == std::string_view::npos) continue;
    p += pat.size();
    while (p < h.size() && h[p] == ' ') ++p;
    if (p < h.size() && h[p] == ':') return p + 1;
  }
  return std::string_view::npos;
}

void skip_spaces(std::string_view h, size_t& p) {
  while (p < h.size() && (h[p] == ' ' || h[p] == '\t')) ++p;
}

struct Header {
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
};

Result<Header> parse_header(std::string_view h) {
  Header out;
  size_t p = find_key(h, "descr");
  if (p == std::string_view::npos) return npy_error("header has no 'descr'");
  skip_spaces(h, p);
  if (p >= h.size() || (h[p] != '\'' && h[p] != '"')) {
    return npy_error("'descr' is not a simple type string (structured arrays are not supported)");
  }
  const char q = h[p++];
  const size_t e = h.find(q, p);
  if (e == std::string_view::npos) return npy_error("unterminated 'descr'");
  out.descr = std::string(h.substr(p, e - p));

  p = find_key(h, "fortran_order");
  if (p == std::string_view::npos) return npy_error("header has no 'fortran_order'");
  skip_spaces(h, p);
  if (h.substr(p, 4) == "True") {
    out.fortran = true;
  } else if (h.substr(p, 5) != "False") {
    return npy_error("bad 'fortran_order' value");
  }

  p = find_key(h, "shape");
  if (p == std::string_view::npos) return npy_error("header has no 'shape'");
  skip_spaces(h, p);
  if (p >= h.size() || h[p] != '(') return npy_error("'shape' is not a tuple");
  ++p;
  for (;;) {
    skip_spaces(h, p);
    if (p >= h.size()) return npy_error("unterminated 'shape'");
    if (h[p] == ')') break;
    if (h[p] < '0' || h[p] > '9') return npy_error("bad character in 'shape'");
    int64_t v = 0;
    while (p < h.size() && h[p] >= '0' && h[p] <= '9') {
      if (v > (int64_t(1) << 50)) return npy_error("'shape' dimension too large");
      v = v * 10 + (h[p] - '0');
      ++p;
    }
    if (p < h.size() && h[p] == 'L') ++p;  // Python 2 longs
    out.shape.push_back(v);
    skip_spaces(h, p);
    if (p < h.size() && h[p] == ',') ++p;
  }
  return out;
}

}  // namespace

HostTensor HostTensor::zeros(DType dtype, std::vector<int64_t> dims) {
  HostTensor t;
  t.dtype = dtype;
  t.dims = std::move(dims);
  t.data.assign(size_t(t.numel()) * dtype_size(dtype), 0);
  return t;
}

int64_t HostTensor::numel() const { return shape_numel(dims); }

TensorView HostTensor::view() { return TensorView{dtype, dims, data.data(), data.size()}; }

TensorView HostTensor::view() const {
  return TensorView{dtype, dims, const_cast<uint8_t*>(data.data()), data.size()};
}

Result<HostTensor> npy_parse(std::span<const uint8_t> bytes, const NpyOptions& options) {
  if (bytes.size() < kMagicLen + 2 || std::memcmp(bytes.data(), kMagic, kMagicLen) != 0) {
    return npy_error("bad magic (not a .npy file)");
  }
  const uint8_t major = bytes[6];
  size_t header_len = 0;
  size_t pos = 0;
  if (major == 1) {
    if (bytes.size() < 10) return npy_error("truncated header");
    header_len = size_t(bytes[8]) | (size_t(bytes[9]) << 8);
    pos = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return npy_error("truncated header");
    header_len = size_t(bytes[8]) | (size_t(bytes[9]) << 8) | (size_t(bytes[10]) << 16) |
                 (size_t(bytes[11]) << 24);
    pos = 12;
  } else {
    return npy_error("unsupported format version " + std::to_string(major));
  }
  if (bytes.size() - pos < header_len) return npy_error("truncated header");
  const std::string_view h(reinterpret_cast<const char*>(bytes.data() + pos), header_len);
  auto header = parse_header(h);
  if (!header) return header.status();
  if (header.value().fortran) return npy_error("Fortran-order arrays are not supported");
  auto dt = dtype_of_descr(header.value().descr, options);
  if (!dt) return dt.status();

  HostTensor t;
  t.dtype = dt.value();
  t.dims = std::move(header.value().shape);
  // Overflow-safe size: stop multiplying once the product exceeds the data present.
  const size_t have = bytes.size() - pos - header_len;
  bool empty = false;
  for (int64_t d : t.dims) empty = empty || d == 0;
  size_t need = empty ? 0 : dtype_size(t.dtype);
  for (int64_t d : t.dims) {
    if (need == 0) break;
    if (need > have / size_t(d)) {
      need = have + 1;
      break;
    }
    need *= size_t(d);
  }
  if (need > have) {
    return npy_error("truncated data: shape (" + dims_x_str(t.dims) + ") of " + dtype_name(t.dtype) +
                     " needs more than the " + std::to_string(have) + " data bytes present");
  }
  const uint8_t* start = bytes.data() + pos + header_len;
  t.data.assign(start, start + need);
  return t;
}

Result<HostTensor> npy_read(const std::string& path, const NpyOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(StatusCode::kNotFound, "reading " + path + ": cannot open file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto t = npy_parse(bytes, options);
  if (!t) return t.status().with_context("reading " + path);
  return t;
}

Result<std::vector<uint8_t>> npy_serialize(DType dtype, std::span<const int64_t> dims,
                                           const void* data) {
  const char* descr = descr_of_dtype(dtype);
  if (!descr) {
    return Status(StatusCode::kUnsupported,
                  std::string("npy: cannot write dtype ") + dtype_name(dtype));
  }
  std::string h = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (";
  int64_t numel = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    h += std::to_string(dims[i]);
    if (dims.size() == 1 || i + 1 < dims.size()) h += ",";
    if (i + 1 < dims.size()) h += " ";
    numel *= dims[i];
  }
  h += "), }";
  // Total header (magic + version + length + dict + padding + '\n') is a multiple of 64.
  size_t prefix = 10;
  size_t total = prefix + h.size() + 1;
  uint8_t major = 1;
  if (((total + 63) / 64) * 64 - prefix > 0xffff) {
    major = 2;
    prefix = 12;
    total = prefix + h.size() + 1;
  }
  const size_t padded = ((total + 63) / 64) * 64;
  h.append(padded - total, ' ');
  h += '\n';
  const size_t data_bytes = size_t(numel) * dtype_size(dtype);

  std::vector<uint8_t> out;
  out.reserve(padded + data_bytes);
  out.insert(out.end(), kMagic, kMagic + kMagicLen);
  out.push_back(major);
  out.push_back(0);
  const size_t hl = h.size();
  out.push_back(uint8_t(hl & 0xff));
  out.push_back(uint8_t((hl >> 8) & 0xff));
  if (major == 2) {
    out.push_back(uint8_t((hl >> 16) & 0xff));
    out.push_back(uint8_t((hl >> 24) & 0xff));
  }
  out.insert(out.end(), h.begin(), h.end());
  const auto* p = static_cast<const uint8_t*>(data);
  if (data_bytes) out.insert(out.end(), p, p + data_bytes);
  return out;
}

Status npy_write(const std::string& path, DType dtype, std::span<const int64_t> dims,
                 const void* data) {
  auto bytes = npy_serialize(dtype, dims, data);
  if (!bytes) return bytes.status().with_context("writing " + path);
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Status(StatusCode::kIoError, "writing " + path + ": cannot open file");
  const auto& b = bytes.value();
  const size_t n = std::fwrite(b.data(), 1, b.size(), f);
  const int rc = std::fclose(f);
  if (n != b.size() || rc != 0) {
    return Status(StatusCode::kIoError, "writing " + path + ": write failed");
  }
  return Status::ok();
}

Status npy_write(const std::string& path, const HostTensor& t) {
  return npy_write(path, t.dtype, t.dims, t.data.data());
}

}  // namespace ts::engine
