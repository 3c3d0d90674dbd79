#!/usr/bin/python3
"""Exports the engine benchmark's models (bench/engine_bench.sh) with Debian's python (torch 1.13).

    /usr/bin/python3 bench/peers/export_models.py --out DIR

Writes, per model, DIR/<name>/model.onnx and DIR/<name>/weights.pt (the state_dict of the very
module instance that was exported, so PyTorch eager in torch_bench.py runs the same weights), and
DIR/models.json listing them. Model definitions are reused from models/fixtures.py. Every model
reads x: [batch, seq, 32] float32 with dynamic batch and seq axes.
"""
import argparse
import warnings
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models"))
import fixtures  # noqa: E402  (models/fixtures.py: RecurrentHead, TransformerHead, FEATURES)

FEATURES = fixtures.FEATURES
OPSET = 14

# name → (constructor, description). The heads are what an alerting model runs: last step →
# Linear → Sigmoid.
MODELS = {
    "gru-2x128": (lambda: fixtures.RecurrentHead("gru", 128, 2, 1, False),
                  "GRU 2 layers hidden 128 → last step → Linear(1) → Sigmoid"),
    "lstm-2x128": (lambda: fixtures.RecurrentHead("lstm", 128, 2, 1, False),
                   "LSTM 2 layers hidden 128 → last step → Linear(1) → Sigmoid"),
    "transformer-2x64": (lambda: fixtures.TransformerHead(64, 4, 2, "relu"),
                         "Linear(32→64) → Transformer encoder 2 layers d64 4 heads FF128 ReLU "
                         "→ last step → Linear(2) → Sigmoid"),
}


def make(name):
    return MODELS[name][0]()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = os.path.abspath(args.out)
    warnings.filterwarnings("ignore", category=UserWarning)  # export chatter about GRU batch, prim::Constant
    listing = []
    for i, name in enumerate(MODELS):
        torch.manual_seed(3000 + i)
        model = make(name).eval()
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        onnx_path = os.path.join(d, "model.onnx")
        # Grad enabled for the export (see models/fixtures.py: under no_grad torch 1.13 exports
        # the fused TransformerEncoderLayer fast path differently).
        torch.onnx.export(model, (torch.randn(2, 30, FEATURES),), onnx_path, opset_version=OPSET,
                          input_names=["x"], output_names=["y"],
                          dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": {0: "batch"}},
                          do_constant_folding=True)
        torch.save(model.state_dict(), os.path.join(d, "weights.pt"))
        params = sum(p.numel() for p in model.parameters())
        listing.append({"model": name, "onnx": onnx_path, "weights": os.path.join(d, "weights.pt"),
                        "description": MODELS[name][1], "parameters": params, "opset": OPSET,
                        "features": FEATURES})
        print(f"export: {name:18s} params {params:7d} → {onnx_path}", file=sys.stderr)
    with open(os.path.join(out, "models.json"), "w") as f:
        json.dump({"torch": torch.__version__, "models": listing}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
