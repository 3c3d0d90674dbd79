#!/usr/bin/python3
"""A small synthetic dataset in the export contract's format, for tests and development.

Not market data: per symbol, feature rows one per second follow AR(1) noise; before each
"abnormal move" the volume/volatility/imbalance columns drift for a precursor period, so a
window model can learn something a last-row threshold cannot fully see. Labels, rule_score and
zscore follow the contract's meaning (rule: fires once the move is under way, i.e. late).

    /usr/bin/python3 models/synth.py --out DIR [--symbols 4] [--rows 6000] [--seed 7] [--event-gap 600]
"""
import argparse
import datetime
import json
import os
import sys

import numpy as np

F = 20
NAMES = ["ret_1s", "ret_10s", "ret_60s", "ret_300s", "vol_short", "vol_long", "vol_ratio",
         "volume_z", "trade_count_z", "imbalance_1", "imbalance_5", "imbalance_10", "spread_ticks",
         "microprice_dev", "depth_change", "trade_flow_imbalance", "dist_limit_up",
         "dist_limit_down", "ret_from_prev_close", "large_trade_ratio"]


def make_symbol(rng, rows, event_gap_s, precursor_s):
    x = np.zeros((rows, F), dtype=np.float32)
    noise = rng.standard_normal((rows, F)).astype(np.float32)
    for t in range(1, rows):
        x[t] = 0.9 * x[t - 1] + 0.3 * noise[t]
    events = []
    t = 300
    while True:
        t += int(rng.exponential(event_gap_s)) + 120
        if t >= rows - 60:
            break
        events.append(t)
    drift = np.zeros(rows, dtype=np.float32)
    move = np.zeros(rows, dtype=np.float32)
    for e in events:
        ramp = np.linspace(0.0, 1.0, precursor_s, dtype=np.float32)
        lo = max(0, e - precursor_s)
        drift[lo:e] = np.maximum(drift[lo:e], ramp[precursor_s - (e - lo):])
        move[e:e + 30] = np.maximum(move[e:e + 30], np.linspace(1.0, 0.2, 30, dtype=np.float32))
    x[:, 7] += 2.2 * drift              # volume_z builds up
    x[:, 8] += 1.6 * drift              # trade_count_z
    x[:, 6] += 0.8 * drift + 3.0 * move  # vol_ratio
    x[:, 9] += 0.5 * drift * np.sign(noise[:, 0])
    x[:, 15] += 0.6 * drift
    x[:, 1] += 6.0 * move               # ret_10s jumps once the move starts
    x[:, 0] += 3.0 * move
    x[:, 12] = np.abs(x[:, 12]) + 1.0   # spread in ticks, >= 1
    x[:, 4] = np.abs(x[:, 4]) + 0.5     # vol_short > 0
    x[:, 5] = np.abs(x[:, 5]) * 0.3 + 0.5
    return x, np.array(events, dtype=np.int64)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--symbols", type=int, default=4)
    ap.add_argument("--rows", type=int, default=6000, help="feature rows (seconds) per symbol")
    ap.add_argument("--window", type=int, default=60)
    ap.add_argument("--stride", type=int, default=5)
    ap.add_argument("--horizon", type=int, default=30, help="label horizon H, seconds")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--event-gap", type=float, default=600.0,
                    help="mean seconds between events (plus 120 s)")
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed)
    t0_ns = int(datetime.datetime(2026, 1, 5, 14, 30, tzinfo=datetime.timezone.utc).timestamp()) * 10**9
    H, T = args.horizon, args.window
    parts = []
    symbols = [f"SYN{i}" for i in range(args.symbols)]
    for si in range(args.symbols):
        x, events = make_symbol(rng, args.rows, args.event_gap, 90)
        ret10 = x[:, 1]
        zs = np.abs(ret10) / np.maximum(x[:, 4], 1e-3)
        big = np.abs(ret10) > 4.0
        for end in range(T - 1, args.rows, args.stride):
            nxt = events[(events > end) & (events <= end + H)]
            label = 1 if nxt.size else 0
            ev = int(t0_ns + int(nxt[0]) * 10**9) if nxt.size else -1
            rule = 1.0 if big[max(0, end - H + 1):end + 1].any() else 0.0
            past = events[(events > end - 10) & (events <= end)]  # the detect task (grace 10 s)
            det = (1, int(t0_ns + int(past[0]) * 10**9)) if past.size else (0, -1)
            parts.append((t0_ns + end * 10**9 + si, si, label, ev, rule, zs[end],
                          x[end - T + 1:end + 1], det))
    parts.sort(key=lambda p: p[0])
    n = len(parts)
    os.makedirs(args.out, exist_ok=True)
    np.save(os.path.join(args.out, "windows.npy"), np.stack([p[6] for p in parts]).astype(np.float32))
    np.save(os.path.join(args.out, "labels.npy"), np.array([p[2] for p in parts], dtype=np.uint8))
    np.save(os.path.join(args.out, "symbol.npy"), np.array([p[1] for p in parts], dtype=np.int32))
    end_ts = np.array([p[0] for p in parts], dtype=np.int64)
    np.save(os.path.join(args.out, "end_ts_ns.npy"), end_ts)
    np.save(os.path.join(args.out, "event_ts_ns.npy"), np.array([p[3] for p in parts], dtype=np.int64))
    np.save(os.path.join(args.out, "rule_score.npy"), np.array([p[4] for p in parts], dtype=np.float32))
    np.save(os.path.join(args.out, "zscore.npy"), np.array([p[5] for p in parts], dtype=np.float32))
    # The two tasks (docs/labels.md): forecast is this label; detect an event in the last 10 s.
    np.save(os.path.join(args.out, "labels_forecast.npy"), np.array([p[2] for p in parts], np.uint8))
    np.save(os.path.join(args.out, "event_ts_forecast_ns.npy"),
            np.array([p[3] for p in parts], dtype=np.int64))
    np.save(os.path.join(args.out, "labels_detect.npy"), np.array([p[7][0] for p in parts], np.uint8))
    np.save(os.path.join(args.out, "event_ts_detect_ns.npy"),
            np.array([p[7][1] for p in parts], dtype=np.int64))
    labels = np.array([p[2] for p in parts])
    manifest = {
        "format_version": 1, "source": {"format": "synthetic", "paths": [], "seed": args.seed},
        "symbols": symbols, "time_range_ns": [int(end_ts[0]), int(end_ts[-1])],
        "feature_names": NAMES, "window": T, "stride": args.stride,
        "label": {"horizon_s": H, "k": 4.0, "definition": "synthetic events"},
        "count": n, "positives": int(labels.sum()),
        "symbol_hours": {s: args.rows / 3600.0 for s in symbols},
        "rule_detectors": ["synthetic |ret_10s| > 4"],
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"synth: {n} windows, {int(labels.sum())} positive, T={T}, {args.symbols} symbols "
          f"→ {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
