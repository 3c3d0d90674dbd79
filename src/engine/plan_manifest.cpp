#include "engine/plan_manifest.h"

#include <cmath>
#include <cstdio>

namespace ts::engine {

std::string manifest_problem(const ModelManifest& m) {
  if (m.input_name.empty()) return "the input name is empty";
  if (m.output_name.empty()) return "the output name is empty";
  if (m.window_rows < 0) return "window_rows " + std::to_string(m.window_rows) + " is negative";
  if (m.features < 1) return "features (F) must be at least 1, got " + std::to_string(m.features);
  if (!m.feature_names.empty() && int64_t(m.feature_names.size()) != m.features) {
    return std::to_string(m.feature_names.size()) + " feature names for F = " + std::to_string(m.features);
  }
  if (m.output_columns < 1) return "output_columns must be at least 1, got " + std::to_string(m.output_columns);
  if (m.probability_column < 0 || m.probability_column >= m.output_columns) {
    return "probability_column " + std::to_string(m.probability_column) + " is outside the output's " +
           std::to_string(m.output_columns) + " column" + (m.output_columns == 1 ? "" : "s");
  }
  if (!std::isfinite(m.threshold) || m.threshold < 0 || m.threshold > 1) {
    return "threshold must be a probability in [0, 1] (0 = not given)";
  }
  return "";
}

std::string describe_manifest(const ModelManifest& m) {
  std::string out = "manifest: input " + m.input_name + " [batch, " +
                    (m.window_rows > 0 ? std::to_string(m.window_rows) : std::string("T")) + ", " +
                    std::to_string(m.features) + "]; output " + m.output_name + " " +
                    (m.output_columns == 1 ? std::string("[batch, 1]") : "[batch, " + std::to_string(m.output_columns) + "]") +
                    ", probability in column " + std::to_string(m.probability_column);
  if (m.threshold > 0) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", m.threshold);
    out += std::string("; evaluated at threshold ") + buf;
  }
  if (!m.model_name.empty()) out += "; model " + m.model_name + (m.model_version.empty() ? "" : " " + m.model_version);
  out += "\n";
  if (!m.feature_names.empty()) {
    out += "manifest features:";
    for (size_t i = 0; i < m.feature_names.size(); ++i) out += (i ? ", " : " ") + m.feature_names[i];
    out += "\n";
  } else {
    out += "manifest features: names not declared\n";
  }
  return out;
}

}  // namespace ts::engine
