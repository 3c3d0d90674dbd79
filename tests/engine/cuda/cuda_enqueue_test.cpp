// ExecutionContext::enqueue_on_stream (the caller's CUDA stream, device or page-locked host
// memory) against the synchronous execute(), the errors a caller meets, and the executor's shape
// buckets and zero-copy choice. Labelled `gpu`: without a device the GPU cases skip with the
// reason; a CPU engine's enqueue_on_stream is checked everywhere.
#include "cuda_test_util.h"

#ifdef TICKSENTRY_HAVE_CUDA
#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_block_cache.h"
#include "engine/backends/cuda/cuda_executor.h"
#include "engine/bench.h"
#endif

namespace ts::engine::testing {
namespace {

constexpr int64_t kIn = 16, kHidden = 32, kOut = 4, kMaxBatch = 64;

// x [batch, 16] → Gemm + Tanh → Gemm → y [batch, 4], every dim 0 the symbol "batch" (so the
// runtime gives the executor batch buckets 1, 2, 4, ..., 64).
Graph mlp_graph() {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"batch", ""}, {0, kIn}));
  ValueId w1 = b.constant("w1", {kIn, kHidden}, random_vec(size_t(kIn * kHidden), 11, 0.3f));
  ValueId b1 = b.constant("b1", {kHidden}, random_vec(size_t(kHidden), 12, 0.3f));
  ValueId w2 = b.constant("w2", {kHidden, kOut}, random_vec(size_t(kHidden * kOut), 13, 0.3f));
  ValueId h = b.value("h"), a = b.value("a"), y = b.value("y");
  b.node("Gemm", {x, w1, b1}, {h});
  b.node("Tanh", {h}, {a});
  b.node("MatMul", {a, w2}, {y});
  b.g.values[size_t(y)].shape = sym({"batch", ""}, {0, kOut});
  b.g.values[size_t(y)].rank_known = true;
  b.output(y);
  return b.g;
}

Result<std::shared_ptr<Engine>> build_mlp(const std::string& backend, const Graph& g = mlp_graph()) {
  BuildOptions o = options(backend);
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, kIn}, {8, kIn}, {kMaxBatch, kIn}};
  o.profiles = {p};
  return build_graph(g, o);
}

TEST(CudaEnqueue, CpuEngineSaysItHasNoDeviceStreams) {
  auto e = build_mlp("cpu");
  ASSERT_TRUE(e) << e.status().to_string();
  auto ctx = e.value()->create_context();
  ASSERT_TRUE(ctx);
  HostTensor x = random_tensor({2, kIn}, 1, 1.0f);
  std::vector<float> y(2 * kOut);
  std::vector<TensorView> in{x.view()}, out(1);
  out[0].data = y.data();
  out[0].capacity_bytes = y.size() * sizeof(float);
  Status s = ctx.value()->enqueue_on_stream(in, out, DeviceStream{});
  EXPECT_EQ(s.code(), StatusCode::kUnsupported);
  EXPECT_NE(s.message().find("needs the cuda backend"), std::string::npos) << s.message();
}

#ifdef TICKSENTRY_HAVE_CUDA

