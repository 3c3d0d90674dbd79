#!/usr/bin/env bash
# The shape sweep in one run on the GPU machine: PyTorch's references and timings, then
# ticksentry's builds, accuracy checks and timings, then the merge.
#
#   bench/shape_sweep/shape_sweep.sh SHAPE_SWEEP_BIN MODELS_DIR OUT_DIR [COMMIT]
#
# MODELS_DIR: bench/shape_sweep/export.py's output (exported here with Debian's torch 1.13).
# Environment: SWEEP_ONLY (name prefixes, e.g. "00,01,02"; default all), SWEEP_PART (a tag for
# the part's files, default "all"), SWEEP_BATCHES (1,16,256,4096), SWEEP_PRECISIONS (fp16,fp32),
# SWEEP_MIN_TIME_S (0.25), SWEEP_WORK (where the references go; OUT_DIR/work), SWEEP_MERGE=0
# (leave the merge to a later call, when the sweep runs in parts: merge.py takes every part's files),
# SWEEP_TORCH=ref (PyTorch writes the references only: its timings came in an earlier part).
set -euo pipefail
bin=$1 models=$2 out=$3 commit=${4:-unknown}
here=$(cd "$(dirname "$0")" && pwd)
part=${SWEEP_PART:-all}
batches=${SWEEP_BATCHES:-1,16,256,4096}
mint=${SWEEP_MIN_TIME_S:-0.25}
work=${SWEEP_WORK:-$out/work}  # the references (x_acc.npy, y_ref.npy per case)
mkdir -p "$out" "$work"
PYTHONUNBUFFERED=1 python3 "$here/torch_peer.py" --models "$models" --work "$work" --out "$out/torch-$part.json" \
  --batches "$batches" --seq 60 --min-time-s "$mint" --only "${SWEEP_ONLY:-}" \
  ${SWEEP_TORCH:+--reference-only}
"$bin" --models "$models" --work "$work" --out "$out/ticksentry-$part.json" --batches "$batches" --seq 60 \
  --precisions "${SWEEP_PRECISIONS:-fp16,fp32}" --min-time-s "$mint" ${SWEEP_ONLY:+--only "$SWEEP_ONLY"}
[ "${SWEEP_MERGE:-1}" = 0 ] && exit 0
settings=$(printf '{"batches":"%s","precisions":"%s","min_time_s":"%s","seq":60,"only":"%s"}' \
  "$batches" "${SWEEP_PRECISIONS:-fp16,fp32}" "$mint" "${SWEEP_ONLY:-}")
python3 "$here/merge.py" --ticksentry "$out/ticksentry-$part.json" --torch "$out/torch-$part.json" \
  --cases "$models/cases.json" --results-dir "$out" --commit "$commit" --command "$0 $*" --settings "$settings"
