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

}  // namespace
}  // namespace ts::engine::testing
#endif