std::vector<float> run_sync(ExecutionContext& ctx, HostTensor& x) {
  std::vector<float> y(size_t(x.dims[0] * kOut) + 64, NAN);
  std::vector<TensorView> in{x.view()}, out(1);
  out[0].data = y.data();
  out[0].capacity_bytes = y.size() * sizeof(float);
  Status s = ctx.execute(in, out);
  EXPECT_TRUE(s) << s.to_string();
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{x.dims[0], kOut}));
  y.resize(size_t(shape_numel(out[0].dims)));
  return y;
}

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { EXPECT_EQ(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
  DeviceStream handle() const { return DeviceStream{s}; }
};

struct DeviceMem {
  void* p = nullptr;
  explicit DeviceMem(size_t bytes) { EXPECT_EQ(cudaMalloc(&p, bytes), cudaSuccess); }
  ~DeviceMem() { cudaFree(p); }
};

// Two contexts on two caller streams (one with page-locked host memory, one with device
// memory), then one context alternating between both streams; each call's result equals
// execute()'s at batches 1, 5 and 33, over the eager, capture and replay calls of each bucket.
TEST(CudaEnqueue, TwoCallerStreamsMatchTheSyncApi) {
  SKIP_WITHOUT_GPU();
  auto eng = build_mlp("cuda");
  ASSERT_TRUE(eng) << eng.status().to_string();
  Engine& e = *eng.value();
  auto sync_ctx = e.create_context();
  auto ctx_a = e.create_context();
  auto ctx_b = e.create_context();
  auto ctx_c = e.create_context();
  ASSERT_TRUE(sync_ctx && ctx_a && ctx_b && ctx_c);
  Stream sa, sb;
  const size_t max_in = size_t(kMaxBatch * kIn) * 4, max_out = size_t(kMaxBatch * kOut) * 4;
  auto in_a = e.allocate_host(max_in), out_a = e.allocate_host(max_out);
  auto in_c = e.allocate_host(max_in), out_c1 = e.allocate_host(max_out), out_c2 = e.allocate_host(max_out);
  ASSERT_TRUE(in_a && out_a && in_c && out_c1 && out_c2);
  DeviceMem in_b(max_in), out_b(max_out);
  cudaEvent_t ev_a, ev_b;
  ASSERT_EQ(cudaEventCreate(&ev_a), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&ev_b), cudaSuccess);
  uint32_t seed = 40;
  for (int64_t b : {1, 5, 33}) {
    for (int round = 0; round < 3; ++round) {
      SCOPED_TRACE("batch " + std::to_string(b) + " call " + std::to_string(round + 1));
      HostTensor x1 = random_tensor({b, kIn}, seed++, 1.5f), x2 = random_tensor({b, kIn}, seed++, 1.5f);
      const std::vector<float> want1 = run_sync(*sync_ctx.value(), x1), want2 = run_sync(*sync_ctx.value(), x2);
      const size_t in_bytes = x1.bytes.size(), out_n = size_t(b * kOut);
      std::memcpy(in_a.get(), x1.bytes.data(), in_bytes);
      ASSERT_EQ(cudaMemcpy(in_b.p, x2.bytes.data(), in_bytes, cudaMemcpyHostToDevice), cudaSuccess);
      std::vector<TensorView> ia{TensorView{DType::kF32, {b, kIn}, in_a.get()}}, oa(1);
      std::vector<TensorView> ib{TensorView{DType::kF32, {b, kIn}, in_b.p}}, ob(1);
      oa[0].data = out_a.get();
      oa[0].capacity_bytes = ob[0].capacity_bytes = max_out;
      ob[0].data = out_b.p;
      Status s = ctx_a.value()->enqueue_on_stream(ia, oa, sa.handle());
      ASSERT_TRUE(s) << s.to_string();
      s = ctx_b.value()->enqueue_on_stream(ib, ob, sb.handle());
      ASSERT_TRUE(s) << s.to_string();
      EXPECT_EQ(oa[0].dims, (std::vector<int64_t>{b, kOut}));
      EXPECT_EQ(ob[0].dims, (std::vector<int64_t>{b, kOut}));
      ASSERT_EQ(cudaEventRecord(ev_a, sa.s), cudaSuccess);
      ASSERT_EQ(cudaEventRecord(ev_b, sb.s), cudaSuccess);
      ASSERT_EQ(cudaEventSynchronize(ev_a), cudaSuccess);
      ASSERT_EQ(cudaEventSynchronize(ev_b), cudaSuccess);
      std::vector<float> got_a(static_cast<float*>(out_a.get()), static_cast<float*>(out_a.get()) + out_n);
      std::vector<float> got_b(out_n);
      ASSERT_EQ(cudaMemcpy(got_b.data(), out_b.p, out_n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
      EXPECT_EQ(compare(got_a, want1, 1e-6), "");
      EXPECT_EQ(compare(got_b, want2, 1e-6), "");

      // One context, both streams: the second call waits for the first on the device.
      std::memcpy(in_c.get(), x1.bytes.data(), in_bytes);
      std::vector<TensorView> ic{TensorView{DType::kF32, {b, kIn}, in_c.get()}}, oc1(1), oc2(1);
      oc1[0].data = out_c1.get();
      oc1[0].capacity_bytes = oc2[0].capacity_bytes = max_out;
      oc2[0].data = out_c2.get();
      ASSERT_TRUE(ctx_c.value()->enqueue_on_stream(ic, oc1, sa.handle()));
      ASSERT_TRUE(ctx_c.value()->enqueue_on_stream(std::vector<TensorView>{TensorView{DType::kF32, {b, kIn}, in_b.p}}, oc2,
                                                   sb.handle()));
      ASSERT_EQ(cudaStreamSynchronize(sb.s), cudaSuccess);  // sb's call waited for sa's
      std::vector<float> c1(static_cast<float*>(out_c1.get()), static_cast<float*>(out_c1.get()) + out_n);
      std::vector<float> c2(static_cast<float*>(out_c2.get()), static_cast<float*>(out_c2.get()) + out_n);
      EXPECT_EQ(compare(c1, want1, 1e-6), "");
      EXPECT_EQ(compare(c2, want2, 1e-6), "");
      ASSERT_EQ(cudaStreamSynchronize(sa.s), cudaSuccess);
    }
  }
  // A synchronous run after stream work on the same context sees its own inputs only.
  HostTensor x = random_tensor({7, kIn}, 99, 1.0f);
  EXPECT_EQ(compare(run_sync(*ctx_c.value(), x), run_sync(*sync_ctx.value(), x), 1e-6), "");
  EXPECT_NE(ctx_a.value()->describe().find("enqueue_on_stream"), std::string::npos) << ctx_a.value()->describe();
  cudaEventDestroy(ev_a);
  cudaEventDestroy(ev_b);
}

TEST(CudaEnqueue, BadCallsAreStatusesAndQueueNothing) {
  SKIP_WITHOUT_GPU();
  auto eng = build_mlp("cuda");
  ASSERT_TRUE(eng) << eng.status().to_string();
  auto ctx = eng.value()->create_context();
  ASSERT_TRUE(ctx);
  Stream st;
  auto in = eng.value()->allocate_host(size_t(128 * kIn) * 4), out = eng.value()->allocate_host(size_t(128 * kOut) * 4);
  std::vector<TensorView> o(1);
  o[0].data = out.get();
  o[0].capacity_bytes = size_t(128 * kOut) * 4;
  // Wrong feature count: the bindings say so.
  Status s = ctx.value()->enqueue_on_stream(std::vector<TensorView>{TensorView{DType::kF32, {2, kIn + 1}, in.get()}}, o, st.handle());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("does not match [batch,16]"), std::string::npos) << s.message();
  // Beyond the profile.
  s = ctx.value()->enqueue_on_stream(std::vector<TensorView>{TensorView{DType::kF32, {65, kIn}, in.get()}}, o, st.handle());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("outside profile 0"), std::string::npos) << s.message();
  // Pageable host memory cannot be copied asynchronously.
  std::vector<float> pageable(size_t(2 * kIn), 1.0f);
  s = ctx.value()->enqueue_on_stream(std::vector<TensorView>{TensorView{DType::kF32, {2, kIn}, pageable.data()}}, o, st.handle());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("input x: pageable host memory"), std::string::npos) << s.message();
  // No output memory.
  std::vector<TensorView> none(1);
  s = ctx.value()->enqueue_on_stream(std::vector<TensorView>{TensorView{DType::kF32, {2, kIn}, in.get()}}, none, st.handle());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("output y: null data"), std::string::npos) << s.message();
  // The context still works after all of them.
  HostTensor x = random_tensor({2, kIn}, 5, 1.0f);
  std::memcpy(in.get(), x.bytes.data(), x.bytes.size());
  ASSERT_TRUE(ctx.value()->enqueue_on_stream(std::vector<TensorView>{TensorView{DType::kF32, {2, kIn}, in.get()}}, o, st.handle()));
  ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
  auto ref = eng.value()->create_context();
  std::vector<float> got(static_cast<float*>(out.get()), static_cast<float*>(out.get()) + 2 * kOut);
  EXPECT_EQ(compare(got, run_sync(*ref.value(), x), 1e-6), "");
}

