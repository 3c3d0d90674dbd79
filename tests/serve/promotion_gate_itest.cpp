// Promotion through the registry with the real engine, on held windows exported in the test from
// one real LOBSTER day (AAPL, validation split): a useless model is refused by the accuracy gate
// with both PR-AUCs in the message and prod unchanged; an equal model passes and the swap handler
// gets its engine exactly once; a corrupt plan and a plan whose outputs are not its ONNX's are
// refused; rollback after two promotions walks back one prod at a time; the CLI says the same.
#include <gtest/gtest.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "app/features_command.h"
#include "app/models_command.h"
#include "engine/npy.h"
#include "serve/eval_dataset.h"
#include "serve/model_registry.h"
#include "test_data.h"

namespace ts::serve {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), {}};
}

std::string entry(int version, const std::string& stage, const std::string& onnx, const std::string& plan = "") {
  std::string e =
      R"({"name": "m", "version": )" + std::to_string(version) + R"(, "stage": ")" + stage + R"(", "onnx": ")" + onnx + "\"";
  if (!plan.empty()) e += R"(, "plans": {"cpu": ")" + plan + "\"}";
  return e + "}";
}

class PromotionGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    TS_REQUIRE_DATA(testing::lobster_file("AAPL", "message", 1));
    dir_ = testing::scratch_dir(std::string("promotion_gate_") +
                                ::testing::UnitTest::GetInstance()->current_test_info()->name());
    ExportOptions ex;
    ex.out_dir = (dir_ / "data").string();
    ex.format = "lobster";
    ex.paths = {testing::lobster_file("AAPL", "message", 1).string()};
    std::atomic<bool> stop{false};
    auto s = export_dataset(ex, stop);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    const std::string cmd = "/usr/bin/python3 " + std::string(TICKSENTRY_SOURCE_DIR) +
                            "/tests/serve/make_constant_model.py " + (dir_ / "constant.onnx").string();
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    fs::copy_file(fs::path(TICKSENTRY_SOURCE_DIR) / "models" / "default.onnx", dir_ / "default.onnx");
    // The held windows: the validation split must hold both classes for PR-AUC to mean anything.
    auto d = load_eval_dataset((dir_ / "data").string());
    ASSERT_TRUE(d.is_ok()) << d.status().to_string();
    const auto labels = labels_of(d.value(), split_rows(d.value(), Split::kValidation));
    windows_ = int64_t(labels.size());
    for (uint8_t l : labels) positives_ += l;
    ASSERT_GT(positives_, 0);
    ASSERT_LT(positives_, windows_);
  }

  // v1 prod (the shipped model), v2 the constant model, v3 and v4 copies of the shipped model.
  void write_registry(const std::string& extra = "") {
    std::ofstream(dir_ / "registry.json") << "{\"format_version\": 2, \"models\": [" << entry(1, "prod", "default.onnx")
                                          << ", " << entry(2, "candidate", "constant.onnx") << ", "
                                          << entry(3, "candidate", "default.onnx") << ", "
                                          << entry(4, "candidate", "default.onnx") << extra << "]}";
    auto r = ModelRegistry::open((dir_ / "registry.json").string());
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    reg_ = std::move(r).value();
    reg_->set_swap_handler([this](const ModelVersion& v, std::shared_ptr<engine::Engine> e) {
      swaps_.push_back({v.version, v.stage, e});
      return Status::ok();
    });
  }

  PromotionOptions options() const {
    PromotionOptions o;
    o.gate.data_dir = (dir_ / "data").string();
    o.gate.time_tactics = false;  // saves ~1 s per build; AnEqualModelPasses... times them
    o.by = "test";
    return o;
  }

  struct Swap {
    int version;
    Stage stage;
    std::shared_ptr<engine::Engine> engine;
  };
  fs::path dir_;
  int64_t windows_ = 0, positives_ = 0;
  std::unique_ptr<ModelRegistry> reg_;
  std::vector<Swap> swaps_;
};

