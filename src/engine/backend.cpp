#include "engine/backend.h"

#include <algorithm>
#include <cstdlib>

#include "engine/backends/cpu/cpu_backend.h"
#include "engine/runtime.h"
#ifdef TICKSENTRY_HAVE_CUDA
#include "engine/backends/cuda/cuda_backend.h"
#endif

namespace ts::engine {

void RtTensor::ensure(DType t, std::span<const int64_t> d) {
  dtype = t;
  dims.assign(d.begin(), d.end());
  size_t need = bytes();
  // Keep one spare element so an empty tensor still has a valid (unused) pointer.
  if (storage.size() < need + 1) storage.resize(need + 1);
  data = storage.data();
}

void Scratch::Free::operator()(uint8_t* p) const { std::free(p); }

void* Scratch::get(size_t bytes) {
  if (bytes > bytes_ || !buf_) {
    size_t n = (bytes + 63) & ~size_t(63);
    if (n == 0) n = 64;
    buf_.reset(static_cast<uint8_t*>(std::aligned_alloc(64, n)));
    bytes_ = buf_ ? n : 0;
  }
  return buf_.get();
}

Result<std::shared_ptr<const Program>> Backend::prepare(Graph graph) const {
  return prepare(std::move(graph), KernelOptions{});
}

Result<std::shared_ptr<const Program>> Backend::prepare(Graph graph, const KernelOptions& options) const {
  auto program = std::make_shared<Program>();
  program->kernels.reserve(graph.nodes.size());
  for (const Node& n : graph.nodes) {
    TS_RETURN_IF_ERROR(check_supported(graph, n));
    auto k = make_kernel_for(graph, n, n.tactic, options);
    if (!k) return k.status().with_context("node " + n.name + " (" + n.op + ")");
    program->kernels.push_back(std::move(k).value());
  }
  program->graph = std::move(graph);
  return std::shared_ptr<const Program>(std::move(program));
}

Result<std::unique_ptr<BackendExecutor>> Backend::create_executor(std::shared_ptr<const Program> program,
                                                                  const ExecutorOptions&) const {
  return std::unique_ptr<BackendExecutor>(new Executor(std::move(program)));
}

int64_t Backend::weight_bytes(const Program& program) const {
  int64_t b = 0;
  for (const Value& v : program.graph.values) if (v.is_constant) b += int64_t(v.data.size());
  return b;
}

std::shared_ptr<void> Backend::allocate_host(size_t bytes) const {
  void* p = std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) & ~size_t(63));
  if (!p) return nullptr;
  return std::shared_ptr<void>(p, [](void* q) { std::free(q); });
}

const Backend* find_backend(const std::string& name) {
  if (name == "cpu") return &cpu_backend();
#ifdef TICKSENTRY_HAVE_CUDA
  if (name == "cuda") return &cuda_backend();
#endif
  return nullptr;
}

std::vector<std::string> backend_names() {
#ifdef TICKSENTRY_HAVE_CUDA
  return {"cpu", "cuda"};
#else
  return {"cpu"};
#endif
}

}  // namespace ts::engine

namespace ts::engine {
namespace {

// Elements of `dims`, or -1 for a negative dim or a count past 2^62 (no buffer holds it).
int64_t checked_numel(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return -1;
    if (d != 0 && n > (int64_t(1) << 62) / d) return -1;
    n *= d;
  }
  return n;
}

}  // namespace

Status check_output_room(const std::string& name, const TensorView& out, std::span<const int64_t> dims, DType dtype) {
  const int64_t es = int64_t(dtype_size(dtype));
  const int64_t need = checked_numel(dims);
  // The room in elements of `dtype`: capacity_bytes when set, else the dims on entry.
  const int64_t dims_room = checked_numel(out.dims);
  const int64_t have = out.capacity_bytes ? int64_t(std::min<size_t>(out.capacity_bytes, size_t(1) << 62)) / es : dims_room;
  if (need >= 0 && have >= 0 && need <= have) {
    if (need > 0 && !out.data) return Status(StatusCode::kInvalidArgument, "output " + name + ": null data");
    return Status::ok();
  }
  auto count = [](int64_t n) { return n < 0 ? std::string("invalid") : std::to_string(n) + " values"; };
  const std::string buffer = out.capacity_bytes ? std::to_string(out.capacity_bytes) + " bytes"
                                                : dims_str(out.dims) + " (" + count(have) + ")";
  return Status(StatusCode::kInvalidArgument, "output " + name + ": the result is " + dims_str(dims) + " (" + count(need) +
                                                  " of " + dtype_name(dtype) + "), the buffer is " + buffer);
}

}  // namespace ts::engine
