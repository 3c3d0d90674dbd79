#!/usr/bin/python3
"""models/REPORT.md and models/report.json from the protocol study (models/study.py).

    /usr/bin/python3 models/report.py --study build/models-study/study.json [--out models]

Every number comes from study.json; nothing is typed by hand. REPORT.md is render(report.json)
(tests/models/test_report.py re-renders it and compares); hand-written notes go in
models/REPORT_NOTES.md, copied in at the end, and may state no number at all.

report.json schema (format_version 4):
  {"format_version", "created",
   "protocol": {budget, block_s, reps, split, markets: {M: {..., "datasets": {D: per split
       windows, symbol-hours, positives and events per task}}}, config, tasks},
   "run": {"config_file", "reps", "evaluations"},
   "evaluations": {TASK/NAME: {"task", "measured_on", "excluded_markets", "excluded_symbols",
       "best_neural", "best_baseline", "decision": {...}, "gate", "default_change",
       "operating_points": {DETECTOR: {threshold, fitted_on, ...}},
       "results": {GROUP: {DETECTOR: {METRIC: {"value", "lo", "hi"}, "events", ...}}}}},
   "goal": {"recall", "false_alerts_per_symbol_hour", "median_lead_s_forecast",
       "evaluations": {TASK/NAME: {"default", METRIC..., "met", "fails", "events_needed"}},
       "datasets": [{"task", "dataset", "market", "evaluation", "default", METRIC..., "met",
                     "fails"}]},
   "data_needed": {"events_for_recall_pm_0_1", "markets": [per task and market: symbol-hours
       and events per split, events per symbol-hour, symbol-hours needed, more than now],
       "no_validation_events": [{"task", "market", ...}]},
   "market_operating_points": models/market_ops.py's JSON (the operating-point table) or null}
  TASK: detect (onset in the last seconds) or forecast (onset strictly ahead, docs/labels.md);
  NAME: pooled (test split), held_out_symbols, lomo:MARKET (held-out rows: the
  leave-one-market-out table); GROUP: all, market:M, dataset:D, symbol:M:S. METRIC: pr_auc,
  roc_auc, recall, precision, false_alerts_per_symbol_hour, median_lead_s, p10_lead_s.
"""
import argparse
import datetime
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
METRICS = ("pr_auc", "roc_auc", "recall", "precision", "false_alerts_per_symbol_hour",
           "median_lead_s", "p10_lead_s")
COUNTS = ("events", "events_caught", "alerts", "false_alerts", "symbol_hours", "windows",
          "positives", "threshold")
TITLES = {"pooled": "Pooled markets, test split (the last 15 % of each market's trading time)",
          "held_out_symbols": "Held-out symbols (never in training or selection; all their rows)"}
TASK_TITLES = {"detect": "detection (an onset within the last seconds)",
               "forecast": "forecast (an onset strictly ahead, within H)",
               "any": "either (the joint training label)"}
GOAL_RECALL, GOAL_FALSE, GOAL_LEAD_S = 0.6, 1.0, 10.0
# Events for a recall interval of +-0.1 around 0.6 (normal approximation of a binomial).
EVENTS_FOR_PM_01 = int(round(1.96 ** 2 * 0.6 * 0.4 / 0.1 ** 2))
TEST_SHARE = 0.15  # the test split's share of each market's trading time (protocol.py)
SPLITS = ("train", "validation", "test")


def judge(task, decision, m):
    """The goal's conditions for one measured row set of the default detector: {"met", "fails"}."""
    fails = []
    if not m["events"]:
        return {"met": None, "fails": ["no events in these rows"]}
    rec, fa = m["recall"]["value"], m["false_alerts_per_symbol_hour"]["value"]
    if rec is None or rec < GOAL_RECALL:
        fails.append(f"recall {f(rec)} < {GOAL_RECALL:g}")
    if fa is None or fa > GOAL_FALSE:
        fails.append(f"{f(fa, '{:.2f}')} false alerts per symbol-hour > {GOAL_FALSE:g}")
    if task == "forecast":
        lead = m["median_lead_s"]["value"]
        if lead is None or lead < GOAL_LEAD_S:
            fails.append(f"median lead {f(lead, '{:.1f}')} s < {GOAL_LEAD_S:g} s")
    if not decision["interval_above_baseline"]:
        fails.append("no neural PR-AUC interval above the best baseline")
    return {"met": not fails, "fails": fails}


def goal_cells(m):
    """The goal's numbers of one row set, as JSON values."""
    return {"events": m["events"], "events_caught": m["events_caught"],
            "symbol_hours": m["symbol_hours"],
            **{k: m[k] for k in ("recall", "false_alerts_per_symbol_hour", "precision", "pr_auc",
                                 "median_lead_s", "p10_lead_s")}}


