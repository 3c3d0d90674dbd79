#pragma once
// Hand-made alerts for sink tests.
#include <cmath>
#include <cstdio>

#include <gtest/gtest.h>

#include "audit/audit_store.h"
#include "core/clock.h"
#include "core/symbol_table.h"
#include "detect/alert.h"

namespace ts::testing {

// A rapid_rise on `sym` at 09:31:07.120 Shanghai time, 2023-02-01, with a distinct feature
// row derived from `k` so rows can be matched after a round trip.
inline Alert make_alert(SymbolId sym, uint64_t k) {
  Alert a;
  a.id = k;
  a.type = static_cast<AlertType>(k % kAlertTypeCount);
  a.severity = Severity::kWarning;
  a.symbol = sym;
  a.exch_ts_ns = midnight_ns(2023, 2, 1, 8) + (9 * 3600 + 31 * 60 + 7) * kNsPerSec + 120 * kNsPerMs;
  a.event_seq = 1000 + k;
  a.price = 185012;
  a.add_value("ret_60s_bps", 312.5, 200, Cmp::kGe);
  a.add_value("ret_10s_bps", 20, 0, Cmp::kGt);
  a.t.recv_ns = 1'000'000;
  a.t.book_ns = 1'002'000;
  a.t.features_ns = 1'005'000;
  a.t.detect_ns = 1'023'000;
  for (int i = 0; i < kFeatureCount; ++i) a.features[i] = float(k) + 0.25f * float(i);
  return a;
}

// A model alert on `sym` (make_alert's fields, type model): `name` v`version` scored `p` against
// threshold 0.8.
inline Alert make_model_alert(SymbolId sym, uint64_t k, const char* name, uint32_t version, float p) {
  Alert a = make_alert(sym, k);
  a.type = AlertType::kModel;
  std::snprintf(a.model.model, sizeof a.model.model, "%s", name);
  a.model.version = version;
  a.model.probability = p;
  a.model.threshold = 0.8f;
  return a;
}

// The score make_model_alert(sym, k, "desk-gru", 3, 0.8725f) wrote, as a store reads it back.
inline void expect_desk_gru_score(const ModelScoreRecord& m) {
  ASSERT_TRUE(m.present);
  EXPECT_EQ(m.name, "desk-gru");
  EXPECT_EQ(m.version, 3u);
  EXPECT_NEAR(m.probability, 0.8725, 1e-6);
  EXPECT_NEAR(m.threshold, 0.8, 1e-6);
  EXPECT_FALSE(m.shadow);
}

}  // namespace ts::testing
