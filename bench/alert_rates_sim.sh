#!/usr/bin/env bash
# The simulator's quiet-time alert rate with its trading phases (docs/simulator.md "Phases"):
# a whole simulated trading day plus the next opening, with the call auctions on and off on the
# same seed (the continuous flow is identical), at the product defaults and at the simulator
# test's thresholds (kSimRules). Counts injected events caught and quiet alerts per symbol-hour
# as tests/e2e/sim_alerts_test.cpp does; writes
# bench/results/sim-alert-rates-<machine>-<yyyymmdd>[-TAG].json (not alert-rates-*: bench/report.py
# reads those as real-data tables).
#
#   bench/alert_rates_sim.sh [--build DIR] [--out DIR] [--tag TAG] [-- driver options]
#
# Driver options (bench/alert_rates_sim.py): --symbols 100 --seconds 16020 --events-per-s 2500
# --anomalies 0.7 --seed 20261202.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command="$0${*:+ $*}"
build=build/release out="$root/bench/results" tag=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=-$2; shift 2 ;;
    --) shift; break ;;
    *) echo "alert_rates_sim.sh: unknown argument $1 (see the header of bench/alert_rates_sim.sh)" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin="$build/src/app/ticksentry"
[ -x "$bin" ] || { echo "alert_rates_sim.sh: $bin not built (cmake --build $build --target ticksentry)" >&2; exit 1; }
machine=${TICKSENTRY_MACHINE:-cpu2}
mkdir -p "$out"
dest="$out/sim-alert-rates-$machine-$(date -u +%Y%m%d)$tag.json"
exec python3 "$root/bench/alert_rates_sim.py" --bin "$bin" --dest "$dest" --machine "$machine" \
  --command "$command" --root "$root" "$@"
