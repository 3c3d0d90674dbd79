#!/usr/bin/env bash
# Runs every benchmark and writes JSON under bench/results/. Usage: bench/run_all.sh [BUILD_DIR] [--quick]
set -euo pipefail
build=${1:-build/release}
shift || true
"$build/bench/pipeline_bench" "$@"
"$(dirname "$0")/engine_bench.sh" "$build" "$@"
python3 "$(dirname "$0")/report.py" --write
