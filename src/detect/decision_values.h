#pragma once
// The decision values of each served model version, so that a hot swap changes the threshold
// with the model (docs/labels.md "Operating point": serving decides with exactly the threshold a
// version was evaluated at, after a promotion or rollback as at start).
//   DecisionValues    the control plane (the registry's swap handler) publishes the values of
//                     the version entering prod (its operating point applied to [model]) before
//                     the engine swaps.
//   DecisionFollower  one per shard: before a serving result is decided, follow() replaces the
//                     shard's ModelDecision when the result's version is the latest published one
//                     and not the one the decision was made for. The new decision starts armed
//                     and out of cooldown, as at start. Results of the old engine still in
//                     flight are decided with whatever the shard holds (at most a few).
// Threading: DecisionValues from any thread (a mutex; the shard reads it only when a result's
// version differs from its decision's and something was published since it last looked).
// DecisionFollower belongs to one shard thread.
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>

#include "detect/model_alert.h"

namespace ts {

class DecisionValues {
 public:
  void publish(uint32_t version, const ModelAlertOptions& values);
  struct Published {
    uint32_t version = 0;
    ModelAlertOptions values;
  };
  // The latest version published and its values (nullopt before the first publish).
  std::optional<Published> latest() const;
  // Counts publishes: a follower re-reads only when it changed.
  uint64_t generation() const { return generation_.load(std::memory_order_acquire); }

 private:
  mutable std::mutex mu_;
  std::optional<Published> latest_;
  std::atomic<uint64_t> generation_{0};
};

class DecisionFollower {
 public:
  // `version`: the version the shard's decision was made for (the serving version at start).
  DecisionFollower(std::shared_ptr<const DecisionValues> values, uint32_t version)
      : values_(std::move(values)), version_(version) {}
  // Returns true when `decision` was replaced by one for `version`.
  bool follow(uint32_t version, std::unique_ptr<ModelDecision>& decision, const SymbolTable& symbols);
  uint32_t version() const { return version_; }

 private:
  std::shared_ptr<const DecisionValues> values_;
  uint32_t version_;
  uint64_t seen_generation_ = 0;
  uint32_t unmatched_version_ = 0;  // a result version with nothing published for it
};

}  // namespace ts
