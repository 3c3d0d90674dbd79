// run_passes: the builder's pass pipeline. fold runs a second time after the first shape
// inference: Shape of an intermediate value is only foldable once its dims are known.
#include "engine/passes/passes.h"

namespace ts::engine {

Status run_passes(Graph& g, PassLog& log) {
  TS_RETURN_IF_ERROR(fold_constants(g, log));
  TS_RETURN_IF_ERROR(infer_shapes(g, log));
  size_t before = g.nodes.size();
  TS_RETURN_IF_ERROR(fold_constants(g, log));
  if (g.nodes.size() != before) TS_RETURN_IF_ERROR(infer_shapes(g, log));
  TS_RETURN_IF_ERROR(remove_dead(g, log));
  TS_RETURN_IF_ERROR(fuse(g, log));
  TS_RETURN_IF_ERROR(infer_shapes(g, log));
  TS_RETURN_IF_ERROR(remove_dead(g, log));
  return select_layout(g, log);
}

}  // namespace ts::engine