def events_needed(m, half_width=0.1):
    """Events a recall interval of +-half_width needs: the binomial count at the goal's recall
    (EVENTS_FOR_PM_01) and, where the measured block-bootstrap interval has a width, the measured
    events scaled by (measured half-width / half_width)^2 (the interval narrows as 1/sqrt(n))."""
    r = m["recall"]
    scaled = None
    if m["events"] and r["lo"] is not None and r["hi"] is not None and r["hi"] > r["lo"]:
        scaled = m["events"] * ((r["hi"] - r["lo"]) / 2 / half_width) ** 2
    return {"binomial": EVENTS_FOR_PM_01, "from_interval": scaled,
            "needed": max(EVENTS_FOR_PM_01, scaled or 0)}


def dataset_table(study):
    """Per task and data set: symbol-hours and events per split (from the study's markets)."""
    rows = []
    for market, info in study["markets"].items():
        for name, d in (info.get("datasets") or {}).items():
            for task, ev in d["split_events"].items():
                rows.append({"task": task, "market": market, "dataset": name,
                             "symbols": [x.split(":", 1)[1] for x in d["symbols"]],
                             "split_symbol_hours": d["split_symbol_hours"],
                             "split_events": ev, "split_positives": d["split_positives"][task]})
    return rows


def goal_by_dataset(study, evs):
    """Per task, data set and evaluation that measured it: the default's goal numbers there."""
    out = []
    for d in dataset_table(study):
        for name, e in evs.items():
            task, _, short = name.rpartition("/")
            if task != d["task"]:
                continue
            if "skipped" in e:
                continue
            g = e["results"].get(f"dataset:{d['dataset']}")
            if g is None:
                continue
            det = e["decision"]["default"]
            m = g[det]
            out.append({"task": task, "dataset": d["dataset"], "market": d["market"],
                        "evaluation": name, "measured_on": e["measured_on"], "default": det,
                        **goal_cells(m), **judge(task, e["decision"], m)})
    return out


def goal_by_evaluation(evs):
    out = {}
    for name, e in evs.items():
        if "skipped" in e:
            out[name] = {"met": None, "fails": [f"not possible: {e['skipped']}"]}
            continue
        task = name.rpartition("/")[0]
        det = e["decision"]["default"]
        m = e["results"]["all"][det]
        out[name] = {"default": det, **goal_cells(m), **judge(task, e["decision"], m),
                     "events_needed": events_needed(m)}
    return out


def data_needed(study):
    """Per task and market: events per symbol-hour over all its data, the events and symbol-hours
    in validation and test, and the symbol-hours of the same kind of data that would put
    EVENTS_FOR_PM_01 events into each of validation and test (each TEST_SHARE of the time)."""
    out = []
    tasks = study.get("tasks", [])
    for market, info in study["markets"].items():
        ds = (info.get("datasets") or {}).values()
        for task in tasks:
            hours = [sum(d["split_symbol_hours"][k] for d in ds) for k in range(3)]
            events = [sum(d["split_events"].get(task, [0, 0, 0])[k] for d in ds) for k in range(3)]
            total_h, total_e = sum(hours), sum(events)
            rate = total_e / total_h if total_h else None
            need_h = EVENTS_FOR_PM_01 / rate / TEST_SHARE if rate else None
            out.append({"task": task, "market": market, "symbol_hours": total_h,
                        "events": total_e, "events_per_symbol_hour": rate,
                        "split_symbol_hours": hours, "split_events": events,
                        "symbol_hours_needed": need_h,
                        "more_symbol_hours": None if need_h is None else max(0.0, need_h - total_h),
                        "times_now": None if need_h is None or not total_h else need_h / total_h})
    return out


def validation_gaps(study, evs):
    """Markets with no validation event for a task, and what follows (one line each)."""
    lines = []
    for r in data_needed(study):
        if r["split_events"][1]:
            continue
        held = evs.get(f"{r['task']}/lomo:{r['market']}")
        held_ev = (held["results"]["all"][held["decision"]["default"]]["events"]
                   if held and "skipped" not in held else None)
        lines.append({"task": r["task"], "market": r["market"],
                      "validation_symbol_hours": r["split_symbol_hours"][1],
                      "test_events": r["split_events"][2], "train_events": r["split_events"][0],
                      "held_out_events": held_ev})
    return lines


def f(v, fmt="{:.3f}"):
    return "–" if v is None else fmt.format(v)


def ci(c, fmt="{:.3f}"):
    if c is None or c.get("value") is None:
        return "–"
    if c.get("lo") is None:
        return f(c["value"], fmt)
    return f"{f(c['value'], fmt)} [{f(c['lo'], fmt)}, {f(c['hi'], fmt)}]"


