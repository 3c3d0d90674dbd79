#pragma once
// Where tests find the real market data (LOBSTER and SSE files, never copied into the
// repository): $TICKSENTRY_DATA_DIR when it is set (only there), else <repo>/../shared/data.
// A test that needs the data starts with TS_REQUIRE_DATA(path) for each file or folder it
// reads: where the data is absent the test is skipped (GTEST_SKIP) with a message naming what
// is missing, so a clone anywhere passes `make test`; CI has the data and runs them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ts::testing {

inline std::filesystem::path data_dir() {
  if (const char* env = std::getenv("TICKSENTRY_DATA_DIR"); env && *env) return env;
  return std::filesystem::path(TICKSENTRY_SOURCE_DIR) / ".." / "shared" / "data";
}

inline std::filesystem::path lobster_file(const std::string& symbol, const char* kind, int levels) {
  return data_dir() / "lobster" /
         (symbol + "_2012-06-21_34200000_57600000_" + kind + "_" + std::to_string(levels) + ".csv.gz");
}

inline std::filesystem::path sse_day_dir() { return data_dir() / "sse-l2" / "600519-20230201"; }

// "" when `path` exists, else the skip message: what is missing and where the data is looked for.
inline std::string missing_data(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return "";
  const char* env = std::getenv("TICKSENTRY_DATA_DIR");
  return "needs the real data: " + path.lexically_normal().string() + " is missing (data folder " +
         (env && *env ? "$TICKSENTRY_DATA_DIR" : "<repo>/../shared/data; set TICKSENTRY_DATA_DIR to use another") +
         ")";
}

// A fresh scratch directory under the build tree for one test.
inline std::filesystem::path scratch_dir(const std::string& name) {
  auto p = std::filesystem::path(TICKSENTRY_BINARY_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

}  // namespace ts::testing

// Skips the running test when the data file or folder `path` is absent (GTEST_SKIP returns
// from the enclosing function: use it in a TEST body or a fixture's SetUp, not in a helper).
#define TS_REQUIRE_DATA(path)                                                          \
  do {                                                                                 \
    const std::string ts_missing_data_ = ::ts::testing::missing_data(path);            \
    if (!ts_missing_data_.empty()) GTEST_SKIP() << ts_missing_data_;                   \
  } while (0)
