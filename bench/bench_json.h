#pragma once
// Writes benchmark results as BENCHMARKS.md asks: one JSON file per run under bench/results/,
// named <benchmark>-<machine>-<yyyymmdd>.json, with machine, commit and date.
#include <nlohmann/json.hpp>

#include <string>

namespace ts::bench {

// machine: "cpu2" for the 2-core development machine (override with TICKSENTRY_MACHINE).
nlohmann::json machine_info();
// The source tree's short HEAD (+ "-dirty"), or TICKSENTRY_COMMIT where set (a GPU machine runs
// carried binaries next to a copy of the tree whose git is not the built commit).
std::string git_commit();
std::string utc_now_iso();
// Writes {"benchmark", "date", "commit", "machine", "results"} to dir/<benchmark>-<machine>-<date>.json
// and returns the path.
std::string write_results(const std::string& dir, const std::string& benchmark, const nlohmann::json& results);

}  // namespace ts::bench
