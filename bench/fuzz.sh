#!/usr/bin/env bash
# Runs libFuzzer targets of the `fuzz` preset for a set time each on a copy of their committed
# seed corpus (fuzz/corpus/<target>/), then writes executions and findings as
# bench/results/fuzz-<machine>-<yyyymmdd-hhmm>[-tag].json (machine, commit, date, per target:
# seconds allowed (a finding stops the target early), executions, libFuzzer's executions/s,
# corpus files before/after, findings with their first sanitizer line; for plan_fuzz and
# onnx_fuzz the engines made and run, from their "engine_exercise:" line). A finding's input is
# kept under $out/fuzz-artifacts/<target>/ to reproduce:
#   build/fuzz/fuzz/<target> <artifact>
#
#   bench/fuzz.sh [--seconds S] [--runs N] [--jobs J] [--shards T=K ...] [--build DIR] [--out DIR]
#                 [--corpus DIR] [--rss-mb N] [--flags T=ARGS ...] [--tag T] [target ...]
#
# Defaults: 60 s per target, build/fuzz/fuzz, every *_fuzz executable there, one process at a
# time, rss limit 2048 MB. --runs N stops a target after N executions (or at --seconds, whichever
# comes first): the project's bar is 10^6 per target (--runs 1000000). --jobs J runs up to J
# fuzzing processes at once (one per core); --shards T=K fuzzes target T as K processes, each on
# its own copy of the corpus with --runs N/K, and adds up their executions (for the slow
# targets, so every target reaches the bar in the same wall time). --corpus DIR reads the seeds
# from DIR/<target>/ instead of fuzz/corpus. TICKSENTRY_MACHINE, TICKSENTRY_COMMIT and
# FUZZ_COMPILER name the machine, commit and compiler where git or clang are not at hand (a
# packed run on another machine). --flags T=ARGS gives target T more libFuzzer flags (one
# word per flag, recorded in the JSON). onnx_fuzz runs with -entropic=0 unless --flags says
# otherwise: libFuzzer's entropic schedule spent 58 % of its time in
# InputCorpus::UpdateFeatureFrequency (the target has ~8,000 edges of protobuf, ONNX and the
# engine), and without it the same 20 s ran 4.4x the inputs (118 vs 27 exec/s, 2-core machine
# under load) and reached more coverage (cov 8000 vs 7797, ft 30341 vs 25376).
# Build first: cmake --preset fuzz && cmake --build --preset fuzz (clang with libFuzzer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=60 runs=-1 jobs=1 tag="" build="$root/build/fuzz/fuzz" out="$root/bench/results" rss=2048
corpus="$root/fuzz/corpus"
targets=()
declare -A shards=()
declare -A flags=([onnx_fuzz]="-entropic=0")
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --shards) shards[${2%%=*}]=${2#*=}; shift 2 ;;
    --flags) flags[${2%%=*}]=${2#*=}; shift 2 ;;
    --tag) tag=-$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --corpus) corpus=$2; shift 2 ;;
    --rss-mb) rss=$2; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
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
# One OpenMP thread per fuzzing process (the CPU engine's oneDNN team, plan_fuzz and onnx_fuzz):
# with one process per core, a team of one thread per core in each process would oversubscribe
# the machine J times over; a kernel's threads add no coverage.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
stamp=$(date -u +%Y%m%d-%H%M)
machine=${TICKSENTRY_MACHINE:-$(hostname -s)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One fuzzing process: target $1, shard $2, its share of the runs $3. Writes $work/$1/$2/.
fuzz_one() {
  local t=$1 s=$2 r=$3 d="$work/$1/$2"
  local start end
  start=$(date +%s)
  set +e
  # shellcheck disable=SC2086
  "$build/$t" ${flags[$t]:-} -max_total_time="$seconds" -runs="$r" -print_final_stats=1 -rss_limit_mb="$rss" -timeout=20 \
    -artifact_prefix="$d/art/" "$d/corpus" >"$d/log" 2>&1
  echo $? >"$d/rc"
  set -e
  end=$(date +%s)
  echo $((end - start)) >"$d/wall"
}

queue=()
for t in "${targets[@]}"; do
  [ -x "$build/$t" ] || { echo "bench/fuzz.sh: $build/$t is missing" >&2; exit 2; }
  k=${shards[$t]:-1}
  per=$runs
  [ "$runs" -gt 0 ] && per=$(((runs + k - 1) / k))
  for ((s = 0; s < k; s++)); do
    mkdir -p "$work/$t/$s/corpus" "$work/$t/$s/art"
    if [ -d "$corpus/$t" ]; then cp -r "$corpus/$t/." "$work/$t/$s/corpus/"; fi
    queue+=("$t $s $per")
  done
done
echo "fuzzing ${#targets[@]} targets as ${#queue[@]} processes, $jobs at a time, ${seconds}s each (runs $runs)"
running=0
for item in "${queue[@]}"; do
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
  # shellcheck disable=SC2086
  fuzz_one $item &
  running=$((running + 1))
done
wait

entries=()
for t in "${targets[@]}"; do
  before=0
  [ -d "$corpus/$t" ] && before=$(find "$corpus/$t" -type f | wc -l)
  entries+=("$(python3 - "$work/$t" "$t" "$seconds" "$before" "$out" "${flags[$t]:-}" <<'PY'
import glob, json, os, re, shutil, sys
d, target, seconds, before, out, flags = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
execs = rate = 0.0
wall, rcs, corpus, findings, engine = 0, [], set(), [], None
for shard in sorted(glob.glob(os.path.join(d, "*")), key=lambda p: int(os.path.basename(p))):
    log = open(os.path.join(shard, "log"), errors="replace").read()
    e = re.findall(r"stat::number_of_executed_units:\s*(\d+)", log)
    r = re.findall(r"stat::average_exec_per_sec:\s*(\d+)", log)
    execs += int(e[-1]) if e else 0
    rate += int(r[-1]) if r else 0
    rcs.append(int(open(os.path.join(shard, "rc")).read()))
    wall = max(wall, int(open(os.path.join(shard, "wall")).read()))
    corpus |= set(os.listdir(os.path.join(shard, "corpus")))
    m = re.findall(r"engine_exercise: inputs (\d+) engines (\d+) ran (\d+) refused (\d+) skipped (\d+)", log)
    if m:
        v = [int(x) for x in m[-1]]
        engine = engine or {"inputs": 0, "engines": 0, "ran": 0, "refused": 0, "skipped": 0}
        for k, x in zip(["inputs", "engines", "ran", "refused", "skipped"], v):
            engine[k] += x
    arts = sorted(os.listdir(os.path.join(shard, "art")))
    if arts:
        first = re.search(r"^.*(ERROR: |runtime error:|Trap|deadly signal|out-of-memory|timeout).*$", log, re.M)
        keep = os.path.join(out, "fuzz-artifacts", target)
        os.makedirs(keep, exist_ok=True)
        for a in arts:
            shutil.copy(os.path.join(shard, "art", a), keep)
            findings.append({"artifact": a, "shard": int(os.path.basename(shard)),
                             "first_line": first.group(0).strip()[:300] if first else ""})
        sys.stderr.write("".join(log.splitlines(True)[-40:]))
entry = {"target": target, "seconds": seconds, "processes": len(rcs), "wall_s": wall, "executions": int(execs),
         "exec_per_s": rate, "reached_1e6": execs >= 1e6, "corpus_before": before, "corpus_after": len(corpus),
         "exit_codes": rcs, "libfuzzer_flags": flags.split(), "findings": findings}
if engine:
    entry["engine_exercise"] = engine
print(json.dumps(entry))
PY
)")
  echo "  $t: $(echo "${entries[-1]}" | python3 -c 'import json,sys; e=json.load(sys.stdin); print(e["executions"], "executions,", len(e["findings"]), "findings, exit", e["exit_codes"])')"
done
file="$out/fuzz-$machine-$stamp$tag.json"
RUNS="$runs" JOBS="$jobs" SECONDS_ALLOWED="$seconds" python3 - "$file" "$root" "${entries[@]}" <<'PY'
import json, os, platform, subprocess, sys, datetime
path, root, entries = sys.argv[1], sys.argv[2], [json.loads(e) for e in sys.argv[3:]]
def sh(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True).stdout
    except OSError:
        return ""
commit = os.environ.get("TICKSENTRY_COMMIT") or sh(["git", "-C", root, "rev-parse", "--short", "HEAD"]).strip()
if not os.environ.get("TICKSENTRY_COMMIT") and sh(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"]).strip():
    commit += "+dirty"
clang = os.environ.get("FUZZ_COMPILER") or (sh(["clang++", "--version"]).splitlines() or [""])[0]
doc = {
    "benchmark": "fuzz",
    "commit": commit,
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "machine": {"name": os.environ.get("TICKSENTRY_MACHINE", platform.node()), "cores": os.cpu_count(),
                "kernel": platform.release()},
    "compiler": clang,
    "sanitizers": "address,undefined (fuzz preset; UBSan halts)",
    "seconds_per_process": float(os.environ["SECONDS_ALLOWED"]),
    "runs_limit": int(os.environ.get("RUNS", "-1")),
    "parallel_processes": int(os.environ.get("JOBS", "1")),
    "ubsan_options": os.environ.get("UBSAN_OPTIONS", ""),
    "omp_num_threads": os.environ.get("OMP_NUM_THREADS", ""),
    "load_avg_at_end": list(os.getloadavg()),
    "targets_reaching_1e6": sum(1 for e in entries if e["reached_1e6"]),
    "findings": sum(len(e["findings"]) for e in entries),
    "targets": entries,
}
with open(path, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("wrote", path)
PY
