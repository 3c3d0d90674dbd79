"""The shape sweep's architectures: a fixed-seed random sample a user could have exported, and
the PyTorch modules that build them. Imported by export.py (Debian's torch 1.13, on the dev
machine) and torch_peer.py (PyTorch 2.x, on the GPU machine): both must build the same modules.

Every model reads x: [batch, seq, features] float32. Ranges (issue 26): GRU and LSTM 1-4 layers,
hidden 16-512 (log-uniform integers, not rounded: users do not pick multiples of 16), batch-first
or not; Transformer encoder d_model 16-256, heads 1-8, GELU or ReLU, post- or pre-norm, with or
without a causal mask; causal dilated Conv1d stacks (TCN, the `h[:, :, :x.shape[1]]` trim, with
or without residuals). Heads: "sigmoid" (last step -> Linear -> Sigmoid), "linear" (last step ->
Linear: logits), "none" (the last step's features).
"""
import math
import random

import torch
from torch import nn

SEED = 26_2026  # the sample is part of the benchmark: change it and every number changes
RANDOM_CASES = 28
# The issue's named cases and the benchmark's own two, always in the sweep.
FIXED = [
    {"kind": "gru", "layers": 2, "hidden": 128, "features": 32, "batch_first": True, "head": "sigmoid", "outputs": 1},
    {"kind": "lstm", "layers": 2, "hidden": 128, "features": 32, "batch_first": True, "head": "sigmoid", "outputs": 1},
    {"kind": "gru", "layers": 3, "hidden": 80, "features": 28, "batch_first": True, "head": "sigmoid", "outputs": 1},
    {"kind": "lstm", "layers": 3, "hidden": 96, "features": 32, "batch_first": True, "head": "sigmoid", "outputs": 1},
]


def _log_int(rng, lo, hi):
    return int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))


def _head(rng):
    head = rng.choice(["sigmoid", "sigmoid", "linear", "none"])
    return head, (rng.randint(1, 4) if head != "none" else 0)


def sample():
    """The fixed cases, then RANDOM_CASES drawn with SEED: GRU, LSTM, Transformer, TCN in turn."""
    rng = random.Random(SEED)
    cases = [dict(c) for c in FIXED]
    kinds = ["gru", "lstm", "transformer", "tcn"]
    for i in range(RANDOM_CASES):
        kind = kinds[i % 4]
        features = rng.randint(8, 64)
        head, outputs = _head(rng)
        c = {"kind": kind, "features": features, "head": head, "outputs": outputs}
        if kind in ("gru", "lstm"):
            c.update(layers=rng.randint(1, 4), hidden=_log_int(rng, 16, 512), batch_first=rng.random() < 0.75)
        elif kind == "transformer":
            heads = rng.choice([1, 2, 4, 8])
            head_dim = rng.choice([d for d in (4, 8, 16, 32, 64) if 16 <= heads * d <= 256])
            d_model = heads * head_dim
            c.update(layers=rng.randint(1, 4), d_model=d_model, heads=heads,
                     ff=d_model * rng.choice([2, 4]), activation=rng.choice(["relu", "gelu"]),
                     norm_first=rng.random() < 0.5, causal=rng.random() < 0.4)
        else:
            c.update(levels=rng.randint(2, 5), channels=_log_int(rng, 16, 128), kernel=rng.randint(2, 5),
                     residual=rng.random() < 0.5)
        cases.append(c)
    for i, c in enumerate(cases):
        c["name"] = f"{i:02d}-" + describe(c)
        c["opset"] = 17 if i % 3 == 2 else 14
    return cases


