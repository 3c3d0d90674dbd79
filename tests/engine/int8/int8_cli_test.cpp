// `ticksentry build --int8 / --tf32` as a user runs them on the shipped model: the calibration
// input a user must give, and what is refused, on any machine (the checks come before the
// device); --tf32 is recorded in the plan and shown by `inspect`.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "engine/npy.h"
#include "run_bin.h"
#include "test_data.h"

namespace ts::engine {
namespace {

namespace fs = std::filesystem;
using ts::testing::Outcome;

Outcome run(const std::vector<std::string>& args, const fs::path& dir) { return ts::testing::run_bin(args, dir, 0, false); }

const std::string kModel = std::string(TICKSENTRY_SOURCE_DIR) + "/models/default.onnx";

TEST(Int8Cli, RefusesMissingOrTooFewCalibrationWindows) {
  const auto dir = ts::testing::scratch_dir("int8_cli_errors");
  const std::string plan = (dir / "m.plan").string();
  auto none = run({"build", "--onnx", kModel, "--saveEngine", plan, "--backend", "cuda", "--int8"}, dir);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("int8 needs calibration data: give --calib"), std::string::npos) << none.err;

  auto missing = run({"build", "--onnx", kModel, "--saveEngine", plan, "--backend", "cuda", "--int8", "--calib",
                      (dir / "nope.npy").string()}, dir);
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.npy"), std::string::npos) << missing.err;

  const std::string few = (dir / "few.npy").string();
  HostTensor w = HostTensor::zeros(DType::kF32, {12, 60, 20});
  for (int64_t i = 0; i < w.numel(); ++i) w.as<float>()[i] = float(i % 17) * 0.1f;
  ASSERT_TRUE(npy_write(few, w));
  auto short_set = run({"build", "--onnx", kModel, "--saveEngine", plan, "--backend", "cuda", "--int8", "--calib", few}, dir);
  EXPECT_EQ(short_set.exit_code, 2);
  EXPECT_NE(short_set.err.find("need ≥ 1000 windows, got 12"), std::string::npos) << short_set.err;
  EXPECT_FALSE(fs::exists(plan));

  auto stray = run({"build", "--onnx", kModel, "--saveEngine", plan, "--calib", few}, dir);
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_NE(stray.err.find("--calib and --calibCache are for --int8 builds"), std::string::npos) << stray.err;

  auto constraint = run({"build", "--onnx", kModel, "--saveEngine", plan, "--backend", "cuda", "--int8", "--calib", few,
                         "--precisionConstraints", "strict"}, dir);
  EXPECT_EQ(constraint.exit_code, 2);
  EXPECT_NE(constraint.err.find("--precisionConstraints must be prefer or obey, got strict"), std::string::npos)
      << constraint.err;
  EXPECT_FALSE(fs::exists(plan));
}

TEST(Int8Cli, Tf32IsRecordedInThePlan) {
  const auto dir = ts::testing::scratch_dir("int8_cli_tf32");
  const std::string plan = (dir / "m.plan").string();
  auto built = run({"build", "--onnx", kModel, "--saveEngine", plan, "--tf32", "--minShapes", "x:1x30x20", "--optShapes",
                    "x:4x60x20", "--maxShapes", "x:16x60x20"}, dir);
  ASSERT_EQ(built.exit_code, 0) << built.err;
  auto inspected = run({"inspect", plan}, dir);
  ASSERT_EQ(inspected.exit_code, 0) << inspected.err;
  EXPECT_NE(inspected.out.find("precision fp32 (tf32 allowed), plan format 4"), std::string::npos) << inspected.out;
}

}  // namespace
}  // namespace ts::engine
