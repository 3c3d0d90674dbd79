#!/usr/bin/python3
"""ONNX node tests through the command line, exactly as generated: for every case of
models/onnx_node_tests.py's manifest whose ops are all in --ops, `ticksentry build` the case's
model.onnx (cpu backend) and `ticksentry infer` its inputs, then compare with ONNX's expected
outputs (rtol 1e-4, atol 1e-5 as ONNX's runner; integers and bools exactly). Prints the counts
and, per failing case, the first line of the error; --json writes them.

    /usr/bin/python3 bench/conformance_cli.py --bin build/release/src/app/ticksentry \\
        --cases build/release/onnx-node-tests --ops Add,Relu,...
"""
import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile

import numpy as np


def compare(got, want):
    if got.shape != want.shape:
        return f"shape {list(got.shape)} vs {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} vs {want.dtype}"
    if want.dtype.kind in "biu":
        return "" if np.array_equal(got, want) else "values differ"
    g, w = got.astype(np.float64), want.astype(np.float64)
    bad = ~np.isclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True)
    return f"{int(bad.sum())} of {bad.size} values differ" if bad.any() else ""


def run_case(binary, cases_dir, case, work):
    plan = os.path.join(work, "case.plan")
    model = os.path.join(cases_dir, case["name"], "model.onnx")
    r = subprocess.run([binary, "build", "--onnx", model, "--saveEngine", plan, "--backend", "cpu"],
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return "build: " + (r.stderr.strip() or r.stdout.strip()).splitlines()[-1][:300]
    cmd = [binary, "infer", "--loadEngine", plan]
    if case["inputs"]:
        cmd += ["--input"] + [f"{i['name']}={os.path.join(cases_dir, i['file'])}" for i in case["inputs"]]
    cmd += ["--output"]
    outs = []
    for k, o in enumerate(case["outputs"]):
        path = os.path.join(work, f"out_{k}.npy")
        outs.append(path)
        cmd.append(f"{o['name']}={path}")
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        return "infer: " + (r.stderr.strip() or r.stdout.strip()).splitlines()[-1][:300]
    problems = []
    for o, path in zip(case["outputs"], outs):
        msg = compare(np.load(path), np.load(os.path.join(cases_dir, o["file"])))
        if msg:
            problems.append(f"{o['name']}: {msg}")
    return "; ".join(problems)


def machine():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "")
    except OSError:
        pass
    return {"host": platform.node(), "cpu": model, "cores": os.cpu_count()}


def commit_of(binary):
    """The commit of the checkout the binary was built in (its build tree lies inside it)."""
    r = subprocess.run(["git", "-C", os.path.dirname(os.path.abspath(binary)), "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--cases", required=True, help="folder written by models/onnx_node_tests.py")
    ap.add_argument("--ops", required=True, help="comma-separated ops the engine claims")
    ap.add_argument("--json", help="write results here")
    args = ap.parse_args()
    ops = set(args.ops.split(","))
    with open(os.path.join(args.cases, "manifest.json")) as f:
        manifest = json.load(f)
    selected = [c for c in manifest["cases"] if set(c["ops"]) <= ops]
    results = {}
    with tempfile.TemporaryDirectory(prefix="conformance-") as work:
        for c in selected:
            try:
                results[c["name"]] = run_case(args.bin, args.cases, c, work)
            except subprocess.TimeoutExpired:
                results[c["name"]] = "timed out"
    failed = {k: v for k, v in results.items() if v}
    for k, v in sorted(failed.items()):
        print(f"FAIL {k}: {v}")
    print(f"conformance (as generated, cli): {len(results) - len(failed)} of {len(results)} pass "
          f"({len(ops)} ops)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"bin": args.bin, "commit": commit_of(args.bin), "machine": machine(),
                       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                       "cases": os.path.abspath(args.cases), "ops": sorted(ops), "total": len(results),
                       "passed": len(results) - len(failed), "failures": failed}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
