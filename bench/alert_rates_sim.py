#!/usr/bin/env python3
"""Driver of bench/alert_rates_sim.sh: the simulator's quiet-time alert rate with and without its
call auctions (docs/simulator.md "Phases"), over a whole trading day and the next opening.

Each case runs `ticksentry run` unpaced on the same seed, writes the injected events (labels) and
the alerts, and counts as in tests/e2e/sim_alerts_test.cpp:
  caught = an alert of the expected type on the symbol within 60 s of the injected start (runs to a
           limit: 20 s + 400 s x distance + 15 s);
  quiet  = alerts outside [start - 10 s, end + 180 s] of every injected event on that symbol;
           large_buy / large_sell are printed but not counted (they report prints that happened).
"""
import argparse
import csv
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

EXPECTED = {
    "flash_crash": {"accelerating_drop", "high_dive"},
    "pump": {"rapid_rise"},
    "volume_burst": {"volume_burst"},
    "liquidity_withdrawal": {"spread_widening"},
    "spoofing": {"large_order", "book_imbalance"},
    "limit_up_run": {"limit_up_sealed"},
    "limit_down_run": {"limit_down_sealed"},
}
NS = 10**9
START_0915_NS = 1675214100 * NS  # 2023-02-01 09:15:00 +08:00
# The simulator's test thresholds (kSimRules in tests/e2e/sim_alerts_test.cpp).
SIM_RULES = """[rules.large_order]
relative = false
[rules.rapid_rise]
relative = false
[rules.volume_burst]
min_volume_multiple_60s = 3
min_count_multiple_60s = 3
"""


def deadline(ev):
    if ev["type"] in ("limit_up_run", "limit_down_run"):
        return ev["start_ns"] + int((20.0 + 400.0 * ev["magnitude"] + 15.0) * 1e9)
    return ev["start_ns"] + 60 * NS


