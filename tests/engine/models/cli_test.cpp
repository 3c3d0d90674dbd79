// `ticksentry build / inspect / infer / bench` as a user runs them on an exported model: a plan
// built from ONNX, inspected, run on a .npy input whose output matches PyTorch's, benchmarked;
// and every kind of bad input ends with exit code 2 and a message saying what is wrong.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "engine/import/onnx_model_builder.h"
#include "engine/plan.h"
#include "fixture_util.h"
#include "run_bin.h"

namespace ts::engine {
namespace {

using testing::fixtures_dir;
namespace fs = std::filesystem;

using ts::testing::Outcome;

// The child runs in the build folder: the paths given are absolute.
Outcome run_bin(const std::vector<std::string>& args, const fs::path& dir) {
  return ts::testing::run_bin(args, dir, 0, false);
}

class EngineCli : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: ctest runs these tests in parallel processes, and a shared folder
    // was wiped by one test's SetUp while another was using it.
    dir_ = ts::testing::scratch_dir(std::string("engine_cli_test_") +
                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
    model_ = fixtures_dir() / "gru_1x32";
    ASSERT_TRUE(fs::exists(model_ / "model.onnx")) << "run the engine_fixtures ctest fixture";
  }
  std::string p(const std::string& name) const { return (dir_ / name).string(); }
  std::string m(const std::string& name) const { return (model_ / name).string(); }
  Outcome build_plan(const std::string& plan) {
    return run_bin({"build", "--onnx", m("model.onnx"), "--saveEngine", plan, "--backend", "cpu",
                    "--minShapes", "x:1x30x32", "--optShapes", "x:7x60x32", "--maxShapes",
                    "x:64x120x32", "--memPoolSize", "workspace:256M"},
                   dir_);
  }
  fs::path dir_, model_;
};

TEST_F(EngineCli, BuildInspectInferBenchRoundTrip) {
  const auto built = build_plan(p("gru.plan"));
  ASSERT_EQ(built.exit_code, 0) << built.err;
  ASSERT_TRUE(fs::exists(p("gru.plan")));
  EXPECT_GT(fs::file_size(p("gru.plan")), 6369u * 4) << "plan should carry the weights";

  const auto inspected = run_bin({"inspect", p("gru.plan")}, dir_);
  ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("input  x"), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("profile 0 x: min 1x30x32 opt 7x60x32 max 64x120x32"),
            std::string::npos) << inspected.out;
  // Memory per bucket: the plan names the buckets a context runs at and what a context held
  // after running each, measured at build (plan format 4); the old single figure is named an
  // estimate.
  EXPECT_NE(inspected.out.find("batch buckets: 1,2,4,8,16,32,64 ("), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("(measured at build per bucket, below;"), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("context memory per batch bucket (measured at build, weights excluded"),
            std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find(", 64: "), std::string::npos) << inspected.out;
  EXPECT_NE(inspected.out.find("bytes at max shapes (estimate)"), std::string::npos) << inspected.out;

  const auto inferred = run_bin({"infer", "--loadEngine", p("gru.plan"), "--input",
                                 "x=" + m("x_b7_t60.npy"), "--output", p("y.npy")},
                                dir_);
  ASSERT_EQ(inferred.exit_code, 0) << inferred.err;
  auto got = npy_read(p("y.npy"));
  auto want = npy_read(m("y_b7_t60.npy"));
  ASSERT_TRUE(got) << got.status().to_string();
  ASSERT_TRUE(want);
  const auto cmp = testing::compare_tensors(got.value(), want.value(), 1e-5, 1e-5);
  EXPECT_TRUE(cmp.ok) << cmp.message;
  EXPECT_LE(cmp.max_rel_err, 1e-5);

