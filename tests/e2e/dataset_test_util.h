#pragma once
// Helpers of the dataset export and eval CLI tests: run the binary (TICKSENTRY_BIN), read JSON
// and .npy files.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "engine/npy.h"
#include "run_bin.h"

namespace ts::testing {


inline nlohmann::json read_json(const std::filesystem::path& p) {
  std::ifstream f(p);
  return nlohmann::json::parse(f);
}

inline engine::HostTensor npy(const std::filesystem::path& p) {
  auto t = engine::npy_read(p.string());
  EXPECT_TRUE(t.is_ok()) << t.status().to_string();
  return t.is_ok() ? std::move(t).value() : engine::HostTensor{};
}

}  // namespace ts::testing
