#include "serve/model_server.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

#include "core/clock.h"
#include "core/log.h"
#include "core/spsc_ring.h"
#include "engine/device_share.h"

namespace ts::serve {

struct ModelServer::Served {
  ModelHandle handle;
  std::string backend;
  std::vector<std::unique_ptr<engine::ExecutionContext>> contexts;  // one per worker
  int64_t contexts_ns = 0, warm_up_ns = 0;                           // prepare()'s two phases
  int64_t columns = 1;  // values per row in the output ([batch]: 1)
  int64_t column = 0;   // the one the decision stage reads (handle.probability_column, or 0)
};

struct ModelServer::Worker {
  int index = 0;
  std::thread thread;
  enum : int { kIdle = 0, kAssigned = 1, kStop = 2 };
  std::atomic<int> state{kIdle};
  std::vector<InferenceRequest> reqs;  // the batch; written by the scheduler while idle
  std::shared_ptr<void> in_mem, out_mem;
  float* in = nullptr;
  float* out = nullptr;
  size_t out_floats = 0;               // room at `out` (output_room() grows it for a wider model)
  int64_t dispatch_ns = 0;
  int64_t rows = 0;                    // batch rows run: reqs.size(), or padded up to a bucket
  std::shared_ptr<Served> model;       // the version this batch runs on, fixed at dispatch
  LatencyHistogram gather_ns, execute_ns;  // this worker's batches (read after stop())
};

struct ModelServer::Instruments {
  prometheus::Histogram* batch_size = nullptr;
  prometheus::Histogram* compute_s = nullptr;
  prometheus::Histogram* queue_wait_s = nullptr;
  prometheus::Histogram* gather_s = nullptr;
  prometheus::Counter* batches = nullptr;
  prometheus::Counter* inferences = nullptr;
  prometheus::Counter* failed = nullptr;
  prometheus::Counter* fallback = nullptr;
  prometheus::Counter* switches = nullptr;
  prometheus::Counter* dropped[3] = {};  // superseded, deadline, queue_full
};

namespace {

const std::vector<double> kSecondsBuckets = {25e-6, 50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3,
                                             5e-3,  10e-3, 25e-3,  50e-3,  0.1,  0.25, 1.0};

// Largest batch every profile admits for input dims [*, rows, features]; 0 when none fits.
int64_t profile_max_batch(const engine::Engine& e, int rows) {
  int64_t best = 0;
  const std::string& name = e.inputs()[0].name;
  for (const auto& p : e.profiles()) {
    auto it = p.inputs.find(name);
    if (it == p.inputs.end()) continue;
    const auto& r = it->second;
    if (r.min.size() != 3 || r.max.size() != 3) continue;
    if (rows < r.min[1] || rows > r.max[1]) continue;
    best = std::max(best, r.max[0]);
  }
  return best;
}

// Powers of two up to max_batch, and max_batch itself.
std::vector<int> bucket_sizes(int max_batch) {
  std::vector<int> out;
  for (int b = 1; b < max_batch; b *= 2) out.push_back(b);
  out.push_back(max_batch);
  return out;
}

// What the decision stage reads: one float32 output, [batch] or [batch, C] with C fixed (dim 0
// any symbol or size; the real shape is checked on every run), and in it the probability column
// `column` (-1: not declared, which only a one-value-per-row output allows). Returns C.
Result<int64_t> check_output_binding(const engine::Engine& e, const std::string& what, int64_t column) {
  const std::string expected =
      "serving reads one float32 output, [batch] or [batch,C] with the probability in a declared column "
      "(one probability per row unless the model's manifest names its probability_column)";
  if (e.outputs().size() != 1) {
    std::string names;
    for (const auto& b : e.outputs()) names += (names.empty() ? "" : ", ") + b.name + " " + engine::shape_to_string(b.shape);
    return Status(StatusCode::kInvalidArgument, what + ": " + expected + "; the model has " +
                                                   std::to_string(e.outputs().size()) + " outputs: " + names);
  }
  const auto& b = e.outputs()[0];
  const std::string is = "output " + b.name + " is " + engine::dtype_name(b.dtype) + " " + engine::shape_to_string(b.shape);
  if (b.dtype != engine::DType::kF32 || (b.shape.size() != 1 && b.shape.size() != 2)) {
    return Status(StatusCode::kInvalidArgument, what + ": " + expected + "; " + is);
  }
  // [batch] and [batch, ?] hold one value per row (a symbolic C is read as 1 and checked per run).
  const int64_t columns = b.shape.size() == 2 && b.shape[1].is_known() ? b.shape[1].value : 1;
  if (column < 0 && columns != 1) {
    return Status(StatusCode::kInvalidArgument,
                  what + ": " + expected + "; " + is + " (" + std::to_string(columns) +
                      " columns) and no probability column is declared: build a plan with --probabilityColumn N "
                      "(or probability_column in <model>.manifest.json), docs/bring-your-own-model.md");
  }
  if (column >= columns || (column > 0 && !(b.shape.size() == 2 && b.shape[1].is_known()))) {
    return Status(StatusCode::kInvalidArgument, what + ": the manifest's probability column " + std::to_string(column) +
                                                   " is outside " + is + " (columns 0.." +
                                                   std::to_string(columns - 1) + ")");
  }
  return columns;
}

// A run's output as the decision stage reads it: exactly `rows` rows of `columns` values.
Status check_probabilities(const engine::Engine& e, const engine::TensorView& out, int64_t rows, int64_t columns) {
  int64_t n = 1;
  for (int64_t d : out.dims) n *= d;
  const bool shape_ok = columns == 1 ? (out.dims.size() == 1 || (out.dims.size() == 2 && out.dims[1] == 1))
                                     : (out.dims.size() == 2 && out.dims[1] == columns);
  if (n == rows * columns && shape_ok) return Status::ok();
  return Status(StatusCode::kInvalidArgument, "output " + e.outputs()[0].name + " is " + engine::dims_str(out.dims) +
                                                  " for a batch of " + std::to_string(rows) + ", expected [" +
                                                  std::to_string(rows) + "," + std::to_string(columns) + "]" +
                                                  (columns == 1 ? " (one probability per row)" : ""));
}

// The warm-up batch's probability column as the decision stage will read it: probabilities,
// finite and within [0, 1]. A model that outputs logits (or scores of another scale) passes every
// shape check and then alerts on everything or nothing; it is refused here, before it serves.
// Only at warm-up (prepare), not per live batch: a check on the hot path would cost every batch
// for a property of the model, not of the data. `out`: rows × columns, row-major.
Status check_probability_range(const engine::Engine& e, const float* out, int64_t rows, int64_t columns,
                               int64_t column) {
  int64_t bad = 0, nonfinite = 0;
  float lo = 0, hi = 0;
  bool first = true;
  for (int64_t i = 0; i < rows; ++i) {
    const float v = out[i * columns + column];
    if (!std::isfinite(v)) {
      ++nonfinite;
      continue;
    }
    if (first || v < lo) lo = v;
    if (first || v > hi) hi = v;
    first = false;
    if (v < 0.f || v > 1.f) ++bad;
  }
  if (bad == 0 && nonfinite == 0) return Status::ok();
  char range[96] = "";
  if (!first) std::snprintf(range, sizeof range, " (min %.6g, max %.6g)", double(lo), double(hi));
  std::string what;
  if (bad) what = std::to_string(bad) + " of " + std::to_string(rows) + " values outside [0, 1]";
  if (nonfinite) what += std::string(what.empty() ? "" : ", ") + std::to_string(nonfinite) + " of " + std::to_string(rows) + " not finite";
  const std::string where = columns == 1 ? "" : " column " + std::to_string(column);
  return Status(StatusCode::kInvalidArgument,
                "output " + e.outputs()[0].name + where + " is not a probability on the warm-up batch: " + what + range +
                    "; serving reads one probability in [0, 1] per row (a model that outputs logits must end in a "
                    "sigmoid or softmax: export torch.sigmoid(logits))");
}

int64_t bucket_of(int64_t n, int max_batch) {
  int64_t b = 1;
  while (b < n) b *= 2;
  return std::min<int64_t>(b, max_batch);
}

}  // namespace

bool ModelServer::pads(const Served& s) const { return opts_.pad_batches == "on" || (opts_.pad_batches == "auto" && s.backend == "cuda"); }

ModelServer::ModelServer(ServeOptions opts, int shards) : opts_(std::move(opts)), nshards_(std::max(1, shards)) {}

ModelServer::~ModelServer() { stop(); }

Result<std::shared_ptr<ModelServer::Served>> ModelServer::prepare(ModelHandle h, bool warm_up) {
  if (!h.engine) return Status(StatusCode::kInvalidArgument, "model " + h.name + ": no engine");
  const auto& e = *h.engine;
  const std::string what = "model " + h.name + " v" + std::to_string(h.version);
  if (e.inputs().size() != 1 || e.inputs()[0].dtype != engine::DType::kF32) {
    return Status(StatusCode::kInvalidArgument, what + ": serving needs one float32 input [batch, T, F]");
  }
  auto columns = check_output_binding(e, what, h.probability_column);
  if (!columns) return columns.status();
  const int64_t max_b = profile_max_batch(e, opts_.window_rows);
  if (max_b < 1) {
    return Status(StatusCode::kInvalidArgument, what + ": no optimization profile admits T = " +
                                                   std::to_string(opts_.window_rows));
  }
  if (batcher_ && max_b < opts_.batcher.max_batch) {
    return Status(StatusCode::kInvalidArgument, what + ": its profiles stop at batch " + std::to_string(max_b) +
                                                   ", the server batches up to " + std::to_string(opts_.batcher.max_batch));
  }
  auto s = std::make_shared<Served>();
  s->handle = std::move(h);
  s->backend = e.backend();
  s->columns = columns.value();
  s->column = std::max<int64_t>(0, s->handle.probability_column);
  const int nworkers = std::max(1, opts_.workers);
  // Contexts are created side by side (each allocates its device buffers and library handles).
  const int64_t c0 = mono_ns();
  {
    std::vector<Result<std::unique_ptr<engine::ExecutionContext>>> made;
    for (int i = 0; i < nworkers; ++i) made.emplace_back(Status(StatusCode::kInternal, "not made"));
    std::vector<std::thread> threads;
    for (int i = 0; i < nworkers; ++i) threads.emplace_back([&, i] { made[size_t(i)] = e.create_context(); });
    for (auto& t : threads) t.join();
    for (auto& ctx : made) {
      if (!ctx) return ctx.status().with_context(what);
      s->contexts.push_back(std::move(ctx).value());
    }
  }
  s->contexts_ns = mono_ns() - c0;
  if (warm_up) {
    // Allocations, CUDA graph captures and first-touch costs happen here, off the hot path. The
    // largest batch runs first, so buffers are sized once and no later size reallocates them
    // (a reallocation invalidates the graphs captured before it). On cuda every bucket runs
    // twice: the cuda executor captures a shape's graph on its second run, so each bucket's
    // graph exists before the first real batch and workers only ever launch graphs — no
    // capture on a worker, none racing another worker's capture after a swap (a first batch
    // after a swap failed with CUBLAS_STATUS_EXECUTION_FAILED while captures ran there). Each
    // context warms up on its own thread (its own stream), so a swap waits for one, not n.
    const int max_batch = std::min<int>(opts_.batcher.max_batch, int(max_b));
    const size_t per_row = size_t(opts_.window_rows) * size_t(features_);
    std::vector<float> in(size_t(max_batch) * per_row);
    std::mt19937 rng(7);
    std::normal_distribution<float> nd(0.f, 1.f);
    for (auto& v : in) v = nd(rng);
    std::vector<int> sizes = {max_batch, 1};
    const int runs = pads(*s) ? 2 : 1;
    if (pads(*s)) {
      sizes = bucket_sizes(max_batch);
      std::reverse(sizes.begin(), sizes.end());
    }
    const bool live = !workers_.empty();  // a swap or shadow: serving goes on beside the warm-up
    const auto pause = std::chrono::microseconds(live ? opts_.warm_up_pause_us : 0);
    std::vector<Status> results(s->contexts.size());
    std::vector<std::thread> threads;
    for (size_t c = 0; c < s->contexts.size(); ++c) {
      threads.emplace_back([&, c] {
        engine::set_cpu_threads_for_this_thread(opts_.cpu_threads);
        engine::set_device_contexts_for_this_thread(nworkers);  // as the workers will run
        std::vector<float> out(size_t(max_batch) * size_t(s->columns));
        for (int b : sizes) {
          for (int k = 0; k < runs; ++k) {
            engine::TensorView iv{engine::DType::kF32, {b, opts_.window_rows, features_}, in.data()};
            engine::TensorView ov{engine::DType::kF32, {b, s->columns}, out.data()};
            ov.capacity_bytes = out.size() * sizeof(float);
            Status st = s->contexts[c]->execute({&iv, 1}, {&ov, 1});
            if (st.is_ok()) st = check_probabilities(e, ov, b, s->columns);
            if (st.is_ok()) st = check_probability_range(e, out.data(), b, s->columns, s->column);
            if (!st.is_ok()) {
              results[c] = st;
              return;
            }
            if (pause.count() > 0) std::this_thread::sleep_for(pause);
          }
        }
      });
    }
    for (auto& t : threads) t.join();
    for (const Status& st : results) {
      if (!st.is_ok()) return st.with_context(what + ": warm-up");
    }
    s->warm_up_ns = mono_ns() - c0 - s->contexts_ns;
  }
  return s;
}

Status ModelServer::start(ModelHandle prod, std::shared_ptr<engine::Engine> cpu_fallback, int features) {
  if (started_.exchange(true)) return Status(StatusCode::kInvalidArgument, "model server: started twice");
  features_ = features;
  if (!prod.engine) return Status(StatusCode::kInvalidArgument, "model server: no model");
  const int64_t max_b = profile_max_batch(*prod.engine, opts_.window_rows);
  if (max_b >= 1 && max_b < opts_.batcher.max_batch) {
    spdlog::info("model server: max_batch {} → {} (the plan's largest profile batch)", opts_.batcher.max_batch, max_b);
    opts_.batcher.max_batch = int(max_b);
  }
  auto p = prepare(prod, /*warm_up=*/true);
  if (!p) return p.status();
  if (p.value()->backend == "cuda") {
    // A second set of contexts, warmed up and released: its device and staging memory stays in
    // the backend's block cache (engine/backends/cuda/cuda_block_cache.h), so the first hot swap
    // takes memory from there like every later one, instead of calling cudaMalloc / cudaHostAlloc
    // beside live serving (H200: P99 around a first swap 2.2x the run's, later swaps 1.1-1.5x).
    auto spare = prepare(prod, /*warm_up=*/true);
    if (!spare) spdlog::warn("model server: reserving a swap's memory: {}", spare.status().to_string());
  }
  if (cpu_fallback && opts_.cpu_fallback) {
    auto f = prepare(ModelHandle{prod.name, prod.version, cpu_fallback, prod.probability_column}, /*warm_up=*/true);
    if (!f) return f.status().with_context("CPU fallback");
    fallback_ = std::move(f).value();
  }
  if (!opts_.batcher.latest_wins) {
    // Lossless: the queue must hold every window the shards can have out, so nothing is refused.
    opts_.batcher.max_queue = std::max(opts_.batcher.max_queue, size_t(nshards_) * opts_.slots_per_shard);
  }
  batcher_ = std::make_unique<Batcher>(opts_.batcher);
  if (metrics_) {
    inst_ = std::make_unique<Instruments>();
    Metrics& m = *metrics_;
    auto histogram = [&](const char* name, const char* help, const std::vector<double>& buckets) {
      return &prometheus::BuildHistogram().Name(std::string("ticksentry_") + name).Help(help).Register(m.registry()).Add(
          {}, prometheus::Histogram::BucketBoundaries(buckets));
    };
    inst_->batch_size = histogram("model_batch_size", "Requests per inference batch",
                                  {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096});
    inst_->compute_s = histogram("model_compute_seconds", "Inference batch run time (dispatch to outputs)",
                                 kSecondsBuckets);
    inst_->queue_wait_s = histogram("model_queue_wait_seconds",
                                    "Queue wait of the oldest request of each inference batch", kSecondsBuckets);
    inst_->gather_s = histogram("model_gather_seconds",
                                "Copying a batch's windows from the shards' slots into the worker's staging", kSecondsBuckets);
    inst_->batches = &m.counter("model_batches_total", "Inference batches run");
    inst_->inferences = &m.counter("model_inferences_total", "Windows scored by the serving model");
    inst_->failed = &m.counter("model_failed_batches_total", "Inference batches that failed on their engine");
    inst_->fallback = &m.counter("model_fallback_batches_total", "Failed batches answered by the CPU retry");
    inst_->switches = &m.counter("model_backend_switches_total", "Switches to the CPU backend after repeated failures");
    const char* reasons[3] = {"superseded", "deadline", "queue_full"};
    for (int i = 0; i < 3; ++i) {
      inst_->dropped[i] = &m.counter("model_dropped_total", "Inference requests not run, by reason", {{"reason", reasons[i]}});
    }
  }
  prod_.store(std::move(p).value());
  // spdlog's registry is a function-local static inside the (uninstrumented) shared library: made
  // here, before the workers, its first use from two workers at once is not a race under TSan.
  spdlog::default_logger_raw();
  const int nworkers = std::max(1, opts_.workers);
  for (int i = 0; i < nshards_; ++i) {
    ports_.push_back(std::make_unique<ShardPort>(i, opts_.window_rows, features_, opts_.slots_per_shard,
                                                 opts_.request_ring, 1 + nworkers));
  }
  batch_sizes_.assign(size_t(opts_.batcher.max_batch) + 1, 0);
  const size_t in_bytes = size_t(opts_.batcher.max_batch) * size_t(opts_.window_rows) * size_t(features_) * sizeof(float);
  const auto& served = *prod_.load();
  const auto& eng = *served.handle.engine;
  for (int i = 0; i < nworkers; ++i) {
    auto w = std::make_unique<Worker>();
    w->index = i;
    // Pinned host memory on the cuda backend (DMA without staging); aligned memory otherwise.
    w->in_mem = eng.allocate_host(in_bytes);
    if (!w->in_mem) w->in_mem = std::shared_ptr<void>(new float[in_bytes / sizeof(float)], [](void* q) { delete[] static_cast<float*>(q); });
    w->in = static_cast<float*>(w->in_mem.get());
    output_room(*w, served, opts_.batcher.max_batch);
    if (fallback_) output_room(*w, *fallback_, opts_.batcher.max_batch);
    std::memset(w->in, 0, in_bytes);  // pad rows (gather()) start as zeros, never garbage
    w->reqs.reserve(size_t(opts_.batcher.max_batch));
    workers_.push_back(std::move(w));
  }
  for (auto& w : workers_) w->thread = std::thread([this, wp = w.get()] { worker_loop(*wp); });
  scheduler_ = std::thread([this] { scheduler_loop(); });
  return Status::ok();
}

Result<SwapReport> ModelServer::swap(ModelHandle next) {
  std::lock_guard<std::mutex> lock(swap_mu_);
  if (!started_.load() || stopping_.load()) return Status(StatusCode::kInvalidArgument, "model server: not running");
  const int64_t t0 = mono_ns();
  auto p = prepare(std::move(next), /*warm_up=*/true);
  if (!p) return p.status();
  SwapReport rep;
  rep.prepare_ns = mono_ns() - t0;
  rep.contexts_ns = p.value()->contexts_ns;
  rep.warm_up_ns = p.value()->warm_up_ns;
  std::shared_ptr<Served> old = prod_.exchange(std::move(p).value());
  consecutive_failures_.store(0);
  swaps_.fetch_add(1);
  const int64_t published = mono_ns();
  rep.total_ns = published - t0;
  auto now = prod_.load();
  spdlog::info("model server: now serving {} v{} on {} (prepared in {:.1f} ms: {} contexts {:.1f} ms, warm-up {:.1f} ms)",
               now->handle.name, now->handle.version, now->backend, double(rep.prepare_ns) / 1e6, now->contexts.size(),
               double(rep.contexts_ns) / 1e6, double(rep.warm_up_ns) / 1e6);
  now.reset();
  retire(std::move(old));
  rep.retired_ns = mono_ns() - published;
  return rep;
}

void ModelServer::retire(std::shared_ptr<Served> old) {
  // The old version is released here, on the swapping thread, once its last batch is done.
  // PERF NOTE: left to the last holder, its contexts' teardown (device frees, graphs, streams,
  // library handles: milliseconds) ran on a worker thread after that worker's batch, taking it
  // out of service mid-swap. Batches in flight finish on it first (a worker holds a reference
  // from dispatch to the end of its batch; no new reference can appear once it is unpublished).
  if (!old || old == fallback_) return;  // the CPU fallback stays, for later failures
  const int64_t give_up = mono_ns() + 1'000'000'000;
  while (old.use_count() > 1 && mono_ns() < give_up) std::this_thread::sleep_for(std::chrono::microseconds(100));
  if (const long holders = old.use_count() - 1; holders > 0) {
    spdlog::warn("model server: {} v{} still held by {} after 1 s; the last holder releases it", old->handle.name,
                 old->handle.version, holders);
  }
  old.reset();
}

Status ModelServer::set_shadow(ModelHandle shadow) {
  std::lock_guard<std::mutex> lock(swap_mu_);
  if (!started_.load() || stopping_.load()) return Status(StatusCode::kInvalidArgument, "model server: not running");
  if (!shadow.engine) {
    retire(shadow_.exchange(nullptr));
    return Status::ok();
  }
  auto p = prepare(std::move(shadow), /*warm_up=*/true);
  if (!p) return p.status().with_context("shadow");
  spdlog::info("model server: shadow {} v{} on {}", p.value()->handle.name, p.value()->handle.version, p.value()->backend);
  retire(shadow_.exchange(std::move(p).value()));  // the old shadow, if any, like a swapped-out version
  return Status::ok();
}

std::string ModelServer::shadow_name() const {
  auto p = shadow_.load();
  return p ? p->handle.name : "";
}
uint32_t ModelServer::shadow_version() const {
  auto p = shadow_.load();
  return p ? p->handle.version : 0;
}

std::string ModelServer::model_name() const {
  auto p = prod_.load();
  return p ? p->handle.name : "";
}
uint32_t ModelServer::model_version() const {
  auto p = prod_.load();
  return p ? p->handle.version : 0;
}
std::string ModelServer::backend() const {
  auto p = prod_.load();
  return p ? p->backend : "";
}

std::vector<uint64_t> ModelServer::batch_sizes() const { return batch_sizes_; }

ModelServer::WorkerTimes ModelServer::worker_times() const {
  WorkerTimes t;
  for (const auto& w : workers_) {
    t.gather.merge(w->gather_ns);
    t.execute.merge(w->execute_ns);
  }
  return t;
}

void ModelServer::post(const InferenceRequest& r, ResultCode code, int ring) {
  if (inst_) {
    if (code == ResultCode::kSuperseded) inst_->dropped[0]->Increment();
    else if (code == ResultCode::kExpired) inst_->dropped[1]->Increment();
    else if (code == ResultCode::kQueueFull) inst_->dropped[2]->Increment();
  }
  InferenceResult res;
  res.request = r;
  res.code = code;
  auto& q = ports_[r.shard]->results(ring);
  // Result rings hold one entry per slot, so this waits only while a shard is descheduled.
  while (!q.try_push(res)) std::this_thread::yield();
}

void ModelServer::dispatch(Worker& w, int64_t now_ns) {
  batcher_->pop_batch(size_t(opts_.batcher.max_batch), now_ns, w.reqs, expired_scratch_);
  for (auto& r : expired_scratch_) post(r, ResultCode::kExpired, 0);
  expired_scratch_.clear();
  if (w.reqs.empty()) return;
  ++batch_sizes_[std::min(w.reqs.size(), batch_sizes_.size() - 1)];
  // The batch's version is fixed here: a swap after this point affects later batches only.
  w.model = prod_.load();
  w.rows = int64_t(w.reqs.size());
  // PERF NOTE: the cuda backend captures a CUDA graph per input shape; padding batches to
  // power-of-two buckets (all captured at warm-up) keeps captures off the hot path.
  if (pads(*w.model)) w.rows = bucket_of(w.rows, opts_.batcher.max_batch);
  // The windows are gathered by the worker (gather()), not here: at 1 M requests/s that is
  // ~5 GB/s of copying, which one scheduler thread cannot do besides batching.
  w.dispatch_ns = mono_ns();
  w.state.store(Worker::kAssigned, std::memory_order_release);
  w.state.notify_one();
}

void ModelServer::scheduler_loop() {
  BackoffIdle idle(/*spin_ns=*/50'000, /*yield_ns=*/1'000'000);
  InferenceRequest r, superseded;
  for (;;) {
    size_t work = 0;
    const bool stopping = stopping_.load(std::memory_order_acquire);
    for (auto& p : ports_) {
      for (int k = 0; k < 1024 && p->requests().try_pop(r); ++k, ++work) {
        if (stopping) {
          post(r, ResultCode::kStopped, 0);
          continue;
        }
        switch (batcher_->add(r, superseded)) {
          case Batcher::AddOutcome::kQueued: break;
          case Batcher::AddOutcome::kReplaced: post(superseded, ResultCode::kSuperseded, 0); break;
          case Batcher::AddOutcome::kFull: post(r, ResultCode::kQueueFull, 0); break;
        }
      }
    }
    const int64_t now = mono_ns();
    if (stopping) {
      // Answer everything still waiting, then leave once the workers are idle.
      batcher_->take_expired(INT64_MAX, expired_scratch_);
      for (auto& q : expired_scratch_) post(q, ResultCode::kStopped, 0);
      expired_scratch_.clear();
      bool busy = false;
      for (auto& w : workers_) busy |= w->state.load(std::memory_order_acquire) == Worker::kAssigned;
      if (!busy && work == 0) return;
      std::this_thread::yield();
      continue;
    }
    if (batcher_->take_expired(now, expired_scratch_)) {
      for (auto& q : expired_scratch_) post(q, ResultCode::kExpired, 0);
      expired_scratch_.clear();
    }
    Worker* free_worker = nullptr;
    bool all_idle = true;
    for (auto& w : workers_) {
      if (w->state.load(std::memory_order_acquire) == Worker::kIdle) {
        if (!free_worker) free_worker = w.get();
      } else {
        all_idle = false;
      }
    }
    if (free_worker && batcher_->due(now, all_idle)) {
      dispatch(*free_worker, now);
      ++work;
    }
    idle.idle(work);
  }
}

void ModelServer::worker_loop(Worker& w) {
  engine::set_cpu_threads_for_this_thread(opts_.cpu_threads);
  // The workers' batches share the device: kernels plan for its share, not all of it.
  engine::set_device_contexts_for_this_thread(std::max(1, opts_.workers));
  for (;;) {
    // PERF NOTE: a short spin before parking: batches arrive back to back under load, and an
    // atomic wait costs a futex wake (~5-50 µs) per batch.
    int s = w.state.load(std::memory_order_acquire);
    for (int spin = 0; s == Worker::kIdle && spin < 2000; ++spin) {
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
      s = w.state.load(std::memory_order_acquire);
    }
    if (s == Worker::kIdle) {
      w.state.wait(Worker::kIdle, std::memory_order_acquire);
      s = w.state.load(std::memory_order_acquire);
    }
    if (s == Worker::kStop) return;
    if (s == Worker::kAssigned) {
      run_batch(w);
      // kAssigned → kIdle unless stop() asked in between (then stay kStop).
      int expected = Worker::kAssigned;
      w.state.compare_exchange_strong(expected, Worker::kIdle, std::memory_order_acq_rel);
    }
  }
}

engine::TensorView ModelServer::output_room(Worker& w, const Served& s, int64_t rows) {
  // A swap or shadow to a model with more output columns than any before grows the buffer here,
  // on the worker's own thread, once; the batches after it find the room.
  const size_t need = size_t(std::max<int64_t>(rows, opts_.batcher.max_batch)) * size_t(s.columns);
  if (need > w.out_floats) {
    const size_t floats = std::max<size_t>(need, size_t(opts_.batcher.max_batch) * 8);
    w.out_mem = s.handle.engine->allocate_host(floats * sizeof(float));
    if (!w.out_mem) w.out_mem = std::shared_ptr<void>(new float[floats], [](void* q) { delete[] static_cast<float*>(q); });
    w.out = static_cast<float*>(w.out_mem.get());
    w.out_floats = floats;
  }
  engine::TensorView out{engine::DType::kF32, {rows, s.columns}, w.out};
  out.capacity_bytes = w.out_floats * sizeof(float);
  return out;
}

void ModelServer::gather(Worker& w) {
  // A request's window slot stays the shard's untouched until its result is posted, so the
  // worker may read it now. Pad rows (up to w.rows) are not written: they hold zeros or an
  // earlier batch's real windows — finite values in rows of their own (the models' batch rows
  // are independent), whose outputs are ignored. PERF NOTE: copying row 0 into them cost up to
  // half of the gather (a batch of 130 runs as 256 rows).
  const size_t per = size_t(opts_.window_rows) * size_t(features_);
  for (size_t i = 0; i < w.reqs.size(); ++i) {
    const InferenceRequest& r = w.reqs[i];
    std::memcpy(w.in + i * per, ports_[r.shard]->slot_data(r.slot), per * sizeof(float));
  }
}

void ModelServer::run_batch(Worker& w) {
  std::shared_ptr<Served> model = std::move(w.model);  // this batch's engine, whatever swaps happen
  const int64_t b = int64_t(w.reqs.size());
  const int64_t t0 = mono_ns();
  gather(w);
  const int64_t t1 = mono_ns();
  engine::TensorView in{engine::DType::kF32, {w.rows, opts_.window_rows, features_}, w.in};
  engine::TensorView out = output_room(w, *model, w.rows);
  Status st = model->contexts[size_t(w.index)]->execute({&in, 1}, {&out, 1});
  if (st.is_ok()) st = check_probabilities(*model->handle.engine, out, w.rows, model->columns);
  w.gather_ns.record(t1 - t0);
  w.execute_ns.record(mono_ns() - t1);
  bool fallback = false;
  if (!st.is_ok()) {
    failed_batches_.fetch_add(1, std::memory_order_relaxed);
    const int consecutive = consecutive_failures_.fetch_add(1) + 1;
    Status retry = Status(StatusCode::kUnsupported, "no CPU fallback");
    if (fallback_ && fallback_ != model) {
      // The CPU fallback runs the real rows only.
      engine::TensorView in2{engine::DType::kF32, {b, opts_.window_rows, features_}, w.in};
      engine::TensorView out2 = output_room(w, *fallback_, b);
      retry = fallback_->contexts[size_t(w.index)]->execute({&in2, 1}, {&out2, 1});
      if (retry.is_ok()) retry = check_probabilities(*fallback_->handle.engine, out2, b, fallback_->columns);
      fallback = retry.is_ok();
      if (fallback) fallback_batches_.fetch_add(1, std::memory_order_relaxed);
    }
    if (on_failure_) {
      FailureCase fc;
      fc.model = model->handle.name;
      fc.version = model->handle.version;
      fc.backend = model->backend;
      fc.error = st.to_string();
      fc.batch = int(b);
      fc.rows = opts_.window_rows;
      fc.features = features_;
      fc.input.assign(w.in, w.in + size_t(b) * size_t(opts_.window_rows) * size_t(features_));
      fc.recovered = fallback;
      on_failure_(fc);
    }
    spdlog::warn("model server: batch of {} failed on {} v{} ({}): {}{}", b, model->backend, model->handle.version,
                 model->handle.name, st.to_string(), fallback ? "; retried on the CPU backend" : "");
    if (fallback_ && consecutive >= opts_.switch_to_cpu_after && fallback_ != model) {
      // Only if no swap happened meanwhile: a fresh version gets its own chance.
      std::shared_ptr<Served> expected = model;
      if (prod_.compare_exchange_strong(expected, fallback_)) {
        backend_switches_.fetch_add(1);
        if (inst_) inst_->switches->Increment();
        spdlog::error("model server: {} consecutive failed batches on {}; serving {} v{} from the CPU backend now",
                      consecutive, model->backend, model->handle.name, model->handle.version);
      }
    }
  } else {
    consecutive_failures_.store(0, std::memory_order_relaxed);
  }
  const int64_t done = mono_ns();
  if (inst_) {
    int64_t oldest = w.dispatch_ns;
    for (const auto& r : w.reqs) oldest = std::min(oldest, r.enqueue_ns);
    inst_->batch_size->Observe(double(b));
    inst_->compute_s->Observe(double(done - w.dispatch_ns) / 1e9);
    inst_->queue_wait_s->Observe(double(w.dispatch_ns - oldest) / 1e9);
    inst_->gather_s->Observe(double(t1 - t0) / 1e9);
    inst_->batches->Increment();
    inst_->inferences->Increment(double(b));
    if (!st.is_ok()) inst_->failed->Increment();
    if (fallback) inst_->fallback->Increment();
  }
  batches_.fetch_add(1, std::memory_order_relaxed);
  requests_run_.fetch_add(uint64_t(b), std::memory_order_relaxed);
  const bool ok = st.is_ok() || fallback;
  const Served& answered = fallback ? *fallback_ : *model;
  const uint32_t version = answered.handle.version;
  for (int64_t i = 0; i < b; ++i) {
    InferenceResult res;
    res.request = w.reqs[size_t(i)];
    res.code = ok ? ResultCode::kOk : ResultCode::kFailed;
    res.probability = ok ? w.out[i * answered.columns + answered.column] : 0.f;
    res.model_version = version;
    res.fallback = fallback;
    res.dispatch_ns = w.dispatch_ns;
    res.done_ns = done;
    auto& q = ports_[res.request.shard]->results(1 + w.index);
    while (!q.try_push(res)) std::this_thread::yield();
  }
  run_shadow(w);
}

void ModelServer::run_shadow(Worker& w) {
  std::shared_ptr<Served> shadow = shadow_.load();
  if (!shadow) return;
  // PERF NOTE: after the serving version's results are out, so a shadow never delays an alert.
  const int64_t b = int64_t(w.reqs.size());
  const int64_t rows = pads(*shadow) ? w.rows : b;
  engine::TensorView in{engine::DType::kF32, {rows, opts_.window_rows, features_}, w.in};
  engine::TensorView out = output_room(w, *shadow, rows);
  const int64_t start = mono_ns();
  Status st = shadow->contexts[size_t(w.index)]->execute({&in, 1}, {&out, 1});
  if (st.is_ok()) st = check_probabilities(*shadow->handle.engine, out, rows, shadow->columns);
  if (!st.is_ok()) {
    spdlog::warn("model server: shadow {} v{} failed on a batch of {}: {}", shadow->handle.name, shadow->handle.version,
                 b, st.to_string());
    return;  // a shadow's failure costs nothing but its own results
  }
  shadow_batches_.fetch_add(1, std::memory_order_relaxed);
  const int64_t done = mono_ns();
  for (int64_t i = 0; i < b; ++i) {
    InferenceResult res;
    res.request = w.reqs[size_t(i)];
    res.code = ResultCode::kOk;
    res.probability = w.out[i * shadow->columns + shadow->column];
    res.model_version = shadow->handle.version;
    res.shadow = true;
    res.dispatch_ns = start;
    res.done_ns = done;
    auto& q = ports_[res.request.shard]->results(1 + w.index);
    while (!q.try_push(res)) std::this_thread::yield();
  }
}

void ModelServer::stop() {
  if (!started_.load() || stopping_.exchange(true)) return;
  if (scheduler_.joinable()) scheduler_.join();  // answers what waits; returns with workers idle
  for (auto& w : workers_) {
    w->state.store(Worker::kStop, std::memory_order_release);
    w->state.notify_one();
  }
  for (auto& w : workers_) {
    if (w->thread.joinable()) w->thread.join();
  }
}

}  // namespace ts::serve