  const auto bench = run_bin({"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--iterations", "50",
                              "--duration", "0", "--warmUp", "20", "--percentile", "50,99.9", "--json",
                              p("bench.json")},
                             dir_);
  ASSERT_EQ(bench.exit_code, 0) << bench.err;
  EXPECT_NE(bench.out.find("P99.9"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("inferences/s"), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("tactic="), std::string::npos) << "per-layer tactics: " << bench.out;
  std::ifstream jf(p("bench.json"));
  const auto j = nlohmann::json::parse(jf, nullptr, false);
  ASSERT_FALSE(j.is_discarded());
  const auto& h = j["host_to_host"];
  EXPECT_EQ(h["count"].get<int64_t>(), 50);
  EXPECT_GT(h["median_us"].get<double>(), 0.0);
  EXPECT_LE(h["median_us"].get<double>(), h["percentiles_us"]["99.9"].get<double>());
  EXPECT_GT(h["inferences_per_s"].get<double>(), 0.0);
  EXPECT_EQ(j["backend"], "cpu");
  EXPECT_EQ(j["precision"], "fp32");
  EXPECT_FALSE(j["device"].get<std::string>().empty()) << "the CPU model";
  EXPECT_EQ(j["inputs"]["x"], nlohmann::json::array({1, 60, 32}));
  EXPECT_EQ(j["settings"]["percentiles"], nlohmann::json::array({50.0, 99.9}));
  ASSERT_TRUE(j["layers"].is_array());
  ASSERT_FALSE(j["layers"].empty());
  EXPECT_FALSE(j["layers"][0]["tactic"].get<std::string>().empty());
  EXPECT_TRUE(j["device_resident"].is_null()) << "the cpu backend has no device phase";
  EXPECT_GT(j["memory"]["context_bytes"].get<int64_t>(), 0);

  // --duration: at least that long, however few --iterations.
  const auto timed = run_bin({"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--iterations", "1",
                              "--duration", "0.3", "--warmUp", "0", "--json", p("bench_timed.json")},
                             dir_);
  ASSERT_EQ(timed.exit_code, 0) << timed.err;
  std::ifstream tf(p("bench_timed.json"));
  const auto tj = nlohmann::json::parse(tf, nullptr, false);
  ASSERT_FALSE(tj.is_discarded());
  EXPECT_GE(tj["host_to_host"]["wall_s"].get<double>(), 0.3);
  EXPECT_GT(tj["host_to_host"]["count"].get<int64_t>(), 1);
}

TEST_F(EngineCli, BadInputsExitWithCodeTwoAndSayWhy) {
  ASSERT_EQ(build_plan(p("gru.plan")).exit_code, 0);
  {
    std::ofstream garbage(p("garbage.plan"), std::ios::binary);
    garbage << "this is not a plan, not even close";
  }
  HostTensor wrong = HostTensor::zeros(DType::kF32, {1, 30, 5});
  ASSERT_TRUE(npy_write(p("wrong.npy"), wrong));
  HostTensor too_long = HostTensor::zeros(DType::kF32, {1, 500, 32});
  ASSERT_TRUE(npy_write(p("too_long.npy"), too_long));
  {
    std::ofstream bad(p("bad.npy"), std::ios::binary);
    bad << "not numpy";
  }

  struct Case {
    std::vector<std::string> args;
    std::string message;  // a piece of what stderr must say
  };
  const std::vector<Case> cases = {
      {{"build", "--onnx", p("missing.onnx"), "--saveEngine", p("x.plan")}, "missing.onnx"},
      {{"build", "--onnx", m("model.onnx"), "--saveEngine", p("x.plan"), "--minShapes", "x:1xAx32"},
       "--minShapes"},
      {{"build", "--onnx", m("model.onnx"), "--saveEngine", p("x.plan"), "--fp16", "--int8"},
       "at most one"},
      {{"build", "--onnx", m("model.onnx"), "--saveEngine", p("x.plan"), "--memPoolSize", "1G"},
       "workspace:"},
      {{"build", "--onnx", m("model.onnx"), "--saveEngine", p("x.plan"), "--minShapes",
        "x:8x30x32", "--maxShapes", "x:4x120x32"},
       "min <= opt <= max"},
      {{"inspect", p("garbage.plan")}, "garbage.plan"},
      {{"inspect", p("nope.plan")}, "nope.plan"},
      {{"infer", "--loadEngine", p("gru.plan"), "--input", "x=" + p("bad.npy"), "--output", p("y.npy")},
       "bad magic"},
      {{"infer", "--loadEngine", p("gru.plan"), "--input", "z=" + m("x_b1_t30.npy"), "--output", p("y.npy")},
       "no --input for the engine's input x"},
      // --input is optional (a model may have none); a missing one is named.
      {{"infer", "--loadEngine", p("gru.plan"), "--output", p("y.npy")}, "no --input for the engine's input x"},
      {{"infer", "--loadEngine", p("gru.plan"), "--input", "x=" + p("wrong.npy"), "--output", p("y.npy")},
       ""},
      {{"infer", "--loadEngine", p("gru.plan"), "--input", "x=" + p("too_long.npy"), "--output", p("y.npy")},
       ""},
      {{"bench", "--loadEngine", p("gru.plan")}, "--shapes x:"},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x500x32", "--iterations", "3"}, ""},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--iterations", "0"}, "--iterations"},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--duration", "-1"}, "--duration"},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--percentile", "99,101"}, "--percentile"},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--percentile", "p99"}, "--percentile"},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--useCudaGraph"}, "for cuda plans"},
      {{"bench", "--loadEngine", p("gru.plan"), "--shapes", "x:1x60x32", "--pageable"}, "for cuda plans"},
  };
  for (const auto& c : cases) {
    std::string cmdline;
    for (auto& a : c.args) cmdline += a + " ";
    const auto o = run_bin(c.args, dir_);
    EXPECT_EQ(o.exit_code, 2) << cmdline << "\nstderr: " << o.err;
    EXPECT_NE(o.err.find("ticksentry " + c.args[0] + ": "), std::string::npos) << cmdline << o.err;
    EXPECT_NE(o.err.find(c.message), std::string::npos) << cmdline << "\nstderr: " << o.err;
    EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << "one line: " << o.err;
  }
  EXPECT_FALSE(fs::exists(p("x.plan"))) << "no plan written by a failed build";
}