// Batches 3 and 4 share bucket 4's graph; the outputs are trimmed and match the CPU backend;
// the zero-copy choice is measured and shown.
TEST(CudaEnqueue, BatchesRunAtTheirBucketWithOneGraphAndAMeasuredCopyPath) {
  SKIP_WITHOUT_GPU();
  auto gpu = build_mlp("cuda");
  auto cpu = build_mlp("cpu");
  ASSERT_TRUE(gpu && cpu);
  auto g = gpu.value()->create_context();
  auto c = cpu.value()->create_context();
  ASSERT_TRUE(g && c);
  uint32_t seed = 70;
  for (int64_t b : {3, 3, 4, 3, 4}) {
    HostTensor x = random_tensor({b, kIn}, seed++, 1.5f);
    EXPECT_EQ(compare(run_sync(*g.value(), x), run_sync(*c.value(), x), 1e-5), "") << "batch " << b;
  }
  const std::string d = g.value()->describe();
  EXPECT_NE(d.find("batch buckets 1,2,4,8,16,32,64"), std::string::npos) << d;
  EXPECT_NE(d.find("; 1 CUDA graphs"), std::string::npos) << d;  // batches 3 and 4: bucket 4's
  EXPECT_NE(d.find("run [4,16]: zero-copy (mapped)"), std::string::npos) << d;
}

