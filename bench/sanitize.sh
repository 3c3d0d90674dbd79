#!/usr/bin/env bash
# `make sanitize`: every test under AddressSanitizer + UndefinedBehaviorSanitizer (the asan
# preset: gcc, no CUDA, RelWithDebInfo), then the concurrency tests under ThreadSanitizer (the
# tsan preset's targets: rings, batcher, model server, notifier, dispatcher, HTTP). Sanitizer
# options come from the test presets (CMakePresets.json): UBSan halts on the first report, so a
# report fails its test; LeakSanitizer is on; TSan suppresses only uninstrumented libraries
# (cmake/tsan.supp); the tsan test preset leaves out e2e_dashboard_flood, a dashboard speed test
# at 400 alerts/s that a TSan build cannot feed (11 alerts/s measured). Writes bench/results/sanitize-<machine>-<yyyymmdd>[-tag].json: per preset,
# the tests run, passed, failed (by name), skipped, tests whose binary was not built, the
# sanitizer reports found in the logs (first line each) and the wall time.
#
#   bench/sanitize.sh [--only asan|tsan] [--jobs N] [--no-build] [--dir DIR] [--tag TAG]
#                     [--ctest-args "..."]
#
# --no-build runs the tests of what is built (a partial build's missing binaries are listed as
# not built, never as passed). --dir DIR (with --only P) tests another build tree of the same
# sanitizers with preset P's options, e.g. a clang tree configured from the fuzz preset with
# -DTICKSENTRY_BUILD_TESTS=ON, whose objects the fuzz build has in ccache. That tree cannot hold
# the whole suite: Debian's clang 14 has no coroutines for Boost.Asio (src/ingest/ws), so the
# ticksentry binary and every test that runs it build with gcc only (the asan preset). Exit 1
# when a test failed or a sanitizer reported.
set -uo pipefail
export SANITIZE_COMMAND="$0${*:+ $*}"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
only="" jobs=$(nproc) build=1 tag="" ctest_args="" dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only) only=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --no-build) build=0; shift ;;
    --tag) tag=-$2; shift 2 ;;
    --dir) dir=$2; build=0; shift 2 ;;
    --ctest-args) ctest_args=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "sanitize.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
presets=(asan tsan)
[ -n "$only" ] && presets=("$only")
out="$root/bench/results"
mkdir -p "$out"
logs="$root/build/sanitize-logs"  # kept: configure, build and ctest logs per preset
mkdir -p "$logs"
entries=()
status=0
for p in "${presets[@]}"; do
  start=$(date +%s)
  if [ "$build" = 1 ]; then
    cmake --preset "$p" >"$logs/$p-configure.log" 2>&1 || { cat "$logs/$p-configure.log"; exit 2; }
    # -k 0: build every target that can be built, so one failure does not hide the rest (the
    # failed ones are listed in the summary as build_failures and make the run fail).
    if ! cmake --build --preset "$p" -j "$jobs" -- -k 0 >"$logs/$p-build.log" 2>&1; then
      tail -50 "$logs/$p-build.log"
      echo "sanitize.sh: the $p build failed (log above); testing what was built" >&2
      status=1
    fi
  fi
  built=$(date +%s)
  if [ -n "$dir" ]; then
    # The preset's sanitizer options and filters, applied to another tree.
    eval "$(python3 - "$p" "$root" <<'PY'
import json, shlex, sys
p, root = sys.argv[1], sys.argv[2]
t = next(x for x in json.load(open(root + "/CMakePresets.json"))["testPresets"] if x["name"] == p)
for k, v in t.get("environment", {}).items():
    print("export %s=%s" % (k, shlex.quote(v.replace("${sourceDir}", root))))
