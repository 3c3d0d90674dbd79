#!/usr/bin/python3
"""Evaluate a model against the rule and z-score baselines on one export's split.

    /usr/bin/python3 models/evaluate.py --model M.onnx|M.plan --data EXPORT [--split test|all]
        [--json OUT.json] [--ticksentry BIN]

When the ticksentry binary has `eval`, this runs `ticksentry eval` and reads its JSON. Otherwise
the model's scores come from the ticksentry engine all the same (`ticksentry build` for .onnx,
then `ticksentry infer` on the split's windows) and models/metrics.py computes the metrics with
the definitions of docs/labels.md. Either way the output is
    {"data", "split", "evaluator", "symbol_hours", "detectors": {"model"|"rules"|"zscore": metrics}}.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_cli  # noqa: E402
from dataset import DatasetError, load_export, split_masks, window_seconds  # noqa: E402
from metrics import detector_metrics  # noqa: E402


SPLIT_NAMES = {"train": "train", "validation": "val", "val": "val", "test": "test"}


def rows_of(ds, split):
    if split == "all":
        return np.arange(len(ds))
    return np.flatnonzero(split_masks(ds)[SPLIT_NAMES[split]])


def model_scores(model_path, x, binary=None):
    with tempfile.TemporaryDirectory(prefix="ts-eval-") as tmp:
        plan = model_path
        if model_path.endswith(".onnx"):
            plan = os.path.join(tmp, "model.plan")
            engine_cli.build_plan(model_path, plan, binary)
        return engine_cli.infer(plan, x, binary)[:, 0]


def evaluate_python(model_path, data, split, binary=None):
    ds = load_export(data)
    rows = rows_of(ds, split)
    if rows.size == 0:
        raise DatasetError(f"{data}: the {split} split holds no windows")
    hours = rows.size * window_seconds(ds) / 3600.0
    y = ds.labels[rows]
    common = dict(symbol=ds.symbol[rows], end_ts_ns=ds.end_ts_ns[rows],
                  event_ts_ns=ds.event_ts_ns[rows], symbol_hours=hours, horizon_s=ds.horizon_s)
    det = {}
    if model_path:
        x = np.asarray(ds.windows[rows], dtype=np.float32)
        det["model"] = detector_metrics(y, model_scores(model_path, x, binary), **common)
    det["rules"] = detector_metrics(y, ds.rule_score[rows], **common)
    det["zscore"] = detector_metrics(y, ds.zscore[rows], **common)
    return {"data": os.path.abspath(data), "model": model_path, "split": split,
            "windows": int(rows.size), "positives": int(y.sum()), "symbol_hours": hours,
            "budget": {"false_alerts_per_symbol_hour": 1.0, "max_false_alerts": hours,
                       "cooldown_s": ds.horizon_s},
            "evaluator": "ticksentry infer + models/metrics.py", "label": ds.manifest.get("label"),
            "detectors": det}


def evaluate_cli(model_path, data, split, binary):
    with tempfile.TemporaryDirectory(prefix="ts-eval-") as tmp:
        out = os.path.join(tmp, "eval.json")
        cmd = [binary, "eval", "--model", model_path, "--data", data,
               "--split", "validation" if split == "val" else split,
               "--json", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise engine_cli.EngineError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n"
                                         f"{p.stdout}{p.stderr}")
        with open(out) as f:
            res = json.load(f)
    res.setdefault("data", os.path.abspath(data))
    res.setdefault("split", split)
    res["evaluator"] = "ticksentry eval"
    res.setdefault("label", load_export(data, check_finite=False).manifest.get("label"))
    return res


def evaluate(model_path, data, split="test", binary=None, prefer_cli=True):
    if prefer_cli and model_path:
        b = engine_cli.find_binary(binary)
        if engine_cli.supports(b, "eval"):
            return evaluate_cli(model_path, data, split, b)
    return evaluate_python(model_path, data, split, binary)


def summary_line(name, m):
    def f(v, fmt="{:.4f}"):
        return "-" if v is None else fmt.format(v)
    return (f"{name:12s} PR-AUC {f(m.get('pr_auc'))}  ROC-AUC {f(m.get('roc_auc'))}  "
            f"alerts {m.get('alerts')} (false {m.get('false_alerts')})  "
            f"precision {f(m.get('precision'), '{:.3f}')}  "
            f"recall {m.get('events_detected')}/{m.get('events')} events  "
            f"lead {f(m.get('median_lead_s'), '{:.1f}')} s")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="ONNX model or plan (omit: baselines only)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--split", default="test", choices=("train", "validation", "test", "all"))
    ap.add_argument("--json")
    ap.add_argument("--ticksentry")
    ap.add_argument("--python-metrics", action="store_true",
                    help="use models/metrics.py even when `ticksentry eval` exists")
    args = ap.parse_args(argv)
    try:
        res = evaluate(args.model, args.data, args.split, args.ticksentry,
                       prefer_cli=not args.python_metrics)
    except (DatasetError, engine_cli.EngineError) as e:
        print(f"evaluate: error: {e}", file=sys.stderr)
        return 1
    for name, m in res["detectors"].items():
        print(summary_line(name, m))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
