#include "app/models_command.h"

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "serve/model_registry.h"

namespace ts {

namespace {

int fail(const std::string& msg) {
  std::fprintf(stderr, "ticksentry models: %s\n", msg.c_str());
  return 2;
}

std::string who(const ModelsOptions& o) {
  if (!o.by.empty()) return o.by;
  const char* user = std::getenv("USER");
  return user && *user ? user : "unknown";
}

serve::PromotionOptions promotion_options(const ModelsOptions& o) {
  serve::PromotionOptions p;
  p.gate.data_dir = o.data;
  p.gate.split = o.split;
  p.gate.backend = o.backend;
  p.by = who(o);
  p.why = o.reason;
  return p;
}

int list(const serve::ModelRegistry& reg) {
  const auto versions = reg.list();
  if (versions.empty()) {
    std::printf("no model versions in %s\n", reg.path().c_str());
    return 0;
  }
  std::printf("%-16s %7s %-9s %-25s %7s  %s\n", "name", "version", "stage", "created", "PR-AUC", "last change");
  for (const auto& v : versions) {
    char auc[16] = "-";
    if (v.pr_auc && std::isfinite(*v.pr_auc)) std::snprintf(auc, sizeof auc, "%.4f", *v.pr_auc);
    std::string last;
    if (!v.history.empty()) {
      const auto& c = v.history.back();
      last = std::string(serve::stage_name(c.from)) + " -> " + serve::stage_name(c.stage) + " " + c.at + " by " + c.by +
             (c.why.empty() ? "" : " (" + c.why + ")");
    }
    std::printf("%-16s %7d %-9s %-25s %7s  %s\n", v.name.c_str(), v.version, serve::stage_name(v.stage),
                v.created.empty() ? "-" : v.created.c_str(), auc, last.c_str());
  }
  std::printf("PR-AUC: as recorded by `make model` (its test split); promotion gates on --data's split.\n");
  return 0;
}

void print_report(const char* verb, const serve::PromotionReport& r) {
  std::printf("%s %s v%d to %s%s\n", verb, r.version.name.c_str(), r.version.version, serve::stage_name(r.version.stage),
              r.replaced ? (" (v" + std::to_string(*r.replaced) + " retired)").c_str() : "");
  std::printf("gate: %s\n", r.gate.summary.c_str());
  std::printf("engine: %s, warm-up %.1f ms\n", r.gate.engine_source.c_str(), r.gate.warmup_ms);
}

}  // namespace

ModelsCommand::ModelsCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("models", "model versions and stages: list, promote (gated), rollback");
  cmd_->add_option("--registry", opts_.registry, "the registry file (default models/registry.json)");
  cmd_->require_subcommand(0, 1);

  auto gate_options = [this](CLI::App* c) {
    c->add_option("--data", opts_.data, "held windows: a `ticksentry features --export` directory")->required();
    c->add_option("--split", opts_.split, "split of --data to check on (default validation)");
    c->add_option("--backend", opts_.backend, "engine backend to check (default cpu)");
    c->add_option("--reason", opts_.reason, "why, recorded in the version's history");
    c->add_option("--by", opts_.by, "who, recorded in the history (default $USER)");
    c->fallthrough();  // --registry may follow the subcommand
  };
  promote_ = cmd_->add_subcommand("promote", "check a version (outputs, PR-AUC vs prod) and move it to a stage");
  promote_->add_option("name", opts_.name, "model name, e.g. alert-default")->required();
  promote_->add_option("version", opts_.version, "version number")->required();
  promote_->add_option("--stage", opts_.stage, "prod (default), staging or shadow");
  gate_options(promote_);

  rollback_ = cmd_->add_subcommand("rollback", "return prod to the version the current prod replaced");
  rollback_->add_option("name", opts_.name, "model name")->required();
  gate_options(rollback_);

  set_stage_ = cmd_->add_subcommand("set-stage", "record shadow, staging, candidate or retired (no check)");
  set_stage_->add_option("name", opts_.name, "model name")->required();
  set_stage_->add_option("version", opts_.version, "version number")->required();
  set_stage_->add_option("stage", opts_.stage, "shadow | staging | candidate | retired")->required();
  set_stage_->add_option("--reason", opts_.reason, "why, recorded in the version's history");
  set_stage_->add_option("--by", opts_.by, "who, recorded in the history (default $USER)");
  set_stage_->fallthrough();
}

std::optional<int> ModelsCommand::run() const {
  if (!cmd_->parsed()) return std::nullopt;
  auto reg = serve::ModelRegistry::open(opts_.registry);
  if (!reg) return fail(reg.status().message());
  serve::ModelRegistry& r = *reg.value();
  if (promote_->parsed()) {
    const auto stage = serve::stage_from_name(opts_.stage);
    if (!stage || (*stage != serve::Stage::kProd && *stage != serve::Stage::kStaging && *stage != serve::Stage::kShadow)) {
      return fail("--stage must be prod, staging or shadow (got \"" + opts_.stage + "\")");
    }
    auto rep = r.promote(opts_.name, opts_.version, *stage, promotion_options(opts_));
    if (!rep) return fail(rep.status().message());
    print_report("promoted", rep.value());
    return 0;
  }
  if (rollback_->parsed()) {
    auto rep = r.rollback(opts_.name, promotion_options(opts_));
    if (!rep) return fail(rep.status().message());
    print_report("rolled back", rep.value());
    return 0;
  }
  if (set_stage_->parsed()) {
    const auto stage = serve::stage_from_name(opts_.stage);
    if (!stage) return fail("stage must be shadow, staging, candidate or retired (got \"" + opts_.stage + "\")");
    if (Status st = r.set_stage(opts_.name, opts_.version, *stage, who(opts_), opts_.reason); !st.is_ok()) return fail(st.message());
    std::printf("%s v%d is now %s\n", opts_.name.c_str(), opts_.version, serve::stage_name(*stage));
    return 0;
  }
  return list(r);
}

}  // namespace ts
