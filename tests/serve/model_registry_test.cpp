// ModelRegistry without the engine: the registry file as models/registry.py writes it read,
// changed and written back with every field kept (and read again by registry.py), corrupt files
// refused with the file and entry named, and the stage rules that need no gate.
#include "serve/model_registry.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "test_data.h"

namespace ts::serve {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  return {std::istreambuf_iterator<char>(f), {}};
}

void write(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

// As models/registry.py (format 1) records two candidates, with fields the C++ side does not model.
const char* kPythonWritten = R"({
 "format_version": 1,
 "models": [
  {"name": "alert-default", "version": 1, "created": "2026-11-30T10:01:11+00:00", "stage": "candidate",
   "onnx": "versions/alert-default-v1.onnx", "sha256": "dc78", "bytes": 60231,
   "metrics": {"pr_auc": 0.0329, "roc_auc": 0.55}, "data": {"path": "build/models-data/lobster", "split": "test"},
   "benchmark": {"batch1": {"p50_us": 540.5}}},
  {"name": "alert-default", "version": 2, "created": "2026-11-30T10:40:00+00:00", "stage": "candidate",
   "onnx": "versions/alert-default-v2.onnx", "sha256": "368f", "metrics": {"pr_auc": 0.1769}}
 ]
})";

class ModelRegistryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::scratch_dir(std::string("model_registry_") + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    path_ = dir_ / "registry.json";
    write(path_, kPythonWritten);
  }
  std::unique_ptr<ModelRegistry> open() {
    auto r = ModelRegistry::open(path_.string());
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    return r.is_ok() ? std::move(r).value() : nullptr;
  }
  fs::path dir_, path_;
};

TEST_F(ModelRegistryTest, ReadsWhatPythonWritesAndWritesWhatPythonReads) {
  auto reg = open();
  ASSERT_TRUE(reg);
  auto all = reg->list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "alert-default");
  EXPECT_EQ(all[1].version, 2);
  EXPECT_EQ(all[1].stage, Stage::kCandidate);
  ASSERT_TRUE(all[1].pr_auc.has_value());
  EXPECT_DOUBLE_EQ(*all[1].pr_auc, 0.1769);
  EXPECT_EQ(reg->resolve(all[0].onnx), (dir_ / "versions" / "alert-default-v1.onnx").string());
  EXPECT_FALSE(reg->prod("alert-default").has_value());

  ASSERT_TRUE(reg->set_stage("alert-default", 1, Stage::kShadow, "alice", "try it on live traffic").is_ok());
  EXPECT_EQ(reg->shadow("alert-default")->version, 1);

  // Reopened from disk: the stage, its history and every field registry.py wrote are there.
  auto again = open();
  ASSERT_TRUE(again);
  const auto v1 = again->find("alert-default", 1);
  ASSERT_TRUE(v1.has_value());
  EXPECT_EQ(v1->stage, Stage::kShadow);
  ASSERT_EQ(v1->history.size(), 1u);
  EXPECT_EQ(v1->history[0].from, Stage::kCandidate);
  EXPECT_EQ(v1->history[0].by, "alice");
  EXPECT_EQ(v1->history[0].why, "try it on live traffic");
  EXPECT_EQ(v1->history[0].at.size(), std::string("2026-11-30T10:01:11+00:00").size()) << v1->history[0].at;
  const auto j = nlohmann::json::parse(slurp(path_));
  EXPECT_EQ(j["format_version"], 2);
  EXPECT_EQ(j["models"][0]["data"]["path"], "build/models-data/lobster");
  EXPECT_EQ(j["models"][0]["benchmark"]["batch1"]["p50_us"], 540.5);
  EXPECT_EQ(j["models"][0]["bytes"], 60231);
  EXPECT_FALSE(fs::exists(path_.string() + ".tmp." + std::to_string(::getpid())));

  // models/registry.py loads the C++ file and sees the new stage.
  const std::string py = "/usr/bin/python3 -c \"import sys; sys.path.insert(0, '" + std::string(TICKSENTRY_SOURCE_DIR) +
                         "/models'); import registry; r = registry.load('" + path_.string() +
                         "'); sys.exit(0 if r['models'][0]['stage'] == 'shadow' and r['format_version'] == 2 else 3)\"";
  EXPECT_EQ(std::system(py.c_str()), 0) << py;
}

