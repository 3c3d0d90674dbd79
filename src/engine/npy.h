#pragma once
// NumPy .npy files (format versions 1, 2 and 3) in and out of an owning host tensor, so that a
// model's inputs and reference outputs can travel between Python and the engine
// (`ticksentry infer`, the whole-model tests).
//
// Supported: little-endian (or byte-sized) f32, f64, f16, i64, i32, i8, u8 and bool, C order;
// and bf16, which numpy lacks, as its bit patterns in a '<u2' (uint16) array: written so always,
// read as bf16 when NpyOptions::u2_as_bf16 is set (a '<u2' file is refused otherwise: the engine
// computes no uint16).
// Refused with an error naming why: bad magic, unknown version, malformed header, Fortran order,
// big-endian or unsupported dtypes, data shorter than the header's shape says.
// Not for the hot path: reading allocates.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/ir/tensor.h"

namespace ts::engine {

// A host tensor that owns its bytes (row-major, dtype_size(dtype) * numel bytes).
struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;

  // Zero-filled tensor of the given type and dims.
  static HostTensor zeros(DType dtype, std::vector<int64_t> dims);
  int64_t numel() const;
  // A view for ExecutionContext::enqueue; valid while this tensor lives and is not resized.
  TensorView view();
  TensorView view() const;  // for inputs; the engine does not write through input views
  template <typename T>
  const T* as() const { return reinterpret_cast<const T*>(data.data()); }
  template <typename T>
  T* as() { return reinterpret_cast<T*>(data.data()); }
};

struct NpyOptions {
  bool u2_as_bf16 = false;  // read '<u2' (uint16) arrays as bf16 bit patterns; default off
};

// Parses the bytes of a .npy file.
Result<HostTensor> npy_parse(std::span<const uint8_t> bytes, const NpyOptions& options = {});
// Reads a .npy file; errors carry the path.
Result<HostTensor> npy_read(const std::string& path, const NpyOptions& options = {});

// Serializes a tensor as .npy (version 1, or 2 if the header needs it). `data` must hold
// dtype_size(dtype) * numel(dims) bytes. bf16 is written as '<u2' bit patterns.
Result<std::vector<uint8_t>> npy_serialize(DType dtype, std::span<const int64_t> dims,
                                           const void* data);
Status npy_write(const std::string& path, DType dtype, std::span<const int64_t> dims,
                 const void* data);
Status npy_write(const std::string& path, const HostTensor& t);

}  // namespace ts::engine