// An output whose dim 0 does not follow the batch (declared [batch,16], really [16,batch]):
// the executor notices at the padded shape, turns bucketing off and returns the exact result.
TEST(CudaEnqueue, BucketingTurnsItselfOffWhenAnOutputDoesNotFollowTheBatch) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  ValueId x = b.input("x", sym({"batch", ""}, {0, kIn}));
  ValueId y = b.value("y");
  b.node("Transpose", {x}, {y}).attrs["perm"] = std::vector<int64_t>{1, 0};
  b.g.values[size_t(y)].shape = sym({"batch", ""}, {0, kIn});
  b.g.values[size_t(y)].rank_known = true;
  b.output(y);
  auto gpu = build_mlp("cuda", b.g);
  ASSERT_TRUE(gpu) << gpu.status().to_string();
  auto ctx = gpu.value()->create_context();
  ASSERT_TRUE(ctx);
  HostTensor in = random_tensor({3, kIn}, 3, 1.0f);
  std::vector<float> yv(size_t(kMaxBatch * kIn), NAN);
  std::vector<TensorView> iv{in.view()}, ov(1);
  ov[0].data = yv.data();
  ov[0].capacity_bytes = yv.size() * sizeof(float);
  for (int k = 0; k < 3; ++k) {
    Status s = ctx.value()->execute(iv, ov);
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(ov[0].dims, (std::vector<int64_t>{kIn, 3}));
    for (int64_t r = 0; r < kIn; ++r) {
      for (int64_t col = 0; col < 3; ++col) ASSERT_EQ(yv[size_t(r * 3 + col)], in.f()[col * kIn + r]);
    }
  }
  EXPECT_NE(ctx.value()->describe().find("exact shapes (no batch buckets: an output's dim 0 is not the padded batch 4)"),
            std::string::npos)
      << ctx.value()->describe();
}

// --- pipelined copy and compute (large buckets) ------------------------------------------------

// Contexts created while one of these lives get `chunks` (cuda_executor.h's test hook).
struct ForcedChunks {
  explicit ForcedChunks(int chunks) { cuda::set_pipeline_chunks_for_testing(chunks); }
  ~ForcedChunks() { cuda::set_pipeline_chunks_for_testing(0); }
};

// A context of `e` created with `chunks` forced (1: pipelining off).
std::unique_ptr<ExecutionContext> forced_context(const Engine& e, int chunks) {
  ForcedChunks k(chunks);
  auto c = e.create_context();
  EXPECT_TRUE(c) << c.status().to_string();
  return c ? std::move(c).value() : nullptr;
}

constexpr int64_t kPipeSeq = 30, kPipeFeatures = 32, kPipeMaxBatch = 4096;

// A models/fixtures.py model built for the CPU and (FP16) the CUDA backend, batch 1..4096 at
// T = 30; the CUDA plan keeps its default tactics (the chunk sizes pick theirs at run time).
struct PipeModel {
  std::shared_ptr<Engine> cpu, gpu;
};
Result<PipeModel> build_pipe_model(const std::string& name) {
  auto bytes = read_bytes(model_fixtures() / name / "model.onnx");
  OptimizationProfile prof;
  prof.inputs["x"] = ShapeRange{{1, kPipeSeq, kPipeFeatures}, {1024, kPipeSeq, kPipeFeatures}, {kPipeMaxBatch, kPipeSeq, kPipeFeatures}};
  BuildOptions co = options("cpu");
  co.profiles = {prof};
  BuildOptions go = options("cuda", Precision::kFP16);
  go.profiles = {prof};
  go.time_tactics = false;
  auto cp = build(bytes, co);
  if (!cp) return cp.status();
  auto gp = build(bytes, go);
  if (!gp) return gp.status();
  auto ce = Engine::load(cp.value());
  if (!ce) return ce.status();
  auto ge = Engine::load(gp.value());
  if (!ge) return ge.status();
  return PipeModel{ce.value(), ge.value()};
}

