"""The promotion gate per task (docs/labels.md "The gate"): on the VALIDATION split of the task a
candidate is promoted for, it must beat the served default (the registry's prod version, scored
on the same windows and the same task's labels) and the best baseline (chosen on validation).

    passed  ⇔  candidate PR-AUC interval (block bootstrap, GATE_REPS replicates) lies above the
               served default's PR-AUC point value AND above the best baseline's point value

Each side is also measured at its own validation operating point (1 false alert per
symbol-hour): events caught, false alerts per symbol-hour; the decision and every number go into
the registry with the candidate (models/release.py record). A refusal names both comparisons.
The test split is never read here (protocol.require_validation).
"""
import numpy as np

import baselines
import intervals
import protocol

GATE_REPS = 400


def served_scores(entry, split, binary=None, registry_dir=None):
    """The served default's scores on `split`: a score baseline by its detector name, anything
    else (a neural model, logreg) through the engine from the entry's ONNX."""
    det = entry.get("detector")
    if det in baselines.SCORE_BASELINES:
        return baselines.score_baseline(det, split)
    import os
    import tempfile

    import engine_cli
    onnx_path = os.path.join(registry_dir or ".", entry["onnx"])
    x = np.asarray(split.windows(), np.float32)
    with tempfile.TemporaryDirectory(prefix="ts-gate-") as tmp:
        plan = os.path.join(tmp, "m.plan")
        engine_cli.build_plan(onnx_path, plan, binary, t_min=x.shape[1], t_max=x.shape[1])
        return engine_cli.infer(plan, x, binary).reshape(-1)


def _side(split, name, score, reps):
    op = protocol.fit_operating_point(split, score)
    m = intervals.split_metrics(split, score, op["threshold"], by=(), reps=reps)["all"]
    return {"name": name, "pr_auc": m["pr_auc"], "roc_auc": m["roc_auc"],
            "threshold": op["threshold"], "events_caught": m["events_caught"],
            "events": m["events"], "false_alerts": m["false_alerts"],
            "false_alerts_per_symbol_hour": m["false_alerts_per_symbol_hour"]["value"]}


def gate(task, split, candidate, served, baseline, reps=GATE_REPS):
    """candidate, baseline: (name, scores over split's rows); served: (label, scores) or None
    (no prod version: only the baseline comparison); baseline None or the candidate itself:
    only the prod comparison. Returns the decision with its numbers."""
    protocol.require_validation(split, "the promotion gate")
    cand = _side(split, candidate[0], candidate[1], reps)
    # baseline None (or the candidate itself): a baseline candidate is compared with prod only
    base = _side(split, baseline[0], baseline[1], reps) \
        if baseline is not None and baseline[0] != candidate[0] else None
    prod = _side(split, served[0], served[1], reps) if served is not None else None
    lo = cand["pr_auc"]["lo"]

    def above(other):
        v = other["pr_auc"]["value"]
        return lo is not None and v is not None and lo > v

    def txt(s):
        p = s["pr_auc"]
        rng = "" if p["lo"] is None else f" [{p['lo']:.3f}, {p['hi']:.3f}]"
        val = "–" if p["value"] is None else f"{p['value']:.3f}"
        return (f"{s['name']} PR-AUC {val}{rng}, {s['events_caught']}/{s['events']} events at "
                f"{s['false_alerts_per_symbol_hour'] or 0:.2f} false alerts per symbol-hour")

    beats_prod = prod is None or above(prod)
    beats_base = base is None or above(base)
    passed = beats_prod and beats_base
    why = [f"{task}, validation ({len(split)} windows): candidate {txt(cand)}"]
    why.append(f"served default {txt(prod)}" if prod else "no served default for this task")
    why.append(f"best baseline {txt(base)}" if base else "the candidate is the best baseline")
    if passed:
        verdict = "passed: the candidate's interval lies above both"
    else:
        fails = ([] if beats_prod else ["the served default's"]) + \
                ([] if beats_base else ["the best baseline's"])
        verdict = ("refused: the candidate's PR-AUC interval is not above "
                   + " and ".join(fails) + " PR-AUC")
    return {"task": task, "split": "validation", "reps": reps, "passed": passed,
            "beats_served": beats_prod, "beats_baseline": beats_base,
            "candidate": cand, "served": prod, "baseline": base,
            "reason": "; ".join(why) + ". " + verdict + "."}