PY
)"
    # shellcheck disable=SC2086
    # Only compiled tests: the Python and Node tests and the layering check run no sanitized code.
    ctest --test-dir "$dir" -E '_NOT_BUILT|^models_|^layering|^engine_fixtures|^engine_node_tests|^e2e_dashboard_browser' -LE gpu --output-on-failure -j "$jobs" --timeout 1200 $ctest_args \
      >"$logs/$p-ctest.log" 2>&1
    rc=$?
  else
    # shellcheck disable=SC2086
    ctest --preset "$p" $ctest_args >"$logs/$p-ctest.log" 2>&1
    rc=$?
  fi
  [ $rc -ne 0 ] && status=1
  end=$(date +%s)
  tail -30 "$logs/$p-ctest.log"
  entries+=("$(python3 - "$p" "$logs/$p-ctest.log" "${dir:-build/$p}" "$((built - start))" "$((end - built))" "$rc" <<'PY'
import json, os, re, sys
preset, log, bdir, build_s, test_s, rc = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
text = open(log, errors="replace").read()
m = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", text)
total = int(m.group(3)) if m else 0
failed_n = int(m.group(2)) if m else 0
failed = re.findall(r"^\s*\d+ - (\S+) \((Failed|Timeout|SEGFAULT|Subprocess aborted|Child aborted|Exception)[^)]*\)", text, re.M)
skipped = len(re.findall(r"\*\*\*Skipped|Not Run", text))
not_built = sorted(set(re.findall(r"(\S+)_NOT_BUILT", text)))
blog = os.path.join(os.path.dirname(log), preset + "-build.log")
btext = open(blog, errors="replace").read() if os.path.exists(blog) else ""
build_failures = sorted(set(re.findall(r"^FAILED: (\S+)", btext, re.M)))
reports = []
last = os.path.join(bdir, "Testing", "Temporary", "LastTest.log")
lt = open(last, errors="replace").read() if os.path.exists(last) else ""
for pat in (r"ERROR: AddressSanitizer: [^\n]*", r"ERROR: LeakSanitizer: [^\n]*", r"[^\n]*runtime error: [^\n]*",
            r"WARNING: ThreadSanitizer: [^\n]*",
            # A report inside a test's captured stderr tail may have lost its first line.
            r"SUMMARY: (?:ThreadSanitizer|AddressSanitizer|UndefinedBehaviorSanitizer): [^\n]*"):
    for hit in re.findall(pat, lt):
        if hit not in reports:
            reports.append(hit.strip()[:300])
compiler = ""
cache = os.path.join(bdir, "CMakeCache.txt")
if os.path.exists(cache):
    for line in open(cache, errors="replace"):
        if line.startswith("CMAKE_CXX_COMPILER:") or line.startswith("TICKSENTRY_SANITIZE:"):
            compiler += line.split("=", 1)[1].strip() + " "
print(json.dumps({"preset": preset, "tree": bdir, "compiler_and_sanitizers": compiler.strip(), "tests": total, "passed": total - failed_n, "failed": failed_n,
                  "failed_tests": [f"{n} ({why})" for n, why in failed], "skipped": skipped,
                  "binaries_not_built": not_built, "build_failures": build_failures, "sanitizer_reports": reports[:50],
                  "build_s": build_s, "test_s": test_s, "ctest_exit": rc}))
PY
)")
  [ -n "$(echo "${entries[-1]}" | python3 -c 'import json,sys; print("x" if json.load(sys.stdin)["sanitizer_reports"] else "")')" ] && status=1
done
machine=${TICKSENTRY_MACHINE:-cpu2}
file="$out/sanitize-$machine-$(date -u +%Y%m%d)$tag.json"
python3 - "$file" "${entries[@]}" <<'PY'
import datetime, json, os, platform, subprocess, sys
path, entries = sys.argv[1], [json.loads(e) for e in sys.argv[2:]]
def sh(c): return subprocess.run(c, shell=True, capture_output=True, text=True).stdout.strip()
commit = sh("git rev-parse --short HEAD") + ("-dirty" if sh("git status --porcelain --untracked-files=no | head -1") else "")
doc = {"benchmark": "sanitize", "commit": commit,
       "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "machine": {"name": os.environ.get("TICKSENTRY_MACHINE", "cpu2"), "cores": os.cpu_count(),
                   "kernel": platform.release(), "load_avg_at_end": list(os.getloadavg())},
       "command": os.environ.get("SANITIZE_COMMAND", "bench/sanitize.sh"),
       "presets": entries}
with open(path, "w") as f:
    json.dump(doc, f, indent=2)
    f.write("\n")
print("wrote", path)
PY
echo "logs: $logs"
exit $status
