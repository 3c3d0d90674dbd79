#!/usr/bin/python3
"""Old vs new file decoders in one run (docs/performance.md, "File decoders").

Runs two builds of bench/ingest_decode_bench (BEFORE: the decoders of the base commit, AFTER: this
change; both built from the same bench source) one format at a time, alternating which goes
first, so that the load of the shared machine falls on both alike. Each writes its own JSON; this
merges them into one results file with, per dataset and input, both medians, the ratio, and both
event-stream hashes (the change must not alter a single event: `same_events`).

Usage: ingest_decode_compare.py --before BIN --after BIN --runs N --out FILE [--formats F,F,...]
       [--commit-before SHA] [--commit-after SHA]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

FORMATS = ["lobster", "sse-l2", "sse-l3", "szse-l2", "szse-trades", "mapped", "binance-json", "coinbase-json",
           "kraken-json", "bitstamp-json", "bitstamp-l3"]


def run(binary, runs, fmt, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    subprocess.run(["nice", "-n", "10", binary, str(runs), out_dir, fmt], check=True, stdout=subprocess.DEVNULL)
    (name,) = [n for n in os.listdir(out_dir) if n.endswith(".json")]
    with open(os.path.join(out_dir, name)) as f:
        return json.load(f)


def key(r):
    return (r["format"], r["dataset"], r["input"], r.get("layout", ""))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--runs", type=int, default=11)
    ap.add_argument("--out", required=True)
    ap.add_argument("--formats", default=",".join(FORMATS))
    ap.add_argument("--commit-before", default="")
    ap.add_argument("--commit-after", default="")
    a = ap.parse_args()
    results, doc = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for i, fmt in enumerate(a.formats.split(",")):
            order = [("before", a.before), ("after", a.after)]
            if i % 2:
                order.reverse()
            got = {}
            for which, binary in order:
                got[which] = run(binary, a.runs, fmt, os.path.join(tmp, f"{which}-{fmt}"))
                print(f"{fmt}: {which} done", file=sys.stderr)
            doc = doc or got["after"]
            before = {key(r): r for r in got["before"]["results"]}
            for r in got["after"]["results"]:
                b = before.get(key(r))
                if b is None:
                    continue
                m = "events_per_s_per_core_median"
                row = {k: r[k] for k in ("format", "dataset", "input", "second_input", "layout", "events", "errors")}
                row["same_events"] = b["event_stream_fnv1a"] == r["event_stream_fnv1a"]
                row["event_stream_fnv1a"] = {"before": b["event_stream_fnv1a"], "after": r["event_stream_fnv1a"]}
                row["runs"] = r["runs"]
                row["before"] = {k: v for k, v in b.items() if k.startswith("events_per_s") or k in ("rest_snapshots", "reads_per_run")}
                row["after"] = {k: v for k, v in r.items() if k.startswith("events_per_s") or k in ("rest_snapshots", "reads_per_run")}
                row["speedup_median"] = r[m] / b[m] if b[m] > 0 else None
                row["meets_target_after"] = r[m] >= 1e6
                results.append(row)
                print(f"{row['format']:14} {row['dataset'][:44]:44} {row['input'][:6]:6} {b[m] / 1e6:5.2f} -> {r[m] / 1e6:5.2f} M/s"
                      f"  x{row['speedup_median']:.2f}  same events: {row['same_events']}")
    with open("/proc/loadavg") as f:
        load = f.read().strip()
    out = {
        "benchmark": "ingest-decode",
        "date": doc["date"],
        "commit": a.commit_after or doc["commit"],
        "machine": doc["machine"],
        "command": " ".join(sys.argv),
        "settings": {
            "runs": a.runs,
            "before_commit": a.commit_before,
            "after_commit": a.commit_after or doc["commit"],
            "loadavg_at_end": load,
            "note": "before and after alternate format by format in one run on the same machine; per-core rate = events / "
                    "thread CPU seconds, median of `runs` runs, each reading the input until 50 ms of CPU are spent. "
                    + doc["settings"].get("note", ""),
        },
        "results": results,
    }
    with open(a.out, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    print("wrote", a.out)


if __name__ == "__main__":
    main()