def build(study):
    ev_out = {}
    for name, e in study["evaluations"].items():
        if "skipped" in e:
            ev_out[name] = {"task": e.get("task"), "skipped": e["skipped"],
                            "excluded_markets": e["excluded_markets"],
                            "excluded_symbols": e["excluded_symbols"]}
            continue
        results = {}
        for det, groups in e["detectors"].items():
            for g, m in groups.items():
                results.setdefault(g, {})[det] = {
                    **{k: m[k] for k in METRICS}, **{k: m[k] for k in COUNTS}}
        ev_out[name] = {k: e.get(k) for k in ("task", "measured_on", "excluded_markets", "excluded_symbols",
                                          "best_neural", "best_baseline", "decision", "gate",
                                          "default_change", "ran_on",
                                          "operating_points", "validation_pr_auc", "training",
                                          "train_windows", "train_positives",
                                          "validation_windows", "validation_positives")}
        ev_out[name]["results"] = results
    return ev_out


def table(rows_by_det, neural, base):
    md = ["| detector | PR-AUC [95 %] | ROC-AUC [95 %] | events caught @ budget | "
          "recall [95 %] | precision [95 %] | false alerts / symbol-h [95 %] | median lead s "
          "[95 %] | p10 lead s |", "|---|---|---|---|---|---|---|---|---|"]
    for det, m in rows_by_det.items():
        tag = " (best neural)" if det == neural else " (best baseline)" if det == base else ""
        md.append(f"| {det}{tag} | {ci(m['pr_auc'])} | {ci(m['roc_auc'])} | "
                  f"{m['events_caught']}/{m['events']} | {ci(m['recall'])} | "
                  f"{ci(m['precision'])} | {ci(m['false_alerts_per_symbol_hour'], '{:.2f}')} | "
                  f"{ci(m['median_lead_s'], '{:.1f}')} | {f(m['p10_lead_s']['value'], '{:.1f}')} |")
    return md


