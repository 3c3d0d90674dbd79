#pragma once
// Where tests find ../shared/data: $TICKSENTRY_DATA_DIR, else <repo>/../shared/data.
// A test that needs the data fails (not skips) when it is missing: CI must have it.
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

// A fresh scratch directory under the build tree for one test.
inline std::filesystem::path scratch_dir(const std::string& name) {
  auto p = std::filesystem::path(TICKSENTRY_BINARY_DIR) / "test-scratch" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p;
}

}  // namespace ts::testing
