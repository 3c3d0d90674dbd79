#!/usr/bin/python3
"""Tabulate the experiments: models/report.json, models/REPORT.md and PR-curve plots.

    /usr/bin/python3 models/report.py --work build/models-exp [--out models]

Reads every WORK/<run>/eval_<data>_<split>.json written by experiments.py (and train.json for
the training summary) and groups them by test set "<data>:<split>": per test set, one row per
detector (each trained model, plus the rules and z-score baselines, which are the same for every
model on one test set). The Markdown is generated; hand-written findings go in
models/REPORT_NOTES.md, which is copied in verbatim after the tables.
"""
import argparse
import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from experiments import eval_path, load_spec  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
METRIC_KEYS = ("roc_auc", "pr_auc", "threshold", "alerts", "false_alerts",
               "false_alerts_per_symbol_hour", "precision", "recall", "events",
               "events_detected", "median_lead_s")


def collect(spec, work):
    tests = {}
    runs = {}
    for r in spec["run"]:
        tj = os.path.join(work, r["name"], "train.json")
        if os.path.exists(tj):
            with open(tj) as f:
                t = json.load(f)
            runs[r["name"]] = {"config": r["config"], "train_data": r["train"],
                               "kind": t["config"]["model"]["kind"],
                               "parameters": t["parameters"], "best_epoch": t["best_epoch"],
                               "epochs_run": len(t["history"]), "stop_reason": t["stop_reason"],
                               "best_val_pr_auc": t["best_val_pr_auc"],
                               "train_windows": t["train_windows"],
                               "train_positives": t["train_positives"],
                               "seconds": round(t["seconds"], 1)}
        for target in r["tests"]:
            p = eval_path(work, r, target)
            if not os.path.exists(p):
                continue
            with open(p) as f:
                ev = json.load(f)
            entry = tests.setdefault(target, {k: ev.get(k) for k in
                                              ("evaluator", "symbol_hours", "label", "windows",
                                               "positives", "budget")})
            entry.setdefault("detectors", {})
            d = entry["detectors"]
            d[f"{r['name']} ({runs.get(r['name'], {}).get('kind', '?')})"] = ev["detectors"]["model"]
            entry.setdefault("baselines", {"rules": ev["detectors"]["rules"],
                                           "zscore": ev["detectors"]["zscore"]})
    for entry in tests.values():  # models first, then the baselines
        entry["detectors"].update(entry.pop("baselines"))
    return tests, runs


def fmt(v, f="{:.3f}"):
    return "–" if v is None else f.format(v)