def markdown(study, evs, created):
    md = ["# Alert model report", "",
          f"Generated by `models/report.py` from `models/study.py` ({created}); do not edit by "
          "hand (hand-written notes, without numbers: models/REPORT_NOTES.md, at the end). "
          "Protocol: docs/labels.md.", "",
          f"Every detector's threshold is fitted on **validation** for "
          f"{study['budget_false_alerts_per_symbol_hour']:g} false alert per symbol-hour and "
          "applied unchanged where it is measured; the epoch, the neural architecture and the "
          "best baseline are chosen on validation PR-AUC; the test split is read once. "
          f"Intervals: block bootstrap, {study['block_s']:.0f} s blocks, {study['reps']} "
          "replicates, 2.5–97.5 %. Lead = event start − end of the first window at or above the "
          "threshold (negative: after the onset).", ""] + run_note(study) + summary(study, evs) + [
          "## Data", "",
          "| market | exports | symbols | windows | train / validation / test windows | "
          "positive windows per task (train / validation / test) |",
          "|---|---|---|---|---|---|"]
    for name, m in study["markets"].items():
        pos = m["positives"] if isinstance(m["positives"], dict) else {"any": m["positives"]}
        per = "; ".join(f"{t} {' / '.join(map(str, m.get('split_positives', {}).get(t, [])))}"
                        for t in pos)
        md.append(f"| {name} | {', '.join(os.path.basename(p) for p in m['exports'])} | "
                  f"{', '.join(s.split(':', 1)[1] for s in m['symbols'])} | {m['windows']} | "
                  f"{' / '.join(str(x) for x in m['split_windows'])} | {per} |")
    md += ["", "Every event of every data set, with its time, kind and size: docs/events.md."]
    md += ["", "## The default decision", "",
           "The default is what the protocol chose; served: the detector the registry serves "
           "for it (the default, or the best baseline that has a graph when the default has "
           "none; models/release.py records the detect task's pooled one as the prod version).",
           "", "| evaluation | default | served | why |", "|---|---|---|---|"]
    for name, e in evs.items():
        if "skipped" in e:
            md.append(f"| {name} | – | – | not possible: {e['skipped']} |")
        else:
            d = e["decision"]
            md.append(f"| {name} | **{d['default']}** | {d.get('served', d['default'])} | "
                      f"{d['why']} |")
    changes = [(n, e["default_change"]) for n, e in evs.items() if e.get("default_change")]
    if changes:
        md += ["", "A change of the served default passes the same gate (its validation PR-AUC "
               "interval above prod's) and must be confirmed on the measured rows (its interval "
               "above prod's detector's value there, at least as many events caught):", ""]
        md += [f"- **{n}**: {c['why']}" for n, c in changes]
    gates = [(n, e["gate"]) for n, e in evs.items() if e.get("gate")]
    if gates:
        md += ["", "## The promotion gate per task (validation only)", "",
               "A candidate (the task's best neural model, chosen on validation) is promoted for "
               "a task only if its validation PR-AUC interval (block bootstrap, "
               f"{gates[0][1]['reps']} replicates) lies above the served default's PR-AUC "
               "(the registry's prod version, scored on the same windows and labels) and above "
               "the best baseline's. Each side at its own validation operating point. The "
               "decision and these numbers are written into models/registry.json with the "
               "candidate.", "",
               "| task | side | detector | PR-AUC [95 %] | ROC-AUC | events caught | false alerts "
               "/ symbol-h | decision |", "|---|---|---|---|---|---|---|---|"]
        for name, g in gates:
            for side in ("candidate", "served", "baseline"):
                m = g.get(side)
                if not m:
                    continue
                dec = ("**passed**" if g["passed"] else "**refused**") if side == "candidate" \
                    else ("beaten" if (g["beats_served"] if side == "served"
                                       else g["beats_baseline"]) else "not beaten")
                md.append(f"| {g['task']} | {side} | {m['name']} | {ci(m['pr_auc'])} | "
                          f"{ci(m['roc_auc'])} | {m['events_caught']}/{m['events']} | "
                          f"{f(m['false_alerts_per_symbol_hour'], '{:.2f}')} | {dec} |")
    md += per_market(evs)
    md += goal_section(study, evs) + data_section(study, evs)
    for name, e in evs.items():
        task, _, short = name.rpartition("/")
        title = TITLES.get(short) or (f"Leave one market out: {short.split(':', 1)[1]} held out "
                                      "(trained and chosen on the other markets)")
        if task:
            title = f"{TASK_TITLES.get(task, task)}: {title}"
        md += ["", f"## {name}: {title}", ""]
        if "skipped" in e:
            md += [f"Not possible: {e['skipped']}."]
            continue
        md += [f"Trained on {e['train_windows']} windows ({e['train_positives']} positive), "
               f"chosen on {e['validation_windows']} validation windows "
               f"({e['validation_positives']} positive); measured on the {e['measured_on']} rows."
               + (f" Held out: {', '.join(e['excluded_markets'] + e['excluded_symbols'])}."
                  if e["excluded_markets"] or e["excluded_symbols"] else ""), ""]
        shown = set()
        for group, rows in e["results"].items():
            any_m = next(iter(rows.values()))
            key = (any_m["windows"], any_m["positives"], any_m["events"], any_m["symbol_hours"])
            if group.startswith("dataset:") and key in shown:
                continue  # the same rows as "all" or a market above (one data set there)
            shown.add(key)
            md += [f"### {group}: {any_m['windows']} windows, {any_m['positives']} positive, "
                   f"{any_m['events']} events, {f(any_m['symbol_hours'], '{:.2f}')} symbol-hours",
                   ""] + table(rows, e["best_neural"], e["best_baseline"]) + [""]
        md += ["Operating points (validation) and training:", "",
               "| detector | threshold | validation PR-AUC | validation alerts (false) | "
               "validation events caught |", "|---|---|---|---|---|"]
        for det, op in e["operating_points"].items():
            md.append(f"| {det} | {f(op['threshold'], '{:.4g}')} | "
                      f"{f(e['validation_pr_auc'].get(det))} | {op['validation_alerts']} "
                      f"({op['validation_false_alerts']}) | {op['validation_events_detected']}/"
                      f"{op['validation_events']} |")
        md += ["", "| neural model | best epoch / run | validation PR-AUC | stop | constant "
               "features dropped |", "|---|---|---|---|---|"]
        for kind, t in e["training"].items():
            md.append(f"| {kind} | {t['best_epoch']} / {t['epochs_run']} | "
                      f"{f(t['best_val_pr_auc'])} | {t['stop_reason']} | "
                      f"{t['dropped_features'] or '–'} |")
    return md


def run_note(study):
    """What ran: the study's config file, the neural training settings and the replicates."""
    cfg = study.get("config", {})
    tr, data = cfg.get("train", {}), cfg.get("data", {})
    conf = study.get("config_file") or "models/configs/study.toml"
    md = [f"Run: `{conf}` (neural models: up to {tr.get('epochs', '–')} epochs, "
          f"{f(tr.get('max_minutes'), '{:g}')} min each, on at most "
          f"{data.get('max_train_windows', '–')} training windows), {study['reps']} bootstrap "
          f"replicates, evaluations: {', '.join(study['evaluations'])}."]
    if os.path.basename(conf) != "study.toml":
        md[0] += (f" **A reduced run** (`{conf}`, not configs/study.toml): it checks the pipeline "
                  "end to end; its neural models are trained shorter and on fewer windows than "
                  "configs/study.toml trains them, so their rows are not the release's.")
    return md + [""]


