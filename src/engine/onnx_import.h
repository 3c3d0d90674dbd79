#pragma once
// ONNX → graph IR. Parses a ModelProto (Debian's libonnx + protobuf), checks the opset
// (7..21 for the default domain; each node brought to one form of its op, onnx_versions.h), converts initializers and Constant nodes into constant
// values, keeps dynamic dims as symbols (dim_param, e.g. "batch", "seq"; unnamed dynamic dims
// get "d<input>_<axis>"). Unsupported ops are NOT rejected here (the builder asks the backend);
// a malformed model (corrupt bytes, empty file, missing initializer, dangling input, unsupported
// opset) → error Status naming what and where.
#include <cstdint>
#include <span>
#include <string>

#include "core/status.h"
#include "engine/ir/graph.h"

namespace ts::engine {

Result<Graph> import_onnx(std::span<const uint8_t> model_bytes);
Result<Graph> import_onnx_file(const std::string& path);

}  // namespace ts::engine
