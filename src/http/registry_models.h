#pragma once
// RegistryModels: the admin API's models served by src/serve's ModelRegistry. Hand it the
// registry the serving path uses (the one with the swap handler), so that a promote from the
// dashboard swaps the engine that scores the alerts:
//     http::RegistryModels models(registry, promotion_options);   // outlives the dashboard
//     dashboard.set_models(&models);                              // before start()
// Mapping: list() → every version, `metrics` = {"pr_auc"} when recorded; promote → stage prod
// (the promotion gate runs with `options.gate`: seconds, on the HTTP thread, refusals come back
// as 409 with the gate's numbers); shadow → stage shadow (output check); rollback → the
// registry's rollback. Versions travel as decimal strings ("2"); anything else is a 400.
// Threading: the registry serializes changes; any thread.
#include "http/admin_api.h"
#include "serve/model_registry.h"

namespace ts::http {

class RegistryModels : public ModelAdmin {
 public:
  RegistryModels(serve::ModelRegistry& registry, serve::PromotionOptions options)
      : registry_(registry), options_(std::move(options)) {}

  std::vector<ModelVersionInfo> list() override;
  Status promote(const std::string& name, const std::string& version) override;
  Status rollback(const std::string& name) override;
  Status shadow(const std::string& name, const std::string& version) override;

 private:
  Status change(const std::string& name, const std::string& version, serve::Stage stage);
  serve::ModelRegistry& registry_;
  const serve::PromotionOptions options_;
};

}  // namespace ts::http
