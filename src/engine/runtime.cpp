// Engine and ExecutionContext: a plan's Program shared by every context; each context owns a
// BackendExecutor (the backend's: tensors, scratch, kernel state, device stream) and a worker
// thread that runs enqueued work in
// order and calls the completion callback.
#include "engine/runtime.h"

#include "engine/plan_check.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <future>
#include <iterator>
#include <mutex>
#include <sstream>
#include <thread>

namespace ts::engine {

const char* precision_name(Precision p) {
  switch (p) {
    case Precision::kFP32: return "fp32";
    case Precision::kBF16: return "bf16";
    case Precision::kFP16: return "fp16";
    case Precision::kINT8: return "int8";
  }
  return "unknown";
}

size_t TensorView::bytes() const { return size_t(shape_numel(dims)) * dtype_size(dtype); }

namespace {

Status invalid(const std::string& m) { return Status(StatusCode::kInvalidArgument, m); }

}  // namespace

Status validate_graph(const Graph& g) {
  auto bad = [](const std::string& m) { return Status(StatusCode::kParseError, "invalid plan graph: " + m); };
  std::vector<uint8_t> avail(g.values.size(), 0);
  for (size_t i = 0; i < g.values.size(); ++i) avail[i] = g.values[i].is_constant;
  for (ValueId id : g.inputs) {
    if (g.value(id).is_constant) return bad("input " + g.value(id).name + " is a constant");
    avail[size_t(id)] = 1;
  }
  for (const Node& n : g.nodes) {
    for (ValueId id : n.inputs) {
      if (id != kNoValue && !avail[size_t(id)]) return bad("node " + n.name + " reads " + g.value(id).name + " before it is produced");
    }
    // ONNX lets a node omit leading optional outputs (a GRU with only Y_h), not all of them.
    bool any_out = false;
    for (ValueId id : n.outputs) any_out = any_out || id != kNoValue;
    if (!any_out) return bad("node " + n.name + " has no output");
    bool all_const = true;
    for (ValueId id : n.outputs) {
      if (id == kNoValue) continue;
      all_const = all_const && g.value(id).is_constant;
    }
    for (ValueId id : n.outputs) {
      if (id == kNoValue) continue;
      if (avail[size_t(id)] && !all_const) return bad("value " + g.value(id).name + " is produced twice");
      avail[size_t(id)] = 1;
    }
  }
  if (g.outputs.empty()) return bad("no outputs");
  for (ValueId id : g.outputs) {
    if (!avail[size_t(id)]) return bad("output " + g.value(id).name + " is never produced");
  }
  return Status::ok();
}

Status check_inputs(const Graph& g, const std::vector<OptimizationProfile>& profiles,
                    std::span<const TensorView> inputs) {
  if (inputs.size() != g.inputs.size()) {
    return invalid("expected " + std::to_string(g.inputs.size()) + " inputs, got " + std::to_string(inputs.size()));
  }
  std::vector<std::pair<const std::string*, int64_t>> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Value& v = g.value(g.inputs[i]);
    const TensorView& t = inputs[i];
    if (t.dtype != v.dtype) {
      return invalid("input " + v.name + ": dtype " + dtype_name(t.dtype) + ", expected " + dtype_name(v.dtype));
    }
    if (!t.data && shape_numel(t.dims) > 0) return invalid("input " + v.name + ": null data");
    if (v.rank_known) {
      if (t.dims.size() != v.shape.size()) {
        return invalid("input " + v.name + ": shape " + dims_str(t.dims) + " does not match " + shape_to_string(v.shape));
      }
      for (size_t k = 0; k < t.dims.size(); ++k) {
        const Dim& d = v.shape[k];
        if (t.dims[k] < 0) return invalid("input " + v.name + ": negative dim");
        if (d.is_known() && d.value != t.dims[k]) {
          return invalid("input " + v.name + ": shape " + dims_str(t.dims) + " does not match " + shape_to_string(v.shape));
        }
        if (!d.is_known() && !d.symbol.empty()) {
          for (auto& [sym, val] : symbols) {
            if (*sym == d.symbol && val != t.dims[k]) {
              return invalid("input " + v.name + ": dim " + d.symbol + " is " + std::to_string(t.dims[k]) +
                             " but another input has " + std::to_string(val));
            }
          }
          symbols.emplace_back(&d.symbol, t.dims[k]);
        }
      }
    }
  }
  if (profiles.empty()) return Status::ok();
  std::string first_err;
  for (size_t p = 0; p < profiles.size(); ++p) {
    std::string err;
    for (size_t i = 0; i < inputs.size() && err.empty(); ++i) {
      const Value& v = g.value(g.inputs[i]);
      auto it = profiles[p].inputs.find(v.name);
      if (it == profiles[p].inputs.end()) continue;
      const ShapeRange& r = it->second;
      const auto& d = inputs[i].dims;
      bool inside = r.min.size() == d.size() && r.max.size() == d.size();
      for (size_t k = 0; inside && k < d.size(); ++k) inside = d[k] >= r.min[k] && d[k] <= r.max[k];
      if (!inside) {
        err = "input " + v.name + ": shape " + dims_str(d) + " is outside profile " + std::to_string(p) +
              " (min " + dims_str(r.min) + ", max " + dims_str(r.max) + ")";
      }
    }
    if (err.empty()) return Status::ok();
    if (first_err.empty()) first_err = err;
  }
  return Status(StatusCode::kOutOfRange, first_err);
}

