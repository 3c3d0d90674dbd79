#!/usr/bin/env bash
# Runs libFuzzer targets of the `fuzz` preset for a set time each on a copy of their committed
# seed corpus (fuzz/corpus/<target>/), then writes executions and findings as
# bench/results/fuzz-<machine>-<yyyymmdd-hhmm>.json (machine, commit, date, per target:
# seconds allowed (a finding stops the target early), executions, libFuzzer's average
# executions/s, corpus files before/after, findings with their first sanitizer line). A finding's input is kept under $out/fuzz-artifacts/<target>/ to reproduce:
#   build/fuzz/fuzz/<target> <artifact>
#
#   bench/fuzz.sh [--seconds S] [--runs N] [--build DIR] [--out DIR] [--rss-mb N] [--tag T] [target ...]
#
# Defaults: 60 s per target, build/fuzz/fuzz, every *_fuzz executable there, rss limit 2048 MB.
# --runs N stops a target after N executions (or at --seconds, whichever comes first): the
# project's bar is 10^6 per target (--runs 1000000 --seconds 1800).
# Build first: cmake --preset fuzz && cmake --build --preset fuzz (clang with libFuzzer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60 runs=-1 tag="" build="$root/build/fuzz/fuzz" out="$root/bench/results" rss=2048
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --tag) tag=-$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --rss-mb) rss=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
  esac
done
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$build"/*_fuzz; do [ -x "$f" ] && targets+=("$(basename "$f")"); done
fi
[ ${#targets[@]} -gt 0 ] || { echo "bench/fuzz.sh: no *_fuzz targets in $build (build the fuzz preset)" >&2; exit 2; }
mkdir -p "$out"
# UBSan's checks are recoverable in the fuzz preset (-fsanitize=undefined): without halt_on_error a
# signed overflow is printed and the run goes on, and libFuzzer never sees it as a finding.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
stamp=$(date -u +%Y%m%d-%H%M)
machine=${TICKSENTRY_MACHINE:-$(hostname -s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
entries=()
for t in "${targets[@]}"; do
  bin="$build/$t"
  [ -x "$bin" ] || { echo "bench/fuzz.sh: $bin is missing" >&2; exit 2; }
  mkdir -p "$work/$t/corpus" "$work/$t/art"
  if [ -d "$root/fuzz/corpus/$t" ]; then cp -r "$root/fuzz/corpus/$t/." "$work/$t/corpus/"; fi
  before=$(find "$work/$t/corpus" -type f | wc -l)
  echo "fuzzing $t for ${seconds}s on $before seed files"
  set +e
  "$bin" -max_total_time="$seconds" -runs="$runs" -print_final_stats=1 -rss_limit_mb="$rss" -timeout=20 \
    -artifact_prefix="$work/$t/art/" "$work/$t/corpus" >"$work/$t/log" 2>&1
  rc=$?
  set -e
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$work/$t/log" | tail -1)
  rate=$(awk '/stat::average_exec_per_sec/ {print $2}' "$work/$t/log" | tail -1)  # libFuzzer's own
  after=$(find "$work/$t/corpus" -type f | wc -l)
  findings="[]"
  if [ -n "$(ls -A "$work/$t/art")" ]; then
    mkdir -p "$out/fuzz-artifacts/$t"
    cp "$work/$t/art/"* "$out/fuzz-artifacts/$t/"
    first=$(grep -m1 -E "ERROR: |runtime error:|Trap|deadly signal|out-of-memory|timeout" "$work/$t/log" || true)
    findings=$(python3 -c 'import json,sys,os; print(json.dumps([{"artifact": a, "first_line": sys.argv[2]} for a in sorted(os.listdir(sys.argv[1]))]))' \
      "$work/$t/art" "$first")
    tail -40 "$work/$t/log" >&2
  fi
  entries+=("$(python3 -c 'import json,sys; e,s,r=int(sys.argv[2] or 0),float(sys.argv[4]),float(sys.argv[3] or 0); print(json.dumps({"target": sys.argv[1], "seconds": s, "executions": e, "exec_per_s": r, "corpus_before": int(sys.argv[5]), "corpus_after": int(sys.argv[6]), "exit_code": int(sys.argv[7]), "findings": json.loads(sys.argv[8])}))' \
    "$t" "${execs:-0}" "${rate:-}" "$seconds" "$before" "$after" "$rc" "$findings")")
  echo "  $t: ${execs:-0} executions, exit $rc"
done
file="$out/fuzz-$machine-$stamp$tag.json"
RUNS="$runs" python3 - "$file" "$root" "${entries[@]}" <<'PY'
import json, os, platform, subprocess, sys, datetime
path, root, entries = sys.argv[1], sys.argv[2], [json.loads(e) for e in sys.argv[3:]]
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
clang = subprocess.run(["clang++", "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
doc = {
    "benchmark": "fuzz",
    "commit": commit + ("+dirty" if dirty else ""),
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "machine": {"name": platform.node(), "cores": os.cpu_count(), "kernel": platform.release()},
    "compiler": clang[0] if clang else "",
    "sanitizers": "address,undefined (fuzz preset)",
    "runs_limit": int(os.environ.get("RUNS", "-1")),
    "ubsan_options": os.environ.get("UBSAN_OPTIONS", ""),
    "load_avg_at_end": list(os.getloadavg()),
    "targets": entries,
}
with open(path, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("wrote", path)
PY
