#!/usr/bin/python3
"""The protocol's evaluation (docs/labels.md): pooled markets, leave-one-market-out, held-out
symbols; every detector with block-bootstrap intervals; writes WORK/study.json for report.py.

    /usr/bin/python3 models/study.py --datasets models/configs/datasets.toml \
        --exports build/models-data --hold-out-symbol lobster:GOOG --work build/models-study
        [--market NAME=EXPORT ...] [--task detect --task forecast] [--config configs/study.toml]

Markets come from the data sets file (models/datasets.py: every data set whose export exists,
grouped by market) and/or --market NAME=EXPORT (repeatable). Each task of docs/labels.md
(detect: onset in the last seconds; forecast: onset strictly ahead) is a separate study: its
own labels, training, choices and measurements, named "TASK/EVALUATION" in study.json.

Per evaluation: the baselines (baselines.py) and the neural candidates are trained on the
train split; the epoch (early stopping), the best neural candidate, the best baseline and every
detector's alert threshold (1 false alert per symbol-hour) are chosen on validation only
(protocol.select / fit_operating_point); then the test split (or the held-out rows) is read
once and every detector is measured there at its validation threshold.
"""
import argparse
import json
import os
import platform
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import baseline_onnx  # noqa: E402
import baselines  # noqa: E402
import datasets  # noqa: E402
import intervals  # noqa: E402
import protocol  # noqa: E402
import registry  # noqa: E402
import release  # noqa: E402
import task_gate  # noqa: E402
import train as trainer  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def fit_neural(cfg, tr, va, seed):
    trainer.seed_everything(seed, int(cfg["train"]["threads"]))
    rng = np.random.default_rng(seed)
    y = tr.column("labels")
    rows = np.arange(y.size)
    cap = int(cfg["data"]["max_train_windows"])
    if cap and y.size > cap:
        pos, neg = rows[y == 1], rows[y == 0]
        rows = np.sort(np.r_[pos, rng.choice(neg, size=max(0, cap - pos.size), replace=False)])
    xtr = tr.windows()[rows]
    model, summary = trainer.fit(cfg, xtr, y[rows].astype(np.float32), va.windows(),
                                 va.column("labels").astype(np.int64), log=log)
    return model, summary


def detectors_on(split, fitted, neural):
    scores = {name: baselines.score_baseline(name, split) for name in baselines.SCORE_BASELINES}
    for name, b in fitted.items():
        scores[name] = b.score(split)
    for name, model in neural.items():
        scores[name] = trainer.predict(model, split.windows())
    return scores


