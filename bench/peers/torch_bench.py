#!/usr/bin/python3
"""PyTorch CPU eager peer for bench/engine_bench.sh (Debian's python3-torch, /usr/bin/python3).

    /usr/bin/python3 bench/peers/torch_bench.py --models DIR/models.json [--threads 1]
        [--batches 1,16,256] [--seq 60] [--iters 1000,200,50] [--only a,b] [--out FILE]

Rebuilds each model from bench/peers/export_models.py and loads the weights.pt saved from the
instance that was exported to ONNX (the same weights the other systems run), then times
model(x) under torch.no_grad() run by run on random normal inputs (a pool of 8 distinct tensors,
rotated) after a warm-up (>= 20 runs and >= 0.3 s). Prints a JSON array of BENCHMARKS.md results
(system "pytorch-eager"). threads: torch.set_num_threads (0 = torch's default).
Note: under no_grad torch 1.13 runs nn.TransformerEncoderLayer's fused inference fast path;
that is PyTorch eager inference as a user gets it.
"""
import argparse
import json
import math
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402


def pct(sorted_lat, p):
    k = min(len(sorted_lat) - 1, max(0, math.ceil(p * len(sorted_lat)) - 1))
    return sorted_lat[k]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--batches", default="1,16,256")
    ap.add_argument("--iters", default="1000,200,50")
    ap.add_argument("--seq", type=int, default=60)
    ap.add_argument("--only", default="")
    ap.add_argument("--out", default="")
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    threads = torch.get_num_threads()
    batches = [int(b) for b in args.batches.split(",")]
    iters = [int(n) for n in args.iters.split(",")]
    only = set(filter(None, args.only.split(",")))
    with open(args.models) as f:
        listing = json.load(f)
    rng = np.random.default_rng(54321)
    results = []
    for m in listing["models"]:
        if only and m["model"] not in only:
            continue
        model = export_models.make(m["model"])
        model.load_state_dict(torch.load(m["weights"]))
        model.eval()
        for bi, b in enumerate(batches):
            n = iters[min(bi, len(iters) - 1)]
            pool = [torch.from_numpy(rng.standard_normal((b, args.seq, m["features"]), dtype=np.float32))
                    for _ in range(8)]
            lat = []
            with torch.no_grad():
                w0 = time.perf_counter()
                i = 0
                while i < 20 or time.perf_counter() - w0 < 0.3:
                    model(pool[i % 8])
                    i += 1
                t0 = time.perf_counter()
                for i in range(n):
                    s = time.perf_counter_ns()
                    model(pool[i % 8])
                    lat.append((time.perf_counter_ns() - s) / 1e3)
                wall = time.perf_counter() - t0
            lat.sort()
            p50 = pct(lat, 0.5)
            results.append({
                "system": "pytorch-eager",
                "case": {"model": m["model"], "precision": "fp32", "batch": b, "seq": args.seq,
                         "threads": threads},
                "metrics": {"p50_us": p50, "p99_us": pct(lat, 0.99), "p999_us": pct(lat, 0.999),
                            "throughput_per_s": b * 1e6 / p50, "iterations": n,
                            "wall_throughput_per_s": b * n / wall},
                "notes": f"torch {torch.__version__} CPU eager, no_grad, set_num_threads({threads}), "
                         f"BLAS: {blas_name()}",
            })
            print(f"torch: {m['model']} b{b} threads {threads}: p50 {p50:.1f} us", file=sys.stderr)
    text = json.dumps(results, indent=1)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


def blas_name():
    """The BLAS library this process actually loaded (Debian's libblas.so.3 is an alternative:
    reference BLAS or OpenBLAS)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {line.split()[-1] for line in f if "blas" in line.lower() and "/" in line}
        return ", ".join(sorted(os.path.realpath(p) for p in libs)) or "none loaded"
    except OSError:
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