def shanghai_sod(ts_ns):
    return ((ts_ns // NS + 8 * 3600) % 86400 + 86400) % 86400


def run_case(args, tmp, name, rules, auctions):
    cfg = os.path.join(tmp, name + ".toml")
    with open(cfg, "w") as f:
        # 2023-02-01 09:15 +08:00: the first day starts with its opening call.
        f.write(f"[sim]\nevents_per_s = {args.events_per_s}\nanomalies_per_hour = {args.anomalies}\n"
                f"start_ns = {START_0915_NS}\nauctions = {'true' if auctions else 'false'}\n\n{rules}")
    labels, jsonl, summary = (os.path.join(tmp, name + x) for x in (".labels.csv", ".jsonl", ".json"))
    cmd = [args.bin, "run", "--config", cfg, "--symbols", str(args.symbols), "--seed", str(args.seed),
           "--sim-seconds", str(args.seconds), "--labels", labels, "--speed", "0", "--no-stdout",
           "--http", "off", "--audit-db", "", "--jsonl", jsonl, "--summary-json", summary]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    if r.returncode != 0:
        sys.exit(f"alert_rates_sim: {name}: exit {r.returncode}: {r.stderr[-600:]}")
    s = json.load(open(summary))
    events = [{"symbol": row["symbol"], "type": row["type"], "start_ns": int(row["start_ns"]),
               "end_ns": int(row["end_ns"]), "magnitude": float(row["magnitude"])}
              for row in csv.DictReader(open(labels))]
    alerts = [json.loads(line) for line in open(jsonl) if line.strip()]
    for a in alerts:
        a["ts"] = int(a["exch_ts_ns"])
    by_sym = {}
    for a in alerts:
        by_sym.setdefault(a["symbol"], []).append(a)
    caught = {}
    missed = []
    for ev in events:
        want = EXPECTED[ev["type"]]
        hit = any(a["type"] in want and ev["start_ns"] <= a["ts"] <= deadline(ev) for a in by_sym.get(ev["symbol"], []))
        c = caught.setdefault(ev["type"], [0, 0])
        c[1] += 1
        c[0] += hit
        if not hit:
            missed.append(f"{ev['type']} {ev['symbol']} magnitude {ev['magnitude']:.4g}")
    ev_by_sym = {}
    for ev in events:
        ev_by_sym.setdefault(ev["symbol"], []).append(ev)
    quiet, quiet_by_type, large_quiet, after_start, outside_continuous = 0, {}, 0, 0, 0
    for a in alerts:
        sod = shanghai_sod(a["ts"])
        if not (9 * 3600 + 1800 <= sod < 11 * 3600 + 1800 or 13 * 3600 <= sod < 14 * 3600 + 57 * 60):
            outside_continuous += 1
        near = any(ev["start_ns"] - 10 * NS <= a["ts"] <= ev["end_ns"] + 180 * NS for ev in ev_by_sym.get(a["symbol"], []))
        if near:
            continue
        quiet_by_type[a["type"]] = quiet_by_type.get(a["type"], 0) + 1
        if a["type"] in ("large_buy", "large_sell"):
            large_quiet += 1
            continue
        quiet += 1
        if 9 * 3600 + 1800 <= sod < 9 * 3600 + 1800 + 120 or 13 * 3600 <= sod < 13 * 3600 + 120:
            after_start += 1
    symbol_hours = args.symbols * args.seconds / 3600.0
    return {
        "case": name, "auctions": auctions, "rules": "kSimRules" if rules else "product defaults",
        "events": s.get("events"), "input_errors": s.get("errors", {}), "alerts": len(alerts),
        "injected": len(events),
        "caught": {k: f"{v[0]}/{v[1]}" for k, v in sorted(caught.items())},
        "caught_all": all(v[0] == v[1] for v in caught.values()),
        "missed": missed,
        "quiet_alerts": quiet, "quiet_per_symbol_hour": round(quiet / symbol_hours, 3),
        "quiet_by_type": dict(sorted(quiet_by_type.items())),
        "quiet_large_trades": large_quiet,
        "quiet_in_first_120s_of_a_session": after_start,
        "alerts_outside_continuous": outside_continuous,
        "wall_s": None,
    }


def main():
    p = argparse.ArgumentParser()
    for k in ("bin", "dest", "machine", "command", "root"):
        p.add_argument("--" + k, required=True)
    p.add_argument("--symbols", type=int, default=100)
    p.add_argument("--seconds", type=int, default=14220 + 1800)
    p.add_argument("--events-per-s", type=float, default=2500)
    p.add_argument("--anomalies", type=float, default=0.7)
    p.add_argument("--seed", type=int, default=20261202)
    args = p.parse_args()
    cases = [("defaults-auctions", "", True), ("defaults-no-auctions", "", False),
             ("simrules-auctions", SIM_RULES, True), ("simrules-no-auctions", SIM_RULES, False)]
    results = []
    with tempfile.TemporaryDirectory(prefix="alert-rates-sim.") as tmp:
        for name, rules, auctions in cases:
            t0 = datetime.datetime.now()
            r = run_case(args, tmp, name, rules, auctions)
            r["wall_s"] = round((datetime.datetime.now() - t0).total_seconds(), 1)
            results.append(r)
            print(f"{name:22} events {r['events']} alerts {r['alerts']} injected {r['injected']} "
                  f"caught {r['caught']} quiet {r['quiet_alerts']} ({r['quiet_per_symbol_hour']}/sym-h) "
                  f"{r['quiet_by_type']} first-120s {r['quiet_in_first_120s_of_a_session']} "
                  f"outside-continuous {r['alerts_outside_continuous']} ({r['wall_s']} s)", flush=True)
    commit = subprocess.run("git rev-parse --short HEAD", shell=True, capture_output=True, text=True,
                            cwd=args.root).stdout.strip()
    dirty = subprocess.run("git status --porcelain --untracked-files=no | head -1", shell=True, capture_output=True,
                           text=True, cwd=args.root).stdout.strip()
    doc = {
        "benchmark": "alert-rates-sim",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "commit": commit + ("-dirty" if dirty else ""),
        "machine": {"name": args.machine, "cores": os.cpu_count(), "kernel": platform.release()},
        "command": args.command,
        "setup": (f"ticksentry run, simulator {args.symbols} symbols, seed {args.seed}, {args.seconds} trading s "
                  f"(from 2023-02-01 09:15: its opening call, the whole day, its closing call, the next day's opening call and "
                  f"{args.seconds - 14220} s), {args.events_per_s} events/s, {args.anomalies} injected events per "
                  "symbol-hour; each rule set with the call auctions on and off (same seed: the same continuous flow)"),
        "counting": "as tests/e2e/sim_alerts_test.cpp: caught within 60 s (limit runs: their climb + 15 s); quiet "
                    "outside [start - 10 s, end + 180 s]; large_buy/large_sell not counted as quiet alerts",
        "symbol_hours": round(args.symbols * args.seconds / 3600.0, 2),
        "results": results,
    }
    with open(args.dest, "w") as f:
        json.dump(doc, f, indent=2)
    print("wrote " + args.dest)


if __name__ == "__main__":
    sys.exit(main())