// execute() into a NaN-poisoned buffer larger than the result: the dims are trimmed to the
// caller's batch and nothing past its rows is written (a pad row never leaks out).
std::vector<float> run_rows(ExecutionContext& ctx, TensorView x, size_t out_cap, std::vector<int64_t>* dims = nullptr) {
  std::vector<float> y(out_cap, NAN);
  std::vector<TensorView> in{x}, out(1);
  out[0].data = y.data();
  out[0].capacity_bytes = y.size() * sizeof(float);
  Status s = ctx.execute(in, out);
  EXPECT_TRUE(s) << s.to_string();
  if (!s) return {};
  EXPECT_FALSE(out[0].dims.empty());
  if (out[0].dims.empty()) return {};
  EXPECT_EQ(out[0].dims[0], x.dims[0]);
  const size_t n = size_t(shape_numel(out[0].dims));
  for (size_t i = n; i < out_cap; ++i) {
    if (!std::isnan(y[i])) {
      ADD_FAILURE() << "element " << i << " past the caller's " << x.dims[0] << " rows was written";
      break;
    }
  }
  if (dims) *dims = out[0].dims;
  y.resize(n);
  return y;
}

class CudaPipeline : public ::testing::TestWithParam<const char*> {};

// The pipelined path forced to 4 chunks against the plain path (the same FP16 plan, pipelining
// off) and the CPU backend, at batches that are and are not multiples of 4 × chunk (4096, 3000 in
// bucket 4096, 1025 in bucket 2048), over each bucket's eager, capture and replay calls, the
// caller's input alternating between two page-locked buffers (the graph's copy nodes re-pointed)
// and once in pageable memory (the plain graph runs); enqueue_on_stream agrees with execute().
TEST_P(CudaPipeline, ForcedChunksMatchThePlainPathAndTheCpu) {
  SKIP_WITHOUT_GPU();
  const std::string name = GetParam();
  if (!fs::exists(model_fixtures() / name / "model.onnx")) {
    GTEST_SKIP() << name << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)";
  }
  auto m = build_pipe_model(name);
  ASSERT_TRUE(m) << m.status().to_string();
  cuda::block_cache_trim(cuda::BlockKind::kDevice);  // memory compared below: no cached blocks up to 2× a request
  auto cpu = m.value().cpu->create_context();
  std::unique_ptr<ExecutionContext> piped = forced_context(*m.value().gpu, 4), plain = forced_context(*m.value().gpu, 1);
  ASSERT_TRUE(piped && plain);
  ASSERT_TRUE(cpu);
  const size_t max_in = size_t(kPipeMaxBatch * kPipeSeq * kPipeFeatures) * 4;
  auto pin_a = m.value().gpu->allocate_host(max_in), pin_b = m.value().gpu->allocate_host(max_in);
  ASSERT_TRUE(pin_a && pin_b);
  const size_t out_cap = size_t(kPipeMaxBatch * kPipeSeq * 4) + 64;  // gru_2x128: [batch, seq, 4]
  uint32_t seed = 500;
  struct Step {
    int64_t batch;
    bool cpu;  // also against the CPU backend (costly at 4096 on the host)
  };
  for (Step st : {Step{4096, false}, Step{3000, true}, Step{1025, true}, Step{4096, false}}) {
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE(name + " batch " + std::to_string(st.batch) + " call " + std::to_string(call + 1));
      HostTensor x = random_tensor({st.batch, kPipeSeq, kPipeFeatures}, seed++, 2.0f);
      void* pin = call % 2 ? pin_b.get() : pin_a.get();
      std::memcpy(pin, x.bytes.data(), x.bytes.size());
      TensorView xv{DType::kF32, x.dims, pin};
      std::vector<int64_t> dims_piped, dims_plain;
      const std::vector<float> got = run_rows(*piped, xv, out_cap, &dims_piped);
      const std::vector<float> want = run_rows(*plain, xv, out_cap, &dims_plain);
      EXPECT_EQ(dims_piped, dims_plain);
      EXPECT_EQ(compare(got, want, kFp16.rel), "") << "pipelined vs plain";
      if (st.cpu && call == 2) {
        const std::vector<float> ref = run_rows(*cpu.value(), x.view(), out_cap);
        EXPECT_EQ(compare(got, ref, kFp16.rel), "") << "pipelined vs cpu";
      }
    }
  }
  const std::string d = piped->describe();
  EXPECT_NE(d.find("run [4096,30,32]: copies"), std::string::npos) << d;
  EXPECT_NE(d.find("pipelined in 4 chunks (forced)"), std::string::npos) << d;
  EXPECT_EQ(plain->describe().find("pipelined"), std::string::npos) << plain->describe();
  // Memory: once K is chosen the context keeps only what a chunk needs (shrink_to_pipeline):
  // no more than the plain context's whole bucket (chunk-sized intermediates and scratch).
  EXPECT_NE(d.find("bucket 4096 kept its chunks' buffers only"), std::string::npos) << d;
  EXPECT_LE(piped->memory_bytes(), plain->memory_bytes()) << d << plain->describe();

  // Pageable memory at a pipelined bucket: the same chunks run eagerly (the pipelined graph's
  // copy nodes cannot read it, and a shrunk bucket keeps no plain graph); then page-locked again.
  HostTensor x = random_tensor({3000, kPipeSeq, kPipeFeatures}, 900, 2.0f);
  const std::vector<float> want = run_rows(*plain, x.view(), out_cap);
  EXPECT_EQ(compare(run_rows(*piped, x.view(), out_cap), want, kFp16.rel), "") << "pageable input";
  std::memcpy(pin_a.get(), x.bytes.data(), x.bytes.size());
  EXPECT_EQ(compare(run_rows(*piped, TensorView{DType::kF32, x.dims, pin_a.get()}, out_cap), want, kFp16.rel), "")
      << "page-locked after pageable";

  // enqueue_on_stream on the same context (its own graph of the bucket's kernels) agrees.
  Stream st;
  auto out_pin = m.value().gpu->allocate_host(out_cap * 4);
  ASSERT_TRUE(out_pin);
  std::vector<TensorView> in{TensorView{DType::kF32, x.dims, pin_a.get()}}, out(1);
  for (int call = 0; call < 3; ++call) {
    out[0].data = out_pin.get();
    out[0].capacity_bytes = out_cap * 4;
    Status s = piped->enqueue_on_stream(in, out, st.handle());
    ASSERT_TRUE(s) << s.to_string();
    ASSERT_EQ(cudaStreamSynchronize(st.s), cudaSuccess);
    const float* o = static_cast<const float*>(out_pin.get());
    EXPECT_EQ(compare(std::vector<float>(o, o + want.size()), want, kFp16.rel), "") << "enqueue_on_stream call " << call + 1;
  }

  // A bad input at a pipelined bucket is still a Status, and the context still works.
  HostTensor bad = random_tensor({3000, kPipeSeq, kPipeFeatures + 1}, 901, 1.0f);
  std::vector<float> y(out_cap);
  std::vector<TensorView> bi{bad.view()}, bo(1);
  bo[0].data = y.data();
  bo[0].capacity_bytes = y.size() * sizeof(float);
  Status s = piped->execute(bi, bo);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.to_string();
  EXPECT_EQ(compare(run_rows(*piped, TensorView{DType::kF32, x.dims, pin_a.get()}, out_cap), want, kFp16.rel), "")
      << "after a bad call";
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CudaPipeline, ::testing::Values("gru_2x128", "lstm_2x128", "transformer_relu"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

// K that does not divide the bucket (cuda_executor.h, kPipelineChunkCounts): 6 chunks of 683 rows
// and a last one of 681 (bucket 4096), of 342 and 338 (bucket 2048, batch 1025: chunks wholly past
// the caller's rows copy one row), against the plain path, eager / capture / replay with the
// caller's buffer alternating; nothing written past the caller's rows (run_rows checks).
TEST(CudaPipelineUneven, SixChunksMatchThePlainPath) {
  SKIP_WITHOUT_GPU();
  const std::string name = "gru_2x128";
  if (!fs::exists(model_fixtures() / name / "model.onnx")) {
    GTEST_SKIP() << name << " is missing (run the engine_fixtures test or set TS_ENGINE_FIXTURES)";
  }
  auto m = build_pipe_model(name);
  ASSERT_TRUE(m) << m.status().to_string();
  std::unique_ptr<ExecutionContext> piped = forced_context(*m.value().gpu, 6), plain = forced_context(*m.value().gpu, 1);
  ASSERT_TRUE(piped && plain);
  const size_t max_in = size_t(kPipeMaxBatch * kPipeSeq * kPipeFeatures) * 4;
  auto pin_a = m.value().gpu->allocate_host(max_in), pin_b = m.value().gpu->allocate_host(max_in);
  ASSERT_TRUE(pin_a && pin_b);
  const size_t out_cap = size_t(kPipeMaxBatch * kPipeSeq * 4) + 64;
  uint32_t seed = 700;
  for (int64_t batch : {4096, 3000, 1025}) {
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " call " + std::to_string(call + 1));
      HostTensor x = random_tensor({batch, kPipeSeq, kPipeFeatures}, seed++, 2.0f);
      void* pin = call % 2 ? pin_b.get() : pin_a.get();
      std::memcpy(pin, x.bytes.data(), x.bytes.size());
      TensorView xv{DType::kF32, x.dims, pin};
      std::vector<int64_t> dims_piped, dims_plain;
      const std::vector<float> got = run_rows(*piped, xv, out_cap, &dims_piped);
      const std::vector<float> want = run_rows(*plain, xv, out_cap, &dims_plain);
      EXPECT_EQ(dims_piped, dims_plain);
      EXPECT_EQ(compare(got, want, kFp16.rel), "") << "6 chunks vs plain";
    }
  }
  const std::string d = piped->describe();
  EXPECT_NE(d.find("pipelined in 6 chunks (forced)"), std::string::npos) << d;
}

