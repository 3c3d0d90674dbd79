// The dashboard's models on src/serve's ModelRegistry: the shipped models/registry.json listed
// over HTTP as the registry records it; malformed and unknown versions refused with 4xx.
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "http/registry_models.h"
#include "http_test_util.h"

namespace ts::testing {
namespace {

using nlohmann::json;

TEST(RegistryModels, ShippedRegistryListedAndBadVersionsRefused) {
  const auto dir = scratch_dir("http_registry_models");
  std::filesystem::copy_file(std::filesystem::path(TICKSENTRY_SOURCE_DIR) / "models" / "registry.json", dir / "registry.json");
  auto registry = std::move(serve::ModelRegistry::open((dir / "registry.json").string())).value();
  http::RegistryModels models(*registry, serve::PromotionOptions{});
  TestServer s("http_registry_models_srv");
  s.server->set_models(&models);
  auto c = s.client();

  json list = json::parse(c.Get("/api/models")->body)["models"];
  const auto recorded = registry->list();
  ASSERT_EQ(list.size(), recorded.size());
  ASSERT_FALSE(recorded.empty());
  int prod = 0;
  for (const auto& m : list) {
    EXPECT_FALSE(m["name"].get<std::string>().empty());
    EXPECT_GT(m["created_ms"].get<int64_t>(), 1'700'000'000'000) << m.dump();
    prod += m["stage"] == "prod";
  }
  EXPECT_LE(prod, 1) << "at most one prod version per name";
  const std::string name = recorded[0].name;

  auto r = c.Post(("/api/models/" + name + "/promote").c_str(), R"({"version":"two"})", "application/json");
  EXPECT_EQ(r->status, 400) << r->body;
  r = c.Post(("/api/models/" + name + "/promote").c_str(), R"({"version":"999"})", "application/json");
  EXPECT_EQ(r->status, 404) << r->body;
  EXPECT_NE(json::parse(r->body)["message"].get<std::string>().find("999"), std::string::npos);
  r = c.Post("/api/models/no-such-model/rollback", "", "application/json");
  EXPECT_EQ(r->status, 404) << r->body;
}

}  // namespace
}  // namespace ts::testing
