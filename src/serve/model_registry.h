#pragma once
// ModelRegistry: the versions of each model and their stages, kept in models/registry.json
// (docs/models-registry.md), and the stage changes that serving depends on:
//   promote(name, v, kProd)   gate (serve/promotion_gate.h: outputs and PR-AUC against prod),
//                             then the swap handler, then the file; the previous prod → retired
//   promote(name, v, kShadow) output check, then the swap handler; the previous shadow → retired
//   promote(name, v, kStaging) output check; no handler
//   rollback(name)            the prod that the current prod replaced, back to prod (output
//                             check, no PR-AUC gate), through the swap handler
//   set_stage(name, v, s)     records shadow, staging, candidate or retired: no check, no handler
// Every change appends a StageChange (who, when, why, the gate's numbers) to the version's
// history; rollback walks those records, so it knows the previous prod after any number of
// promotions.
//
// Nothing changes unless everything succeeds: a refused gate, a handler error or a failed write
// leave the file, the in-memory state and the live engine as they were. The file is written to
// a temporary name, synced and renamed over the old one, so a crash leaves the old or the new
// file, never half of one. The new file is written before the handler is called and renamed
// after it succeeds.
//
// Threading: every method may be called from any thread. Changes are serialized (one promotion
// at a time; the gate runs for seconds, and readers are not blocked meanwhile). The swap handler
// runs on the caller's thread with no registry lock held other than the change lock: it may call
// list()/prod()/shadow(), not promote().
// Other processes: each change re-reads the file first, so changes made by another process
// between two of ours are kept; two processes changing it at the same instant are not
// coordinated (the admin API, one process, is meant to be the writer while serving).
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "serve/model_version.h"
#include "serve/promotion_gate.h"

namespace ts::serve {

struct PromotionOptions {
  GateOptions gate;        // data set, split, backend (default cpu), batch, warm-up runs
  std::string by;          // recorded in the history; "" → "unknown"
  std::string why;         // recorded in the history; "" → "promote" / "rollback"
};

struct PromotionReport {
  ModelVersion version;          // as recorded after the change (stage, history)
  std::optional<int> replaced;   // the version that left prod (or shadow), if any
  GateReport gate;
  bool swapped = false;          // the swap handler was called and returned ok
};

class ModelRegistry {
 public:
  // Called with the version entering prod or shadow (stage already set) and its checked,
  // warmed-up engine. Return ok to accept; an error aborts the change (nothing is recorded).
  // The handler owns what it keeps of the engine; the registry drops its reference on return.
  using SwapHandler = std::function<Status(const ModelVersion&, std::shared_ptr<engine::Engine>)>;

  // Reads `path`; a missing file is an empty registry (created by the first change). A file that
  // is not JSON, has an unknown format_version, a malformed entry, the same (name, version) twice
  // or two prod (or two shadow) versions of one name → error naming the file and the entry.
  static Result<std::unique_ptr<ModelRegistry>> open(const std::string& path);

  const std::string& path() const { return path_; }
  // A file named in an entry (onnx, plans), relative to the registry's folder unless absolute.
  std::string resolve(const std::string& file) const;

  std::vector<ModelVersion> list() const;  // in file order
  std::optional<ModelVersion> find(const std::string& name, int version) const;
  std::optional<ModelVersion> prod(const std::string& name) const;
  std::optional<ModelVersion> shadow(const std::string& name) const;

  // Replaces the handler (none = record stages only, as the CLI does).
  void set_swap_handler(SwapHandler handler);

  // stage: kProd, kShadow or kStaging (others: set_stage). A shadow version promoted to prod
  // leaves no shadow (the handler is called once, for prod). Errors: unknown name or version,
  // the version already in that stage, the current prod (it leaves prod only when another
  // version enters), a refused gate (its numbers in the message), a handler error,
  // an I/O error; each prefixed "promoting NAME vN to STAGE: ". Codes: kNotFound (name, version,
  // data set), kUnsupported (a refusal: the gate, already in the stage, the current prod),
  // kInvalidArgument (bad options), kIoError; others from the engine or the handler.
  Result<PromotionReport> promote(const std::string& name, int version, Stage stage, const PromotionOptions& options);
  // Errors: no prod or no earlier prod to return to (kNotFound), the output check
  // (kUnsupported), the handler, I/O.
  Result<PromotionReport> rollback(const std::string& name, const PromotionOptions& options);
  // stage: kShadow, kStaging, kCandidate or kRetired. The current prod cannot leave prod this way.
  Status set_stage(const std::string& name, int version, Stage stage, const std::string& by, const std::string& why);

 private:
  explicit ModelRegistry(std::string path) : path_(std::move(path)) {}
  Status reload_locked();
  Result<PromotionReport> change_stage(const std::string& name, int version, Stage stage, const PromotionOptions& options,
                                       bool rollback);
  Status write_and_swap(const std::vector<ModelVersion>& next, const ModelVersion* swap_version,
                        std::shared_ptr<engine::Engine> engine, bool* swapped);

  const std::string path_;
  std::mutex change_mu_;          // one change at a time (held across the gate)
  mutable std::mutex state_mu_;   // guards the fields below (short sections only)
  std::vector<ModelVersion> versions_;
  nlohmann::ordered_json top_;    // the file's object without "models" (unknown keys kept)
  SwapHandler handler_;
};

}  // namespace ts::serve
