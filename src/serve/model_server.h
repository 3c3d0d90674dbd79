#pragma once
// ModelServer: the live model behind the pipeline's model alerts.
//
//   shards ──ShardPort rings──► scheduler thread (Batcher: latest-wins, deadlines, bounded)
//                                   │ a batch (requests only; windows stay in the shards' slots)
//                                   ▼
//                               worker threads, one ExecutionContext (CUDA stream) each; each
//                                   │ gathers its batch's windows into its (pinned) input buffer
//                                   │ probabilities, per shard, on the worker's own result ring
//                                   ▼
//                               shards (decision: threshold, hysteresis, cooldown → alert)
//
// Hot swap: swap() builds the new version's contexts and warms them up on the caller's thread,
// then publishes it with one atomic store. A worker picks the model up per batch (holding a
// shared_ptr for the batch), so batches in flight finish on the engine they started on, and the
// old engine is freed when its last batch is done. No request fails because of a swap.
//
// Failures: a batch whose run fails is reported to the failure handler (inputs, version, error)
// and retried once on the CPU fallback engine; its requests fail (ResultCode::kFailed) only if
// that fails too. After `switch_to_cpu_after` consecutive failed batches the server serves from
// the CPU fallback engine (logged, counted in backend_switches()).
//
// Threading: start(), swap() and stop() from control threads (not shards, not workers); port(i)
// from shard i's thread; counters from any thread.
#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/latency_histogram.h"
#include "core/metrics.h"
#include "core/status.h"
#include "engine/engine.h"
#include "serve/batcher.h"
#include "serve/serve_options.h"
#include "serve/shard_port.h"

namespace ts::serve {

struct ModelHandle {
  std::string name;
  uint32_t version = 0;
  std::shared_ptr<engine::Engine> engine;
  // Which column of the engine's [batch, C] output is the probability (the plan's model
  // manifest, engine/plan_manifest.h); -1 = not declared: the output must then hold one value
  // per row ([batch] or [batch, 1]) and that value is read.
  int64_t probability_column = -1;
};

struct SwapReport {
  int64_t prepare_ns = 0;   // contexts created and warmed up
  int64_t contexts_ns = 0;  //   of which creating the contexts (one per worker, side by side)
  int64_t warm_up_ns = 0;   //   and warming them up (every bucket; graphs captured on cuda)
  int64_t total_ns = 0;     // swap() call to the new version published
  int64_t retired_ns = 0;   // published to the old version's contexts released (off the workers)
};

// A failed batch, as captured for the failure store (src/audit/failure_store.h).
struct FailureCase {
  std::string model;
  uint32_t version = 0;
  std::string backend;
  std::string error;
  int batch = 0, rows = 0, features = 0;
  std::vector<float> input;   // batch × rows × features
  bool recovered = false;     // the CPU retry succeeded
};
using FailureHandler = std::function<void(const FailureCase&)>;

class ModelServer {
 public:
  ModelServer(ServeOptions opts, int shards);
  ~ModelServer();  // stop()
  ModelServer(const ModelServer&) = delete;
  ModelServer& operator=(const ModelServer&) = delete;

  // Before start(): called on a worker thread for every failed batch (several workers may call it
  // at once: it must be thread-safe); must not block for long.
  void set_failure_handler(FailureHandler h) { on_failure_ = std::move(h); }
  // Before start(): per-batch Prometheus metrics — ticksentry_model_batch_size,
  // ticksentry_model_compute_seconds, ticksentry_model_queue_wait_seconds (the oldest request of
  // each batch), ticksentry_model_gather_seconds (windows copied into staging) histograms;
  // ticksentry_model_batches_total, _inferences_total,
  // _failed_batches_total, _fallback_batches_total, _backend_switches_total,
  // _dropped_total{reason} (superseded, deadline, queue_full) counters. `m` must outlive the server.
  void set_metrics(Metrics* m) { metrics_ = m; }

  // Checks the model's bindings (one float input [batch, T, F] with F = ShardPort features, one
  // float output [batch] or [batch, C] with C fixed, its probability in column
  // prod.probability_column < C — a C > 1 output needs the column declared), creates and warms
  // up its contexts (and the CPU fallback's, which may be null or the same engine; it reads the
  // same column), and starts the threads. The warm-up batch's probability column must hold
  // probabilities (finite, within [0, 1]): a model that outputs logits is refused here with the
  // range it gave (as are swap() and set_shadow()). The other columns are not read.
  Status start(ModelHandle prod, std::shared_ptr<engine::Engine> cpu_fallback, int features);

  ShardPort& port(int shard) { return *ports_[size_t(shard)]; }
  const ShardPort& port(int shard) const { return *ports_[size_t(shard)]; }
  int shards() const { return int(ports_.size()); }

  // Replaces the serving version (see the header comment). An engine whose bindings do not fit
  // is refused with the reason and the current version keeps serving. Returns once the old
  // version's batches in flight are done and its contexts are released (on this thread).
  Result<SwapReport> swap(ModelHandle next);

