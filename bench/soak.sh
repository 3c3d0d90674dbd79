#!/usr/bin/env bash
# Soak benchmark: `ticksentry run` on the simulator at twice the nominal rate for an hour with
# the rules, a model on the CPU, notifications to a loopback webhook and the dashboard polled;
# RSS sampled every minute, errors counted, alerts counted at the pipeline and in every sink
# (stdout, JSONL, audit store, notifier, dashboard stream), which must be equal, and every event
# alert's id checked at the webhook.
# bench/soak.py does the work (its docstring lists what is measured and checked); the result is
# bench/results/soak-<machine>-<yyyymmdd>[-tag].json, exit 1 when a check failed.
#
#   bench/soak.sh [--seconds 3600] [--speed 2] [--symbols 100] [--build build/release]
#                 [--model models/default.onnx] [--sample-s 60] [--poll-s 5] [--tag TAG]
#                 [--note TEXT] [--out DIR]
#
# Nominal rate: the simulator's default flow per symbol (200 events/s per symbol before the
# intraday U-shape, [sim] events_per_s = 200 × symbols) in real time; --speed 2 doubles it.
# 100 symbols at speed 2 is ~40,000 events/s on average (~70,000/s at the open), which a shared
# 2-core machine sustains beside other work; --symbols 1000 is the default universe (~400,000
# events/s at speed 2). Runs at nice 10 unless NICE is set. A quick check: --seconds 120.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
exec nice -n "${NICE:-10}" /usr/bin/python3 -u bench/soak.py --command "$0${*:+ $*}" "$@"
