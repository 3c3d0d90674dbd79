#!/usr/bin/python3
"""Whole-model fixtures for the engine's tests: small PyTorch models with fixed random weights,
exported to ONNX with dynamic batch and seq axes, plus PyTorch's outputs on fixed random inputs.

Run with Debian's python (torch 1.13, onnx, numpy):
    /usr/bin/python3 models/fixtures.py --out build/<dir>/engine-fixtures

Writes, per model, <out>/<name>/model.onnx and <out>/<name>/{x,y}_b<batch>_t<seq>.npy, and
<out>/manifest.json listing models, profiles and cases. Every model reads x: [batch, seq, 32]
(float32) and writes y. Regeneration is skipped when the manifest was written by this exact
script (same sha256) and every file it lists exists. Nothing here is committed: ctest runs it.
"""
import argparse
import hashlib
import json
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn

FEATURES = 32
BATCHES = (1, 7, 64)
SEQS = (30, 60, 120)
PROFILE = {"min": [1, 30, FEATURES], "opt": [64, 60, FEATURES], "max": [64, 120, FEATURES]}


class RecurrentHead(nn.Module):
    """GRU or LSTM (batch_first) → Linear → Sigmoid, on the last step or on every step."""

    def __init__(self, cell, hidden, layers, outputs, every_step):
        super().__init__()
        rnn = nn.GRU if cell == "gru" else nn.LSTM
        self.rnn = rnn(FEATURES, hidden, num_layers=layers, batch_first=True)
        self.head = nn.Linear(hidden, outputs)
        self.every_step = every_step

    def forward(self, x):
        out, _ = self.rnn(x)
        if not self.every_step:
            out = out[:, -1, :]  # exported as Gather (or Slice) on the seq axis
        return torch.sigmoid(self.head(out))


class TransformerHead(nn.Module):
    """Input projection → nn.TransformerEncoder (batch_first, post-norm, or pre-norm with
    norm_first) → last step → Linear → Sigmoid. torch exports the attention decomposed into
    MatMul/Softmax/Reshape/Transpose. causal: a triu(-inf, 1) buffer sliced to the input's length
    (mask[:t, :t], a common export pattern) is the attention mask."""

    MAX_SEQ = 256

    def __init__(self, d_model, heads, layers, activation, norm_first=False, causal=False):
        super().__init__()
        self.proj = nn.Linear(FEATURES, d_model)
        layer = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=2 * d_model,
                                           dropout=0.0, activation=activation, batch_first=True,
                                           norm_first=norm_first)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.head = nn.Linear(d_model, 2)
        self.causal = causal
        if causal:
            mask = torch.triu(torch.full((self.MAX_SEQ, self.MAX_SEQ), float("-inf")), diagonal=1)
            self.register_buffer("mask", mask, persistent=False)

    def forward(self, x):
        if self.causal:
            t = x.shape[1]
            h = self.encoder(self.proj(x), mask=self.mask[:t, :t])
        else:
            h = self.encoder(self.proj(x))
        return torch.sigmoid(self.head(h[:, -1, :]))


class TemporalCnn(nn.Module):
    """Transpose to [batch, F, T] → Conv1d (kernel 3, dilations 1, 2, 4, 'same' padding) + ReLU
    → last step (Slice) → Linear → Sigmoid."""

    def __init__(self, channels):
        super().__init__()
        convs = []
        cin = FEATURES
        for d in (1, 2, 4):
            convs += [nn.Conv1d(cin, channels, kernel_size=3, dilation=d, padding=d), nn.ReLU()]
            cin = channels
        self.convs = nn.Sequential(*convs)
        self.head = nn.Linear(channels, 1)

    def forward(self, x):
        h = self.convs(x.transpose(1, 2))       # [batch, C, T]
        last = h[:, :, -1:].flatten(1)          # Slice + Flatten: [batch, C]
        return torch.sigmoid(self.head(last))


class MlpSoftmax(nn.Module):
    """Last step of x → Linear → ReLU → Linear → Tanh → Linear → Softmax over 3 classes."""

    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(FEATURES, 64), nn.ReLU(), nn.Linear(64, 32), nn.Tanh(),
                                 nn.Linear(32, 3))

    def forward(self, x):
        return torch.softmax(self.net(x[:, -1, :]), dim=-1)