def plot(target, entry, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4.5), dpi=100)
    for name, m in entry["detectors"].items():
        c = m.get("pr_curve")
        if not c or not c.get("points"):
            continue
        pts = c["points"]  # [threshold, precision, recall]
        style = "--" if name in ("rules", "zscore") else "-"
        ax.plot([p[2] for p in pts], [p[1] for p in pts], style, label=f"{name}  PR-AUC {fmt(m['pr_auc'])}",
                drawstyle="steps-post")
    if entry.get("windows"):
        ax.axhline(entry["positives"] / entry["windows"], color="grey", lw=0.8, ls=":",
                   label="base rate")
    ax.set_xlabel("recall")
    ax.set_ylabel("precision")
    top = max((p[1] for m in entry["detectors"].values()
               for p in (m.get("pr_curve") or {}).get("points", [])), default=1.0)
    ax.set_xlim(0, 1)
    ax.set_ylim(0, min(1.02, max(0.25, 1.1 * top)))
    ax.set_title(f"PR curves, {target}")
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=os.path.join(HERE, "experiments.toml"))
    ap.add_argument("--work", required=True)
    ap.add_argument("--out", default=HERE)
    args = ap.parse_args(argv)
    spec = load_spec(args.spec)
    tests, runs = collect(spec, args.work)
    order = list(spec.get("data", {}))  # sections in the order of the spec's [data] table
    tests = dict(sorted(tests.items(), key=lambda kv: (
        order.index(kv[0].split(":")[0]) if kv[0].split(":")[0] in order else len(order),
        kv[0].split(":")[1] != "test")))
    if not tests:
        print(f"report: no evaluations under {args.work} (run models/experiments.py)",
              file=sys.stderr)
        return 1
    os.makedirs(os.path.join(args.out, "plots"), exist_ok=True)
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    report = {"created": created, "alert_budget": "1 false alert per symbol-hour of the split",
              "datasets": {}, "runs": runs}
    md = ["# Alert model report", "",
          f"Generated by `models/report.py` from the runs of `models/experiments.py` "
          f"({created}); do not edit by hand (notes: models/REPORT_NOTES.md).", "",
          "Metrics on each test set (definitions: docs/labels.md, models/metrics.py): ROC-AUC, "
          "PR-AUC (average precision), and at the alert budget (the lowest threshold where false "
          "alerts ≤ 1 per symbol-hour of the split; alerts per symbol have a cooldown of H): "
          "precision of the alerts, recall of the labelled events, median detection lead time "
          "over the detected events (event start − end of its first window above threshold). `rules` = any default "
          "rule fired in the last R s (binary), `zscore` = |10 s mid return| / rolling "
          "volatility, both computed by the C++ exporter.", ""]
    for target, entry in tests.items():
        data, split = target.split(":")
        png = f"plots/pr_{data}_{split}.png"
        plot(target, entry, os.path.join(args.out, png))
        any_m = next(iter(entry["detectors"].values()))
        report["datasets"][target] = {
            "data": data, "split": split, "description": spec.get("data", {}).get(data),
            "evaluator": entry["evaluator"], "windows": entry["windows"],
            "positives": entry["positives"], "events": any_m["events"],
            "symbol_hours": entry["symbol_hours"], "budget": entry["budget"],
            "label": entry["label"], "plot": png,
            "detectors": {k: {mk: v.get(mk) for mk in METRIC_KEYS} for k, v in
                          entry["detectors"].items()}}
        md += [f"## {target} — {spec.get('data', {}).get(data, data)}", "",
               f"Split `{split}`: {entry['windows']} windows, {entry['positives']} positive, "
               f"{any_m['events']} labelled events, {fmt(entry['symbol_hours'], '{:.2f}')} "
               f"symbol-hours (budget {fmt(entry['budget']['max_false_alerts'], '{:.1f}')} false "
               f"alerts, cooldown {entry['budget']['cooldown_s']:.0f} s). "
               f"Evaluator: {entry['evaluator']}.", "",
               "| detector | ROC-AUC | PR-AUC | alerts (false) | precision @ budget | "
               "recall @ budget (events) | median lead (s) |",
               "|---|---|---|---|---|---|---|"]
        for name, m in entry["detectors"].items():
            md.append(f"| {name} | {fmt(m['roc_auc'])} | {fmt(m['pr_auc'])} | "
                      f"{m['alerts']} ({m['false_alerts']}) | {fmt(m['precision'])} | "
                      f"{fmt(m['recall'])} ({m['events_detected']}/{m['events']}) | "
                      f"{fmt(m['median_lead_s'], '{:.1f}')} |")
        md += ["", f"![PR curves {target}]({png})", ""]
    md += ["## Training runs", "",
           "| run | model | parameters | trained on | train windows (pos.) | best epoch / run | "
           "val PR-AUC | seconds | stop |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in runs.items():
        md.append(f"| {name} | {r['kind']} | {r['parameters']} | {r['train_data']} | "
                  f"{r['train_windows']} ({r['train_positives']}) | {r['best_epoch']} / "
                  f"{r['epochs_run']} | {fmt(r['best_val_pr_auc'])} | {r['seconds']:.0f} | "
                  f"{r['stop_reason']} |")
    notes = os.path.join(args.out, "REPORT_NOTES.md")
    if os.path.exists(notes):
        with open(notes) as f:
            md += ["", f.read().rstrip()]
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(args.out, "REPORT.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print(f"report: {len(tests)} test sets, {len(runs)} runs → {args.out}/REPORT.md, "
          f"report.json, plots/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