Executor::Executor(std::shared_ptr<const Program> program) : program_(std::move(program)) {
  const Graph& g = program_->graph;
  values_.resize(g.values.size());
  for (size_t i = 0; i < g.values.size(); ++i) {
    const Value& v = g.values[i];
    if (!v.is_constant) continue;
    values_[i].dtype = v.dtype;
    values_[i].dims = v.const_dims();
    values_[i].data = const_cast<uint8_t*>(v.data.data());
  }
  size_t nn = g.nodes.size();
  ins_.resize(nn);
  outs_.resize(nn);
  skip_.resize(nn);
  states_.resize(nn);
  for (size_t i = 0; i < nn; ++i) {
    const Node& n = g.nodes[i];
    for (ValueId id : n.inputs) ins_[i].push_back(id == kNoValue ? nullptr : &values_[size_t(id)]);
    bool all_const = true;
    for (ValueId id : n.outputs) {
      outs_[i].push_back(id == kNoValue ? nullptr : &values_[size_t(id)]);
      all_const = all_const && (id == kNoValue || g.value(id).is_constant);
    }
    skip_[i] = all_const;
    states_[i] = program_->kernels[i]->make_state();
  }
}

Status Executor::run(std::span<const TensorView> inputs) {
  const Graph& g = program_->graph;
  for (size_t i = 0; i < inputs.size() && i < g.inputs.size(); ++i) {
    RtTensor& t = values_[size_t(g.inputs[i])];
    t.dtype = inputs[i].dtype;
    t.dims.assign(inputs[i].dims.begin(), inputs[i].dims.end());
    t.data = static_cast<uint8_t*>(inputs[i].data);
  }
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (skip_[i]) continue;
    KernelArgs a{ins_[i], outs_[i], &scratch_, states_[i].get()};
    Status s = program_->kernels[i]->run(a);
    if (!s) return Status(s.code(), "node " + g.nodes[i].name + " (" + g.nodes[i].op + "): " + s.message());
  }
  return Status::ok();
}

Status Executor::run_node(size_t i, const Kernel& k, KernelState* state) {
  KernelArgs a{ins_[i], outs_[i], &scratch_, state};
  return k.run(a);
}