def run_evaluation(name, study, cfg, held_out, task="any", keep=None, served=None):
    """One evaluation: train, choose on validation, measure on test (or held-out) rows once.
    keep: a dict that receives the fitted baselines and neural models (for the release).
    served: (label, callable split -> scores) of the served default: the task's promotion gate
    (task_gate.py) is run on validation for the best neural candidate against it."""
    t0 = time.time()
    tr, va = study.train(), study.validation()
    out = {"name": name, "task": task, "train_windows": len(tr), "train_positives": int(tr.column("labels").sum()),
           "validation_windows": len(va),
           "validation_positives": int(va.column("labels").sum()) if len(va) else 0,
           "excluded_markets": sorted(study.exclude_markets),
           "excluded_symbols": sorted(study.exclude_symbols)}
    if out["train_positives"] == 0 or out["validation_positives"] == 0:
        out["skipped"] = (f"train has {out['train_positives']} and validation "
                          f"{out['validation_positives']} positive windows: nothing to fit or choose")
        log(f"{name}: skipped: {out['skipped']}")
        return out
    fitted = {k: baselines.FittedBaseline(k).fit(tr) for k in baselines.FITTED_BASELINES}
    neural, training = {}, {}
    for kind in cfg["kinds"]:
        c = {**cfg["base"], "model": {**cfg["base"]["model"], "kind": kind}}
        c = {k: dict(v) if isinstance(v, dict) else v for k, v in c.items()}
        model, summary = fit_neural(c, tr, va, int(c["train"]["seed"]))
        neural[kind] = model
        training[kind] = {k: summary[k] for k in ("best_epoch", "best_val_pr_auc", "stop_reason",
                                                  "dropped_features")}
        training[kind]["epochs_run"] = len(summary["history"])
    out["training"] = training
    val_scores = detectors_on(va, fitted, neural)
    best_neural, val_neural = protocol.select({k: val_scores[k] for k in neural}, va)
    base_names = list(baselines.SCORE_BASELINES) + list(baselines.FITTED_BASELINES)
    best_base, val_base = protocol.select({k: val_scores[k] for k in base_names}, va)
    # What can be served as a model (baseline_onnx): the default decision serves the best of these
    # when the best baseline itself has no graph (gbm; rules are the rule engine's own alerts).
    best_servable, _ = protocol.select({k: val_scores[k] for k in base_names
                                        if k in baseline_onnx.GRAPHS}, va)
    ops = {k: protocol.fit_operating_point(va, s) for k, s in val_scores.items()}
    if served is not None:
        out["gate"] = task_gate.gate(task, va, (best_neural, val_scores[best_neural]),
                                     (served[0], served[1](va)),
                                     (best_base, val_scores[best_base]))
        log(f"{name}: gate: {out['gate']['reason']}")
    out.update(validation_pr_auc={**val_neural, **val_base}, best_neural=best_neural,
               best_baseline=best_base, operating_points=ops)
    target = study.held_out() if held_out else study.test()
    out["measured_on"] = target.kind
    scores = detectors_on(target, fitted, neural)
    by = ("market", "dataset", "symbol") if not held_out else ("dataset", "symbol")
    out["detectors"] = {k: intervals.split_metrics(target, s, ops[k]["threshold"], by=by,
                                                   reps=cfg["reps"])
                        for k, s in scores.items()}
    out["decision"] = decide(out["detectors"], best_neural, best_base, best_servable,
                             out.get("gate"))
    if served is not None and out["decision"]["served"] != served[2]:
        out["default_change"] = default_change(task, va, out, val_scores, served, best_base)
        log(f"{name}: default change: {out['default_change']['why']}")
    if keep is not None:
        keep.update(fitted=fitted, neural=neural)
    out["seconds"] = round(time.time() - t0, 1)
    out["ran_on"] = f"{platform.node()}, torch {trainer.torch.__version__}, " \
                    f"{cfg['base']['train']['threads']} thread(s)"
    log(f"{name}: {out['decision']['why']}")
    return out


def decide(det, neural, base, servable=None, gate=None):
    """The default decision: the neural model only if its PR-AUC interval lies above the best
    baseline's point value and it catches more events at the budget (measured rows), and, where
    the evaluation ran the promotion gate, the gate passed on validation. "served": the detector
    the registry serves for it: the default, or, when the default is a baseline without a graph,
    the best baseline that has one (chosen on validation, like the best baseline)."""
    n, b = det[neural]["all"], det[base]["all"]
    lo, bp = n["pr_auc"]["lo"], b["pr_auc"]["value"]
    above = lo is not None and bp is not None and lo > bp
    more = n["events_caught"] > b["events_caught"]
    gated = gate is None or gate["passed"]
    default = neural if above and more and gated else base
    why = (f"{neural}: PR-AUC {_f(n['pr_auc']['value'])} [{_f(lo)}, {_f(n['pr_auc']['hi'])}], "
           f"{n['events_caught']}/{n['events']} events at the budget; best baseline {base} "
           f"(chosen on validation): PR-AUC {_f(bp)}, {b['events_caught']}/{b['events']} events. "
           + ("The neural model earns the default." if default == neural else
              "The default decision is the baseline: "
              + "; ".join(x for x in (
                  "the interval is not above the baseline" if not above else "",
                  "it does not catch more events" if not more else "",
                  "the promotion gate refused it on validation" if not gated else "") if x)
              + "."))
    served = default if default == neural or servable is None or default in \
        baseline_onnx.GRAPHS else servable
    if served != default:
        why += (f" {default} has no graph to serve; the served default is {served}, the best "
                "baseline with one on validation.")
    return {"default": default, "served": served, "neural": neural, "baseline": base,
            "interval_above_baseline": above, "catches_more": more,
            "gate_passed": None if gate is None else gate["passed"], "why": why}


