// The CUDA executor's buffer reuse plan (host logic, no GPU needed): values whose lifetimes do
// not overlap share a slot, a value read through an alias (Reshape) stays alive until the alias's
// last reader, graph inputs/outputs keep their own storage.
#include <gtest/gtest.h>

#ifdef TICKSENTRY_HAVE_CUDA
#include "../cpu/graph_builder.h"
#include "engine/backends/cuda/cuda_buffer_plan.h"

namespace ts::engine::testing {
namespace {

TEST(CudaBufferPlan, ReusesDeadSlotsAndKeepsAliasedValuesAlive) {
  GraphBuilder b;
  ValueId x = b.input("x", known({4, 8}));
  ValueId a = b.value("a"), c = b.value("c"), r = b.value("r"), d = b.value("d"), e = b.value("e"), f = b.value("f"),
          y = b.value("y");
  b.node("Relu", {x}, {a});                                          // 0: a
  b.node("Relu", {a}, {c});                                          // 1: c
  b.node("Reshape", {c, b.constant_i64("s", {8, 4})}, {r});          // 2: r = view of c
  b.node("Relu", {x}, {d});                                          // 3: d (c still alive through r)
  b.node("Add", {r, d}, {e});                                        // 4: e; c and d die here
  b.node("Relu", {e}, {f});                                          // 5: f may reuse c's or d's slot
  b.node("Add", {f, a}, {y});                                        // 6: y (graph output); a dies
  b.output(y);
  std::vector<bool> skip(b.g.nodes.size(), false);
  cuda::BufferPlan p = cuda::plan_buffers(b.g, skip);
  auto slot = [&](ValueId v) { return p.slot[size_t(v)]; };
  EXPECT_EQ(slot(x), -1);
  EXPECT_EQ(slot(y), -1);
  EXPECT_EQ(slot(r), -1);  // a view: no buffer of its own
  for (ValueId v : {a, c, d, e, f}) EXPECT_GE(slot(v), 0);
  EXPECT_NE(slot(d), slot(c)) << "c is still read through its Reshape view at node 4";
  EXPECT_NE(slot(d), slot(a));
  EXPECT_NE(slot(e), slot(a));
  EXPECT_NE(slot(f), slot(a)) << "a is read by the last node";
  EXPECT_NE(slot(f), slot(e));
  EXPECT_LE(p.slots, 4) << "f should reuse a slot freed at node 4";
}

// Once sizes are known, slots are chosen by size: the node-order plan puts a large value into a
// slot a small one freed (the GRU FP32 model's pattern: transposed X, layer 1's Y, a small slice,
// layer 2's Y, its transpose), so its slots add up to more than the live set; by size, each
// large value shares with a large one whose life does not overlap, and the total is the peak.
TEST(CudaBufferPlan, SlotsBySizeHoldThePeakLiveSetAndNeverShareOverlappingLives) {
  GraphBuilder b;
  ValueId x = b.input("x", known({4, 8}));
  ValueId xt = b.value("xt"), y1 = b.value("y1"), s = b.value("s"), y2 = b.value("y2"), y2t = b.value("y2t"),
          out = b.value("out");
  b.node("Relu", {x}, {xt});        // 0: xt (1 MiB)
  b.node("Relu", {xt}, {y1});       // 1: y1 (4 MiB); xt dies
  b.node("Relu", {x}, {s});         // 2: s (4 KiB), into xt's freed slot
  b.node("Add", {y1, s}, {y2});     // 3: y2 (4 MiB); y1 and s die
  b.node("Relu", {y2}, {y2t});      // 4: y2t (4 MiB); y2 dies
  b.node("Relu", {y2t}, {out});     // 5: graph output
  b.output(out);
  std::vector<bool> skip(b.g.nodes.size(), false);
  const cuda::BufferPlan p = cuda::plan_buffers(b.g, skip);
  constexpr size_t kMiB = size_t(1) << 20;
  std::vector<size_t> bytes(b.g.values.size(), 0);
  bytes[size_t(xt)] = kMiB;
  bytes[size_t(y1)] = bytes[size_t(y2)] = bytes[size_t(y2t)] = 4 * kMiB;
  bytes[size_t(s)] = 4096;
  const cuda::BufferPlan q = cuda::plan_buffers_by_size(p, bytes);
  ASSERT_EQ(q.slot.size(), p.slot.size());
  for (size_t v = 0; v < p.slot.size(); ++v) EXPECT_EQ(q.slot[v] >= 0, p.slot[v] >= 0) << "value " << v;
  // Peak live set: y1, s and y2 at node 3.
  EXPECT_EQ(cuda::plan_buffers_bytes(q, bytes), 8 * kMiB + 4096);
  EXPECT_GE(cuda::plan_buffers_bytes(p, bytes), cuda::plan_buffers_bytes(q, bytes));
  for (size_t a = 0; a < q.slot.size(); ++a) {
    for (size_t c = a + 1; c < q.slot.size(); ++c) {
      if (q.slot[a] < 0 || q.slot[a] != q.slot[c]) continue;
      const bool overlap = q.live[a].first <= q.live[c].second && q.live[c].first <= q.live[a].second;
      EXPECT_FALSE(overlap) << "values " << a << " and " << c << " share slot " << q.slot[a] << " while both live";
    }
  }
  // Unknown sizes (0: never ran) still get a slot of their own lifetime rules.
  const cuda::BufferPlan z = cuda::plan_buffers_by_size(p, std::vector<size_t>(b.g.values.size(), 0));
  EXPECT_NE(z.slot[size_t(y1)], z.slot[size_t(y2)]);
  EXPECT_NE(z.slot[size_t(s)], z.slot[size_t(y2)]);
}

}  // namespace
}  // namespace ts::engine::testing
#endif