def describe(c):
    if c["kind"] in ("gru", "lstm"):
        s = f"{c['kind']}-{c['layers']}x{c['hidden']}-f{c['features']}" + ("" if c["batch_first"] else "-tmajor")
    elif c["kind"] == "transformer":
        s = (f"xfmr-{c['layers']}xd{c['d_model']}h{c['heads']}-ff{c['ff']}-{c['activation']}"
             + ("-pre" if c["norm_first"] else "") + ("-causal" if c["causal"] else "") + f"-f{c['features']}")
    else:
        s = f"tcn-{c['levels']}x{c['channels']}k{c['kernel']}" + ("-res" if c["residual"] else "") + f"-f{c['features']}"
    return s + {"sigmoid": "", "linear": "-logits", "none": "-nohead"}[c["head"]]


class Head(nn.Module):
    def __init__(self, width, head, outputs):
        super().__init__()
        self.kind = head
        self.linear = nn.Linear(width, outputs) if head != "none" else None

    def forward(self, last):
        if self.kind == "none":
            return last
        y = self.linear(last)
        return torch.sigmoid(y) if self.kind == "sigmoid" else y


class Recurrent(nn.Module):
    def __init__(self, c):
        super().__init__()
        cell = nn.GRU if c["kind"] == "gru" else nn.LSTM
        self.batch_first = c["batch_first"]
        self.rnn = cell(c["features"], c["hidden"], num_layers=c["layers"], batch_first=self.batch_first)
        self.head = Head(c["hidden"], c["head"], c["outputs"])

    def forward(self, x):
        if self.batch_first:
            out, _ = self.rnn(x)
            last = out[:, -1, :]
        else:  # time-major inside, as many exported models are
            out, _ = self.rnn(x.transpose(0, 1))
            last = out[-1]
        return self.head(last)


class Transformer(nn.Module):
    MAX_SEQ = 512  # the causal mask is a buffer sliced to the input's length (a common export pattern)

    def __init__(self, c):
        super().__init__()
        d = c["d_model"]
        self.proj = nn.Linear(c["features"], d)
        layer = nn.TransformerEncoderLayer(d, c["heads"], dim_feedforward=c["ff"], dropout=0.0,
                                           activation=c["activation"], batch_first=True,
                                           norm_first=c["norm_first"])
        self.encoder = nn.TransformerEncoder(layer, num_layers=c["layers"], enable_nested_tensor=False)
        self.causal = c["causal"]
        if self.causal:
            m = torch.triu(torch.full((self.MAX_SEQ, self.MAX_SEQ), float("-inf")), diagonal=1)
            self.register_buffer("mask", m, persistent=False)
        self.head = Head(d, c["head"], c["outputs"])

    def forward(self, x):
        h = self.proj(x)
        if self.causal:
            t = x.shape[1]
            h = self.encoder(h, mask=self.mask[:t, :t])
        else:
            h = self.encoder(h)
        return self.head(h[:, -1, :])


class Tcn(nn.Module):
    """Causal dilated Conv1d stack: pad (k-1)*d on both sides, keep the first T steps."""

    def __init__(self, c):
        super().__init__()
        convs = []
        cin = c["features"]
        for i in range(c["levels"]):
            d = 2 ** i
            convs.append(nn.Conv1d(cin, c["channels"], c["kernel"], dilation=d, padding=(c["kernel"] - 1) * d))
            cin = c["channels"]
        self.convs = nn.ModuleList(convs)
        self.residual = c["residual"]
        self.head = Head(c["channels"], c["head"], c["outputs"])

    def forward(self, x):
        h = x.transpose(1, 2)
        for i, conv in enumerate(self.convs):
            y = torch.relu(conv(h)[:, :, :x.shape[1]])
            h = y + h if (self.residual and i > 0) else y
        return self.head(h[:, :, -1])


def make(c):
    if c["kind"] in ("gru", "lstm"):
        return Recurrent(c)
    if c["kind"] == "transformer":
        return Transformer(c)
    return Tcn(c)


def output_width(c):
    if c["head"] != "none":
        return c["outputs"]
    return {"gru": c.get("hidden"), "lstm": c.get("hidden"), "transformer": c.get("d_model"),
            "tcn": c.get("channels")}[c["kind"]]


if __name__ == "__main__":
    for c in sample():
        print(c["name"], c["opset"])