// x [batch, 120, 20] → Tanh → y, batch 1..4096 (FP32). Measured choice (no hook): a serving-sized
// bucket (256 rows, 2.5 MB of input) is never pipelined; bucket 4096 (39 MB) is timed with it.
TEST(CudaPipelineChoice, ServingBucketsNeverPipelineLargeOnesAreMeasured) {
  SKIP_WITHOUT_GPU();
  GraphBuilder b;
  ValueId x = b.input("x", sym({"batch", "", ""}, {0, 120, 20}));
  ValueId y = b.value("y");
  b.node("Tanh", {x}, {y});
  b.g.values[size_t(y)].shape = sym({"batch", "", ""}, {0, 120, 20});
  b.g.values[size_t(y)].rank_known = true;
  b.output(y);
  BuildOptions o = options("cuda");
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, 120, 20}, {256, 120, 20}, {4096, 120, 20}};
  o.profiles = {p};
  auto eng = build_graph(b.g, o);
  ASSERT_TRUE(eng) << eng.status().to_string();
  auto ctx = eng.value()->create_context();
  ASSERT_TRUE(ctx);
  const int64_t row = 120 * 20;
  auto pin = eng.value()->allocate_host(size_t(4096 * row) * 4);
  ASSERT_TRUE(pin);
  for (int64_t batch : {256, 200, 4096, 3001}) {
    for (int call = 0; call < 3; ++call) {
      SCOPED_TRACE("batch " + std::to_string(batch) + " call " + std::to_string(call + 1));
      HostTensor xt = random_tensor({batch, 120, 20}, uint32_t(batch * 7 + call), 3.0f);
      std::memcpy(pin.get(), xt.bytes.data(), xt.bytes.size());
      std::vector<float> want(size_t(batch * row));
      for (size_t i = 0; i < want.size(); ++i) want[i] = std::tanh(xt.f()[i]);
      EXPECT_EQ(compare(run_rows(*ctx.value(), TensorView{DType::kF32, xt.dims, pin.get()}, size_t(4096 * row)), want, kFp32.rel), "");
    }
    if (batch == 200) {
      const std::string d = ctx.value()->describe();
      EXPECT_NE(d.find("run [256,120,20]"), std::string::npos) << d;
      EXPECT_EQ(d.find("pipelin"), std::string::npos) << "a serving-sized bucket took the pipelined path:\n" << d;
    }
  }
  const std::string d = ctx.value()->describe();
  EXPECT_NE(d.find("run [4096,120,20]: copies"), std::string::npos) << d;
  EXPECT_NE(d.find("pipelin"), std::string::npos) << "bucket 4096 was not measured with the pipelined path:\n" << d;
  EXPECT_NE(d.find(" plain "), std::string::npos) << d;
}

