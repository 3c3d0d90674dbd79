// The CUDA executor's bucket choice and graph table (cuda_graph_capture.h): pure host code, no
// GPU needed (label unit). The table's entries here hold no graphs, so nothing calls the device.
#include <gtest/gtest.h>

#include <vector>

#include "engine/backend.h"

#ifdef TICKSENTRY_HAVE_CUDA
#include "engine/backends/cuda/cuda_graph_capture.h"
#endif

namespace ts::engine::testing {
namespace {

#ifdef TICKSENTRY_HAVE_CUDA
using cuda::bucket_slot;
using cuda::GraphEntry;
using cuda::GraphPath;
using cuda::GraphTable;

// The runtime's buckets for a profile whose largest batch is 256 (runtime.h, batch_buckets).
const std::vector<int64_t> kServing{1, 2, 4, 8, 16, 32, 64, 128, 256};

TEST(CudaBuckets, ABatchTakesTheSmallestBucketAtLeastItsSize) {
  ASSERT_NE(find_backend("cuda"), nullptr);  // this build registers the backend these belong to
  EXPECT_EQ(bucket_slot(kServing, 1), 0);
  EXPECT_EQ(bucket_slot(kServing, 2), 1);
  EXPECT_EQ(bucket_slot(kServing, 3), 2);    // runs at 4
  EXPECT_EQ(bucket_slot(kServing, 4), 2);
  EXPECT_EQ(bucket_slot(kServing, 5), 3);    // runs at 8
  EXPECT_EQ(bucket_slot(kServing, 129), 8);  // runs at 256
  EXPECT_EQ(bucket_slot(kServing, 256), 8);
  // Every batch up to the largest bucket: the bucket is ≥ the batch and the one below is not.
  for (int64_t b = 1; b <= 256; ++b) {
    const int s = bucket_slot(kServing, b);
    ASSERT_GE(s, 0) << b;
    EXPECT_GE(kServing[size_t(s)], b) << b;
    if (s > 0) {
      EXPECT_LT(kServing[size_t(s) - 1], b) << b;
    }
  }
}

TEST(CudaBuckets, NoBucketOverTheLargestOrWithoutBuckets) {
  EXPECT_EQ(bucket_slot(kServing, 257), -1);  // runs at its own size
  EXPECT_EQ(bucket_slot({}, 1), -1);           // exact shapes (bucketing off)
  const std::vector<int64_t> odd{3, 10, 4096};  // the last bucket need not be a power of two
  EXPECT_EQ(bucket_slot(odd, 0), 0);
  EXPECT_EQ(bucket_slot(odd, 4), 1);
  EXPECT_EQ(bucket_slot(odd, 11), 2);
  EXPECT_EQ(bucket_slot(odd, 4097), -1);
}

TensorView view(std::vector<int64_t> dims) {
  TensorView t;
  t.dims = std::move(dims);
  return t;
}

TEST(CudaGraphTable, FindsAnEntryByPathAndEveryInputsDims) {
  GraphTable table;
  std::vector<TensorView> b4{view({4, 60, 20})}, b8{view({8, 60, 20})};
  std::vector<TensorView> b4_t30{view({4, 30, 20})}, b4_rank2{view({4, 1200})};
  std::vector<TensorView> two{view({4, 60, 20}), view({4})};
  EXPECT_EQ(table.find(GraphPath::kRun, b4), -1);
  GraphEntry e4;
  e4.generation = 4;
  GraphEntry e8;
  e8.generation = 8;
  GraphEntry s4;
  s4.generation = 40;
  const int i4 = table.add(GraphPath::kRun, b4, e4);
  const int i8 = table.add(GraphPath::kRun, b8, e8);
  const int is4 = table.add(GraphPath::kOnStream, b4, s4);
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.find(GraphPath::kRun, b4), i4);
  EXPECT_EQ(table.find(GraphPath::kRun, b8), i8);
  EXPECT_EQ(table.find(GraphPath::kOnStream, b4), is4);
  EXPECT_EQ(table.at(table.find(GraphPath::kOnStream, b4)).generation, 40u);
  EXPECT_EQ(table.find(GraphPath::kOnStream, b8), -1);   // the other path's bucket only
  EXPECT_EQ(table.find(GraphPath::kRun, b4_t30), -1);    // same batch, another T
  EXPECT_EQ(table.find(GraphPath::kRun, b4_rank2), -1);  // same first dim, another rank
  EXPECT_EQ(table.find(GraphPath::kRun, two), -1);       // another input count
  table.erase(i4);  // later entries move down
  EXPECT_EQ(table.find(GraphPath::kRun, b4), -1);
  EXPECT_EQ(table.at(table.find(GraphPath::kRun, b8)).generation, 8u);
  EXPECT_EQ(table.at(table.find(GraphPath::kOnStream, b4)).generation, 40u);
  table.clear();
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find(GraphPath::kRun, b8), -1);
}
#else
TEST(CudaBuckets, NeedsTheCudaBackend) { GTEST_SKIP() << "this build has no cuda backend (nvcc not found at configure)"; }
#endif

}  // namespace
}  // namespace ts::engine::testing
