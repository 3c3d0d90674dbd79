#!/usr/bin/env bash
# Engine CPU benchmark: ticksentry vs ONNX Runtime CPU (onnxruntime-node) vs PyTorch eager, same
# models and weights, same machine, same run. Writes ONE results file
# bench/results/engine-cpu-<machine>-<yyyymmdd>.json (results + ratios + targets) and prints a table.
#
#   bench/engine_bench.sh [BUILD_DIR] [--quick] [--no-default-threads] [--rounds N]
#
# BUILD_DIR (default build/release) must hold bench/engine_bench. Models are exported into a temp
# dir by bench/peers/export_models.py (Debian's /usr/bin/python3: torch 1.13, onnx). ONNX Runtime
# comes from bench/peers/node_modules (installed here with `npm install --ignore-scripts` if
# missing; if it cannot be installed, ORT is skipped with the reason printed).
# Main comparison: 1 thread everywhere (OMP/OpenBLAS/MKL threads 1, ORT intra-op 1, torch 1).
# Also ticksentry and ORT at their default thread counts (unless --no-default-threads).
# Cases are interleaved (per model and batch, the three systems back to back) so that drifting
# load on a shared machine hits all systems alike; the ratios are what count. Batch-1 cases (the
# latency targets) run --rounds times (default 3), each system once per round, and the round with
# the median p50 is reported (all rounds' p50s are kept in the JSON).
set -euo pipefail
command="$0${*:+ $*}"  # recorded in the results file with the settings below
root=$(cd "$(dirname "$0")/.." && pwd)
build=build/release
quick=0
default_threads=1
rounds=3
next_is_rounds=0
for a in "$@"; do
  if [ "$next_is_rounds" = 1 ]; then rounds=$a; next_is_rounds=0; continue; fi
  case "$a" in
    --rounds) next_is_rounds=1 ;;
    --quick) quick=1 ;;
    --no-default-threads) default_threads=0 ;;
    -*) echo "engine_bench.sh: unknown option $a" >&2; exit 2 ;;
    *) build=$a ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin="$build/bench/engine_bench"
[ -x "$bin" ] || { echo "engine_bench.sh: $bin not built (cmake --build $build --target engine_bench)" >&2; exit 1; }

models=(gru-2x128 lstm-2x128 transformer-2x64)
batches=(1 16 256)
if [ "$quick" = 1 ]; then iters=(100 20 5); else iters=(1000 200 50); fi
seq=60
tmp=$(mktemp -d -t engine-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

echo "== exporting models (torch → ONNX, same instances' weights for PyTorch eager)"
/usr/bin/python3 "$root/bench/peers/export_models.py" --out "$tmp/models"
listing="$tmp/models/models.json"

have_ort=0
ort_reason=""
if ! command -v node >/dev/null; then
  ort_reason="node is not installed"
else
  if [ ! -d "$root/bench/peers/node_modules/onnxruntime-node" ]; then
    echo "== installing onnxruntime-node (CPU library only: --ignore-scripts)"
    (cd "$root/bench/peers" && npm ci --ignore-scripts --no-audit --no-fund >"$tmp/npm.log" 2>&1) ||
      ort_reason="npm ci --ignore-scripts failed: $(tail -3 "$tmp/npm.log" | tr '\n' ' ')"
  fi
  if [ -z "$ort_reason" ]; then
    if (cd "$root/bench/peers" && node -e "require('onnxruntime-node')" 2>"$tmp/ort.err"); then
      have_ort=1
    else
      ort_reason="onnxruntime-node does not load: $(head -3 "$tmp/ort.err" | tr '\n' ' ')"
    fi
  fi
fi
[ "$have_ort" = 1 ] || echo "!! ONNX Runtime skipped: $ort_reason" >&2

one_thread=(env OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1)
files=()
for m in "${models[@]}"; do
  for i in "${!batches[@]}"; do
    b=${batches[$i]}; n=${iters[$i]}
    r_max=1; [ "$b" = 1 ] && r_max=$rounds  # rounds: batch 1 only
    for r in $(seq 1 "$r_max"); do  # (body indented one level less)
    tag="$m-b$b-r$r"
    echo "== $m batch $b seq $seq ($n timed runs), 1 thread, round $r/$r_max"
    "${one_thread[@]}" "$bin" run --models "$listing" --only "$m" --batches "$b" --iters "$n" \
      --seq "$seq" --threads 1 --out "$tmp/ts-$tag-t1.json"
    files+=("$tmp/ts-$tag-t1.json")
    if [ "$have_ort" = 1 ]; then
      "${one_thread[@]}" node "$root/bench/peers/ort_bench.js" --models "$listing" --only "$m" \
        --batches "$b" --iters "$n" --seq "$seq" --threads 1 --out "$tmp/ort-$tag-t1.json"
      files+=("$tmp/ort-$tag-t1.json")
    fi
    "${one_thread[@]}" /usr/bin/python3 "$root/bench/peers/torch_bench.py" --models "$listing" \
      --only "$m" --batches "$b" --iters "$n" --seq "$seq" --threads 1 --out "$tmp/torch-$tag-t1.json"
    files+=("$tmp/torch-$tag-t1.json")
    if [ "$default_threads" = 1 ]; then
      nt=$(nproc)
      echo "== $m batch $b seq $seq, default threads ($nt cores)"
      "$bin" run --models "$listing" --only "$m" --batches "$b" --iters "$n" --seq "$seq" \
        --threads "$nt" --out "$tmp/ts-$tag-tdef.json"
      files+=("$tmp/ts-$tag-tdef.json")
      if [ "$have_ort" = 1 ]; then
        node "$root/bench/peers/ort_bench.js" --models "$listing" --only "$m" --batches "$b" \
          --iters "$n" --seq "$seq" --threads 0 --out "$tmp/ort-$tag-tdef.json"
        files+=("$tmp/ort-$tag-tdef.json")
      fi
    fi
  done
  done
done

echo "== merging"
join() { local IFS=,; echo "$*"; }
settings=$(printf '{"build":"%s","quick":%s,"default_threads":%s,"rounds":%s,"models":"%s","batches":"%s","iters":"%s","seq":%s,"ort":%s,"threads":"1 (OMP/OpenBLAS/MKL 1); and the defaults unless default_threads is 0"}' \
  "$build" "$quick" "$default_threads" "$rounds" "$(join "${models[@]}")" "$(join "${batches[@]}")" "$(join "${iters[@]}")" \
  "$seq" "$have_ort")
"$bin" merge --results-dir "$root/bench/results" --benchmark engine-cpu --command "$command" --settings "$settings" \
  "${files[@]}"