def default_change(task, va, out, val_scores, served, best_base):
    """Whether the served default may change to the decision's detector: the promotion gate on
    validation (its PR-AUC interval above prod's, and above the best baseline's unless it is
    the best baseline) AND confirmed on the measured rows (its PR-AUC interval above prod's
    detector's value there, catching at least as many events). Otherwise prod stays."""
    new = out["decision"]["served"]
    g = task_gate.gate(task, va, (new, val_scores[new]), (served[0], served[1](va)),
                       (best_base, val_scores[best_base]))
    det = out["detectors"]
    old = det.get(served[2], {}).get("all")
    n = det[new]["all"]
    confirmed = bool(old) and n["pr_auc"]["lo"] is not None and \
        old["pr_auc"]["value"] is not None and n["pr_auc"]["lo"] > old["pr_auc"]["value"] and \
        n["events_caught"] >= old["events_caught"]
    test = (f"on the {out['measured_on']} rows {new} PR-AUC {_f(n['pr_auc']['value'])} "
            f"[{_f(n['pr_auc']['lo'])}, {_f(n['pr_auc']['hi'])}], {n['events_caught']}/"
            f"{n['events']} events" + (f"; prod's {served[2]} {_f(old['pr_auc']['value'])}, "
                                       f"{old['events_caught']}/{old['events']} events"
                                       if old else "; prod's detector not measured there"))
    promote = g["passed"] and confirmed
    why = (f"{served[0]} → {new}: gate {'passed' if g['passed'] else 'refused'} ({g['reason']}); "
           f"{test}: {'confirmed' if confirmed else 'not confirmed'}. "
           + ("The served default changes." if promote else "Prod stays."))
    return {"from": served[0], "from_detector": served[2], "to": new, "gate": g,
            "confirmed_on_test": confirmed, "promote": promote, "why": why}


def _dataset_info(m):
    """Per data set of a market: windows, symbols and symbol-hours per split (0 train,
    1 validation, 2 test), and the positive windows and events per split of m's task."""
    out = {}
    for k, name in enumerate(m.datasets):
        rows = m.dataset == k
        d = {"symbols": sorted({m.symbols[s] for s in np.unique(m.symbol[rows])}),
             "windows": int(rows.sum()),
             "split_windows": [int((rows & (m.split == s)).sum()) for s in range(3)],
             "split_symbol_hours": [float((rows & (m.split == s)).sum() * m.window_s / 3600.0)
                                    for s in range(3)]}
        d["split_positives"] = {m.task: [int(m.labels[rows & (m.split == s)].sum())
                                         for s in range(3)]}
        d["split_events"] = {m.task: [len({(int(a), int(b)) for a, b in zip(
            m.symbol[rows & (m.split == s) & (m.labels == 1)],
            m.event_ts_ns[rows & (m.split == s) & (m.labels == 1)])}) for s in range(3)]}
        out[name] = d
    return out