// Models whose output dims no input names: the CLI sizes its buffers from the engine's own
// shapes for the given inputs (it once guessed "the largest input dim" and `infer` crashed).
class EngineCliShapes : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ts::testing::scratch_dir(std::string("engine_cli_shapes_") +
                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  }
  std::string p(const std::string& name) const { return (dir_ / name).string(); }
  void write(const std::string& name, const std::vector<uint8_t>& bytes) {
    std::ofstream f(p(name), std::ios::binary);
    f.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  }
  fs::path dir_;
};

TEST_F(EngineCliShapes, InferOnAFlatteningReshapeWritesTheWholeResult) {
  testing::OnnxModelBuilder m(14);
  m.input("x", {"batch", "seq", 20});
  m.output("y", {""});
  m.init_i64("shape", {1}, {-1});
  m.node("Reshape", {"x", "shape"}, {"y"});
  write("flat.onnx", m.bytes());
  const auto built = run_bin({"build", "--onnx", p("flat.onnx"), "--saveEngine", p("flat.plan"), "--minShapes",
                              "x:1x1x20", "--maxShapes", "x:64x64x20"},
                             dir_);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  HostTensor x = HostTensor::zeros(DType::kF32, {5, 45, 20});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = float(i);
  ASSERT_TRUE(npy_write(p("x.npy"), x));
  const auto inferred =
      run_bin({"infer", "--loadEngine", p("flat.plan"), "--input", "x=" + p("x.npy"), "--output", p("y.npy")}, dir_);
  ASSERT_EQ(inferred.exit_code, 0) << "signal/exit " << inferred.exit_code << ": " << inferred.err;
  EXPECT_NE(inferred.out.find("(4500)"), std::string::npos) << inferred.out;
  auto y = npy_read(p("y.npy"));
  ASSERT_TRUE(y) << y.status().to_string();
  ASSERT_EQ(y.value().dims, (std::vector<int64_t>{4500}));
  EXPECT_EQ(y.value().data, x.data);

  const auto bench = run_bin({"bench", "--loadEngine", p("flat.plan"), "--shapes", "x:5x45x20", "--iterations", "5",
                              "--duration", "0", "--warmUp", "0"},
                             dir_);
  EXPECT_EQ(bench.exit_code, 0) << bench.err;
}

TEST_F(EngineCliShapes, PlanWhoseGatherLostItsAxisIsRefusedByInspectAndInfer) {
  testing::OnnxModelBuilder m(14);
  m.input("x", {"batch", 45, 20});
  m.output("y", {"batch", 3, 20});
  m.init_i64("idx", {3}, {0, 2, 4});
  auto& g = m.node("Gather", {"x", "idx"}, {"y"}, "/pick/Gather");
  testing::OnnxModelBuilder::attr_i(g, "axis", 1);
  write("gather.onnx", m.bytes());
  const auto built = run_bin({"build", "--onnx", p("gather.onnx"), "--saveEngine", p("gather.plan"), "--minShapes",
                              "x:1x45x20", "--maxShapes", "x:64x45x20"},
                             dir_);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  std::ifstream f(p("gather.plan"), std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto plan = deserialize_plan(bytes);
  ASSERT_TRUE(plan) << plan.status().to_string();
  bool erased = false;
  for (auto& n : plan.value().graph.nodes) erased = erased || (n.op == "Gather" && n.attrs.erase("axis") == 1);
  ASSERT_TRUE(erased);
  write("damaged.plan", serialize_plan(plan.value()));  // checksum recomputed
  HostTensor x = HostTensor::zeros(DType::kF32, {5, 45, 20});
  ASSERT_TRUE(npy_write(p("x.npy"), x));
  const auto inspected = run_bin({"inspect", p("damaged.plan")}, dir_);
  EXPECT_EQ(inspected.exit_code, 2) << inspected.out;
  EXPECT_NE(inspected.err.find("invalid plan: node '/pick/Gather' (Gather)"), std::string::npos) << inspected.err;
  const auto inferred = run_bin(
      {"infer", "--loadEngine", p("damaged.plan"), "--input", "x=" + p("x.npy"), "--output", p("y.npy")}, dir_);
  EXPECT_EQ(inferred.exit_code, 2) << inferred.err;
  EXPECT_NE(inferred.err.find("invalid plan"), std::string::npos) << inferred.err;
}

}  // namespace
}  // namespace ts::engine
