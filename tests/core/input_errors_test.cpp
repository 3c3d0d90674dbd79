#include <gtest/gtest.h>

#include "core/input_errors.h"

namespace ts {
namespace {

TEST(InputErrors, CountsByKindAndMerges) {
  InputErrors a, b;
  a.set_quiet(true);
  b.set_quiet(true);
  for (int i = 0; i < 1000; ++i) a.report(InputError::kBadPrice, "f.csv", i + 1, "price -1");
  b.report(InputError::kOutOfOrder, "g.csv", 3, "ts went back");
  a.merge(b);
  EXPECT_EQ(a.count(InputError::kBadPrice), 1000u);
  EXPECT_EQ(a.total(), 1001u);
  auto m = a.by_kind();
  EXPECT_EQ(m.size(), 2u);
  EXPECT_EQ(m["bad_price"], 1000u);
  EXPECT_EQ(m["out_of_order"], 1u);
}

}  // namespace
}  // namespace ts
