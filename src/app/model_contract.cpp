#include "app/model_contract.h"

#include "engine/ir/graph.h"
#include "engine/onnx_import.h"

namespace ts {

namespace {

std::string io_list(const engine::Graph& g, const std::vector<engine::ValueId>& ids) {
  std::string out;
  for (engine::ValueId id : ids) {
    const engine::Value& v = g.value(id);
    out += (out.empty() ? "" : ", ") + v.name + " " + engine::dtype_name(v.dtype) + " " +
           (v.rank_known ? engine::shape_to_string(v.shape) : std::string("[?]"));
  }
  return out.empty() ? "none" : out;
}

}  // namespace

Status check_onnx_contract(const std::string& path, int64_t rows, int64_t features) {
  auto g = engine::import_onnx_file(path);
  if (!g.is_ok()) return g.status().with_context("model " + path);
  const engine::Graph& graph = g.value();
  const std::string want = "the pipeline feeds one float32 input named x [batch, " + std::to_string(rows) + ", " +
                           std::to_string(features) + "] (window_rows x features, docs/bring-your-own-model.md)";
  auto refuse = [&](const std::string& why) {
    return Status(StatusCode::kInvalidArgument, "model " + path + ": " + why + "; " + want +
                                                    "; the model's inputs: " + io_list(graph, graph.inputs) +
                                                    "; outputs: " + io_list(graph, graph.outputs));
  };
  if (graph.inputs.size() != 1) return refuse("expected one input, found " + std::to_string(graph.inputs.size()));
  const engine::Value& x = graph.value(graph.inputs[0]);
  if (x.name != "x") return refuse("its input is named '" + x.name + "', not 'x' (rename it at export: input_names=[\"x\"])");
  if (x.dtype != engine::DType::kF32) return refuse("its input is " + std::string(engine::dtype_name(x.dtype)));
  if (x.rank_known) {
    if (x.shape.size() != 3) return refuse("its input has rank " + std::to_string(x.shape.size()) + ", not 3");
    if (x.shape[2].is_known() && x.shape[2].value != features) {
      return refuse("it takes F = " + std::to_string(x.shape[2].value) + " features, the pipeline has " +
                    std::to_string(features));
    }
    if (x.shape[1].is_known() && x.shape[1].value != rows) {
      return refuse("it takes windows of T = " + std::to_string(x.shape[1].value) + " rows, [model] window_rows is " +
                    std::to_string(rows));
    }
  }
  if (graph.outputs.size() != 1) {
    return refuse("serving reads one output of one probability per row, the model has " +
                  std::to_string(graph.outputs.size()));
  }
  const engine::Value& y = graph.value(graph.outputs[0]);
  if (y.rank_known && !(y.shape.size() == 1 || (y.shape.size() == 2 && (!y.shape[1].is_known() || y.shape[1].value == 1)))) {
    return refuse("its output " + y.name + " is " + engine::shape_to_string(y.shape) +
                  ", serving reads one probability per row ([batch] or [batch,1]; export the probability column "
                  "alone, e.g. torch.sigmoid(logits)[:, 1:2] or softmax(...)[:, 1:2])");
  }
  return Status::ok();
}

}  // namespace ts
