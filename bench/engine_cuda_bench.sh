#!/usr/bin/env bash
# The CUDA engine benchmark with its PyTorch peers, in one run on one machine (the GPU machine):
#
#   bench/engine_cuda_bench.sh BENCH_BIN MODELS_DIR OUT_DIR [COMMIT]
#
# BENCH_BIN: a built engine_cuda_bench; MODELS_DIR: bench/peers/export_models.py's output
# (model.onnx + weights.pt per model, exported with Debian's torch 1.13 on the dev machine).
# Runs ticksentry (FP32, FP16, INT8) and PyTorch (FP32, FP16: eager, CUDA graphs, torch.compile
# max-autotune at the batches in TORCH_COMPILE_BATCHES) on GRU-2x128, LSTM-2x128 and the Transformer
# (transformer-2x64: 2 layers, d=64, 4 heads), F=32, T=60, batches 1,16,256,1024,4096, then
# writes OUT_DIR/engine-cuda-h200-<date>.json (BENCHMARKS.md shape). PyTorch has no INT8 peer:
# ticksentry's INT8 is compared with PyTorch's FP16. The peer runs each model in its own process,
# so that its device memory figures are that model's alone (in one process the caching
# allocator's live memory grew from case to case, 97 -> 1,052 MiB, in the 2026-12-01 runs).
# Environment: BENCH_MODELS (default gru-2x128,lstm-2x128,transformer-2x64), BENCH_PRECISIONS
# (ticksentry's, default fp32,fp16,int8), BENCH_BATCHES, BENCH_MIN_TIME_S,
# TORCH_COMPILE_BATCHES (default "1,1024"; "" skips torch.compile), TORCH_COMPILE_MODELS (default all three),
# BENCH_TS_ONLY=1 (run ticksentry only) and BENCH_TS_JSON=FILE (take ticksentry's results from FILE, run the
# peers): the two halves in two calls of a time-limited machine,
# TORCH_COMPILE_ARGS (more torch_cuda_bench flags: --compile-mode, --compile-timeout-s, --compile-budget-s,
# --compile-fallback-mode), BENCH_TS_ARGS (more engine_cuda_bench flags, e.g. "--timing-cache-dir DIR").
set -euo pipefail
command="$0${*:+ $*}"  # recorded in the merged file with the settings below
bin=$1 models=$2 out=$3 commit=${4:-unknown}
here=$(cd "$(dirname "$0")" && pwd)
only=${BENCH_MODELS:-gru-2x128,lstm-2x128,transformer-2x64}
batches=${BENCH_BATCHES:-1,16,256,1024,4096}
mint=${BENCH_MIN_TIME_S:-1.0}
mkdir -p "$out"
if [ -n "${BENCH_TS_JSON:-}" ]; then  # ticksentry's half already run (a GPU call has a time limit)
  cp "$BENCH_TS_JSON" "$out/ticksentry.json"
else
  "$bin" --models "$models" --only "$only" --precisions "${BENCH_PRECISIONS:-fp32,fp16,int8}" --batches "$batches" \
    --seq 60 --min-time-s "$mint" ${BENCH_TS_ARGS:-} --out "$out/ticksentry.json"
fi
[ -n "${BENCH_TS_ONLY:-}" ] && exit 0  # the peers in a later call (BENCH_TS_JSON)
peers=()
for model in ${only//,/ }; do
  compile_models=",${TORCH_COMPILE_MODELS:-$only},"
  [[ $compile_models == *",$model,"* ]] && cm=$model || cm=none
  PYTHONUNBUFFERED=1 python3 "$here/peers/torch_cuda_bench.py" --models "$models" --only "$model" \
    --precisions fp32,fp16 --batches "$batches" --seq 60 --min-time-s "$mint" \
    --compile-batches "${TORCH_COMPILE_BATCHES-1,1024}" --compile-precisions fp16 \
    --compile-models "$cm" ${TORCH_COMPILE_ARGS:-} --out "$out/torch-$model.json"
  peers+=("$out/torch-$model.json")
done
settings=$(printf '{"models":"%s","precisions":"%s","batches":"%s","min_time_s":"%s","seq":60,"torch_compile_batches":"%s","torch_compile_models":"%s","ts_json":"%s"}' \
  "$only" "${BENCH_PRECISIONS:-fp32,fp16,int8}" "$batches" "$mint" "${TORCH_COMPILE_BATCHES-1,1024}" \
  "${TORCH_COMPILE_MODELS:-$only}" "${BENCH_TS_JSON:-}")
python3 "$here/peers/torch_cuda_bench.py" --merge "$out/ticksentry.json" "${peers[@]}" \
  --results-dir "$out" --machine h200 --commit "$commit" --command "$command" --settings "$settings"
