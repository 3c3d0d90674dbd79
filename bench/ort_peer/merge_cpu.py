#!/usr/bin/env python3
"""The shape sweep on the cpu backend against ONNX Runtime (issue 26), merged and judged.

    python3 bench/ort_peer/merge_cpu.py --ticksentry TS.json --ort ORT.json --cases cases.json
        --results-dir DIR [--machine cpu2] [--commit abc] [--command "..."] [--settings JSON]

TS.json: bench/shape_sweep/shape_sweep --backend cpu --precisions fp32 --threads 1; ORT.json:
bench/ort_peer/ort_peer.js --threads 1 (both pinned to one core by the caller). Per architecture
and batch: ratio = ONNX Runtime P50 / ticksentry P50 (host-to-host, FP32, one thread). Targets:
>= 2x at batch 1, >= 1x at every batch; GRU-2x128 batch 1 <= 250 us. Accuracy against PyTorch
FP32 (CPU) for both (limit 1e-5 for ticksentry). Writes DIR/cpu-sweep-<machine>-<yyyymmdd-hhmm>.json.
"""
import argparse
import datetime
import json
import os
import platform
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ticksentry", required=True)
    ap.add_argument("--ort", required=True)
    ap.add_argument("--cases", required=True)
    ap.add_argument("--results-dir", required=True)
    ap.add_argument("--machine", default="cpu2")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--command", default="")
    ap.add_argument("--settings", default="{}")
    a = ap.parse_args()
    ts = json.load(open(a.ticksentry))
    ort = json.load(open(a.ort))
    cases = json.load(open(a.cases))
    info = next((r for r in ort if r["system"] == "onnxruntime-info"), {})
    t = {(r["case"]["arch"], r["case"].get("batch")): r for r in ts}
    o = {(r["case"]["arch"], r["case"].get("batch")): r for r in ort if r["system"] == "onnxruntime"}
    rows, failures = [], []
    for (arch, b), r in sorted(o.items(), key=lambda kv: (kv[0][0], kv[0][1] or 0)):
        if b is None:
            failures.append(f"{arch}: onnxruntime: {r.get('error', '')[:160]}")
            continue
        mine = t.get((arch, b))
        row = {"arch": arch, "batch": b, "ort_p50_us": r["metrics"]["p50_us"], "ort_p99_us": r["metrics"]["p99_us"],
               "ort_rel_err": (r.get("accuracy") or {}).get("rel_err")}
        if not mine or "metrics" not in mine:
            failures.append(f"{arch} b{b}: ticksentry: {(mine or {}).get('error', 'not run')[:160]}")
            rows.append(row)
            continue
        row.update(ts_p50_us=mine["metrics"]["p50_us"], ts_p99_us=mine["metrics"]["p99_us"],
                   ts_tactics=mine.get("tactics", ""), target=2.0 if b == 1 else 1.0)
        row["ratio"] = row["ort_p50_us"] / row["ts_p50_us"]
        row["meets_target"] = row["ratio"] >= row["target"]
        acc = [x for (ar, _), x in t.items() if ar == arch and "accuracy" in x]
        if acc:
            row["ts_rel_err"] = acc[0]["accuracy"].get("rel_err")
            if not acc[0]["accuracy"].get("ok", False):
                failures.append(f"{arch}: ticksentry accuracy {row['ts_rel_err']}")
        rows.append(row)
    judged = [r for r in rows if "meets_target" in r]
    archs = sorted({r["arch"] for r in rows})
    missing = sorted({r["arch"] for r in judged if not r["meets_target"]})
    gru = next((r for r in judged if r["arch"].startswith("00-gru-2x128") and r["batch"] == 1), None)
    summary = {"architectures": len(archs), "judged_cases": len(judged),
               "cases_meeting_target": sum(r["meets_target"] for r in judged),
               "architectures_meeting_every_target": len(set(archs) - set(missing)),
               "architectures_missing": missing,
               "gru_2x128_b1_p50_us": gru and gru["ts_p50_us"], "gru_2x128_b1_target_us": 250,
               "failures": sorted(set(failures))}
    now = datetime.datetime.now(datetime.timezone.utc)
    doc = {"benchmark": "cpu-sweep", "date": now.strftime("%Y-%m-%dT%H:%M:%SZ"), "commit": a.commit,
           "machine": {"name": a.machine, "host": platform.node(), "cpus": os.cpu_count(),
                       "onnxruntime": info.get("version"), "threads": info.get("threads")},
           "command": a.command, "settings": json.loads(a.settings),
           "export": {"torch": cases.get("torch"), "seed": cases.get("seed")},
           "summary": summary, "rows": rows, "results": ts + ort}
    os.makedirs(a.results_dir, exist_ok=True)
    path = os.path.join(a.results_dir, f"cpu-sweep-{a.machine}-{now.strftime('%Y%m%d-%H%M')}.json")
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"{'arch':48s} {'batch':>5s} {'ts':>9s} {'ort':>9s} {'ratio':>6s}")
    for r in rows:
        if "ratio" in r:
            print(f"{r['arch']:48s} {r['batch']:5d} {r['ts_p50_us']:9.1f} {r['ort_p50_us']:9.1f} {r['ratio']:6.2f}"
                  + ("" if r["meets_target"] else " MISS"))
    print(json.dumps({k: v for k, v in summary.items() if k != "failures"}))
    for fl in summary["failures"]:
        print("FAIL", fl)
    print(f"wrote {path}")
    return 1 if summary["failures"] else 0


if __name__ == "__main__":
    sys.exit(main())
