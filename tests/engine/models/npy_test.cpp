// .npy reading and writing: numpy's own header layout (v1 and v2), every supported dtype, and
// the errors a user sees for files the engine cannot take.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/npy.h"
#include "test_data.h"

namespace ts::engine {
namespace {

// Builds a .npy blob the way numpy lays it out: magic, version, little-endian header length,
// the dict padded with spaces to a 64-byte boundary ending in '\n', then the data.
std::vector<uint8_t> make_npy(const std::string& dict, const void* data, size_t n,
                              uint8_t major = 1) {
  const size_t prefix = major == 1 ? 10 : 12;
  std::string h = dict;
  const size_t total = prefix + h.size() + 1;
  h.append(((total + 63) / 64) * 64 - total, ' ');
  h += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', major, 0};
  out.push_back(uint8_t(h.size() & 0xff));
  out.push_back(uint8_t(h.size() >> 8));
  if (major != 1) {
    out.push_back(0);
    out.push_back(0);
  }
  out.insert(out.end(), h.begin(), h.end());
  const auto* p = static_cast<const uint8_t*>(data);
  out.insert(out.end(), p, p + n);
  return out;
}

TEST(Npy, ReadsNumpyFloat32Matrix) {
  const float v[] = {1.5f, -2.f, 3.f, 4.f, 5.f, 6.f};
  // Exactly numpy 1.24's dict text for np.save of a (2, 3) float32 array.
  auto bytes = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, sizeof v);
  auto t = npy_parse(bytes);
  ASSERT_TRUE(t) << t.status().to_string();
  EXPECT_EQ(t.value().dtype, DType::kF32);
  EXPECT_EQ(t.value().dims, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(t.value().data.size(), sizeof v);
  EXPECT_EQ(t.value().as<float>()[1], -2.f);
  EXPECT_EQ(t.value().as<float>()[5], 6.f);
  auto view = t.value().view();
  EXPECT_EQ(view.dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(view.data, t.value().data.data());
}

TEST(Npy, ReadsEveryDtypeAndScalarsAndVersion2) {
  const double d[] = {0.25, -1e300};
  auto t = npy_parse(make_npy("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }", d, 16));
  ASSERT_TRUE(t);
  EXPECT_EQ(t.value().dtype, DType::kF64);
  EXPECT_EQ(t.value().as<double>()[1], -1e300);

  const int64_t i[] = {7, -8};
  t = npy_parse(make_npy("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", i, 16, 2));
  ASSERT_TRUE(t) << t.status().to_string();
  EXPECT_EQ(t.value().dtype, DType::kI64);
  EXPECT_EQ(t.value().as<int64_t>()[1], -8);

  const int32_t i4[] = {123456};
  t = npy_parse(make_npy("{'descr': '<i4', 'fortran_order': False, 'shape': (), }", i4, 4));
  ASSERT_TRUE(t);
  EXPECT_EQ(t.value().dtype, DType::kI32);
  EXPECT_TRUE(t.value().dims.empty());
  EXPECT_EQ(t.value().numel(), 1);
  EXPECT_EQ(t.value().as<int32_t>()[0], 123456);

  const uint8_t b[] = {1, 0, 1};
  t = npy_parse(make_npy("{'descr': '|b1', 'fortran_order': False, 'shape': (3,), }", b, 3));
  ASSERT_TRUE(t);
  EXPECT_EQ(t.value().dtype, DType::kBool);
  EXPECT_EQ(t.value().data, (std::vector<uint8_t>{1, 0, 1}));

  t = npy_parse(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (0, 5), }", b, 0));
  ASSERT_TRUE(t);
  EXPECT_EQ(t.value().numel(), 0);
}

TEST(Npy, WriteThenReadRoundTripsThroughAFile) {
  HostTensor t = HostTensor::zeros(DType::kF32, {7, 30, 32});
  for (int64_t k = 0; k < t.numel(); ++k) t.as<float>()[k] = float(k) * 0.5f - 3.f;
  const auto dir = ts::testing::scratch_dir("engine_npy_test");
  const std::string path = (dir / "x.npy").string();
  ASSERT_TRUE(npy_write(path, t));
  auto back = npy_read(path);
  ASSERT_TRUE(back) << back.status().to_string();
  EXPECT_EQ(back.value().dtype, DType::kF32);
  EXPECT_EQ(back.value().dims, t.dims);
  EXPECT_EQ(back.value().data, t.data);

  // The header is padded to 64 bytes as the format asks, so numpy (and mmap) read it too.
  auto bytes = npy_serialize(DType::kI64, std::vector<int64_t>{3}, std::vector<int64_t>{1, 2, 3}.data());
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes.value().size(), 128u + 24u);
  const std::string header(bytes.value().begin() + 10, bytes.value().begin() + 128);
  EXPECT_NE(header.find("'shape': (3,)"), std::string::npos) << header;
  EXPECT_EQ(header.back(), '\n');
}

TEST(Npy, RefusesFilesItCannotRead) {
  const float v[] = {1, 2, 3, 4};
  auto expect_error = [](std::vector<uint8_t> bytes, const std::string& what) {
    auto t = npy_parse(bytes);
    ASSERT_FALSE(t) << what;
    EXPECT_NE(t.status().message().find(what), std::string::npos) << t.status().message();
  };
  auto good = make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }", v, 16);
  auto bad_magic = good;
  bad_magic[1] = 'X';
  expect_error(bad_magic, "bad magic");
  expect_error({}, "bad magic");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", v, 16), "Fortran");
  expect_error(make_npy("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }", v, 16), "big-endian");
  expect_error(make_npy("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", v, 16), "unsupported dtype");
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", v, 16), "truncated data");
  auto cut = good;
  cut.resize(40);
  expect_error(cut, "truncated header");
  auto v9 = good;
  v9[6] = 9;
  expect_error(v9, "version 9");
  // A huge shape must not overflow into a small size.
  expect_error(make_npy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16), }", v, 16),
               "truncated data");

  auto missing = npy_read("/nonexistent/dir/x.npy");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("/nonexistent/dir/x.npy"), std::string::npos);
}

