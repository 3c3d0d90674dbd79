#!/usr/bin/env bash
# Calibration of spread_widening's own_quantile and hold_ms on the DESIGNATED CALIBRATION SET
# only (docs/rules.md "Calibration"): the simulator (e2e_sim_test, SimEndToEnd: 200 symbols,
# 30 simulated minutes, its kSimRules plus the candidate) and LOBSTER GOOG 2012-06-21 (replay at
# the defaults plus the candidate). No evaluation dataset is read.
#
#   bench/calibrate_spread.sh [--build DIR] [--data DIR] [QUANTILES] [HOLDS_MS]
#
# Prints one line per candidate: the simulator's liquidity withdrawals caught, its quiet
# spread_widening alerts, GOOG's spread_widening alerts; and writes
# bench/results/spread-calibration-<machine>-<yyyymmdd>.json.
# The selection rule (written before the first run): among the candidates that keep every
# injected liquidity withdrawal caught and GOOG's spread_widening at or below the rule without
# them, the one with the fewest quiet simulator spread_widening alerts; ties go to the smaller
# hold, then the smaller quantile (the least suppression).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build/release data=${TICKSENTRY_DATA_DIR:-$root/../shared/data}
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    *) break ;;
  esac
done
quantiles=${1:-"0 0.9 0.95 0.99"}
holds=${2:-"0 500 1000 2000"}
machine=${TICKSENTRY_MACHINE:-cpu2}
tmp=$(mktemp -d /tmp/spread-cal.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
goog="$data/lobster/GOOG_2012-06-21_34200000_57600000_message_10.csv.gz"
sim_rules='[rules.large_order]
relative = false
[rules.rapid_rise]
relative = false
[rules.volume_burst]
min_volume_multiple_60s = 3
min_count_multiple_60s = 3'
rows=()
printf '%-9s %-8s %-14s %-12s %-6s\n' quantile hold_ms withdrawals quiet_spread goog
for q in $quantiles; do
  for h in $holds; do
    cand="[rules.spread_widening]
own_quantile = $q
hold_ms = $h"
    printf '%s\n%s\n' "$sim_rules" "$cand" >"$tmp/sim.toml"
    printf '%s\n' "$cand" >"$tmp/goog.toml"
    out=$(cd "$tmp" && TICKSENTRY_E2E_CONFIG="$tmp/sim.toml" nice "$build/tests/e2e/e2e_sim_test" 2>&1 || true)
    caught=$(printf '%s\n' "$out" | awk '/caught liquidity_withdrawal/ {print $3}')
    quiet=$(printf '%s\n' "$out" | awk '/quiet spread_widening:/ {print $3}')
    (cd "$tmp" && nice "$build/src/app/ticksentry" replay --config goog.toml --format lobster "$goog" --no-stdout \
        --http off --audit-db "" --jsonl "" --summary-json goog.json >/dev/null 2>&1)
    g=$(python3 -c "import json;print(json.load(open('$tmp/goog.json')).get('alerts',{}).get('spread_widening',0))")
    printf '%-9s %-8s %-14s %-12s %-6s\n' "$q" "$h" "${caught:-?}" "${quiet:-0}" "$g"
    rows+=("{\"own_quantile\": $q, \"hold_ms\": $h, \"sim_withdrawals_caught\": \"${caught:-?}\", \"sim_quiet_spread_widening\": ${quiet:-0}, \"goog_spread_widening\": $g}")
  done
done
dest="$root/bench/results/spread-calibration-$machine-$(date -u +%Y%m%d).json"
commit=$(cd "$root" && git rev-parse --short HEAD)
{
  printf '{\n  "benchmark": "spread-calibration",\n  "date": "%s",\n  "commit": "%s",\n' "$(date -u +%FT%TZ)" "$commit"
  printf '  "machine": {"name": "%s", "cores": %s},\n' "$machine" "$(nproc)"
  printf '  "calibration_set": "simulator (SimEndToEnd with kSimRules) + lobster-GOOG-20120621 at the defaults",\n'
  printf '  "rule": "among candidates keeping every injected liquidity withdrawal caught and GOOG spread_widening not above the no-candidate value, fewest quiet simulator spread_widening; ties: smaller hold, then smaller quantile",\n'
  printf '  "candidates": [\n'
  for i in "${!rows[@]}"; do printf '    %s%s\n' "${rows[$i]}" "$([ "$i" -lt $((${#rows[@]} - 1)) ] && echo ,)"; done
  printf '  ]\n}\n'
} >"$dest"
echo "wrote $dest"
