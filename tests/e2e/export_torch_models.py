#!/usr/bin/python3
"""Two tiny PyTorch models exported as a user would (docs/bring-your-own-model.md), for the CLI
tests of the model manifest and the warm-up probability check:

    torch_prob.onnx    x [batch, seq, 20] -> prob [batch, 1] = sigmoid(Linear(x[:, -1, :]))
    torch_logits.onnx  the same without the sigmoid: logits, which serving must refuse

    /usr/bin/python3 export_torch_models.py OUTDIR
"""
import os
import sys

import torch


class Head(torch.nn.Module):
    def __init__(self, sigmoid):
        super().__init__()
        torch.manual_seed(27)
        self.fc = torch.nn.Linear(20, 1)
        with torch.no_grad():
            self.fc.weight.mul_(20.0)  # logits far outside [0, 1] on any real input
        self.sigmoid = sigmoid

    def forward(self, x):
        y = self.fc(x[:, -1, :])
        return torch.sigmoid(y) if self.sigmoid else y


def export(model, path):
    x = torch.randn(4, 60, 20)
    torch.onnx.export(model.eval(), x, path, input_names=["x"], output_names=["prob"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "prob": {0: "batch"}}, opset_version=17)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    export(Head(True), os.path.join(outdir, "torch_prob.onnx"))
    export(Head(False), os.path.join(outdir, "torch_logits.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
