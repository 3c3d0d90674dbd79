#!/usr/bin/env bash
# End to end: `ticksentry run` on the simulator at a fixed event rate with a model, as a user runs
# it (every setting at the product's default unless named below), then the run summary as
# bench/results/e2e-<machine>-<yyyymmdd>.json with the command line and the settings.
#
#   bench/e2e.sh [--build DIR] [--model FILE] [--rate EVENTS_PER_S] [--symbols N] [--shards N]
#                [--trigger row|event] [--seconds MEASURE_S] [--out DIR] [--tag TAG]
#
# Defaults: build/release, models/default.onnx, 1,000,000 events/s, 5,000 symbols, 4 shards,
# trigger "event" (a model request on every event once a window is full), 12 s measured.
#
# Warm-up (why a 12 s run at 1 M events/s scores nothing): a symbol's first model request waits
# until its feature window holds min_rows = 60 rows, one row per second of exchange time. The
# simulator at its defaults ([sim] events_per_s 200,000 before the intraday U-shape, which is 1.8
# at the open, plus self-excited flow and a trade print per execution) makes 21,782,983 events in
# its first 60 exchange seconds (measured: `ticksentry record --format sim --symbols 1000
# --sim-seconds 60`), about 363,000 per exchange second. At --rate R events/s the windows are full
# after 21.8 M / R wall seconds (22 s at 1 M events/s); the script waits 1.25 times that. The run
# lasts warm-up + measured seconds; the model's figures in the summary (requests, receive → score
# latency) come from the measured part only, since no window is full before; the rules' figures
# (latency_us, event_latency_us) cover the whole run. A machine that cannot keep up with --rate
# falls behind the pacing and needs a longer warm-up: the summary's events_per_s shows it, and
# model.requests = 0 means the windows never filled. Sinks stay at their defaults (stdout to a
# file, JSONL and the audit db in a temporary directory); the dashboard is off (--http off).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command="$0${*:+ $*}"
build=build/release model=models/default.onnx rate=1000000 symbols=5000 shards=4 trigger=event seconds=12
out="$root/bench/results" tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --model) model=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --symbols) symbols=$2; shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --trigger) trigger=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=-$2; shift 2 ;;
    *) echo "e2e.sh: unknown argument $1 (see the header of bench/e2e.sh)" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
case "$model" in /*) ;; *) model="$root/$model" ;; esac
bin="$build/src/app/ticksentry"
[ -x "$bin" ] || { echo "e2e.sh: $bin not built (cmake --build $build --target ticksentry)" >&2; exit 1; }
[ -f "$model" ] || { echo "e2e.sh: no model $model" >&2; exit 1; }

fill_events=21782983 min_rows=60  # sim events in the first 60 exchange seconds (defaults; see above)
warm_up=$(python3 -c "import math; print(math.ceil(1.25 * $fill_events / $rate))")
duration=$((warm_up + seconds))
tmp=$(mktemp -d -t e2e-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/e2e.toml" <<EOF
[model]
trigger = "$trigger"
EOF
run=("$bin" run --config "$tmp/e2e.toml" --model "$model" --rate "$rate" --symbols "$symbols" --shards "$shards"
     --duration "$duration" --http off --summary-json "$tmp/summary.json")
echo "== warm-up ${warm_up} s (windows fill: $min_rows rows of exchange time, $fill_events events, at $rate events/s), then ${seconds} s measured"
echo "== ${run[*]}"
(cd "$tmp" && "${run[@]}" >"$tmp/alerts.txt")

machine=${TICKSENTRY_MACHINE:-cpu2}
mkdir -p "$out"
dest="$out/e2e-$machine-$(date -u +%Y%m%d)$tag.json"
COMMAND="$command" RUN="${run[*]}" python3 - "$tmp/summary.json" "$dest" <<EOF
import json, os, platform, subprocess, sys, datetime
summary = json.load(open(sys.argv[1]))
def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd="$root").stdout.strip()
    except OSError:
        return ""
commit = os.environ.get("TICKSENTRY_COMMIT") or sh("git rev-parse --short HEAD") or "unknown"
if not os.environ.get("TICKSENTRY_COMMIT") and sh("git status --porcelain --untracked-files=no | head -1"):
    commit += "-dirty"
cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'")
doc = {
    "benchmark": "e2e",
    "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    "commit": commit,
    "machine": {"name": "$machine", "cpu": cpu, "cores": os.cpu_count(), "kernel": platform.release()},
    "command": os.environ["COMMAND"],
    "run_command": os.environ["RUN"].replace("$tmp", "<tmp>").replace("$root/", ""),
    "settings": {"model": "$model".replace("$root/", ""), "rate": $rate, "symbols": $symbols, "shards": $shards,
                 "trigger": "$trigger", "measured_s": $seconds, "warm_up_s": $warm_up, "duration_s": $duration,
                 "fill_events": $fill_events, "min_rows": $min_rows, "row_interval_s": 1,
                 "other": "product defaults ([model] backend/precision/workers/max_delay_us auto, max_batch 256)"},
    "warm_up": "the first warm_up_s seconds fill the windows (no model request is possible before a "
               "window holds min_rows rows); model figures come from the measured part only, the rules' "
               "latency and event counts cover the whole run",
    "results": summary,
}
json.dump(doc, open(sys.argv[2], "w"), indent=2)
m = summary.get("model", {})
r2s = m.get("receive_to_score_us", {})
print(f"events {summary.get('events')} ({summary.get('events_per_s', 0):.0f}/s), model requests {m.get('requests')}, "
      f"results {m.get('results')}, receive → score P50 {r2s.get('p50')} us P99 {r2s.get('p99')} us")
print("wrote " + sys.argv[2])
EOF