def _f(v):
    return "–" if v is None else f"{v:.3f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--market", action="append", default=[], help="NAME=EXPORT_DIR (repeat)")
    ap.add_argument("--datasets", help="data sets file (models/configs/datasets.toml): every "
                    "data set exported under --exports joins its market")
    ap.add_argument("--exports", default=datasets.DEFAULT_OUT)
    ap.add_argument("--task", action="append", choices=("detect", "forecast", "any"),
                    help="repeatable; default detect and forecast")
    ap.add_argument("--hold-out-symbol", action="append", default=[],
                    help="MARKET:SYMBOL held out of training (the held-out-symbols evaluation)")
    ap.add_argument("--config", default=os.path.join(HERE, "configs/study.toml"))
    ap.add_argument("--work", required=True)
    ap.add_argument("--no-lomo", action="store_true")
    ap.add_argument("--reps", type=int, default=intervals.REPS,
                    help=f"block-bootstrap replicates per interval (default {intervals.REPS}; "
                    "fewer only for a quick check of the pipeline: the report says how many)")
    ap.add_argument("--evaluations", default="pooled,held_out_symbols,lomo",
                    help="which evaluations to run (comma list of pooled, held_out_symbols, "
                    "lomo, lomo:MARKET): one process per group, merged by report.py")
    ap.add_argument("--registry", help="models/registry.json: the pooled evaluation gates its "
                    "best neural candidate against this registry's prod version (task_gate.py)")
    ap.add_argument("--release-dir", help="write the default decision of the detect task's pooled "
                    "evaluation here (release.py: the chosen detector as ONNX + its operating "
                    "point) and each task's gated neural candidate, for `models/release.py "
                    "record`")
    args = ap.parse_args(argv)
    tasks = args.task or ["detect", "forecast"]
    which = set(args.evaluations.split(","))
    served = None
    if args.registry:
        reg = registry.load(args.registry)
        cur = registry.prod(reg, "alert-default")
        if cur is not None:
            label = f"alert-default v{cur['version']} ({cur.get('detector', 'model')})"
            served = (label, lambda split, e=cur: task_gate.served_scores(
                e, split, registry_dir=os.path.dirname(os.path.abspath(args.registry))),
                cur.get("detector", "model"))
    paths = {}
    if args.datasets:
        for name, ps in datasets.markets(datasets.load(args.datasets), args.exports).items():
            paths.setdefault(name, []).extend(ps)
    for m in args.market:
        name, _, path = m.partition("=")
        if not os.path.exists(os.path.join(path, "manifest.json")):
            log(f"market {name}: {path} has no export, left out")
            continue
        paths.setdefault(name, []).append(path)
    if not paths:
        ap.error("no market: give --datasets with exports under --exports, or --market")
    base = trainer.load_config(args.config)
    cfg = {"base": base, "kinds": list(base["model"].get("kinds", [base["model"]["kind"]])),
           "reps": args.reps}
    base["model"].pop("kinds", None)
    res = {"markets": {}, "tasks": tasks, "config": base, "block_s": intervals.BLOCK_S,
           "reps": args.reps, "config_file": os.path.relpath(args.config, os.path.dirname(HERE)),
           "budget_false_alerts_per_symbol_hour": protocol.BUDGET_FALSE_PER_SYMBOL_HOUR,
           "evaluations": {}}
    for task in tasks:
        markets = [protocol.load_market(n, p, task=task) for n, p in paths.items()]
        for m in markets:
            info = res["markets"].setdefault(m.name, {
                "exports": paths[m.name], "windows": len(m), "symbols": m.symbols,
                "datasets": {},
                "label": m.label, "split_windows": [int((m.split == k).sum()) for k in range(3)],
                "positives": {}, "split_positives": {}})
            info["positives"][task] = int(m.labels.sum())
            info["split_positives"][task] = [int(m.labels[m.split == k].sum()) for k in range(3)]
            for name, d in _dataset_info(m).items():
                o = info["datasets"].setdefault(name, d)
                o["split_positives"].update(d["split_positives"])
                o["split_events"].update(d["split_events"])
        ev = res["evaluations"]
        keep = {}
        if "pooled" in which:
            ev[f"{task}/pooled"] = run_evaluation(f"{task}/pooled", protocol.Study(markets), cfg,
                                                  False, task, keep, served)
        if args.hold_out_symbol and "held_out_symbols" in which:
            ev[f"{task}/held_out_symbols"] = run_evaluation(
                f"{task}/held_out_symbols",
                protocol.Study(markets, exclude_symbols=args.hold_out_symbol), cfg, True, task)
        if not args.no_lomo and len(markets) > 1:
            for m in (m for m in markets if "lomo" in which or f"lomo:{m.name}" in which):
                ev[f"{task}/lomo:{m.name}"] = run_evaluation(
                    f"{task}/lomo:{m.name}", protocol.Study(markets, exclude_markets=[m.name]),
                    cfg, True, task)
        if keep and args.release_dir:
            if task == "detect":
                release.write_default(ev[f"{task}/pooled"], keep, markets, args.release_dir, log)
            if "gate" in ev[f"{task}/pooled"]:
                release.write_candidate(ev[f"{task}/pooled"], keep, args.release_dir, log)
    os.makedirs(args.work, exist_ok=True)
    with open(os.path.join(args.work, "study.json"), "w") as f:
        json.dump(res, f, indent=1)
    log(f"study: wrote {args.work}/study.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