Result<double> Executor::time_node(size_t i, const Kernel& k) {
  using clock = std::chrono::steady_clock;
  auto st = k.make_state();
  TS_RETURN_IF_ERROR(run_node(i, k, st.get()));  // warm-up (and oneDNN primitive creation)
  std::vector<double> t;
  auto budget_end = clock::now() + std::chrono::milliseconds(200);
  for (int r = 0; r < 15; ++r) {
    auto t0 = clock::now();
    TS_RETURN_IF_ERROR(run_node(i, k, st.get()));
    auto t1 = clock::now();
    t.push_back(double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()));
    if (r >= 2 && t1 > budget_end) break;
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<std::vector<int64_t>> Executor::node_input_dims(size_t i) const {
  std::vector<std::vector<int64_t>> d;
  for (const RtTensor* t : ins_[i]) d.push_back(t ? t->dims : std::vector<int64_t>{});
  return d;
}

Status Executor::copy_outputs(std::span<TensorView> outputs) const {
  const Graph& g = program_->graph;
  if (outputs.size() != g.outputs.size()) {
    return invalid("expected " + std::to_string(g.outputs.size()) + " outputs, got " + std::to_string(outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const RtTensor& t = values_[size_t(g.outputs[i])];
    TensorView& o = outputs[i];
    if (o.dtype != t.dtype) {
      return invalid("output " + g.value(g.outputs[i]).name + ": dtype " + dtype_name(o.dtype) + ", engine produces " + dtype_name(t.dtype));
    }
    TS_RETURN_IF_ERROR(check_output_room(g.value(g.outputs[i]).name, o, t.dims, t.dtype));
    o.dims.assign(t.dims.begin(), t.dims.end());
    if (t.bytes()) std::memcpy(o.data, t.data, t.bytes());
  }
  return Status::ok();
}

std::vector<std::vector<int64_t>> Executor::output_dims() const {
  std::vector<std::vector<int64_t>> d;
  for (ValueId id : program_->graph.outputs) d.push_back(values_[size_t(id)].dims);
  return d;
}

int64_t Executor::memory_bytes() const {
  int64_t b = int64_t(scratch_.capacity());
  for (const RtTensor& t : values_) b += int64_t(t.storage.size());
  return b;
}

std::vector<int64_t> batch_buckets(const Graph& g, const std::vector<OptimizationProfile>& profiles) {
  if (g.inputs.empty() || profiles.empty()) return {};
  std::string symbol;
  auto batch_symbol = [&](ValueId id) {
    const Value& v = g.value(id);
    if (!v.rank_known || v.shape.empty() || v.shape[0].is_known() || v.shape[0].symbol.empty()) return false;
    if (symbol.empty()) symbol = v.shape[0].symbol;
    return v.shape[0].symbol == symbol;
  };
  for (ValueId id : g.inputs) if (!batch_symbol(id)) return {};
  for (ValueId id : g.outputs) if (!batch_symbol(id)) return {};
  int64_t cap = INT64_MAX;
  for (const OptimizationProfile& p : profiles) {
    for (ValueId id : g.inputs) {
      auto it = p.inputs.find(g.value(id).name);
      if (it == p.inputs.end() || it->second.max.empty()) return {};
      cap = std::min(cap, it->second.max[0]);
    }
  }
  if (cap < 1) return {};
  std::vector<int64_t> b;
  // Stops before x * 2 could overflow: a profile max near 2^63 (a damaged plan) gives 63
  // buckets, not an endless loop.
  for (int64_t x = 1; x < cap; x *= 2) {
    b.push_back(x);
    if (x > cap / 2) break;
  }
  b.push_back(cap);
  return b;
}

std::string describe_bucket_memory(const std::vector<BucketMemory>& m) {
  if (m.empty()) return "";
  std::ostringstream o;
  o << "context memory per batch bucket (measured at build, weights excluded; a context holds the figure of the "
       "largest bucket it ran):";
  char buf[64];
  for (size_t i = 0; i < m.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s %lld: %.2f MiB", i ? "," : "", (long long)m[i].batch,
                  double(m[i].bytes) / double(1 << 20));
    o << buf;
  }
  o << "\n";
  return o.str();
}

namespace {

class EngineImpl;

// One per thread/stream. enqueue() validates at once, then a worker thread runs the job and
// calls done(status). execute() runs inline on the caller's thread (after queued work), so
// synchronous latency has no thread hand-off.
class ContextImpl final : public ExecutionContext {
 public:
  ContextImpl(std::shared_ptr<const EngineImpl> engine, std::unique_ptr<BackendExecutor> exec)
      : engine_(std::move(engine)), exec_(std::move(exec)) {
    worker_ = std::thread([this] { worker_loop(); });
  }
  ~ContextImpl() override {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }

  Status enqueue(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                 std::function<void(Status)> done) override;
  Status execute_inline(std::span<const TensorView> inputs, std::span<TensorView> outputs);
  Result<std::vector<std::vector<int64_t>>> output_dims(std::span<const TensorView> inputs) override;
  Status enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                           DeviceStream stream) override;
  std::string describe() const override {
    std::lock_guard<std::mutex> lk(run_mu_);
    return exec_->describe();
  }
  int64_t memory_bytes() const override {
    std::lock_guard<std::mutex> lk(run_mu_);
    return exec_->memory_bytes();
  }
  std::vector<BucketMemory> memory_bytes_by_bucket() const override {
    std::lock_guard<std::mutex> lk(run_mu_);
    return exec_->memory_bytes_by_bucket();
  }

 private:
  struct Job {
    std::vector<TensorView> inputs;
    std::span<TensorView> outputs;
    std::function<void(Status)> done;
  };
  Status validate(std::span<const TensorView> inputs, std::span<TensorView> outputs) const;
  Status run_locked(std::span<const TensorView> inputs, std::span<TensorView> outputs) {
    std::lock_guard<std::mutex> lk(run_mu_);
    Status s = exec_->run(inputs);
    if (!s) return s;
    return exec_->copy_outputs(outputs);
  }
  void worker_loop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lk(mu_);
        cv_.wait(lk, [this] { return stop_ || !jobs_.empty(); });
        if (jobs_.empty()) return;  // stop_ and drained
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      Status s = run_locked(job.inputs, job.outputs);
      {
        std::lock_guard<std::mutex> lk(mu_);
        --pending_;
      }
      idle_cv_.notify_all();
      if (job.done) job.done(s);
    }
  }

  std::shared_ptr<const EngineImpl> engine_;
  std::unique_ptr<BackendExecutor> exec_;
  mutable std::mutex run_mu_;       // one run at a time on the executor
  std::mutex mu_;                   // guards jobs_, pending_, stop_
  std::condition_variable cv_, idle_cv_;
  std::deque<Job> jobs_;
  int pending_ = 0;
  bool stop_ = false;
  std::thread worker_;

  friend class EngineImpl;
  void wait_idle() {
    std::unique_lock<std::mutex> lk(mu_);
    idle_cv_.wait(lk, [this] { return pending_ == 0; });
  }
};

