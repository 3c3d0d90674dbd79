// The CUDA executor's steady state allocates no host memory: once a bucket's graph is captured,
// run() + copy_outputs() and enqueue_on_stream() at that bucket find the graph without a key
// string or a map (cuda_graph_capture.h, GraphTable) and allocate nothing. This test binary
// replaces the global operator new / delete and counts the calls made on the test's thread
// between warm-up and the end of N steady calls; it asserts 0. Labelled `gpu`: without a device
// it skips with the reason.
//
// The executor is driven directly (Backend::create_executor on the plan's Program, with the
// runtime's batch buckets), as ContextImpl does: the runtime's own input validation above it is
// not what this test measures.
#include <execinfo.h>
#include <unistd.h>

#include <cstdlib>
#include <new>

#include "cuda_test_util.h"
#include "engine/runtime.h"

#ifdef TICKSENTRY_HAVE_CUDA
#include <cuda_runtime.h>

#include "engine/backends/cuda/cuda_pipeline.h"
#endif

namespace {

// Allocations made on a thread while its counting is on.
thread_local bool t_counting = false;
thread_local long t_allocations = 0;

// TS_ALLOC_TRACE=N: the call stacks of the first N counted allocations go to stderr (frames as
// binary(+offset): `addr2line -f -C -e BINARY OFFSET` names them), to find what allocates.
void count_allocation() {
  ++t_allocations;
  static const long trace = [] {
    const char* v = std::getenv("TS_ALLOC_TRACE");
    return v ? std::atol(v) : 0L;
  }();
  static long traced = 0;
  if (traced >= trace) return;
  ++traced;
  t_counting = false;  // backtrace() may allocate the first time
  void* frames[32];
  const int n = backtrace(frames, 32);
  backtrace_symbols_fd(frames, n, 2);
  static const char kEnd[] = "-- end of allocation stack\n";
  (void)!write(2, kEnd, sizeof kEnd - 1);
  t_counting = true;
}

void* counted_new(std::size_t n) {
  if (t_counting) count_allocation();
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}

void* counted_new_aligned(std::size_t n, std::align_val_t a) {
  if (t_counting) count_allocation();
  const std::size_t al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t n) { return counted_new(n); }
void* operator new[](std::size_t n) { return counted_new(n); }
void* operator new(std::size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void* operator new[](std::size_t n, std::align_val_t a) { return counted_new_aligned(n, a); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace ts::engine::testing {
namespace {

constexpr int64_t kHidden = 32, kOut = 4, kMaxBatch = 64;
constexpr int kWarmRounds = 6, kSteadyRounds = 50;

// Allocations on this thread while `f` runs.
template <typename F>
long allocations_in(F&& f) {
  t_allocations = 0;
  t_counting = true;
  f();
  t_counting = false;
  return t_allocations;
}

TEST(CudaAllocCounter, CountsThisThreadsAllocations) {  // the counter itself can fail
  static std::vector<int>* volatile sink = nullptr;     // observable: the allocations cannot be elided
  const long n = allocations_in([] { sink = new std::vector<int>(100); });
  delete sink;
  EXPECT_EQ(n, 2);  // the vector object and its storage
}

// x [batch, width] → Gemm + Tanh → MatMul → y [batch, 4]; dim 0 the symbol "batch", so the
// executor gets the runtime's buckets 1, 2, 4, ..., 64.
Graph dense_graph(int64_t width) {
  GraphBuilder b;
  ValueId x = b.input("x", sym({"batch", ""}, {0, width}));
  ValueId w1 = b.constant("w1", {width, kHidden}, random_vec(size_t(width * kHidden), 11, 0.05f));
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

// The executor a context of this plan would get.
Result<std::unique_ptr<BackendExecutor>> make_executor(int64_t width) {
  BuildOptions o = options("cuda");
  OptimizationProfile p;
  p.inputs["x"] = ShapeRange{{1, width}, {8, width}, {kMaxBatch, width}};
  o.profiles = {p};
  auto bytes = build_from_graph(dense_graph(width), PassLog{}, o);
  if (!bytes) return bytes.status();
  auto plan = deserialize_plan(bytes.value());
  if (!plan) return plan.status();
  auto program = cuda()->prepare(plan.value().graph, KernelOptions{plan.value().precision, plan.value().tf32});
  if (!program) return program.status();
  ExecutorOptions eo;
  eo.workspace_bytes = plan.value().workspace_bytes;
  eo.batch_buckets = batch_buckets(program.value()->graph, plan.value().profiles);
  if (eo.batch_buckets.empty()) return Status(StatusCode::kInternal, "no batch buckets for the test graph");
  return cuda()->create_executor(program.value(), eo);
}

// Input buffers (`rotate` of them per batch, as the engine benchmark rotates 4) in page-locked
// memory (Engine::allocate_host) or pageable std::vectors, and one output buffer.
struct Buffers {
  std::vector<std::shared_ptr<void>> pinned;
  std::vector<std::vector<float>> pageable;
  std::vector<float*> in;
  std::vector<float> out = std::vector<float>(size_t(kMaxBatch * kOut));
};

Buffers make_buffers(int64_t width, int rotate, bool page_locked) {
  Buffers b;
  const size_t n = size_t(kMaxBatch * width);
  for (int r = 0; r < rotate; ++r) {
    float* p = nullptr;
    if (page_locked) {
      b.pinned.push_back(cuda()->allocate_host(n * sizeof(float)));
      p = static_cast<float*>(b.pinned.back().get());
    } else {
      b.pageable.emplace_back(n);
      p = b.pageable.back().data();
    }
    std::vector<float> v = random_vec(n, 100 + uint32_t(r), 1.0f);
    std::copy(v.begin(), v.end(), p);
    b.in.push_back(p);
  }
  return b;
}

// Runs rounds of run() + copy_outputs() over `batches` (rotating the input buffers) and returns
// the allocations of the last `steady` rounds; *error the first failure, if any.
long run_rounds(BackendExecutor& ex, Buffers& buf, int64_t width, const std::vector<int64_t>& batches, Status* error) {
  // Views made once, as a server reuses its request slots: their dims vectors keep capacity.
  std::vector<TensorView> in(1), out(1);
  in[0].dims = {1, width};
  out[0].dims = {1, kOut};
  out[0].data = buf.out.data();
  out[0].capacity_bytes = buf.out.size() * sizeof(buf.out[0]);
  size_t turn = 0;
  auto round = [&] {
    for (int64_t b : batches) {
      in[0].dims[0] = b;
      in[0].data = buf.in[turn++ % buf.in.size()];
      Status s = ex.run(in);
      if (s) s = ex.copy_outputs(out);
      if (!s && *error) *error = s;
    }
  };
  for (int r = 0; r < kWarmRounds; ++r) round();
  return allocations_in([&] {
    for (int r = 0; r < kSteadyRounds; ++r) round();
  });
}

// Serving's shape: small batches in buckets 1, 4 and 8, pageable inputs, staged copies (and the
// zero-copy graph wherever it measured faster).
TEST(CudaAllocFree, SteadyRunsOfSmallBucketsAllocateNothing) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kWidth = 16;
  auto ex = make_executor(kWidth);
  ASSERT_TRUE(ex) << ex.status().to_string();
  Buffers buf = make_buffers(kWidth, 4, /*page_locked=*/false);
  Status error;
  const long n = run_rounds(*ex.value(), buf, kWidth, {1, 3, 4, 7, 8}, &error);
  ASSERT_TRUE(error) << error.to_string();
  EXPECT_EQ(n, 0) << "allocations in " << kSteadyRounds << " steady rounds of 5 batches\n" << ex.value()->describe();
}

// Page-locked inputs of 64 KB or more per call: the zero-copy graph's copy-in is re-pointed at
// the caller's rows (point_copy_in) when zero-copy won, and large inputs are copied directly.
TEST(CudaAllocFree, SteadyRunsWithPageLockedRotatingInputsAllocateNothing) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kWidth = 4096;  // 16 KB a row: batch 5 is 80 KB, bucket 64 1 MB
  auto ex = make_executor(kWidth);
  ASSERT_TRUE(ex) << ex.status().to_string();
  Buffers buf = make_buffers(kWidth, 4, /*page_locked=*/true);
  Status error;
  const long n = run_rounds(*ex.value(), buf, kWidth, {5, 8, 33, 64}, &error);
  ASSERT_TRUE(error) << error.to_string();
  EXPECT_EQ(n, 0) << ex.value()->describe();
}

#ifdef TICKSENTRY_HAVE_CUDA
// The pipelined path (forced to 2 chunks, as the GPU tests of cuda_enqueue_test do): the chunks'
// copy nodes re-pointed at rotating page-locked inputs (point_pipeline).
TEST(CudaAllocFree, SteadyPipelinedRunsAllocateNothing) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kWidth = 4096;
  cuda::set_pipeline_chunks_for_testing(2);
  auto ex = make_executor(kWidth);
  cuda::set_pipeline_chunks_for_testing(0);
  ASSERT_TRUE(ex) << ex.status().to_string();
  Buffers buf = make_buffers(kWidth, 4, /*page_locked=*/true);
  Status error;
  const long n = run_rounds(*ex.value(), buf, kWidth, {50, 64}, &error);
  ASSERT_TRUE(error) << error.to_string();
  const std::string d = ex.value()->describe();
  EXPECT_NE(d.find("pipelined in 2 chunks"), std::string::npos) << d;
  EXPECT_EQ(n, 0) << d;
}

// enqueue_on_stream on the caller's stream, page-locked inputs and outputs: the kernels-only
// graph between the caller's copies.
TEST(CudaAllocFree, SteadyEnqueueOnStreamAllocatesNothing) {
  SKIP_WITHOUT_GPU();
  constexpr int64_t kWidth = 16;
  auto ex = make_executor(kWidth);
  ASSERT_TRUE(ex) << ex.status().to_string();
  Buffers buf = make_buffers(kWidth, 2, /*page_locked=*/true);
  std::shared_ptr<void> out_mem = cuda()->allocate_host(size_t(kMaxBatch * kOut) * sizeof(float));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  std::vector<TensorView> in(1), out(1);
  in[0].dims = {1, kWidth};
  out[0].dims = {1, kOut};
  out[0].data = out_mem.get();
  out[0].capacity_bytes = size_t(kMaxBatch * kOut) * sizeof(float);
  Status error;
  cudaError_t cuda_error = cudaSuccess;
  size_t turn = 0;
  auto round = [&] {
    for (int64_t b : {1, 3, 4, 16}) {
      in[0].dims[0] = b;
      in[0].data = buf.in[turn++ % buf.in.size()];
      Status s = ex.value()->enqueue_on_stream(in, out, DeviceStream{stream});
      if (!s && error) error = s;
      cudaError_t e = cudaStreamSynchronize(stream);
      if (e != cudaSuccess) cuda_error = e;
    }
  };
  for (int r = 0; r < kWarmRounds; ++r) round();
  const long n = allocations_in([&] {
    for (int r = 0; r < kSteadyRounds; ++r) round();
  });
  cudaStreamDestroy(stream);
  ASSERT_TRUE(error) << error.to_string();
  ASSERT_EQ(cuda_error, cudaSuccess) << cudaGetErrorString(cuda_error);
  const std::string d = ex.value()->describe();
  EXPECT_NE(d.find("enqueue_on_stream"), std::string::npos) << d;  // graphs were captured
  EXPECT_EQ(n, 0) << d;
}
#endif

}  // namespace
}  // namespace ts::engine::testing
