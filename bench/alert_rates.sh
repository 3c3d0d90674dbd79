#!/usr/bin/env bash
# Alert rates on real exchange data at the DEFAULT configuration: replays every dataset of
# ../shared/data that `ticksentry replay` reads today (unpaced: as fast as it goes; rules run on
# exchange time, so pacing changes nothing), and writes, per dataset and per rule type, alerts per
# symbol-hour into bench/results/alert-rates-<machine>-<yyyymmdd>[-TAG].json, with the real
# events of ../shared/data/README.md checked (an alert of that symbol inside the event's window).
#
#   bench/alert_rates.sh [--build DIR] [--data DIR] [--out DIR] [--tag TAG] [--config FILE]
#
# Defaults: build/release, $TICKSENTRY_DATA_DIR or ../shared/data, bench/results.
# --config FILE: the defaults plus FILE's keys (to measure one change at a time); the JSON's
# "settings" names the file and holds its text. The reported table is always a run without it.
# symbol-hours = trading hours the files cover (the exchange's regular session: LOBSTER 09:30-16:00
# = 6.5 h; SSE and SZSE 09:30-11:30 + 13:00-15:00 = 4 h; the Bitstamp file 00:00-05:00 UTC = 5 h)
# × symbols. The datasets, their hours and the real events are listed in bench/alert_rates.py.
# Target: <= 1.0 alert per symbol-hour per dataset.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
command="$0${*:+ $*}"
build=build/release data=${TICKSENTRY_DATA_DIR:-$root/../shared/data} out="$root/bench/results" tag="" config=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --data) data=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --tag) tag=-$2; shift 2 ;;
    --config) config=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    *) echo "alert_rates.sh: unknown argument $1 (see the header of bench/alert_rates.sh)" >&2; exit 2 ;;
  esac
done
case "$build" in /*) ;; *) build="$root/$build" ;; esac
bin="$build/src/app/ticksentry"
[ -x "$bin" ] || { echo "alert_rates.sh: $bin not built (cmake --build $build --target ticksentry)" >&2; exit 1; }
[ -d "$data" ] || { echo "alert_rates.sh: no data folder $data" >&2; exit 1; }
machine=${TICKSENTRY_MACHINE:-cpu2}
mkdir -p "$out"
dest="$out/alert-rates-$machine-$(date -u +%Y%m%d)$tag.json"
exec python3 "$root/bench/alert_rates.py" --bin "$bin" --data "$data" --dest "$dest" \
  --machine "$machine" --command "$command" --root "$root" --config "$config"
