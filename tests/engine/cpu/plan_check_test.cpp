// Plans are checked on load against the builder's rules (plan_check.h): a plan whose checksum
// is right but whose graph was damaged — a Gather that lost its axis attribute, an axis out of
// range, a profile that contradicts the inputs — is refused with the node and the rule, never
// run (a Gather without its axis passed `inspect` and corrupted the heap in `infer`).
#include "engine/plan_check.h"

#include <cmath>

#include "engine/builder.h"
#include "engine/passes/passes.h"
#include "engine/plan.h"
#include "engine/runtime.h"
#include "graph_builder.h"

namespace ts::engine::testing {
namespace {

// x [batch,45,20] → Gather(axis 1, indices [0,2,4]) → y [batch,3,20] → Sigmoid → z.
std::vector<uint8_t> gather_plan() {
  GraphBuilder b;
  auto x = b.input("x", Shape{Dim::sym("batch"), Dim::known(45), Dim::known(20)});
  auto idx = b.constant_i64("idx", {0, 2, 4});
  auto y = b.value("y"), z = b.value("z");
  b.node("Gather", {x, idx}, {y}).attrs["axis"] = int64_t(1);
  b.node("Sigmoid", {y}, {z});
  b.output(z);
  b.g.opset = 17;
  PassLog log;
  EXPECT_TRUE(infer_shapes(b.g, log));  // as the builder does: the plan stores every value's shape
  BuildOptions o;
  o.time_tactics = false;
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 45, 20}, {5, 45, 20}, {64, 45, 20}};
  o.profiles.push_back(p);
  auto plan = build_from_graph(b.g, PassLog{}, o);
  EXPECT_TRUE(plan) << plan.status().to_string();
  return plan ? plan.value() : std::vector<uint8_t>{};
}

// The plan with `edit` applied to its payload and the checksum recomputed (as an attacker or a
// careless tool would).
std::vector<uint8_t> edited(const std::vector<uint8_t>& bytes, const std::function<void(Plan&)>& edit) {
  auto p = deserialize_plan(bytes);
  EXPECT_TRUE(p) << p.status().to_string();
  if (!p) return {};
  edit(p.value());
  return serialize_plan(p.value());
}

Node& node_of(Plan& p, const std::string& op) {
  for (Node& n : p.graph.nodes) {
    if (n.op == op) return n;
  }
  ADD_FAILURE() << "no " << op << " node";
  return p.graph.nodes.front();
}

TEST(PlanCheck, TheBuildersPlanLoadsAndRuns) {
  auto e = Engine::load(gather_plan());
  ASSERT_TRUE(e) << e.status().to_string();
  auto ctx = e.value()->create_context();
  ASSERT_TRUE(ctx);
  HostTensor x = random_tensor({5, 45, 20}, 3);
  std::vector<float> z(5 * 3 * 20);
  const TensorView in[] = {x.view()};
  TensorView out[] = {TensorView{DType::kF32, {5, 3, 20}, z.data()}};
  ASSERT_TRUE(ctx.value()->execute(in, out));
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{5, 3, 20}));
  EXPECT_FLOAT_EQ(z[20], 1.f / (1.f + std::exp(-x.f()[2 * 20])));  // row 0, index 2
}

TEST(PlanCheck, GatherThatLostItsAxisIsRefusedOnLoad) {
  auto bad = edited(gather_plan(), [](Plan& plan) { node_of(plan, "Gather").attrs.erase("axis"); });
  auto e = Engine::load(bad);
  ASSERT_FALSE(e) << "a Gather without its axis computes [3,45,20], not the plan's [batch,3,20]";
  const std::string m = e.status().message();
  EXPECT_NE(m.find("invalid plan"), std::string::npos) << m;
  EXPECT_NE(m.find("(Gather)"), std::string::npos) << m;
  EXPECT_NE(m.find("output y is [3,45,20]"), std::string::npos) << m;
  EXPECT_NE(m.find("the plan says [batch,3,20]"), std::string::npos) << m;
}

TEST(PlanCheck, AttributeOutOfRangeIsRefusedOnLoad) {
  auto bad = edited(gather_plan(), [](Plan& plan) { node_of(plan, "Gather").attrs["axis"] = int64_t(7); });
  auto e = Engine::load(bad);
  ASSERT_FALSE(e);
  EXPECT_NE(e.status().message().find("(Gather)"), std::string::npos) << e.status().message();
}

TEST(PlanCheck, ProfileThatContradictsTheInputIsRefusedOnLoad) {
  auto bad = edited(gather_plan(), [](Plan& plan) { plan.profiles[0].inputs["x"].max = {64, 44, 20}; });
  auto e = Engine::load(bad);
  ASSERT_FALSE(e);
  EXPECT_NE(e.status().message().find("profile 0 input x"), std::string::npos) << e.status().message();
  auto inverted = edited(gather_plan(), [](Plan& plan) { plan.profiles[0].inputs["x"].min = {65, 45, 20}; });  // min above max
  EXPECT_FALSE(Engine::load(inverted));
  auto stranger = edited(gather_plan(), [](Plan& plan) { plan.profiles[0].inputs["w"] = ShapeRange{{1}, {1}, {1}}; });
  EXPECT_FALSE(Engine::load(stranger));
}

TEST(PlanCheck, OutputShapeEditedBehindTheChecksumIsRefused) {
  auto bad = edited(gather_plan(), [](Plan& plan) {
    for (Value& v : plan.graph.values) {
      if (v.name == "y") v.shape[1] = Dim::known(2);
    }
  });
  auto e = Engine::load(bad);
  ASSERT_FALSE(e);
  EXPECT_NE(e.status().message().find("the plan says [batch,2,20]"), std::string::npos) << e.status().message();
}

}  // namespace
}  // namespace ts::engine::testing
