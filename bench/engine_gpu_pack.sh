#!/usr/bin/env bash
# Packs what bench/engine_gpu_tests.sh needs on the GPU machine into one archive to carry: the
# gpu-labelled engine test binaries and ticksentry (with the libraries the GPU machine may lack,
# ../shared/tools/device-pack), stripped, and the engine fixtures (models/fixtures.py's output,
# which the fixture-model cases read; without them 69 cases skip), and models/default.onnx.
#
#   bench/engine_gpu_pack.sh BUILD_DIR OUT.tar.xz
#
# On the GPU machine: tar xJf OUT.tar.xz -C /tmp && bench/engine_gpu_tests.sh /tmp/gpupack OUT_DIR
set -euo pipefail
build=$1 out=$2
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
progs=("$build/src/app/ticksentry")
for t in engine_cuda_test engine_cuda_enqueue_test engine_cuda_alloc_test engine_cuda_rnn_stack_test \
  engine_cuda_rnn_wave_test engine_cuda_lstm_wave_test engine_cuda_rnn_wave_f32_test engine_cuda_encoder_test \
  engine_cuda_rnn_cluster_test engine_cuda_conv_test; do
  progs+=("$build/tests/engine/cuda/$t")
done
"$root/../shared/tools/device-pack" "$tmp/gpupack" "${progs[@]}" >/dev/null
strip "$tmp/gpupack/bin/"*
cp -r "$build/engine-fixtures" "$tmp/gpupack/engine-fixtures"
# The shipped model, which three tests read from the working directory's models/ (the source
# path compiled into them does not exist there).
mkdir -p "$tmp/gpupack/models"
cp "$root/models/default.onnx" "$tmp/gpupack/models/"
# Identical engine code in every test binary: a dictionary larger than the archive finds it (42 MB
# at 6e with 10 test binaries, 3.6 min on one core; 44 MB at -1,
# instead of 72 MB at -6), so the pack fits beside the working tree under the 64 MiB carry limit.
(cd "$tmp" && tar cf - gpupack/bin gpupack/lib gpupack/engine-fixtures gpupack/models) | xz --lzma2=preset=6e,dict=512MiB -T1 >"$out"
du -h "$out" | awk '{print "pack: " $2 " " $1}'