# name, constructor, opset, whether y keeps the seq axis, description
MODELS = [
    ("gru_1x32", lambda: RecurrentHead("gru", 32, 1, 1, False), 14, False,
     "GRU 1 layer hidden 32 → last step → Linear(1) → Sigmoid"),
    ("gru_2x128", lambda: RecurrentHead("gru", 128, 2, 4, True), 14, True,
     "GRU 2 layers hidden 128 → Linear(4) on every step → Sigmoid"),
    ("gru_1x128", lambda: RecurrentHead("gru", 128, 1, 1, False), 17, False,
     "GRU 1 layer hidden 128 → last step → Linear(1) → Sigmoid (opset 17)"),
    ("lstm_2x128", lambda: RecurrentHead("lstm", 128, 2, 1, False), 14, False,
     "LSTM 2 layers hidden 128 → last step → Linear(1) → Sigmoid"),
    ("transformer_relu", lambda: TransformerHead(64, 4, 2, "relu"), 14, False,
     "Transformer encoder 2 layers d64 4 heads ReLU FF, LayerNorm decomposed (opset 14)"),
    ("transformer_gelu", lambda: TransformerHead(64, 4, 2, "gelu"), 17, False,
     "Transformer encoder 2 layers d64 4 heads GELU (Erf) FF, LayerNormalization (opset 17)"),
    ("tcn_3x32", lambda: TemporalCnn(32), 14, False,
     "Conv1d ×3 (dilation 1, 2, 4) + ReLU → last step → Linear(1) → Sigmoid"),
    ("mlp_softmax", lambda: MlpSoftmax(), 14, False,
     "last step → Linear/ReLU/Linear/Tanh/Linear → Softmax(3)"),
    # Last, so that the models above keep their seeds (1000 + index).
    ("transformer_prenorm_causal", lambda: TransformerHead(64, 4, 2, "gelu", norm_first=True, causal=True), 14, False,
     "Transformer encoder 2 layers d64 4 heads GELU, pre-norm (norm_first), causal mask sliced from a buffer"),
]


def script_sha256():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def up_to_date(out_dir, sha):
    path = os.path.join(out_dir, "manifest.json")
    try:
        with open(path) as f:
            manifest = json.load(f)
    except (OSError, ValueError):
        return False
    if manifest.get("script_sha256") != sha:
        return False
    for m in manifest["models"]:
        files = [m["onnx"]] + [p for c in m["cases"] for p in
                               list(c["inputs"].values()) + list(c["outputs"].values())]
        if not all(os.path.exists(os.path.join(out_dir, p)) for p in files):
            return False
    return True


def export_model(out_dir, index, name, make, opset, seq_out, description):
    torch.manual_seed(1000 + index)
    model = make().eval()
    model_dir = os.path.join(out_dir, name)
    os.makedirs(model_dir, exist_ok=True)
    onnx_path = os.path.join(model_dir, "model.onnx")
    example = torch.randn(2, 30, FEATURES)
    out_axes = {0: "batch", 1: "seq"} if seq_out else {0: "batch"}
    # Grad stays enabled on purpose, for the export and the reference outputs alike: under
    # no_grad torch 1.13 takes the fused nn.TransformerEncoderLayer fast path, which neither
    # exports nor computes the same graph as the exported (decomposed) one.
    torch.onnx.export(model, (example,), onnx_path, opset_version=opset,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "y": out_axes},
                      do_constant_folding=True)
    proto = onnx.load(onnx_path)
    onnx.checker.check_model(proto, full_check=True)
    ops = sorted({n.op_type for n in proto.graph.node})

    rng = np.random.default_rng(2000 + index)
    cases = []
    max_abs = 0.0
    for b in BATCHES:
        for t in SEQS:
            x = rng.standard_normal((b, t, FEATURES), dtype=np.float32)
            y = model(torch.from_numpy(x)).detach().numpy().astype(np.float32)
            xn, yn = f"x_b{b}_t{t}.npy", f"y_b{b}_t{t}.npy"
            np.save(os.path.join(model_dir, xn), x)
            np.save(os.path.join(model_dir, yn), np.ascontiguousarray(y))
            max_abs = max(max_abs, float(np.abs(y).max()))
            cases.append({"batch": b, "seq": t,
                          "inputs": {"x": f"{name}/{xn}"}, "outputs": {"y": f"{name}/{yn}"},
                          "output_shape": list(y.shape)})
    params = sum(p.numel() for p in model.parameters())
    print(f"fixtures: {name:18s} opset {opset} params {params:7d} ops {','.join(ops)}")
    return {"name": name, "description": description, "opset": opset,
            "onnx": f"{name}/model.onnx", "ops": ops, "parameters": params,
            "inputs": [{"name": "x", "dims": ["batch", "seq", FEATURES]}],
            "outputs": [{"name": "y"}],
            "profile": {"x": PROFILE}, "cases": cases}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--force", action="store_true", help="regenerate even if up to date")
    ap.add_argument("--only", default="", help="comma-separated model names (default: all)")
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out)
    os.makedirs(out_dir, exist_ok=True)
    sha = script_sha256()
    if not args.force and not args.only and up_to_date(out_dir, sha):
        print(f"fixtures: {out_dir} is up to date")
        return 0
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    only = set(filter(None, args.only.split(",")))
    models = []
    for i, (name, make, opset, seq_out, desc) in enumerate(MODELS):
        if only and name not in only:
            continue
        models.append(export_model(out_dir, i, name, make, opset, seq_out, desc))
    manifest = {"script_sha256": sha if not only else "partial", "torch": torch.__version__,
                "onnx": onnx.__version__, "features": FEATURES, "batches": list(BATCHES),
                "seqs": list(SEQS), "models": models}
    tmp = os.path.join(out_dir, "manifest.json.tmp")
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, os.path.join(out_dir, "manifest.json"))
    total = sum(os.path.getsize(os.path.join(dp, fn))
                for dp, _, fns in os.walk(out_dir) for fn in fns)
    print(f"fixtures: {len(models)} models, {total / 1e6:.1f} MB in {out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