class EngineImpl final : public Engine, public std::enable_shared_from_this<EngineImpl> {
 public:
  EngineImpl(Plan plan, const Backend* backend, std::shared_ptr<const Program> program)
      : plan_(std::move(plan)), backend_(backend), program_(std::move(program)) {
    const Graph& g = program_->graph;
    for (ValueId id : g.inputs) inputs_.push_back({g.value(id).name, g.value(id).dtype, g.value(id).shape});
    for (ValueId id : g.outputs) outputs_.push_back({g.value(id).name, g.value(id).dtype, g.value(id).shape});
    plan_.graph = Graph{};  // the program holds the graph now
  }
  const std::vector<BindingInfo>& inputs() const override { return inputs_; }
  const std::vector<BindingInfo>& outputs() const override { return outputs_; }
  const std::vector<OptimizationProfile>& profiles() const override { return plan_.profiles; }
  std::string backend() const override { return plan_.backend; }
  int64_t device_memory_bytes() const override { return plan_.device_memory_bytes; }
  std::vector<BucketMemory> bucket_memory() const override { return plan_.bucket_memory; }
  int64_t weight_bytes() const override { return backend_->weight_bytes(*program_); }
  std::shared_ptr<void> allocate_host(size_t bytes) const override { return backend_->allocate_host(bytes); }
  std::string describe() const override;
  Result<std::unique_ptr<ExecutionContext>> create_context() const override {
    ExecutorOptions eo;
    eo.workspace_bytes = plan_.workspace_bytes;
    eo.batch_buckets = batch_buckets(program_->graph, plan_.profiles);
    auto ex = backend_->create_executor(program_, eo);
    if (!ex) return ex.status().with_context("creating a " + plan_.backend + " context");
    return std::unique_ptr<ExecutionContext>(new ContextImpl(shared_from_this(), std::move(ex).value()));
  }
  const Graph& graph() const { return program_->graph; }