TEST_F(PromotionGateTest, AccuracyGateRefusesAWorseModelWithBothNumbersAndProdKeepsServing) {
  write_registry();
  const std::string before = slurp(dir_ / "registry.json");
  auto r = reg_->promote("m", 2, Stage::kProd, options());
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);  // a refusal (the admin API's 409)
  const std::string& msg = r.status().message();
  // A constant score ranks nothing: its average precision is the positive rate of the windows.
  char rate[32];
  std::snprintf(rate, sizeof rate, "PR-AUC %.4f", double(positives_) / double(windows_));
  EXPECT_NE(msg.find("promoting m v2 to prod: refused: "), std::string::npos) << msg;
  EXPECT_NE(msg.find(rate), std::string::npos) << msg;
  EXPECT_NE(msg.find(" vs prod m v1 0."), std::string::npos) << msg;
  EXPECT_NE(msg.find("% below it"), std::string::npos) << msg;
  EXPECT_NE(msg.find("floor"), std::string::npos) << msg;
  // Both comparisons are stated, each PR-AUC with its block-bootstrap interval.
  EXPECT_NE(msg.find("and best baseline "), std::string::npos) << msg;
  EXPECT_EQ(std::count(msg.begin(), msg.end(), '['), 2) << msg;
  EXPECT_NE(msg.find(std::to_string(windows_) + " validation windows"), std::string::npos) << msg;
  EXPECT_TRUE(swaps_.empty());
  EXPECT_EQ(reg_->prod("m")->version, 1);
  EXPECT_EQ(reg_->find("m", 2)->stage, Stage::kCandidate);
  EXPECT_EQ(slurp(dir_ / "registry.json"), before);
}

TEST_F(PromotionGateTest, WithoutProdAModelBelowTheBestBaselineIsRefused) {
  std::ofstream(dir_ / "registry.json") << "{\"format_version\": 2, \"models\": [" << entry(2, "candidate", "constant.onnx")
                                        << ", " << entry(3, "candidate", "default.onnx") << "]}";
  auto r = ModelRegistry::open((dir_ / "registry.json").string());
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  auto p = r.value()->promote("m", 2, Stage::kProd, options());
  ASSERT_FALSE(p.is_ok()) << p.value().gate.summary;
  const std::string& msg = p.status().message();
  EXPECT_NE(msg.find("no prod to compare with and best baseline "), std::string::npos) << msg;
  EXPECT_NE(msg.find("(above the candidate's 0."), std::string::npos) << msg;
  EXPECT_FALSE(r.value()->prod("m").has_value());
}

TEST_F(PromotionGateTest, TheGateNeverReadsTheTestSplit) {
  write_registry();
  const std::string before = slurp(dir_ / "registry.json");
  PromotionOptions o = options();
  o.gate.split = "test";
  auto r = reg_->promote("m", 3, Stage::kProd, o);
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("never reads the test split"), std::string::npos) << r.status().message();
  EXPECT_TRUE(swaps_.empty());
  EXPECT_EQ(slurp(dir_ / "registry.json"), before);
}

