#!/usr/bin/python3
"""Tiny PyTorch models exported as a user would (docs/bring-your-own-model.md), for the CLI
tests of the model manifest, the probability column and the warm-up probability check:

    torch_prob.onnx       x [batch, seq, 20] -> prob [batch, 1] = sigmoid(Linear(x[:, -1, :]))
    torch_logits.onnx     the same without the sigmoid: logits, which serving must refuse
    torch_two_class.onnx  x -> prob [batch, 2] = softmax(Linear2(x[:, -1, :])): the probability
                          of the event is column 1 (column 0 is its complement)
    torch_class1.onnx     the same weights, exporting column 1 alone: prob [batch, 1]

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


class TwoClass(torch.nn.Module):
    def __init__(self, only_class1):
        super().__init__()
        torch.manual_seed(28)
        self.fc = torch.nn.Linear(20, 2)
        with torch.no_grad():
            self.fc.weight.mul_(20.0)  # confident on real inputs: crosses any threshold often
        self.only_class1 = only_class1

    def forward(self, x):
        p = torch.softmax(self.fc(x[:, -1, :]), dim=1)
        return p[:, 1:2] if self.only_class1 else p


def export(model, path):
    x = torch.randn(4, 60, 20)
    torch.onnx.export(model.eval(), x, path, input_names=["x"], output_names=["prob"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "prob": {0: "batch"}}, opset_version=17)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    export(Head(True), os.path.join(outdir, "torch_prob.onnx"))
    export(Head(False), os.path.join(outdir, "torch_logits.onnx"))
    export(TwoClass(False), os.path.join(outdir, "torch_two_class.onnx"))
    export(TwoClass(True), os.path.join(outdir, "torch_class1.onnx"))


if __name__ == "__main__":
    main(sys.argv[1])
