#include "engine/backend.h"

#include <cstdlib>

#include "engine/backends/cpu/cpu_backend.h"

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
  auto program = std::make_shared<Program>();
  program->kernels.reserve(graph.nodes.size());
  for (const Node& n : graph.nodes) {
    TS_RETURN_IF_ERROR(check_supported(graph, n));
    auto k = make_kernel(graph, n, n.tactic);
    if (!k) return k.status().with_context("node " + n.name + " (" + n.op + ")");
    program->kernels.push_back(std::move(k).value());
  }
  program->graph = std::move(graph);
  return std::shared_ptr<const Program>(std::move(program));
}

const Backend* find_backend(const std::string& name) {
  if (name == "cpu") return &cpu_backend();
  return nullptr;
}

std::vector<std::string> backend_names() { return {"cpu"}; }

}  // namespace ts::engine
