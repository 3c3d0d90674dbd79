#!/usr/bin/python3
"""The release pipeline (`make model`) and the default model's retraining (`make train`).

    /usr/bin/python3 models/pipeline.py --data EXPORT --work DIR
        [--config models/configs/default.toml] [--shipped models/default.onnx]
        [--registry models/registry.json] [--name alert-default] [--until export|eval|all]

Steps, each printed as it runs; the first failure stops the pipeline (exit 1):
  1. train      train.py with the config → DIR/model.pt, DIR/train.json
  2. export     export_onnx.py: ONNX + onnx.checker + engine-vs-PyTorch check ≤ 1e-5 → DIR/model.onnx
  3. plan       `ticksentry build` → DIR/model.plan
  4. evaluate   candidate and shipped model on the validation split → DIR/eval_candidate_val.json,
                DIR/eval_shipped_val.json; the candidate's operating point (threshold for 1 false
                alert per symbol-hour) is fitted there; then the test split is read once, to
                report → DIR/eval_candidate.json
  5. gate       on validation: refuse (exit 3) if the candidate's PR-AUC is more than 0.5 %
                (relative) below the shipped model's or below the best baseline's (registry.py)
  6. benchmark  `ticksentry bench` on the plan, batch 1 and 64, T = the export's window
  7. record     append the candidate (stage "candidate", metrics, sha256) to the registry
Promotion of a candidate belongs to the serving issue.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_cli  # noqa: E402
import evaluate as ev  # noqa: E402
import export_onnx  # noqa: E402
import registry  # noqa: E402
import train as trainer  # noqa: E402
from dataset import DatasetError, load_export  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXIT_GATE = 3


def step(name):
    print(f"\n== {name} ({time.strftime('%H:%M:%S')})", flush=True)


def bench(plan, window, binary):
    """ticksentry bench at batch 1 and 64: its JSON (p50_us, p99_us, samples_per_s, ...)."""
    out = {}
    for batch in (1, 64):
        js = plan + f".bench{batch}.json"
        p = subprocess.run([engine_cli.find_binary(binary), "bench", "--loadEngine", plan,
                            "--shapes", f"x:{batch}x{window}x20", "--iterations", "300",
                            "--json", js], capture_output=True, text=True)
        if p.returncode != 0:
            raise engine_cli.EngineError(f"ticksentry bench failed:\n{p.stdout}{p.stderr}")
        with open(js) as f:
            m = json.load(f)
        out[f"batch{batch}"] = {k: m.get(k) for k in ("p50_us", "p99_us", "samples_per_s")}
        print(f"bench: batch {batch} T {window}: p50 {m.get('p50_us'):.1f} us, "
              f"p99 {m.get('p99_us'):.1f} us, {m.get('samples_per_s'):.0f} samples/s")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="export folder (train and test on its splits)")
    ap.add_argument("--work", required=True, help="folder for this run's files")
    ap.add_argument("--config", default=os.path.join(HERE, "configs/default.toml"))
    ap.add_argument("--shipped", default=os.path.join(HERE, "default.onnx"))
    ap.add_argument("--registry", default=os.path.join(HERE, "registry.json"))
    ap.add_argument("--name", default="alert-default")
    ap.add_argument("--until", default="all", choices=("export", "eval", "all"))
    ap.add_argument("--ticksentry")
    args = ap.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    t0 = time.time()
    try:
        ds = load_export(args.data)
        step("1/7 train")
        cfg = trainer.load_config(args.config)
        _, tsum = trainer.train(cfg, args.data, args.work)
        step("2/7 export")
        onnx_path = os.path.join(args.work, "model.onnx")
        rc = export_onnx.main(["--checkpoint", os.path.join(args.work, "model.pt"),
                               "--out", onnx_path, "--check-data", args.data]
                              + (["--ticksentry", args.ticksentry] if args.ticksentry else []))
        if rc != 0:
            return 1
        if args.until == "export":
            print(f"\npipeline: exported {onnx_path} in {time.time() - t0:.0f}s")
            return 0
        step("3/7 plan")
        plan = os.path.join(args.work, "model.plan")
        engine_cli.build_plan(onnx_path, plan, args.ticksentry)
        print(f"plan: {plan} ({os.path.getsize(plan)} bytes)")
        step("4/7 evaluate (validation: operating point and gate; test: once, to report)")
        cand_val = ev.evaluate(plan, args.data, "val", args.ticksentry)
        with open(os.path.join(args.work, "eval_candidate_val.json"), "w") as f:
            json.dump(cand_val, f, indent=1)
        for name, m in cand_val["detectors"].items():
            print("val " + ev.summary_line("candidate" if name == "model" else name, m))
        op = {"threshold": cand_val["detectors"]["model"]["threshold"],
              "budget_false_alerts_per_symbol_hour": 1.0, "fitted_on": "validation",
              "data": os.path.relpath(os.path.abspath(args.data))}
        print(f"operating point: threshold {op['threshold']} (validation, 1 false alert per "
              "symbol-hour)")
        shipped = None
        if os.path.exists(args.shipped):
            shipped = ev.evaluate(args.shipped, args.data, "val", args.ticksentry)
            with open(os.path.join(args.work, "eval_shipped_val.json"), "w") as f:
                json.dump(shipped, f, indent=1)
            print("val " + ev.summary_line("shipped", shipped["detectors"]["model"]))
        else:
            print(f"evaluate: no shipped model at {args.shipped}")
        cand = ev.evaluate(plan, args.data, "test", args.ticksentry)
        with open(os.path.join(args.work, "eval_candidate.json"), "w") as f:
            json.dump(cand, f, indent=1)
        print("test " + ev.summary_line("candidate", cand["detectors"]["model"]))
        if args.until == "eval":
            return 0
        step("5/7 gate (validation)")
        bases = {k: m.get("pr_auc") for k, m in cand_val["detectors"].items() if k != "model"}
        best = max(bases, key=lambda k: -1 if bases[k] is None else bases[k])
        g = registry.gate(cand_val["detectors"]["model"]["pr_auc"],
                          shipped["detectors"]["model"]["pr_auc"] if shipped else None,
                          baseline=(best, bases[best]), split="validation")
        if g["passed"] and op["threshold"] is None:
            g.update(passed=False, reason="no threshold keeps false alerts within 1 per "
                     "symbol-hour on validation: there is no operating point to serve")
        print(f"gate: {'PASS' if g['passed'] else 'REFUSED'}: {g['reason']}")
        if not g["passed"]:
            with open(os.path.join(args.work, "gate.json"), "w") as f:
                json.dump(g, f, indent=1)
            return EXIT_GATE
        step("6/7 benchmark")
        b = bench(plan, ds.window, args.ticksentry)
        step("7/7 record")
        metrics = {k: v for k, v in cand["detectors"]["model"].items() if k != "pr_curve"}
        entry = registry.record_candidate(
            args.registry, args.name, onnx_path, metrics,
            evaluator=cand.get("evaluator"),
            data={"path": os.path.relpath(os.path.abspath(args.data)), "split": "test",
                  "manifest": tsum["data_manifest"]},
            config=cfg, gate=g, benchmark=b, operating_point=op,
            train={"best_epoch": tsum["best_epoch"], "best_val_pr_auc": tsum["best_val_pr_auc"],
                   "seconds": tsum["seconds"]})
        print(f"record: {args.name} version {entry['version']} (candidate), sha256 "
              f"{entry['sha256'][:12]}… in {args.registry}")
        print(f"\npipeline: done in {time.time() - t0:.0f}s")
    except (trainer.ConfigError, DatasetError, engine_cli.EngineError, registry.RegistryError,
            export_onnx.ExportError) as e:
        print(f"pipeline: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