def summary(study, evs):
    """The findings, generated: per task, the pooled default decision and the goal's verdict."""
    goal = goal_by_evaluation(evs)
    md = ["## Summary (generated from the tables below)", ""]
    for task in study.get("tasks", []):
        names = [n for n in evs if n.startswith(task + "/")]
        met = [n for n in names if goal[n]["met"]]
        pooled = evs.get(f"{task}/pooled")
        if pooled and "skipped" not in pooled:
            d = pooled["decision"]
            m = pooled["results"]["all"][d["default"]]
            n = pooled["results"]["all"][d["neural"]]
            md.append(f"- **{task}**: the default decision on the pooled test split is "
                      f"**{d['default']}** (served: {d['served']}): {m['events_caught']}/"
                      f"{m['events']} events at {ci(m['false_alerts_per_symbol_hour'], '{:.2f}')} "
                      f"false alerts per symbol-hour, precision {ci(m['precision'])}, PR-AUC "
                      f"{ci(m['pr_auc'])}; the best neural model, {d['neural']}, PR-AUC "
                      f"{ci(n['pr_auc'])}, {n['events_caught']}/{n['events']} events"
                      + ("" if d.get("gate_passed") is None else
                         f"; promotion gate on validation: "
                         f"{'passed' if d['gate_passed'] else 'refused'}") + ".")
        md.append(f"- **{task}**: the goal is met in {len(met)} of {len(names)} evaluations"
                  + (f" ({', '.join(met)})" if met else "") + "; where not, the first reason: "
                  + "; ".join(f"{n.split('/', 1)[1]}: {goal[n]['fails'][0]}"
                              for n in names if not goal[n]["met"]) + ".")
    gaps = validation_gaps(study, evs)
    if gaps:
        md.append("- No validation event: " + "; ".join(
            f"{g['market']} ({g['task']})" for g in gaps) + " — see \"What the data can show\".")
    return md + [""]


