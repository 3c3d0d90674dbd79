#include "serve/model_registry.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

namespace ts::serve {

namespace {

namespace fs = std::filesystem;
constexpr int kFormatVersion = 2;  // 1: before stages (candidates only); read as well

std::string label(const std::string& name, int version) { return name + " v" + std::to_string(version); }

struct RegistryFile {
  nlohmann::ordered_json top;
  std::vector<ModelVersion> versions;
};

Result<RegistryFile> read_registry(const std::string& path) {
  RegistryFile r;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    r.top = {{"format_version", kFormatVersion}};
    return r;
  }
  std::ifstream f(path);
  if (!f) return Status(StatusCode::kIoError, path + ": cannot be read");
  try {
    r.top = nlohmann::ordered_json::parse(f);
  } catch (const std::exception& e) {
    return Status(StatusCode::kParseError, path + ": not valid JSON (" + e.what() + ")");
  }
  if (!r.top.is_object() || !r.top.contains("models") || !r.top["models"].is_array()) {
    return Status(StatusCode::kParseError, path + ": expected an object with a \"models\" list");
  }
  const auto fv = r.top.find("format_version");
  if (fv == r.top.end() || !fv->is_number_integer() || (fv->get<int>() != 1 && fv->get<int>() != 2)) {
    return Status(StatusCode::kUnsupported, path + ": format_version " + (fv == r.top.end() ? std::string("missing") : fv->dump()) +
                                                ", this build reads 1 and 2");
  }
  std::set<std::pair<std::string, int>> seen;
  std::map<std::pair<std::string, Stage>, int> single;  // (name, prod|shadow) → version
  const auto& models = r.top["models"];
  for (size_t i = 0; i < models.size(); ++i) {
    auto v = model_version_from_json(models[i], path + ": models[" + std::to_string(i) + "]");
    if (!v) return v.status();
    ModelVersion& m = v.value();
    if (!seen.insert({m.name, m.version}).second) {
      return Status(StatusCode::kParseError, path + ": " + label(m.name, m.version) + " is listed twice");
    }
    if (m.stage == Stage::kProd || m.stage == Stage::kShadow) {
      auto [it, fresh] = single.try_emplace({m.name, m.stage}, m.version);
      if (!fresh) {
        return Status(StatusCode::kParseError, path + ": " + m.name + " has two " + stage_name(m.stage) + " versions (v" +
                                                   std::to_string(it->second) + " and v" + std::to_string(m.version) + ")");
      }
    }
    r.versions.push_back(std::move(m));
  }
  r.top.erase("models");
  return r;
}

std::string serialize(const nlohmann::ordered_json& top, const std::vector<ModelVersion>& versions) {
  nlohmann::ordered_json j = top;
  j["format_version"] = kFormatVersion;
  j["models"] = nlohmann::ordered_json::array();
  for (const ModelVersion& v : versions) j["models"].push_back(model_version_to_json(v));
  return j.dump(1, ' ', /*ensure_ascii=*/true) + "\n";
}

Status io_error(const std::string& what, const std::string& path) {
  return Status(StatusCode::kIoError, what + " " + path + ": " + std::strerror(errno));
}

// Writes `text` to `tmp` and syncs it to disk.
Status write_synced(const std::string& tmp, const std::string& text) {
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_error("creating", tmp);
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      Status st = io_error("writing", tmp);
      ::close(fd);
      ::unlink(tmp.c_str());
      return st;
    }
    done += size_t(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    Status st = io_error("syncing", tmp);
    ::unlink(tmp.c_str());
    return st;
  }
  return Status::ok();
}

ModelVersion* find_in(std::vector<ModelVersion>& vs, const std::string& name, int version) {
  for (auto& v : vs) {
    if (v.name == name && v.version == version) return &v;
  }
  return nullptr;
}

ModelVersion* in_stage(std::vector<ModelVersion>& vs, const std::string& name, Stage s) {
  for (auto& v : vs) {
    if (v.name == name && v.stage == s) return &v;
  }
  return nullptr;
}

void move_to(ModelVersion& v, Stage s, const std::string& by, const std::string& why, std::optional<int> replaced = {},
             bool rollback = false, nlohmann::ordered_json gate = nullptr) {
  v.history.push_back(StageChange{s, v.stage, registry_now_utc(), by, why, replaced, rollback, std::move(gate)});
  v.stage = s;
}