TEST_F(ModelRegistryTest, CorruptFilesAreClearErrors) {
  const std::string entry = R"({"name": "m", "version": 1, "stage": "prod", "onnx": "m.onnx"})";
  struct Case {
    std::string text;
    const char* message;
  };
  const Case cases[] = {
      {"{\"format_version\": 2, \"models\": [", "not valid JSON"},
      {"[]", "\"models\" list"},
      {"{\"format_version\": 3, \"models\": []}", "format_version 3"},
      {"{\"format_version\": 2, \"models\": [{\"name\": \"m\", \"stage\": \"prod\", \"onnx\": \"m.onnx\"}]}", "\"version\""},
      {"{\"format_version\": 2, \"models\": [{\"name\": \"m\", \"version\": 1, \"stage\": \"live\", \"onnx\": \"m.onnx\"}]}",
       "\"live\", not one of candidate"},
      {"{\"format_version\": 2, \"models\": [{\"name\": \"m\", \"version\": 1, \"stage\": \"prod\"}]}", "\"onnx\""},
      {"{\"format_version\": 2, \"models\": [" + entry + "," + entry + "]}", "m v1 is listed twice"},
      {"{\"format_version\": 2, \"models\": [" + entry +
           ", {\"name\": \"m\", \"version\": 2, \"stage\": \"prod\", \"onnx\": \"m.onnx\"}]}",
       "two prod versions (v1 and v2)"},
      {"{\"format_version\": 2, \"models\": [{\"name\": \"m\", \"version\": 1, \"stage\": \"prod\", \"onnx\": \"m.onnx\", "
       "\"history\": [{\"stage\": \"prod\"}]}]}",
       "history[0]"},
  };
  for (const Case& c : cases) {
    write(path_, c.text);
    auto r = ModelRegistry::open(path_.string());
    ASSERT_FALSE(r.is_ok()) << c.text;
    EXPECT_NE(r.status().message().find(path_.string()), std::string::npos) << r.status().message();
    EXPECT_NE(r.status().message().find(c.message), std::string::npos) << c.text << "\n" << r.status().message();
  }
  // A missing file is an empty registry, not an error (a fresh install records its first model).
  auto empty = ModelRegistry::open((dir_ / "none.json").string());
  ASSERT_TRUE(empty.is_ok()) << empty.status().to_string();
  EXPECT_TRUE(empty.value()->list().empty());
}

TEST_F(ModelRegistryTest, StageRulesWithoutAGate) {
  auto reg = open();
  ASSERT_TRUE(reg);
  // One shadow per model: a new shadow retires the old one, with the reason recorded.
  ASSERT_TRUE(reg->set_stage("alert-default", 1, Stage::kShadow, "a", "").is_ok());
  ASSERT_TRUE(reg->set_stage("alert-default", 2, Stage::kShadow, "b", "").is_ok());
  EXPECT_EQ(reg->shadow("alert-default")->version, 2);
  EXPECT_EQ(reg->find("alert-default", 1)->stage, Stage::kRetired);
  EXPECT_NE(reg->find("alert-default", 1)->history.back().why.find("replaced as shadow by v2"), std::string::npos);
  ASSERT_TRUE(reg->set_stage("alert-default", 1, Stage::kStaging, "a", "").is_ok());

  const std::string before = slurp(path_);
  // Prod is entered through the gate only; unknown versions and no-op changes are refused.
  Status st = reg->set_stage("alert-default", 1, Stage::kProd, "a", "");
  EXPECT_NE(st.message().find("promote"), std::string::npos) << st.to_string();
  EXPECT_EQ(reg->set_stage("alert-default", 9, Stage::kStaging, "a", "").code(), StatusCode::kNotFound);
  EXPECT_NE(reg->set_stage("alert-default", 1, Stage::kStaging, "a", "").message().find("already staging"), std::string::npos);
  PromotionOptions no_data;
  auto p = reg->promote("alert-default", 1, Stage::kProd, no_data);
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("--data"), std::string::npos) << p.status().message();
  EXPECT_NE(p.status().message().find("promoting alert-default v1 to prod"), std::string::npos) << p.status().message();
  auto c = reg->promote("alert-default", 1, Stage::kCandidate, no_data);
  EXPECT_FALSE(c.is_ok());
  auto rb = reg->rollback("alert-default", no_data);
  ASSERT_FALSE(rb.is_ok());
  EXPECT_NE(rb.status().message().find("no prod version"), std::string::npos) << rb.status().message();
  EXPECT_EQ(slurp(path_), before) << "a refused change must not touch the file";
  EXPECT_EQ(reg->find("alert-default", 1)->stage, Stage::kStaging);
}

TEST_F(ModelRegistryTest, ProdLeavesOnlyWhenAnotherVersionEnters) {
  write(path_, R"({"format_version": 2, "models": [
    {"name": "m", "version": 1, "stage": "prod", "onnx": "m1.onnx"},
    {"name": "m", "version": 2, "stage": "candidate", "onnx": "m2.onnx"}]})");
  auto reg = open();
  ASSERT_TRUE(reg);
  const std::string before = slurp(path_);
  PromotionOptions o;
  o.gate.data_dir = (dir_ / "no-data").string();
  for (Stage s : {Stage::kShadow, Stage::kStaging}) {
    auto p = reg->promote("m", 1, s, o);
    ASSERT_FALSE(p.is_ok());
    EXPECT_NE(p.status().message().find("m v1 is prod: promote another version or roll back first"), std::string::npos)
        << p.status().message();
    EXPECT_NE(reg->set_stage("m", 1, s, "a", "").message().find("it is prod"), std::string::npos);
  }
  EXPECT_NE(reg->set_stage("m", 1, Stage::kRetired, "a", "").message().find("it is prod"), std::string::npos);
  // A data set that is not there: an error naming it, nothing changed.
  auto p = reg->promote("m", 2, Stage::kProd, o);
  ASSERT_FALSE(p.is_ok());
  EXPECT_NE(p.status().message().find("no-data: not a directory"), std::string::npos) << p.status().message();
  EXPECT_EQ(reg->prod("m")->version, 1);
  EXPECT_EQ(slurp(path_), before);
}

}  // namespace
}  // namespace ts::serve
