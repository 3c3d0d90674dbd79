#!/usr/bin/python3
"""Exports the shape sweep's architectures (cases.py) with Debian's torch, as a user would.

    /usr/bin/python3 bench/shape_sweep/export.py --out DIR [--only 00,07]

Writes DIR/<name>/model.onnx (dynamic batch and seq axes, the case's opset, constant folding on)
and DIR/<name>/weights.pt (the state_dict of the very module exported, so the PyTorch peer runs
the same weights), and DIR/cases.json: the cases with their ONNX op types and parameter counts.
A case torch cannot export is listed with its "export_error".
"""
import argparse
import json
import os
import sys
import warnings

import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases as sweep  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="", help="comma-separated name prefixes (e.g. 00,07)")
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    os.makedirs(out, exist_ok=True)
    warnings.filterwarnings("ignore")
    torch.set_num_threads(2)
    only = [p for p in args.only.split(",") if p]
    listing = []
    for i, c in enumerate(sweep.sample()):
        if only and not any(c["name"].startswith(p) for p in only):
            continue
        torch.manual_seed(4000 + i)
        model = sweep.make(c).eval()
        d = os.path.join(out, c["name"])
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        entry = dict(c)
        try:
            # Grad enabled (see models/fixtures.py: under no_grad torch 1.13 exports the fused
            # TransformerEncoderLayer fast path differently).
            torch.onnx.export(model, (torch.randn(2, 30, c["features"]),), path, opset_version=c["opset"],
                              input_names=["x"], output_names=["y"],
                              dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch"}},
                              do_constant_folding=True)
            proto = onnx.load(path)
            entry["ops"] = sorted({n.op_type for n in proto.graph.node})
        except Exception as e:  # noqa: BLE001 — recorded, the sweep goes on
            entry["export_error"] = f"{type(e).__name__}: {e}"[:400]
        torch.save(model.state_dict(), os.path.join(d, "weights.pt"))
        entry["parameters"] = sum(p.numel() for p in model.parameters())
        entry["output_width"] = sweep.output_width(c)
        listing.append(entry)
        print(f"export: {c['name']:50s} opset {c['opset']} params {entry['parameters']:8d} "
              f"{entry.get('export_error', ','.join(entry.get('ops', [])))}", file=sys.stderr)
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"torch": torch.__version__, "seed": sweep.SEED, "cases": listing}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