// The version the current prod replaced when it was promoted (its latest promotion that was not
// itself a rollback): rolling back twice walks two steps back, not back and forth.
std::optional<int> previous_prod(const ModelVersion& prod) {
  for (auto it = prod.history.rbegin(); it != prod.history.rend(); ++it) {
    if (it->stage == Stage::kProd && !it->rollback) return it->replaced;
  }
  return std::nullopt;
}

}  // namespace

Result<std::unique_ptr<ModelRegistry>> ModelRegistry::open(const std::string& path) {
  std::unique_ptr<ModelRegistry> r(new ModelRegistry(path));
  if (Status st = r->reload_locked(); !st.is_ok()) return st;
  return r;
}

Status ModelRegistry::reload_locked() {
  auto f = read_registry(path_);
  if (!f) return f.status();
  std::lock_guard lock(state_mu_);
  top_ = std::move(f.value().top);
  versions_ = std::move(f.value().versions);
  return Status::ok();
}

std::string ModelRegistry::resolve(const std::string& file) const {
  const fs::path p(file);
  if (p.is_absolute()) return file;
  return (fs::path(path_).parent_path() / p).lexically_normal().string();
}

std::vector<ModelVersion> ModelRegistry::list() const {
  std::lock_guard lock(state_mu_);
  return versions_;
}

std::optional<ModelVersion> ModelRegistry::find(const std::string& name, int version) const {
  std::lock_guard lock(state_mu_);
  for (const auto& v : versions_) {
    if (v.name == name && v.version == version) return v;
  }
  return std::nullopt;
}

std::optional<ModelVersion> ModelRegistry::prod(const std::string& name) const {
  std::lock_guard lock(state_mu_);
  for (const auto& v : versions_) {
    if (v.name == name && v.stage == Stage::kProd) return v;
  }
  return std::nullopt;
}

std::optional<ModelVersion> ModelRegistry::shadow(const std::string& name) const {
  std::lock_guard lock(state_mu_);
  for (const auto& v : versions_) {
    if (v.name == name && v.stage == Stage::kShadow) return v;
  }
  return std::nullopt;
}

void ModelRegistry::set_swap_handler(SwapHandler handler) {
  std::lock_guard lock(state_mu_);
  handler_ = std::move(handler);
}

Result<PromotionReport> ModelRegistry::promote(const std::string& name, int version, Stage stage, const PromotionOptions& options) {
  auto r = change_stage(name, version, stage, options, /*rollback=*/false);
  if (!r) return r.status().with_context("promoting " + label(name, version) + " to " + stage_name(stage));
  return r;
}

Result<PromotionReport> ModelRegistry::rollback(const std::string& name, const PromotionOptions& options) {
  auto r = change_stage(name, 0, Stage::kProd, options, /*rollback=*/true);
  if (!r) return r.status().with_context("rolling back " + name);
  return r;
}

