#!/bin/bash
# The protocol study's held-out evaluations (held-out symbols, leave one market out; both tasks)
# on a many-core machine: one process per evaluation, one thread each, in parallel. The pooled
# evaluations (which feed the registry) run where the release runs (`make model-report`).
#   models/device_study.sh PACK_DIR OUT_DIR "HOLD_OUT_ARGS" MARKET...
# PACK_DIR: models/pack_exports.py pack output; OUT_DIR gets one study-*.json per process
# and their logs. Exits non-zero when any process failed.
set -u
pack=$1 out=$2 hold=$3
shift 3
exports=$(mktemp -d)/exports
python3 models/pack_exports.py unpack --pack "$pack" --out "$exports" || exit 1
mkdir -p "$out"
# the registry's datasets file names the exports; every export under $exports joins its market
common=(models/study.py --datasets models/configs/datasets.toml --exports "$exports")
pids=()
for task in detect forecast; do
  jobs=("held_out_symbols")
  for m in "$@"; do jobs+=("lomo:$m"); done
  for e in "${jobs[@]}"; do
    tag="$task-${e//:/-}"
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 python3 "${common[@]}" --task "$task" --evaluations "$e" $hold \
      --work "$out/work-$tag" >"$out/log-$tag.txt" 2>&1 &
    pids+=($!)
  done
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
for d in "$out"/work-*; do cp "$d/study.json" "$out/study-${d##*/work-}.json" 2>/dev/null; done
exit $rc
