#!/usr/bin/python3
"""Issue 23's "done when", checked on the real data: every dataset in ../shared/data replays
through its format (and the SSE/SZSE days through the shipped mapped layouts) with 0 errors,
real gaps counted as gaps; the Binance book equals bookTicker on >= 99.9 % of checks; Kraken
checksums verify 100 %; Bitstamp's order-level book is never crossed.

Runs `ticksentry replay --format F ... --summary-json` per dataset (no outputs but the summary)
and writes bench/results/ingest-replay-check-<machine>-<yyyymmdd>[-TAG].json.

Usage: ingest_replay_check.py --ticksentry BIN [--data DIR] [--out FILE]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

LOBSTER = "lobster/{s}_2012-06-21_34200000_57600000_message_{d}.csv.gz"
DATASETS = [
    ("lobster", [LOBSTER.format(s="AAPL", d=1)], ""),
    ("lobster", [LOBSTER.format(s="AMZN", d=5)], ""),
    ("lobster", [LOBSTER.format(s="GOOG", d=10)], ""),
    ("sse-l2", ["sse-l2/600519-20230201"], ""),
    ("sse-l2", ["sse-l2/600519-20230202"], ""),
    ("sse-l2", ["sse-l2/600519-20230203"], ""),
    ("sse-l3", ["sse-l3/20230711-5stocks"], ""),
    ("szse-l2", ["szse-l2/5stocks-20220601"], ""),
    ("szse-trades", ["szse-trades/000001-20230201"], ""),
    ("mapped", ["sse-l2/600519-20230201"], "sse-l2"),
    ("mapped", ["sse-l2/600519-20230202"], "sse-l2"),
    ("mapped", ["sse-l2/600519-20230203"], "sse-l2"),
    ("mapped", ["szse-l2/5stocks-20220601"], "szse-l2"),
    ("binance-json", ["crypto/BINANCE.ws.1.0", "crypto/BINANCE.http.0.0"], ""),
    ("coinbase-json", ["crypto/COINBASE.ws.28.0"], ""),
    ("kraken-json", ["crypto/KRAKEN.ws.50.0"], ""),
    ("bitstamp-json", ["crypto/BITSTAMP.ws.1.0", "crypto/BITSTAMP.http.0.0"], ""),
    ("bitstamp-l3", ["crypto/bitstamp-l3-20150501/2015-05-01.log.gz"], ""),
]


def replay(binary, fmt, paths, layout, tmp):
    summary = os.path.join(tmp, "summary.json")
    cmd = [binary, "replay", "--format", fmt, *paths, "--no-stdout", "--no-notify", "--jsonl", "", "--audit-db", "",
           "--summary-json", summary, "--log-level", "warn"]
    if layout:
        cmd += ["--layout", layout]
    if os.path.exists(summary):
        os.remove(summary)
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    if not os.path.exists(summary):  # refused at open: exit 2 and its message, no summary
        return p.returncode, {"events": 0, "errors": {"open": p.stderr.strip()[-300:]}, "feed": {}}, " ".join(cmd)
    with open(summary) as f:
        return p.returncode, json.load(f), " ".join(cmd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticksentry", required=True)
    ap.add_argument("--data", default=os.environ.get("TICKSENTRY_DATA_DIR", os.path.join(HERE, "..", "..", "shared", "data")))
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    a.ticksentry = os.path.abspath(a.ticksentry)
    rows, ok_all = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for fmt, rel, layout in DATASETS:
            paths = [os.path.join(a.data, r) for r in rel]
            if not all(os.path.exists(p) for p in paths):
                print(f"skip {fmt} {rel[0]}: data absent", file=sys.stderr)
                continue
            rc, s, cmd = replay(a.ticksentry, fmt, paths, layout, tmp)
            feed = {k: v for c in s.get("feed", {}).values() for k, v in c.items()}
            checks = {"exit_0": rc == 0, "no_errors": not s["errors"], "events": s["events"] > 0}
            if fmt == "binance-json":
                share = 1 - feed["bbo_mismatches"] / feed["bbo_checks"] if feed.get("bbo_checks") else 0.0
                checks["book_equals_bookticker_ge_99_9pct"] = share >= 0.999
                feed["bbo_agreement"] = share
            if fmt == "kraken-json":
                checks["checksums_all_verified"] = feed["checksum_mismatch"] == 0 and feed["checksums_verified"] > 0
            if fmt == "bitstamp-l3":
                checks["never_crossed"] = feed["crossed_books"] == 0
            ok = all(checks.values())
            ok_all = ok_all and ok
            row = {"format": fmt, "layout": layout, "dataset": " + ".join(rel), "exit_code": rc, "events": s["events"],
                   "errors": s["errors"], "feed": feed, "checks": checks, "pass": ok}
            rows.append(row)
            extra = {k: feed[k] for k in ("sequence_gap", "checksum_mismatch", "checksums_verified", "bbo_checks",
                                          "bbo_mismatches", "crossed_books", "stale_books") if k in feed}
            print(f"{'PASS' if ok else 'FAIL'} {fmt:13} {layout:7} {rel[0][:46]:46} events {s['events']:7} "
                  f"errors {sum(s['errors'].values()) if s['errors'] else 0} {extra}")
    doc = {
        "benchmark": "ingest-replay-check",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": subprocess.run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"], capture_output=True,
                                 text=True).stdout.strip(),
        "machine": {"name": os.environ.get("TICKSENTRY_MACHINE", "cpu2"), "cores": os.cpu_count()},
        "command": " ".join(sys.argv),
        "settings": {"data_dir": a.data},
        "all_pass": ok_all,
        "results": rows,
    }
    if a.out:
        with open(a.out, "w") as f:
            json.dump(doc, f, indent=2)
            f.write("\n")
        print("wrote", a.out)
    sys.exit(0 if ok_all else 1)


if __name__ == "__main__":
    main()
