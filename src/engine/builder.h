#pragma once
// The builder's back half, for callers that already have an optimized graph (tests that build
// graphs directly in the IR, and build() itself after import and passes): backend support
// check → profiles (given, or defaults from the symbolic dims) → tactic selection at the opt
// shape (timed, or read from the timing cache) → plan bytes.
#include <cstdint>
#include <span>
#include <vector>

#include "core/status.h"
#include "engine/engine.h"
#include "engine/ir/graph.h"
#include "engine/passes/passes.h"

namespace ts::engine {

Result<std::vector<uint8_t>> build_from_graph(Graph graph, const PassLog& log, const BuildOptions& options);

}  // namespace ts::engine
