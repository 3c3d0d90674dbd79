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
// The exact command line that produced a result: argv joined by spaces, an argument with a space
// or a shell metacharacter single-quoted, so that it can be pasted back into a shell.
std::string command_line(int argc, char** argv);

// How a result file was produced: the command line and every setting in effect (defaults
// included), so that a figure can be reproduced from its file alone.
struct Invocation {
  std::string command;      // command_line(argc, argv), or a script's own command line
  nlohmann::json settings;  // an object: option name → value
};

// Writes {"benchmark", "date", "commit", "machine", "command", "settings", "results"} to
// dir/<benchmark>-<machine>-<date>.json and returns the path.
std::string write_results(const std::string& dir, const std::string& benchmark, const Invocation& run,
                          const nlohmann::json& results);

}  // namespace ts::bench
