#!/usr/bin/python3
"""Plots an engine-cuda results file (bench/engine_cuda_bench.sh's JSON) as one PNG: per model,
host-to-host P50 latency (top row) and throughput (bottom row) against batch, log-log, for
ticksentry and each PyTorch system at each precision.

    /usr/bin/python3 bench/engine_cuda_bench_plot.py bench/results/engine-cuda-h200-<stamp>.json [OUT.png]

OUT defaults to the JSON's path with .png. Needs matplotlib (Debian's python3-matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

STYLE = {"ticksentry": "-", "pytorch-cudagraph": "--", "pytorch-eager": ":", "torch-compile": "-."}
COLOR = {"fp32": "tab:blue", "fp16": "tab:orange", "bf16": "tab:green", "int8": "tab:red", "tf32": "tab:purple"}


def main():
    src = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) > 2 else src.rsplit(".", 1)[0] + ".png"
    doc = json.load(open(src))
    series = {}
    for r in doc["results"]:
        c = r["case"]
        key = (c["model"], r["system"], c["precision"])
        series.setdefault(key, []).append((c["batch"], r["metrics"]["p50_us"], r["metrics"]["throughput_per_s"]))
    models = sorted({k[0] for k in series})
    fig, axes = plt.subplots(2, len(models), figsize=(5 * len(models), 8), squeeze=False)
    for col, model in enumerate(models):
        for (m, system, prec), pts in sorted(series.items()):
            if m != model:
                continue
            pts.sort()
            b = [p[0] for p in pts]
            kw = dict(linestyle=STYLE.get(system, "-"), color=COLOR.get(prec, "gray"), marker="o", markersize=3,
                      label=f"{system} {prec}")
            axes[0][col].plot(b, [p[1] for p in pts], **kw)
            axes[1][col].plot(b, [p[2] for p in pts], **kw)
        axes[0][col].set_title(f"{model} (T={doc['results'][0]['case']['seq']})")
        axes[0][col].set_ylabel("host-to-host P50 (µs)")
        axes[1][col].set_ylabel("throughput (sequences/s)")
        for row in range(2):
            ax = axes[row][col]
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("batch")
            ax.grid(True, which="both", alpha=0.3)
        axes[0][col].legend(fontsize=7)
    m = doc.get("machine", {})
    fig.suptitle(f"engine-cuda on {m.get('gpu', '?')} — commit {doc.get('commit', '?')}, {doc.get('date', '?')}, "
                 f"torch {m.get('torch', '?')}")
    fig.tight_layout()
    fig.savefig(out, dpi=90)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