TEST_F(PromotionGateTest, AnEqualModelPassesAndTheSwapHandlerGetsItsEngineOnce) {
  write_registry();
  PromotionOptions o = options();
  o.gate.time_tactics = true;  // as served: the engine differs from the reference build, so it is compared
  auto r = reg_->promote("m", 3, Stage::kProd, o);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  const PromotionReport& rep = r.value();
  EXPECT_TRUE(rep.swapped);
  EXPECT_LE(rep.gate.max_abs_diff, 1e-4);
  EXPECT_NE(rep.gate.summary.find("outputs within 1e-04"), std::string::npos) << rep.gate.summary;
  ASSERT_TRUE(rep.replaced.has_value());
  EXPECT_EQ(*rep.replaced, 1);
  ASSERT_TRUE(rep.gate.prod_pr_auc.has_value());
  // The same ONNX on the same windows (timed kernels may round differently: not bit-equal).
  EXPECT_NEAR(rep.gate.pr_auc, *rep.gate.prod_pr_auc, 1e-3);
  EXPECT_GT(rep.gate.pr_auc, 2.0 * double(positives_) / double(windows_));  // and it does rank
  EXPECT_EQ(rep.gate.windows, windows_);

  ASSERT_EQ(swaps_.size(), 1u);
  EXPECT_EQ(swaps_[0].version, 3);
  EXPECT_EQ(swaps_[0].stage, Stage::kProd);
  ASSERT_TRUE(swaps_[0].engine);
  // The engine handed over serves: one window in, one probability out.
  auto d = load_eval_dataset((dir_ / "data").string());
  ASSERT_TRUE(d.is_ok());
  auto p = score_windows(*swaps_[0].engine, d.value(), {0, 1}, 2, "swapped");
  ASSERT_TRUE(p.is_ok()) << p.status().to_string();
  EXPECT_GE(p.value()[0], 0.0f);
  EXPECT_LE(p.value()[0], 1.0f);

  EXPECT_EQ(reg_->prod("m")->version, 3);
  EXPECT_EQ(reg_->find("m", 1)->stage, Stage::kRetired);
  auto again = ModelRegistry::open((dir_ / "registry.json").string());
  ASSERT_TRUE(again.is_ok());
  const auto v3 = again.value()->find("m", 3);
  ASSERT_EQ(v3->history.size(), 1u);
  EXPECT_EQ(v3->history[0].replaced, std::optional<int>(1));
  EXPECT_EQ(v3->history[0].by, "test");
  EXPECT_TRUE(v3->history[0].gate["pr_auc"].is_number());
}

TEST_F(PromotionGateTest, ACorruptPlanOrAPlanThatIsNotItsOnnxIsRefused) {
  {
    std::ofstream f(dir_ / "garbage.plan", std::ios::binary);
    for (int i = 0; i < 4096; ++i) f.put(char((i * 131) & 0xff));
  }
  // A valid plan of the wrong model: the constant model, under v6's name.
  engine::BuildOptions bo;
  bo.time_tactics = false;
  engine::OptimizationProfile prof;
  prof.inputs["x"] = engine::ShapeRange{{1, 60, 20}, {256, 60, 20}, {256, 60, 20}};
  bo.profiles.push_back(prof);
  auto wrong = engine::build_file((dir_ / "constant.onnx").string(), bo);
  ASSERT_TRUE(wrong.is_ok()) << wrong.status().to_string();
  std::ofstream(dir_ / "wrong.plan", std::ios::binary)
      .write(reinterpret_cast<const char*>(wrong.value().data()), std::streamsize(wrong.value().size()));
  write_registry(", " + entry(5, "candidate", "default.onnx", "garbage.plan") + ", " +
                 entry(6, "candidate", "default.onnx", "wrong.plan"));
  const std::string before = slurp(dir_ / "registry.json");

  auto bad = reg_->promote("m", 5, Stage::kProd, options());
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("refused: loading plan " + (dir_ / "garbage.plan").string()), std::string::npos)
      << bad.status().message();
  auto mismatch = reg_->promote("m", 6, Stage::kShadow, options());
  ASSERT_FALSE(mismatch.is_ok());
  EXPECT_NE(mismatch.status().message().find("outputs differ from its ONNX"), std::string::npos)
      << mismatch.status().message();
  EXPECT_NE(mismatch.status().message().find("tolerance 1e-04"), std::string::npos) << mismatch.status().message();

  EXPECT_TRUE(swaps_.empty());
  EXPECT_EQ(reg_->prod("m")->version, 1);
  EXPECT_FALSE(reg_->shadow("m").has_value());
  EXPECT_EQ(slurp(dir_ / "registry.json"), before);
}

