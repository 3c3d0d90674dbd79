#include "app/model_contract.h"

#include <filesystem>

#include "engine/ir/graph.h"
#include "engine/onnx_import.h"
#include "features/feature_set.h"

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

Status check_onnx_contract(const std::string& path, int64_t rows, int64_t features, const std::string& manifest_file) {
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
  if (y.rank_known && !(y.shape.size() == 1 || y.shape.size() == 2)) {
    return refuse("its output " + y.name + " is " + engine::shape_to_string(y.shape) +
                  ", serving reads [batch] or [batch,C] with one column the probability");
  }
  const bool one_per_row = !y.rank_known || y.shape.size() == 1 || !y.shape[1].is_known() || y.shape[1].value == 1;
  if (!one_per_row && manifest_file.empty()) {
    std::filesystem::path beside(path);
    beside.replace_extension(".manifest.json");
    return refuse("its output " + y.name + " is " + engine::shape_to_string(y.shape) +
                  " and nothing says which column is the probability: write {\"probability_column\": N} to " +
                  beside.string() + " (or build a plan with --probabilityColumn N), or export the probability "
                  "column alone, e.g. softmax(logits)[:, 1:2]");
  }
  return Status::ok();
}

Status check_plan_contract(const engine::ModelManifest* m, const engine::Engine& plan, const std::string& path,
                           int64_t rows, int64_t features) {
  if (!m) return Status::ok();
  auto refuse = [&](const std::string& why) {
    return Status(StatusCode::kInvalidArgument, "model " + path + ": its manifest does not match the pipeline: " + why +
                                                    " (ticksentry inspect " + path + " shows the manifest; "
                                                    "docs/bring-your-own-model.md)");
  };
  if (m->input_name != "x") {
    return refuse("expected input x, the model's input is " + m->input_name +
                  " (rename it at export: input_names=[\"x\"])");
  }
  if (plan.inputs().size() != 1 || plan.inputs()[0].name != m->input_name) {
    return refuse("the manifest names input " + m->input_name + ", the plan's first input is " +
                  (plan.inputs().empty() ? std::string("none") : plan.inputs()[0].name));
  }
  if (m->features != features) {
    return refuse("expected F = " + std::to_string(features) + " features, the manifest has F = " +
                  std::to_string(m->features));
  }
  for (size_t i = 0; i < m->feature_names.size() && int64_t(i) < features; ++i) {
    if (m->feature_names[i] != feature_name(int(i))) {
      return refuse("expected feature " + std::to_string(i) + " to be " + feature_name(int(i)) +
                    " (features/feature_set.h order), the manifest has " + m->feature_names[i]);
    }
  }
  if (m->window_rows > 0 && m->window_rows != rows) {
    return refuse("expected windows of T = " + std::to_string(rows) + " rows ([model] window_rows), the manifest has T = " +
                  std::to_string(m->window_rows));
  }
  if (plan.outputs().empty() || plan.outputs()[0].name != m->output_name) {
    return refuse("the manifest names output " + m->output_name + ", the plan's first output is " +
                  (plan.outputs().empty() ? std::string("none") : plan.outputs()[0].name));
  }
  // The columns the plan's output really has ([batch]: 1; a symbolic C is checked per run).
  const engine::BindingInfo& y = plan.outputs()[0];
  const int64_t columns = y.shape.size() == 1 ? 1 : y.shape.size() == 2 && y.shape[1].is_known() ? y.shape[1].value : -1;
  if (columns > 0 && columns != m->output_columns) {
    return refuse("the manifest declares output " + m->output_name + " with " + std::to_string(m->output_columns) +
                  " column" + (m->output_columns == 1 ? "" : "s") + ", the plan's output is " +
                  engine::shape_to_string(y.shape));
  }
  return Status::ok();
}

}  // namespace ts