 private:
  Plan plan_;
  const Backend* backend_;
  std::shared_ptr<const Program> program_;
  std::vector<BindingInfo> inputs_, outputs_;
};

Status ContextImpl::validate(std::span<const TensorView> inputs, std::span<TensorView> outputs) const {
  TS_RETURN_IF_ERROR(check_inputs(engine_->graph(), engine_->profiles(), inputs));
  if (outputs.size() != engine_->outputs().size()) {
    return invalid("expected " + std::to_string(engine_->outputs().size()) + " outputs, got " + std::to_string(outputs.size()));
  }
  return Status::ok();
}

Status ContextImpl::enqueue(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                            std::function<void(Status)> done) {
  TS_RETURN_IF_ERROR(validate(inputs, outputs));
  {
    std::lock_guard<std::mutex> lk(mu_);
    jobs_.push_back(Job{std::vector<TensorView>(inputs.begin(), inputs.end()), outputs, std::move(done)});
    ++pending_;
  }
  cv_.notify_one();
  return Status::ok();
}

Status ContextImpl::enqueue_on_stream(std::span<const TensorView> inputs, std::span<TensorView> outputs,
                                      DeviceStream stream) {
  TS_RETURN_IF_ERROR(validate(inputs, outputs));
  wait_idle();  // after work queued by enqueue(): one order per context
  std::lock_guard<std::mutex> lk(run_mu_);
  return exec_->enqueue_on_stream(inputs, outputs, stream);
}

Status ContextImpl::execute_inline(std::span<const TensorView> inputs, std::span<TensorView> outputs) {
  TS_RETURN_IF_ERROR(validate(inputs, outputs));
  wait_idle();
  return run_locked(inputs, outputs);
}

Result<std::vector<std::vector<int64_t>>> ContextImpl::output_dims(std::span<const TensorView> inputs) {
  TS_RETURN_IF_ERROR(check_inputs(engine_->graph(), engine_->profiles(), inputs));
  wait_idle();
  std::lock_guard<std::mutex> lk(run_mu_);
  TS_RETURN_IF_ERROR(exec_->run(inputs));
  return exec_->output_dims();
}