def goal_section(study, evs):
    goal = goal_by_evaluation(evs)
    md = ["", "## The goal (issue 24): ≥ 60 % of events caught at ≤ 1 false alert per "
          "symbol-hour (test and leave-one-market-out), median lead ≥ 10 s for forecast, the "
          "default's PR-AUC interval above the best baseline", "",
          "Judged on the default decision's detector at its validation threshold; the lead "
          "condition applies to the forecast task only (a detection alert comes after the onset "
          "by definition).", "",
          "| evaluation | default | events caught | recall [95 %] | false alerts / symbol-h "
          "[95 %] | precision [95 %] | PR-AUC [95 %] | median lead s [95 %] | p10 lead s | best "
          "neural's PR-AUC interval above the best baseline | goal met | first unmet condition |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, e in evs.items():
        g = goal[name]
        if "skipped" in e:
            md.append(f"| {name} | – | – | – | – | – | – | – | – | – | no data to judge | "
                      f"{g['fails'][0]} |")
            continue
        md.append(f"| {name} | {g['default']} | {g['events_caught']}/{g['events']} | "
                  f"{ci(g['recall'])} | {ci(g['false_alerts_per_symbol_hour'], '{:.2f}')} | "
                  f"{ci(g['precision'])} | {ci(g['pr_auc'])} | {ci(g['median_lead_s'], '{:.1f}')} "
                  f"| {f(g['p10_lead_s']['value'], '{:.1f}')} | "
                  f"{'yes' if e['decision']['interval_above_baseline'] else 'no'} | "
                  f"{'yes' if g['met'] else 'no'} | {g['fails'][0] if g['fails'] else '–'} |")
    md += ["", "### The goal per data set", "",
           "Each data set's rows of each evaluation that measured them (pooled: its test rows; "
           "held-out symbols and leave one market out: all its held-out rows), the evaluation's "
           "default at the evaluation's validation threshold. A data set without a row here for "
           "an evaluation has no rows there (e.g. all of its trading time lies before its "
           "market's test split).", "",
           "| task | data set | evaluation | default | events caught | recall [95 %] | false "
           "alerts / symbol-h [95 %] | precision [95 %] | PR-AUC [95 %] | median lead s | p10 "
           "lead s | goal met |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    rows = goal_by_dataset(study, evs)
    for r in rows:
        met = ("no events" if r["met"] is None else "yes" if r["met"] else
               f"no: {r['fails'][0]}")
        md.append(f"| {r['task']} | {r['dataset']} | {r['evaluation'].split('/', 1)[1]} | "
                  f"{r['default']} | {r['events_caught']}/{r['events']} | {ci(r['recall'])} | "
                  f"{ci(r['false_alerts_per_symbol_hour'], '{:.2f}')} | {ci(r['precision'])} | "
                  f"{ci(r['pr_auc'])} | {f(r['median_lead_s']['value'], '{:.1f}')} | "
                  f"{f(r['p10_lead_s']['value'], '{:.1f}')} | {met} |")
    measured = {(r["task"], r["dataset"]) for r in rows}
    missing = [d for d in dataset_table(study) if (d["task"], d["dataset"]) not in measured]
    for d in missing:
        md.append(f"| {d['task']} | {d['dataset']} | – | – | – | – | – | – | – | – | – | not "
                  f"measured: no rows in the evaluations that ran |")
    return md


def data_section(study, evs):
    goal = goal_by_evaluation(evs)
    md = ["", "## What the data can show, and what it would need", "",
          f"A recall interval of ±0.1 around the goal's 0.6 needs about {EVENTS_FOR_PM_01} events "
          "in the measured rows if events were independent (binomial, normal approximation); the "
          "second count scales the default's measured block-bootstrap recall interval to ±0.1 "
          "(its width narrows as 1/√events); the symbol-hours are for the larger of the two, at "
          "the rows' own event rate. Per evaluation:", "",
          "| evaluation | events | symbol-hours | events / symbol-h | recall [95 %] of the "
          f"default | events for ±0.1 (binomial / from the interval) | symbol-hours of such rows "
          "for that many events |", "|---|---|---|---|---|---|---|"]
    for name, e in evs.items():
        if "skipped" in e:
            continue
        g = goal[name]
        ev, hours = g["events"], g["symbol_hours"]
        rate = ev / hours if hours else None
        need = g["events_needed"]
        md.append(f"| {name} | {ev} | {f(hours, '{:.2f}')} | {f(rate, '{:.2f}')} | "
                  f"{ci(g['recall'])} | {need['binomial']} / {f(need['from_interval'], '{:.0f}')} "
                  f"| {f(need['needed'] / rate if rate else None, '{:.0f}')} |")
    md += ["", "Per market: its labelled data (every split), events per symbol-hour, and the "
           f"symbol-hours of the same market for {EVENTS_FOR_PM_01} events in its test split "
           f"AND {EVENTS_FOR_PM_01} in its validation split (each {TEST_SHARE:.0%} of its "
           "trading time): what a per-market ±0.1 recall interval, and a per-market threshold "
           "fitted on enough validation events, would take.", "",
           "| task | market | symbol-hours (train / validation / test) | events (train / "
           "validation / test) | events / symbol-h | symbol-hours needed | more than now | × now |",
           "|---|---|---|---|---|---|---|---|"]
    for r in data_needed(study):
        md.append(f"| {r['task']} | {r['market']} | {f(r['symbol_hours'], '{:.1f}')} ("
                  + " / ".join(f(h, "{:.1f}") for h in r["split_symbol_hours"]) + ") | "
                  f"{r['events']} (" + " / ".join(map(str, r["split_events"])) + ") | "
                  f"{f(r['events_per_symbol_hour'], '{:.2f}')} | "
                  f"{f(r['symbol_hours_needed'], '{:.0f}')} | {f(r['more_symbol_hours'], '{:.0f}')} "
                  f"| {f(r['times_now'], '{:.1f}')} |")
    gaps = validation_gaps(study, evs)
    if gaps:
        md += ["", "### Markets without a validation event", ""]
        for g in gaps:
            md.append(
                f"- **{g['market']}, {g['task']}**: {f(g['validation_symbol_hours'], '{:.2f}')} "
                f"validation symbol-hours and no event in them ({g['train_events']} in train, "
                f"{g['test_events']} in test). What follows: nothing about {g['market']} is "
                "chosen on its own data — the epoch, the architecture, the best baseline and the "
                "pooled threshold are chosen on the other markets' validation events; its "
                "per-market operating point cannot be fitted and it keeps the pooled threshold "
                f"(models/market_ops.py); its test rows hold {g['test_events']} event(s), too few "
                f"for a recall to mean much (±0.1 takes about {EVENTS_FOR_PM_01}); it is judged "
                "as a market only when held out"
                + (f" ({g['held_out_events']} events, trained and chosen on the other markets)"
                   if g["held_out_events"] is not None else " (that evaluation did not run)")
                + ". More days of it, with events in validation and test, are what "
                f"would change this (validation and test are its last {2 * TEST_SHARE:.0%} of "
                "trading time).")
    return md


def per_market(evs):
    """Per task and market: the pooled test split's market group and the market's leave-one-
    market-out rows, for the decision's default, the served prod detector (ret60), the
    unit-free rule score and the best neural model."""
    md = ["", "## Per task and market", "",
          "Each market's rows of the pooled test split (trained and chosen on all markets) and "
          "its leave-one-market-out rows (trained and chosen on the other markets): the "
          "evaluation's default, ret60, rules_rank (the unit-free rule score) and its best "
          "neural model, each at its own validation threshold.", "",
          "| task | market | rows | events | detector | PR-AUC [95 %] | events caught | false "
          "alerts / symbol-h | median lead s |", "|---|---|---|---|---|---|---|---|---|"]
    for name, e in evs.items():
        task, _, short = name.rpartition("/")
        if "skipped" in e or not (short == "pooled" or short.startswith("lomo:")):
            continue
        groups = ([g for g in e["results"] if g.startswith("market:")] if short == "pooled"
                  else ["all"])
        for g in groups:
            market = g.split(":", 1)[1] if g != "all" else short.split(":", 1)[1]
            rows = e["results"][g]
            dets = []
            for d in (e["decision"]["default"], "ret60", "rules_rank", e["best_neural"]):
                if d in rows and d not in dets:
                    dets.append(d)
            for d in dets:
                m = rows[d]
                md.append(f"| {task} | {market} | {'pooled test' if short == 'pooled' else 'held out'}"
                          f" | {m['events']} | {d}{' (default)' if d == e['decision']['default'] else ''}"
                          f" | {ci(m['pr_auc'])} | {m['events_caught']}/{m['events']} | "
                          f"{ci(m['false_alerts_per_symbol_hour'], '{:.2f}')} | "
                          f"{f(m['median_lead_s']['value'], '{:.1f}')} |")
    return md


def market_ops_section(res):
    """The per-market operating points (models/market_ops.py's JSON) as markdown lines."""
    budget = res["budget_false_alerts_per_symbol_hour"]
    md = ["", f"## Per-market operating points of {res['model']} (models/market_ops.py)", "",
          f"One threshold per symbol group (`{os.path.basename(res['groups_config'])}`, matched as "
          f"serving matches them) for {f(budget, '{:g}')} false alert per symbol-hour, fitted on "
          "each group's validation rows; a group with fewer than "
          f"{f(res['min_validation_symbol_hours'], '{:g}')} validation symbol-hours or no "
          f"validation event keeps the pooled threshold ({f(res['pooled_threshold_registry'], '{:.4f}')}). "
          "Written into the registry entry's operating_point.groups, which serving applies to the "
          "config's groups of those names. Test split read once; block-bootstrap 95 % intervals "
          f"({f(res['block_s'], '{:g}')} s blocks, {res['reps']} replicates).", "",
          "| group | study markets | validation symbol-hours / events | test symbol-hours | threshold: pooled → group "
          "| events caught (pooled → group) | false / symbol-hour, pooled | false / symbol-hour, "
          "group | precision, pooled | precision, group | PR-AUC | median lead s |",
          "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for g, v in res["validation"].items():
        t = res["test"].get(g, {})
        if "pooled" not in t:
            md.append(f"| {g} | {', '.join(v['study_markets'])} | {v['validation_symbol_hours']:.2f} / "
                      f"{v['validation_events']} | 0 | – | no test rows | | | | | | |")
            continue
        p, q = t["pooled"], t["group"]
        thr = f(p["threshold"], "{:.4f}") + " → " + (
            f(q["threshold"], "{:.4f}") if v["fitted"] else "pooled (" + v["why"].split(":")[0] + ")")
        md.append(f"| {g} | {', '.join(t['study_markets'])} | {v['validation_symbol_hours']:.2f} / "
                  f"{v['validation_events']} | {p['symbol_hours']:.2f} | {thr} | {p['events_caught']}/{p['events']} → "
                  f"{q['events_caught']}/{q['events']} | {ci(p['false_alerts_per_symbol_hour'], '{:.2f}')} | "
                  f"{ci(q['false_alerts_per_symbol_hour'], '{:.2f}')} | {ci(p['precision'], '{:.2f}')} | "
                  f"{ci(q['precision'], '{:.2f}')} | {ci(p['pr_auc'])} | {ci(q['median_lead_s'], '{:.1f}')} |")
    a = res["test"]["all"]
    p, q = a["pooled"], a["group"]
    md.append(f"| all | | | {p['symbol_hours']:.2f} | {f(p['threshold'], '{:.4f}')} → per group | {p['events_caught']}/"
              f"{p['events']} → {q['events_caught']}/{q['events']} | "
              f"{ci(p['false_alerts_per_symbol_hour'], '{:.2f}')} | "
              f"{ci(q['false_alerts_per_symbol_hour'], '{:.2f}')} | {ci(p['precision'], '{:.2f}')} | "
              f"{ci(q['precision'], '{:.2f}')} | {ci(p['pr_auc'])} | {ci(q['median_lead_s'], '{:.1f}')} |")
    return md


def load_study(path):
    try:
        with open(path) as fh:
            return json.load(fh)
    except (OSError, ValueError) as e:
        raise ValueError(f"{path}: {e}") from e


def merge(studies):
    """One study from several runs of study.py (e.g. one per task): their evaluations, tasks and
    per-task positives together; everything else from the first."""
    out = json.loads(json.dumps(studies[0]))
    for s in studies[1:]:
        for t in s.get("tasks", []):
            if t not in out.get("tasks", []):
                out.setdefault("tasks", []).append(t)
        for name, e in s["evaluations"].items():
            if name in out["evaluations"]:
                raise ValueError(f"evaluation {name} appears in two studies")
            out["evaluations"][name] = e
        for name, m in s["markets"].items():
            o = out["markets"].setdefault(name, m)
            if o is not m:
                o["positives"].update(m["positives"])
                o["split_positives"].update(m.get("split_positives", {}))
                for dn, d in m.get("datasets", {}).items():
                    od = o.setdefault("datasets", {}).setdefault(dn, d)
                    if od is not d:
                        od["split_positives"].update(d["split_positives"])
                        od["split_events"].update(d["split_events"])
    return out


def write_bench(path, evs, created, run=None):
    import platform
    import subprocess
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=HERE).stdout.strip()
    out = {"bench": "detection study (models/study.py, docs/labels.md)", "date": created,
           "commit": commit, "machine": f"{platform.node()} ({os.cpu_count()} cpus)",
           "run": run, "evaluations": {}}
    goal = goal_by_evaluation(evs)
    for name, e in evs.items():
        if "skipped" in e:
            out["evaluations"][name] = {"skipped": e["skipped"]}
            continue
        out["evaluations"][name] = {
            "ran_on": e.get("ran_on"), "measured_on": e["measured_on"],
            "decision": {k: e["decision"][k] for k in ("default", "served", "neural", "baseline")},
            "gate": None if not e.get("gate") else {
                "passed": e["gate"]["passed"], "reason": e["gate"]["reason"]},
            "goal_met": goal[name]["met"], "goal_fails": goal[name]["fails"],
            "default_change": None if not e.get("default_change") else {
                k: e["default_change"][k] for k in ("from", "to", "promote", "why")},
            "all": {det: {k: (m[k]["value"], m[k]["lo"], m[k]["hi"]) if isinstance(m[k], dict)
                          else m[k] for k in ("pr_auc", "roc_auc", "recall", "precision",
                                               "false_alerts_per_symbol_hour", "median_lead_s",
                                               "events", "events_caught")}
                    for det, m in e["results"]["all"].items()}}
    with open(path, "w") as fh:
        json.dump(out, fh, indent=1)


def study_of(report):
    """The study fields markdown() reads, from report.json: REPORT.md is a function of
    report.json (and the notes), so tests/models/test_report.py can regenerate it and compare."""
    p = report["protocol"]
    return {"markets": p["markets"], "tasks": p["tasks"], "config": p["config"],
            "block_s": p["block_s"], "reps": p["reps"],
            "budget_false_alerts_per_symbol_hour": p["budget_false_alerts_per_symbol_hour"],
            "config_file": report["run"]["config_file"], "evaluations": report["evaluations"]}


def render(report, notes_dir=HERE):
    """REPORT.md's lines from report.json's content and notes_dir/REPORT_NOTES.md."""
    md = markdown(study_of(report), report["evaluations"], report["created"])
    if report.get("market_operating_points"):
        md += market_ops_section(report["market_operating_points"])
    notes = os.path.join(notes_dir, "REPORT_NOTES.md")
    if os.path.exists(notes):
        with open(notes) as fh:
            md += ["", fh.read().rstrip()]
    return md


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--study", action="append", required=True,
                    help="study.json (repeatable: one per task run, merged)")
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--bench", help="also write a compact summary here (bench/results/*.json: "
                    "machine, commit, date, per evaluation the decision and every detector's "
                    "overall numbers)")
    ap.add_argument("--market-ops", help="models/market_ops.py's JSON: adds the per-market "
                    "operating points section")
    args = ap.parse_args(argv)
    try:
        study = merge([load_study(p) for p in args.study])
    except (OSError, ValueError) as e:
        print(f"report: error: {e} (run models/study.py)", file=sys.stderr)
        return 1
    created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    evs = build(study)
    report = {"format_version": 4, "created": created,
              "protocol": {"budget_false_alerts_per_symbol_hour":
                           study["budget_false_alerts_per_symbol_hour"],
                           "block_s": study["block_s"], "reps": study["reps"],
                           "split": "by trading time per market: 70 % train, 15 % validation, "
                                    "15 % test (docs/labels.md)",
                           "markets": study["markets"], "config": study["config"],
                           "tasks": study.get("tasks", ["any"])},
              "run": {"config_file": study.get("config_file"), "reps": study["reps"],
                      "evaluations": list(evs)},
              "evaluations": evs,
              "goal": {"recall": GOAL_RECALL, "false_alerts_per_symbol_hour": GOAL_FALSE,
                       "median_lead_s_forecast": GOAL_LEAD_S,
                       "evaluations": goal_by_evaluation(evs),
                       "datasets": goal_by_dataset(study, evs)},
              "data_needed": {"events_for_recall_pm_0_1": EVENTS_FOR_PM_01,
                              "markets": data_needed(study),
                              "no_validation_events": validation_gaps(study, evs)},
              "market_operating_points": None}
    if args.market_ops:
        with open(args.market_ops) as fh:
            report["market_operating_points"] = json.load(fh)
    md = render(report, args.out)
    with open(os.path.join(args.out, "report.json"), "w") as fh:
        json.dump(report, fh, indent=1)
    with open(os.path.join(args.out, "REPORT.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    if args.bench:
        write_bench(args.bench, evs, created, report["run"])
    print(f"report: {len(evs)} evaluations → {args.out}/REPORT.md, report.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
