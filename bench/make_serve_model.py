#!/usr/bin/python3
"""Models for bench/serve_bench: the serving contract (x float32 [batch, seq, 20] → prob [batch, 1])
with the issue's architectures, randomly initialized (speed does not depend on the weights).

    /usr/bin/python3 bench/make_serve_model.py gru-2x128 OUT.onnx
    kinds: gru-2x128, lstm-2x128, transformer-2x64
"""
import sys

import torch
from torch import nn

FEATURES = 20


class Recurrent(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.rnn = (nn.GRU if cell == "gru" else nn.LSTM)(FEATURES, 128, num_layers=2, batch_first=True)
        self.head = nn.Linear(128, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        return torch.sigmoid(self.head(out[:, -1, :]))


class Transformer(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(FEATURES, 64)
        layer = nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(64, 1)

    def forward(self, x):
        h = self.enc(self.proj(x))
        return torch.sigmoid(self.head(h[:, -1, :]))


def main(kind, out):
    torch.manual_seed(0)
    model = {"gru-2x128": lambda: Recurrent("gru"), "lstm-2x128": lambda: Recurrent("lstm"),
             "transformer-2x64": Transformer}[kind]()
    model.eval()
    x = torch.randn(4, 60, FEATURES)
    torch.onnx.export(model, (x,), out, input_names=["x"], output_names=["prob"], opset_version=14,
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "prob": {0: "batch"}})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
