#include "app/replay_failure_command.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/model_wiring.h"
#include "audit/failure_store.h"

namespace ts {

ReplayFailureCommand::ReplayFailureCommand(CLI::App& app) {
  cmd_ = app.add_subcommand("replay-failure", "re-run a failed inference batch recorded by model serving");
  cmd_->add_option("id", id_, "failure case id (as logged and listed by --list)");
  cmd_->add_flag("--list", list_, "list the recorded failure cases");
  cmd_->add_option("--audit-db", audit_db_, "audit database holding the failure cases");
  cmd_->add_option("--model", model_, "model file to run it on (default: the one it failed on)");
  cmd_->add_option("--backend", backend_, "cpu | cuda (default cpu)");
}

std::optional<int> ReplayFailureCommand::run() {
  if (!*cmd_) return std::nullopt;
  if (!std::filesystem::exists(audit_db_)) {
    std::fprintf(stderr, "ticksentry: %s: no such audit database\n", audit_db_.c_str());
    return 2;
  }
  auto store = FailureStore::open(audit_db_);
  if (!store) {
    std::fprintf(stderr, "ticksentry: %s\n", store.status().to_string().c_str());
    return 2;
  }
  if (list_) {
    auto rows = store.value()->list(100);
    if (!rows) {
      std::fprintf(stderr, "ticksentry: %s\n", rows.status().to_string().c_str());
      return 2;
    }
    std::printf("%6s  %-20s %7s  %-8s %5s  %-9s %s\n", "id", "model", "version", "backend", "batch", "recovered", "error");
    for (auto& r : rows.value()) {
      std::printf("%6lld  %-20s %7u  %-8s %5d  %-9s %s\n", (long long)r.id, r.model.c_str(), r.version,
                  r.backend.c_str(), r.batch, r.recovered ? "yes" : "no", r.error.c_str());
    }
    return 0;
  }
  auto rec = store.value()->load(id_);
  if (!rec) {
    std::fprintf(stderr, "ticksentry: %s\n", rec.status().to_string().c_str());
    return 2;
  }
  const FailureRecord& r = rec.value();
  const std::string path = !model_.empty() ? model_ : r.model_path;
  std::printf("failure %lld: %s v%u on %s, batch %d × %d × %d, %s\n  error then: %s\n", (long long)r.id,
              r.model.c_str(), r.version, r.backend.c_str(), r.batch, r.rows, r.features,
              r.recovered ? "recovered by the CPU retry" : "not recovered", r.error.c_str());
  auto eng = open_model_engine(path, backend_, "auto", r.batch, r.rows);
  if (!eng) {
    std::fprintf(stderr, "ticksentry: %s\n", eng.status().to_string().c_str());
    return 2;
  }
  auto ctx = eng.value().engine->create_context();
  if (!ctx) {
    std::fprintf(stderr, "ticksentry: %s\n", ctx.status().to_string().c_str());
    return 2;
  }
  std::vector<float> in = r.input, out(size_t(r.batch) * 64);
  engine::TensorView iv{engine::DType::kF32, {r.batch, r.rows, r.features}, in.data()};
  engine::TensorView ov{engine::DType::kF32, {r.batch, 1}, out.data()};
  ov.capacity_bytes = out.size() * sizeof(float);
  Status st = ctx.value()->execute({&iv, 1}, {&ov, 1});
  if (!st.is_ok()) {
    std::printf("  now, on %s (%s): fails again: %s\n", backend_.c_str(), path.c_str(), st.to_string().c_str());
    return 1;
  }
  std::printf("  now, on %s (%s): runs; probabilities:\n", backend_.c_str(), path.c_str());
  // The probability column the model's manifest names (serve/model_server.h reads the same).
  const size_t columns = ov.dims.size() == 2 ? size_t(ov.dims[1]) : 1;
  const size_t column = size_t(std::max<int64_t>(0, eng.value().probability_column));
  for (int i = 0; i < r.batch; ++i) std::printf("    row %d: %.6f\n", i, out[size_t(i) * columns + column]);
  return 0;
}

}  // namespace ts