// `ticksentry bench`'s device phase (engine/bench.h): the H2D / compute / D2H split from CUDA
// events, the device and driver named, page-locked and pageable host buffers, and
// --useCudaGraph: the context replays its graphs with it and launches kernels one by one
// without (the same results either way).
TEST(CudaBench, DeviceSplitGraphsAndHostMemory) {
  SKIP_WITHOUT_GPU();
  auto eng = build_mlp("cuda");
  ASSERT_TRUE(eng) << eng.status().to_string();
  for (bool graphs : {true, false}) {
    for (bool pageable : {false, true}) {
      SCOPED_TRACE(std::string(graphs ? "graphs" : "no graphs") + (pageable ? ", pageable" : ", page-locked"));
      BenchOptions o;
      o.shapes["x"] = {8, kIn};
      o.warm_up_ms = 0;
      o.duration_s = 0;
      o.iterations = 64;
      o.use_cuda_graph = graphs;
      o.pageable = pageable;
      o.percentiles = {50, 99};
      auto r = run_bench(*eng.value(), o);
      ASSERT_TRUE(r) << r.status().to_string();
      const BenchReport& b = r.value();
      EXPECT_FALSE(b.device.empty());
      EXPECT_FALSE(b.driver.empty());
      EXPECT_NE(b.runtime.find("CUDA runtime"), std::string::npos) << b.runtime;
      EXPECT_EQ(b.host_to_host.count, 64);
      ASSERT_TRUE(b.device_timed) << b.device_note;
      EXPECT_GE(b.compute.count, 64);
      EXPECT_GT(b.h2d.median_us, 0);
      EXPECT_GT(b.compute.median_us, 0);
      EXPECT_GT(b.d2h.median_us, 0);
      EXPECT_GE(b.host_latency.median_us, b.compute.median_us);
      EXPECT_GT(b.enqueue.median_us, 0);
      EXPECT_GT(b.device_throughput_per_s, 0);
      EXPECT_GT(b.context_memory_bytes, 0);
      ASSERT_FALSE(b.layers.empty());
      EXPECT_EQ(b.precision, "fp32");
      if (graphs) {
        EXPECT_EQ(b.context.find("graphs off"), std::string::npos) << b.context;
        EXPECT_EQ(b.context.find("; 0 CUDA graphs"), std::string::npos) << "no graph captured:\n" << b.context;
      } else {
        EXPECT_NE(b.context.find("; 0 CUDA graphs"), std::string::npos) << b.context;
        EXPECT_NE(b.context.find("graphs off"), std::string::npos) << b.context;
      }
    }
  }
  EXPECT_TRUE(cuda_graphs_for_this_thread()) << "run_bench restores the thread's setting";
}

TEST(CudaBench, AContextWithoutGraphsComputesTheSameResults) {
  SKIP_WITHOUT_GPU();
  auto eng = build_mlp("cuda");
  ASSERT_TRUE(eng) << eng.status().to_string();
  auto with = eng.value()->create_context();
  set_cuda_graphs_for_this_thread(false);
  auto without = eng.value()->create_context();
  set_cuda_graphs_for_this_thread(true);
  ASSERT_TRUE(with && without);
  uint32_t seed = 70;
  for (int64_t b : {1, 5, 33}) {
    for (int call = 0; call < 3; ++call) {  // eager, capture, replay on the graph context
      HostTensor x = random_tensor({b, kIn}, seed++, 1.0f);
      EXPECT_EQ(compare(run_sync(*without.value(), x), run_sync(*with.value(), x), 1e-6), "") << "batch " << b;
    }
  }
  EXPECT_NE(without.value()->describe().find("; 0 CUDA graphs"), std::string::npos) << without.value()->describe();
  EXPECT_EQ(with.value()->describe().find("; 0 CUDA graphs"), std::string::npos) << with.value()->describe();
}

#endif  // TICKSENTRY_HAVE_CUDA

}  // namespace
}  // namespace ts::engine::testing
