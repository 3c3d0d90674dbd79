#!/usr/bin/env bash
# The engine's GPU tests and `ticksentry bench` on one plan, in one call on the GPU machine.
#
#   bench/engine_gpu_tests.sh PACK_DIR OUT_DIR
#
# PACK_DIR: bench/engine_gpu_pack.sh's output unpacked (bin/, lib/, engine-fixtures/). Writes
# OUT_DIR/gpu-tests.log (every gpu-labelled test binary in full, the fixture-model cases
# included: TS_ENGINE_FIXTURES points at the carried fixtures) and OUT_DIR/bench-*.json
# (GRU-2x128 FP16 from the fixtures, batch 1 and 4096: page-locked vs pageable host memory,
# with and without --useCudaGraph). Exit status: the number of test binaries that failed.
set -uo pipefail
pack=$(cd "$1" && pwd) out=$2
mkdir -p "$out"
export LD_LIBRARY_PATH=$pack/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export TS_ENGINE_FIXTURES=$pack/engine-fixtures
log=$out/gpu-tests.log
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >"$log" 2>&1
failed=0
for t in engine_cuda_test engine_cuda_enqueue_test engine_cuda_alloc_test engine_cuda_rnn_stack_test \
  engine_cuda_rnn_wave_test engine_cuda_lstm_wave_test engine_cuda_rnn_wave_f32_test engine_cuda_encoder_test \
  engine_cuda_rnn_cluster_test engine_cuda_conv_test; do
  [ -x "$pack/bin/$t" ] || { echo "== $t: not carried" >>"$log"; continue; }
  echo "== $t" >>"$log"
  start=$(date +%s)
  if ! (cd "$pack" && timeout 300 "bin/$t" >>"$log" 2>&1); then
    failed=$((failed + 1))
    echo "== $t FAILED" >>"$log"
  fi
  echo "== $t $(($(date +%s) - start)) s" >>"$log"
  grep -E "^\[  (PASSED|FAILED|SKIPPED) " "$log" | tail -3
done
B=$pack/bin/ticksentry
fx=$pack/engine-fixtures/gru_2x128/model.onnx
if [ -x "$B" ] && [ -f "$fx" ]; then
  "$B" build --onnx "$fx" --saveEngine "$out/gru.plan" --backend cuda --fp16 --noManifest \
    --minShapes x:1x60x32 --optShapes x:1x60x32 --maxShapes x:4096x60x32 >"$out/bench.log" 2>&1
  for b in 1 4096; do
    for mode in "" "--useCudaGraph" "--pageable --useCudaGraph"; do
      tag=$(echo "b$b $mode" | tr -d '-' | tr ' ' '-' | sed 's/-$//')
      "$B" bench --loadEngine "$out/gru.plan" --shapes "x:${b}x60x32" --duration 1 --percentile 50,90,99 \
        $mode --json "$out/bench-$tag.json" >>"$out/bench.log" 2>&1 || echo "bench $tag failed" >>"$out/bench.log"
    done
  done
  rm -f "$out/gru.plan"
fi
exit $failed