// bf16 travels as numpy's '<u2' bit patterns: written so, read back as bf16 with the flag, and a
// '<u2' file without the flag is refused saying how to read it.
TEST(Npy, Bf16AsU2BitPatternsWithTheFlag) {
  const uint16_t bits[] = {bf16_from_f32(1.5f), bf16_from_f32(-2.0f), bf16_from_f32(0.25f)};
  const std::vector<int64_t> dims = {3};
  auto bytes = npy_serialize(DType::kBF16, dims, bits);
  ASSERT_TRUE(bytes) << bytes.status().message();
  const std::string text(bytes.value().begin(), bytes.value().end());
  EXPECT_NE(text.find("'descr': '<u2'"), std::string::npos) << text.substr(0, 80);
  auto plain = npy_parse(bytes.value());
  ASSERT_FALSE(plain);
  EXPECT_NE(plain.status().message().find("bf16 flag"), std::string::npos) << plain.status().message();
  auto t = npy_parse(bytes.value(), NpyOptions{.u2_as_bf16 = true});
  ASSERT_TRUE(t) << t.status().message();
  EXPECT_EQ(t.value().dtype, DType::kBF16);
  EXPECT_EQ(t.value().dims, dims);
  EXPECT_EQ(bf16_to_f32(t.value().as<uint16_t>()[0]), 1.5f);
  EXPECT_EQ(bf16_to_f32(t.value().as<uint16_t>()[1]), -2.0f);
  EXPECT_EQ(bf16_to_f32(t.value().as<uint16_t>()[2]), 0.25f);
}

}  // namespace
}  // namespace ts::engine
