// Failure cases of model serving in SQLite: round trip with the input batch, newest-first
// listing without inputs, an unknown id, open errors.
#include <gtest/gtest.h>

#include "audit/failure_store.h"
#include "test_data.h"

namespace ts::testing {
namespace {

FailureRecord failure(const std::string& error, int batch) {
  FailureRecord r;
  r.model = "gru";
  r.version = 3;
  r.model_path = "models/gru.onnx";
  r.backend = "cuda";
  r.error = error;
  r.batch = batch;
  r.rows = 2;
  r.features = 3;
  r.recovered = batch % 2 == 0;
  for (int i = 0; i < batch * 2 * 3; ++i) r.input.push_back(0.5f * float(i) - 1.0f);
  return r;
}

TEST(FailureStore, RoundTripsAFailureCaseWithItsInputs) {
  auto store = FailureStore::open((scratch_dir("failure_round_trip") / "audit.db").string());
  ASSERT_TRUE(store.is_ok()) << store.status().to_string();
  auto first = store.value()->record(failure("cudaErrorIllegalAddress", 2));
  auto second = store.value()->record(failure("plan mismatch", 1));
  ASSERT_TRUE(first.is_ok() && second.is_ok());
  EXPECT_LT(first.value(), second.value());

  auto loaded = store.value()->load(first.value());
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().to_string();
  const FailureRecord& r = loaded.value();
  EXPECT_EQ(r.id, first.value());
  EXPECT_GT(r.wall_ns, 0);
  EXPECT_EQ(r.model, "gru");
  EXPECT_EQ(r.version, 3u);
  EXPECT_EQ(r.model_path, "models/gru.onnx");
  EXPECT_EQ(r.backend, "cuda");
  EXPECT_EQ(r.error, "cudaErrorIllegalAddress");
  EXPECT_EQ(r.batch, 2);
  EXPECT_EQ(r.rows, 2);
  EXPECT_EQ(r.features, 3);
  EXPECT_TRUE(r.recovered);
  EXPECT_EQ(r.input, failure("", 2).input);  // exact float32 bytes

  auto listed = store.value()->list();
  ASSERT_TRUE(listed.is_ok());
  ASSERT_EQ(listed.value().size(), 2u);
  EXPECT_EQ(listed.value()[0].id, second.value());  // newest first
  EXPECT_EQ(listed.value()[0].error, "plan mismatch");
  EXPECT_TRUE(listed.value()[0].input.empty());  // lists leave the inputs out
  EXPECT_EQ(store.value()->list(1).value().size(), 1u);
}

TEST(FailureStore, UnknownIdsAndUnopenablePathsAreClearErrors) {
  auto store = FailureStore::open((scratch_dir("failure_unknown") / "audit.db").string());
  ASSERT_TRUE(store.is_ok());
  auto missing = store.value()->load(42);
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("failure 42"), std::string::npos);

  auto bad = FailureStore::open("/nonexistent-dir/audit.db");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("failure store"), std::string::npos) << bad.status().message();
  EXPECT_NE(bad.status().message().find("/nonexistent-dir/audit.db"), std::string::npos);
}

}  // namespace
}  // namespace ts::testing