TEST_F(PromotionGateTest, RollbackAfterTwoPromotionsWalksBackOneProdAtATime) {
  write_registry();
  ASSERT_TRUE(reg_->promote("m", 3, Stage::kProd, options()).is_ok());
  ASSERT_TRUE(reg_->promote("m", 4, Stage::kProd, options()).is_ok());
  EXPECT_EQ(reg_->prod("m")->version, 4);

  auto back = reg_->rollback("m", options());
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back.value().version.version, 3);
  EXPECT_EQ(back.value().replaced, std::optional<int>(4));
  EXPECT_FALSE(back.value().gate.prod_pr_auc.has_value());  // no accuracy gate on the way back
  EXPECT_EQ(reg_->prod("m")->version, 3);
  EXPECT_EQ(reg_->find("m", 4)->stage, Stage::kRetired);

  ASSERT_TRUE(reg_->rollback("m", options()).is_ok());
  EXPECT_EQ(reg_->prod("m")->version, 1);
  auto none = reg_->rollback("m", options());
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_NE(none.status().message().find("m v1 did not replace an earlier prod"), std::string::npos)
      << none.status().message();

  // Two promotions and two rollbacks: four swaps, each with the engine of the version it names.
  ASSERT_EQ(swaps_.size(), 4u);
  EXPECT_EQ(swaps_[2].version, 3);
  EXPECT_EQ(swaps_[3].version, 1);
  for (const auto& s : swaps_) EXPECT_TRUE(s.engine);
}

int run_models_cli(std::vector<std::string> args, std::string* out, std::string* err) {
  CLI::App app;
  ts::ModelsCommand cmd(app);
  args.insert(args.begin(), "ticksentry");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  app.parse(int(argv.size()), argv.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int rc = cmd.run().value_or(-1);
  *out = ::testing::internal::GetCapturedStdout();
  *err = ::testing::internal::GetCapturedStderr();
  return rc;
}

TEST_F(PromotionGateTest, CliListsRefusesWithOneLineAndPromotes) {
  write_registry();
  const std::string reg = (dir_ / "registry.json").string(), data = (dir_ / "data").string();
  std::string out, err;
  ASSERT_EQ(run_models_cli({"models", "--registry", reg}, &out, &err), 0) << err;
  EXPECT_NE(out.find("prod"), std::string::npos) << out;
  EXPECT_NE(out.find("candidate"), std::string::npos) << out;

  EXPECT_EQ(run_models_cli({"models", "promote", "m", "2", "--data", data, "--registry", reg}, &out, &err), 2);
  EXPECT_NE(err.find("ticksentry models: promoting m v2 to prod: refused: PR-AUC"), std::string::npos) << err;
  EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 1) << err;

  EXPECT_EQ(
      run_models_cli({"models", "promote", "m", "3", "--stage", "staging", "--data", data, "--registry", reg}, &out, &err),
      0)
      << err;
  EXPECT_NE(out.find("promoted m v3 to staging"), std::string::npos) << out;
  EXPECT_EQ(
      run_models_cli({"models", "promote", "m", "3", "--stage", "live", "--data", data, "--registry", reg}, &out, &err), 2);
  EXPECT_NE(err.find("--stage must be prod, staging or shadow"), std::string::npos) << err;
  EXPECT_EQ(run_models_cli({"models", "rollback", "m", "--data", data, "--registry", reg}, &out, &err), 2);
  EXPECT_NE(err.find("nothing to roll back to"), std::string::npos) << err;
  EXPECT_EQ(run_models_cli({"models", "set-stage", "m", "4", "shadow", "--registry", reg}, &out, &err), 0) << err;
  auto r = ModelRegistry::open(reg);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r.value()->find("m", 3)->stage, Stage::kStaging);
  EXPECT_EQ(r.value()->shadow("m")->version, 4);
  EXPECT_EQ(r.value()->prod("m")->version, 1);
}

}  // namespace
}  // namespace ts::serve
