// select_layout: the CPU backend works on row-major tensors as ONNX defines them; GEMM weight
// layout is recorded per FusedGemm in its "trans_b" attr and packed by the backend at build.
#include "engine/passes/passes.h"

namespace ts::engine {

Status select_layout(Graph& /*g*/, PassLog& log) {
  log.lines.push_back("layout: row-major (cpu)");
  return Status::ok();
}

}  // namespace ts::engine