Result<PromotionReport> ModelRegistry::change_stage(const std::string& name, int version, Stage stage,
                                                    const PromotionOptions& o, bool rollback) {
  if (stage != Stage::kProd && stage != Stage::kShadow && stage != Stage::kStaging) {
    return Status(StatusCode::kInvalidArgument, "promote goes to prod, shadow or staging; use set_stage for " +
                                                    std::string(stage_name(stage)));
  }
  std::lock_guard change(change_mu_);
  TS_RETURN_IF_ERROR(reload_locked());
  std::vector<ModelVersion> next = list();
  const std::string by = o.by.empty() ? "unknown" : o.by;
  const std::string why = o.why.empty() ? (rollback ? "rollback" : "promote") : o.why;

  ModelVersion* current = in_stage(next, name, stage);  // the version leaving this stage
  if (rollback) {
    if (!current) return Status(StatusCode::kNotFound, "no prod version of " + name + " in " + path_);
    const std::optional<int> prev = previous_prod(*current);
    if (!prev) return Status(StatusCode::kNotFound, label(name, current->version) + " did not replace an earlier prod: nothing to roll back to");
    version = *prev;
  }
  ModelVersion* target = find_in(next, name, version);
  if (!target) return Status(StatusCode::kNotFound, label(name, version) + " is not in " + path_);
  if (target == current) return Status(StatusCode::kUnsupported, label(name, version) + " is already " + stage_name(stage));
  if (target->stage == Stage::kProd) {
    return Status(StatusCode::kUnsupported, label(name, version) + " is prod: promote another version or roll back first");
  }

  GateModel cand{label(name, version), resolve(target->onnx), ""};
  if (auto p = target->plans.find(o.gate.backend); p != target->plans.end()) cand.plan_path = resolve(p->second);
  std::optional<GateModel> prod_model;
  GateOptions gate_opts = o.gate;
  gate_opts.check_accuracy = stage == Stage::kProd && !rollback;
  if (gate_opts.check_accuracy && current) prod_model = GateModel{label(name, current->version), resolve(current->onnx), ""};
  auto gate = run_promotion_gate(cand, prod_model, gate_opts);
  if (!gate) return gate.status();

  PromotionReport report;
  report.gate = gate.value().report;
  if (current) {
    report.replaced = current->version;
    move_to(*current, Stage::kRetired, by,
            (rollback ? "rolled back to v" : "replaced by v") + std::to_string(version) + ": " + why);
  }
  move_to(*target, stage, by, why, stage == Stage::kProd ? report.replaced : std::nullopt, rollback, report.gate.to_json());
  report.version = *target;
  const bool swaps = stage == Stage::kProd || stage == Stage::kShadow;
  TS_RETURN_IF_ERROR(write_and_swap(next, swaps ? target : nullptr, gate.value().engine, &report.swapped));
  return report;
}

Status ModelRegistry::set_stage(const std::string& name, int version, Stage stage, const std::string& by, const std::string& why) {
  const std::string ctx = "setting " + label(name, version) + " to " + stage_name(stage);
  if (stage == Stage::kProd) {
    return Status(StatusCode::kInvalidArgument, ctx + ": prod is entered through promote (the gate) or rollback");
  }
  std::lock_guard change(change_mu_);
  if (Status st = reload_locked(); !st.is_ok()) return st.with_context(ctx);
  std::vector<ModelVersion> next = list();
  ModelVersion* target = find_in(next, name, version);
  if (!target) return Status(StatusCode::kNotFound, ctx + ": " + label(name, version) + " is not in " + path_);
  if (target->stage == Stage::kProd) {
    return Status(StatusCode::kInvalidArgument, ctx + ": it is prod; promote another version or roll back first");
  }
  if (target->stage == stage) return Status(StatusCode::kInvalidArgument, ctx + ": it is already " + stage_name(stage));
  if (stage == Stage::kShadow) {
    if (ModelVersion* old = in_stage(next, name, Stage::kShadow)) {
      move_to(*old, Stage::kRetired, by.empty() ? "unknown" : by, "replaced as shadow by v" + std::to_string(version));
    }
  }
  move_to(*target, stage, by.empty() ? "unknown" : by, why.empty() ? "set_stage" : why);
  bool swapped = false;
  if (Status st = write_and_swap(next, nullptr, nullptr, &swapped); !st.is_ok()) return st.with_context(ctx);
  return Status::ok();
}

Status ModelRegistry::write_and_swap(const std::vector<ModelVersion>& next, const ModelVersion* swap_version,
                                     std::shared_ptr<engine::Engine> engine, bool* swapped) {
  nlohmann::ordered_json top;
  SwapHandler handler;
  {
    std::lock_guard lock(state_mu_);
    top = top_;
    handler = handler_;
  }
  const std::string tmp = path_ + ".tmp." + std::to_string(::getpid());
  TS_RETURN_IF_ERROR(write_synced(tmp, serialize(top, next)));
  if (swap_version && handler) {
    if (Status st = handler(*swap_version, std::move(engine)); !st.is_ok()) {
      ::unlink(tmp.c_str());
      return st.with_context("the swap handler refused the new engine (nothing changed)");
    }
    *swapped = true;
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    Status st = io_error("renaming " + tmp + " to", path_);
    ::unlink(tmp.c_str());
    return *swapped ? st.with_context("the new engine is live but the registry file was not updated") : st;
  }
  std::lock_guard lock(state_mu_);
  versions_ = next;
  top_ = std::move(top);
  return Status::ok();
}

}  // namespace ts::serve
