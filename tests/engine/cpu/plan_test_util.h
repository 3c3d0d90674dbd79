#pragma once
// Helpers for the tests that edit plan bytes (plan_manifest_test, plan_bucket_memory_test).
#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "engine/plan.h"

namespace ts::engine::testing {

// The bytes with the checksum recomputed: what a plan whose payload says `b` looks like.
inline std::vector<uint8_t> resealed(std::vector<uint8_t> b) {
  b.resize(b.size() - 4);
  const uint32_t c = crc32(b);
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(c >> (8 * i)));
  return b;
}

// Plan bytes of an older format relabelled `version`, which lacks that version's last section:
// refused as truncated while reading `section`, not misread.
inline void expect_truncated_as(std::vector<uint8_t> older, uint8_t version, const std::string& section) {
  older[8] = version;
  auto bad = Engine::load(resealed(older));
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.status().message().find("truncated plan (reading " + section + ")"), std::string::npos)
      << bad.status().to_string();
}

}  // namespace ts::engine::testing
