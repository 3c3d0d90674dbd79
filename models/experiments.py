#!/usr/bin/python3
"""Run the report's experiments: per [[run]] of models/experiments.toml, train.py → export_onnx.py
(checker + engine check) → evaluate.py on each test target, into WORK/<run>/.

    /usr/bin/python3 models/experiments.py --data-root build/models-data --work build/models-exp
        [--only NAME,...] [--jobs 2] [--force] [--eval-only]

A run whose evaluations all exist is skipped unless --force. Runs go `--jobs` at a time, each
a `nice` subprocess with its config's thread count; its log is WORK/<run>/log.txt.
"""
import argparse
import concurrent.futures as cf
import os
import subprocess
import sys
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable


def load_spec(path):
    with open(path, "rb") as f:
        spec = tomllib.load(f)
    for r in spec.get("run", []):
        for key in ("name", "config", "train", "tests"):
            if key not in r:
                raise ValueError(f"{path}: a [[run]] lacks \"{key}\"")
    return spec


def eval_path(work, run, target):
    data, split = target.split(":")
    return os.path.join(work, run["name"], f"eval_{data}_{split}.json")


def do_run(run, data_root, work, extra, eval_only=False):
    out = os.path.join(work, run["name"])
    os.makedirs(out, exist_ok=True)
    log = open(os.path.join(out, "log.txt"), "a" if eval_only else "w")
    t0 = time.time()

    def sh(args):
        log.write(f"$ {' '.join(args)}\n")
        log.flush()
        p = subprocess.run(["nice"] + args, stdout=log, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            raise RuntimeError(f"{run['name']}: {' '.join(args[1:3])} failed (exit "
                               f"{p.returncode}); see {log.name}")

    train_dir = os.path.join(data_root, run["train"])
    if not eval_only:
        sh([PY, os.path.join(HERE, "train.py"), "--config", os.path.join(HERE, run["config"]),
            "--data", train_dir, "--out", out])
        sh([PY, os.path.join(HERE, "export_onnx.py"), "--checkpoint",
            os.path.join(out, "model.pt"), "--out", os.path.join(out, "model.onnx"),
            "--check-data", train_dir] + extra)
    elif not os.path.exists(os.path.join(out, "model.onnx")):
        raise RuntimeError(f"{run['name']}: --eval-only but {out}/model.onnx does not exist")
    for target in run["tests"]:
        data, split = target.split(":")
        sh([PY, os.path.join(HERE, "evaluate.py"), "--model", os.path.join(out, "model.onnx"),
            "--data", os.path.join(data_root, data), "--split", split,
            "--json", eval_path(work, run, target)] + extra)
    log.close()
    return f"{run['name']}: done in {time.time() - t0:.0f}s"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default=os.path.join(HERE, "experiments.toml"))
    ap.add_argument("--data-root", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--eval-only", action="store_true",
                    help="re-run only the evaluations, on each run's existing model.onnx")
    ap.add_argument("--ticksentry")
    args = ap.parse_args(argv)
    spec = load_spec(args.spec)
    only = set(filter(None, args.only.split(",")))
    extra = ["--ticksentry", args.ticksentry] if args.ticksentry else []
    runs = []
    for r in spec["run"]:
        if only and r["name"] not in only:
            continue
        if not args.force and not args.eval_only and all(os.path.exists(eval_path(args.work, r, t)) for t in r["tests"]):
            print(f"{r['name']}: up to date")
            continue
        runs.append(r)
    failed = 0
    with cf.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = {pool.submit(do_run, r, args.data_root, args.work, extra, args.eval_only): r for r in runs}
        for fut in cf.as_completed(futs):
            try:
                print(fut.result(), flush=True)
            except RuntimeError as e:
                failed += 1
                print(f"error: {e}", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
