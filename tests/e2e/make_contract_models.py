#!/usr/bin/python3
"""Tiny ONNX models that break the pipeline's model contract one way each, for the CLI test of
the check at load (docs/bring-your-own-model.md): prob = sigmoid(mean(x)) over [batch, seq, F].

    /usr/bin/python3 make_contract_models.py OUTDIR
writes OUTDIR/good.onnx (x [batch,seq,20] -> prob [batch,1]), wrong_name.onnx (input
"input_ids"), wide.onnx (F = 32) and two_columns.onnx (prob [batch,2]).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(path, input_name="x", features=20, columns=1):
    inits = [numpy_helper.from_array(np.array([-1, 1], dtype=np.int64), "flat")]
    nodes = [
        helper.make_node("ReduceMean", [input_name], ["m"], axes=[1, 2], keepdims=1),
        helper.make_node("Reshape", ["m", "flat"], ["m2"]),
        helper.make_node("Sigmoid", ["m2"], ["p1"]),
    ]
    out = "p1"
    if columns == 2:
        nodes.append(helper.make_node("Concat", ["p1", "p1"], ["p2"], axis=1))
        out = "p2"
    nodes.append(helper.make_node("Identity", [out], ["prob"]))
    g = helper.make_graph(
        nodes, "contract",
        [helper.make_tensor_value_info(input_name, TensorProto.FLOAT, ["batch", "seq", features])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", columns])], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="ticksentry-test")
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, path)


def main(outdir):
    os.makedirs(outdir, exist_ok=True)
    model(os.path.join(outdir, "good.onnx"))
    model(os.path.join(outdir, "wrong_name.onnx"), input_name="input_ids")
    model(os.path.join(outdir, "wide.onnx"), features=32)
    model(os.path.join(outdir, "two_columns.onnx"), columns=2)


if __name__ == "__main__":
    main(sys.argv[1])