std::string EngineImpl::describe() const {
  const Graph& g = program_->graph;
  std::ostringstream o;
  o << "backend " << plan_.backend << " (" << plan_.target_arch << "), precision " << precision_name(plan_.precision)
    << (plan_.tf32 ? " (tf32 allowed)" : "") << ", plan format " << kPlanFormatVersion << "\n";
  o << "memory: weights " << [&] {
    int64_t b = 0;
    for (const Value& v : g.values) if (v.is_constant) b += int64_t(v.data.size());
    return b;
  }() << " bytes, per-context scratch ≈ " << plan_.device_memory_bytes << " bytes at max shapes (estimate), workspace limit "
    << plan_.workspace_bytes << " bytes\n";
  o << describe_bucket_memory(plan_.bucket_memory);
  // A context is not sized by the profile's maximum: it holds what the shapes it ran needed.
  if (const auto buckets = batch_buckets(g, plan_.profiles); !buckets.empty()) {
    o << "batch buckets:";
    for (size_t i = 0; i < buckets.size(); ++i) o << (i ? "," : " ") << buckets[i];
    o << " (a context allocates for the buckets it runs, not the maximum: `ticksentry bench --shapes` measures one,"
         " the context's describe() lists each bucket's)\n";
  }
  for (size_t p = 0; p < plan_.profiles.size(); ++p) {
    for (const auto& [name, r] : plan_.profiles[p].inputs) {
      o << "profile " << p << ": " << name << " min " << dims_str(r.min) << " opt " << dims_str(r.opt)
        << " max " << dims_str(r.max) << "\n";
    }
  }
  for (const BindingInfo& b : inputs_) o << "input  " << b.name << " " << dtype_name(b.dtype) << shape_to_string(b.shape) << "\n";
  for (const BindingInfo& b : outputs_) o << "output " << b.name << " " << dtype_name(b.dtype) << shape_to_string(b.shape) << "\n";
  o << "layers (" << g.nodes.size() << "):\n";
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    o << "  [" << i << "] " << n.op << " " << n.name << " tactic=" << (n.tactic.empty() ? "default" : n.tactic)
      << " precision=" << backend_->layer_precision(*program_, i, plan_.precision);
    if (!n.fused_from.empty()) {
      o << " fused_from=[";
      for (size_t k = 0; k < n.fused_from.size(); ++k) o << (k ? ", " : "") << n.fused_from[k];
      o << "]";
    }
    o << "\n";
  }
  if (!plan_.pass_log.empty()) {
    o << "passes:\n";
    for (const auto& l : plan_.pass_log) o << "  " << l << "\n";
  }
  return o.str();
}

}  // namespace

Status ExecutionContext::execute(std::span<const TensorView> inputs, std::span<TensorView> outputs) {
  if (auto* c = dynamic_cast<ContextImpl*>(this)) return c->execute_inline(inputs, outputs);
  std::promise<Status> done;
  auto fut = done.get_future();
  TS_RETURN_IF_ERROR(enqueue(inputs, outputs, [&done](Status s) { done.set_value(std::move(s)); }));
  return fut.get();
}

Result<std::vector<std::vector<int64_t>>> ExecutionContext::output_dims(std::span<const TensorView> inputs) {
  (void)inputs;
  return Status(StatusCode::kUnsupported, "this execution context does not report output shapes");
}

Result<std::shared_ptr<Engine>> make_engine(Plan plan) {
  const Backend* be = find_backend(plan.backend);
  if (!be) return Status(StatusCode::kUnsupported, "plan was built for backend '" + plan.backend + "', which this build does not have");
  TS_RETURN_IF_ERROR(be->available());
  std::string arch = be->target_arch();
  if (!be->arch_compatible(plan.target_arch)) {
    return Status(StatusCode::kUnsupported, "plan was built for " + plan.backend + " arch " + plan.target_arch +
                                                ", this machine is " + arch + " (rebuild the plan here)");
  }
  TS_RETURN_IF_ERROR(be->check_precision(plan.precision));
  TS_RETURN_IF_ERROR(validate_graph(plan.graph));
  TS_RETURN_IF_ERROR(check_plan(plan));
  auto program = be->prepare(plan.graph, KernelOptions{plan.precision, plan.tf32});
  if (!program) return program.status();
  return std::shared_ptr<Engine>(std::make_shared<EngineImpl>(std::move(plan), be, std::move(program).value()));
}

Result<std::shared_ptr<Engine>> Engine::load(std::span<const uint8_t> bytes) {
  auto plan = deserialize_plan(bytes);
  if (!plan) return plan.status().with_context("loading plan");
  auto e = make_engine(std::move(plan).value());
  if (!e) return e.status().with_context("loading plan");
  return e;
}

Result<std::shared_ptr<Engine>> Engine::load_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(StatusCode::kIoError, "loading plan " + path + ": cannot open");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto e = Engine::load(bytes);
  if (!e) return Status(e.status().code(), path + ": " + e.status().message());
  return e;
}

}  // namespace ts::engine