  // Shadow version: runs on the same batches after the serving version (its results come back
  // flagged shadow, after the serving version's, and carry no window); its alerts are recorded,
  // not sent. A null engine removes it. Refused like swap() when it does not fit.
  Status set_shadow(ModelHandle shadow);
  std::string shadow_name() const;
  uint32_t shadow_version() const;  // 0 = none

  // Idempotent. Runs nothing new: waiting requests are answered kStopped, batches in flight
  // finish; then the threads are joined.
  void stop();

  // The version serving now.
  std::string model_name() const;
  uint32_t model_version() const;
  std::string backend() const;

  uint64_t batches() const { return batches_.load(std::memory_order_relaxed); }
  uint64_t requests_run() const { return requests_run_.load(std::memory_order_relaxed); }
  uint64_t failed_batches() const { return failed_batches_.load(std::memory_order_relaxed); }
  uint64_t fallback_batches() const { return fallback_batches_.load(std::memory_order_relaxed); }
  uint64_t backend_switches() const { return backend_switches_.load(std::memory_order_relaxed); }
  uint64_t swaps() const { return swaps_.load(std::memory_order_relaxed); }
  uint64_t shadow_batches() const { return shadow_batches_.load(std::memory_order_relaxed); }
  // Batches by size (index = real requests in the batch, up to max_batch); complete after stop().
  std::vector<uint64_t> batch_sizes() const;
  // Where a worker's time per batch goes: gathering the windows (host copies) and the engine's
  // execute (copies in and out, kernels). After stop() only.
  struct WorkerTimes {
    LatencyHistogram gather, execute;
  };
  WorkerTimes worker_times() const;
  const ServeOptions& options() const { return opts_; }

 private:
  struct Served;
  struct Worker;
  Result<std::shared_ptr<Served>> prepare(ModelHandle h, bool warm_up);
  void retire(std::shared_ptr<Served> old);  // waits for its last batch, then releases it here
  void scheduler_loop();
  void worker_loop(Worker& w);
  void post(const InferenceRequest& r, ResultCode code, int ring);
  void gather(Worker& w);     // copies the batch's windows into the worker's staging (worker thread)
  // The worker's output buffer as a [rows, C] view for `s` (C = its output columns), grown
  // first when `s` needs more room than it has (worker thread, or start() before the workers).
  engine::TensorView output_room(Worker& w, const Served& s, int64_t rows);
  void run_batch(Worker& w);
  void run_shadow(Worker& w);
  bool pads(const Served& s) const;  // batches padded to power-of-two buckets on this version
  void dispatch(Worker& w, int64_t now_ns);

  ServeOptions opts_;
  int features_ = 0;
  int nshards_ = 1;
  std::vector<std::unique_ptr<ShardPort>> ports_;
  std::unique_ptr<Batcher> batcher_;  // created by start() (max_batch fits the plan)
  // The serving and shadow versions, read once per batch and replaced by swaps. A mutex, not
  // std::atomic<std::shared_ptr>: libstdc++ 12 guards that one with a lock bit ThreadSanitizer
  // cannot see (every swap under load was reported as a race); uncontended, a lock per batch.
  class ServedSlot {
   public:
    std::shared_ptr<Served> load() const {
      std::lock_guard lock(mu_);
      return p_;
    }
    void store(std::shared_ptr<Served> p) { exchange(std::move(p)); }
    std::shared_ptr<Served> exchange(std::shared_ptr<Served> p) {
      std::lock_guard lock(mu_);
      p_.swap(p);
      return p;
    }
    // As std::atomic's: replaces the value with `desired` if it is `expected`, else loads it into `expected`.
    bool compare_exchange_strong(std::shared_ptr<Served>& expected, const std::shared_ptr<Served>& desired) {
      std::lock_guard lock(mu_);
      if (p_ == expected) {
        p_ = desired;
        return true;
      }
      expected = p_;
      return false;
    }

   private:
    mutable std::mutex mu_;
    std::shared_ptr<Served> p_;
  };
  ServedSlot prod_;
  ServedSlot shadow_;
  std::shared_ptr<Served> fallback_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::thread scheduler_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> started_{false};
  std::mutex swap_mu_;  // one swap at a time (control plane only)
  FailureHandler on_failure_;
  Metrics* metrics_ = nullptr;
  struct Instruments;                    // prometheus handles, created by start()
  std::unique_ptr<Instruments> inst_;

  std::atomic<uint64_t> batches_{0}, requests_run_{0}, failed_batches_{0}, fallback_batches_{0};
  std::atomic<uint64_t> backend_switches_{0}, swaps_{0}, shadow_batches_{0};
  std::atomic<int> consecutive_failures_{0};
  std::vector<uint64_t> batch_sizes_;   // scheduler thread
  std::vector<InferenceRequest> batch_scratch_, expired_scratch_;  // scheduler thread
};

}  // namespace ts::serve
