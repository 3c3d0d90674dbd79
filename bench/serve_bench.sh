#!/usr/bin/env bash
# The README's serving figures (H200 row "dynamic, defaults"), reproducible: GRU-2x128 (F = 20,
# T = 60, random weights: speed does not depend on them) exported by bench/make_serve_model.py,
# then bench/serve_bench at the product's serving defaults (backend auto → cuda on a GPU, fp16,
# 4 workers, max_batch 256, max_delay_us 50) with 4 shard threads, the open-loop search starting
# at 2.0 M requests/s in steps of 15 %, and 4 hot swaps. The JSON (bench/results/serve-<machine>-
# <date>.json) records the command line and every resolved setting.
#
#   bench/serve_bench.sh [BUILD_DIR] [more serve_bench flags, which override these]
#
# On a CPU-only machine the same defaults resolve to the cpu backend (fp32, 1 worker, 200 µs);
# start lower there: bench/serve_bench.sh build/release --start-rate 100 --step 1.5
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-build/release}
[ $# -gt 0 ] && shift
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin="$build/bench/serve_bench"
[ -x "$bin" ] || { echo "serve_bench.sh: $bin not built (cmake --build $build --target serve_bench)" >&2; exit 1; }
tmp=$(mktemp -d -t serve-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 "$root/bench/make_serve_model.py" gru-2x128 "$tmp/gru-2x128.onnx"
cd "$root"
"$bin" "$tmp/gru-2x128.onnx" --shards 4 --start-rate 2000000 --step 1.15 --modes dynamic --swaps 4 "$@"
