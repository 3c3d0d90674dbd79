#!/usr/bin/python3
"""A deliberately useless model for the promotion-gate tests: every window scores 0.5, so its
PR-AUC is the split's positive rate, far below any real model's.

    prob = Reshape(x[:, -1:, 0:1] * 0 + 0.5, [-1, 1])

Input x float32 [batch, seq, 20], output prob float32 [batch, 1] (the dataset contract).

    /usr/bin/python3 make_constant_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FEATURES = 20


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def main(out):
    inits = [
        const("starts", [-1, 0], np.int64), const("ends", [2**62, 1], np.int64), const("axes", [1, 2], np.int64),
        const("zero", 0.0), const("half", 0.5), const("flat", [-1, 1], np.int64),
    ]
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["last"]),  # [b, 1, 1]
        helper.make_node("Mul", ["last", "zero"], ["zeros"]),
        helper.make_node("Add", ["zeros", "half"], ["p3"]),
        helper.make_node("Reshape", ["p3", "flat"], ["prob"]),                # [b, 1]
    ]
    graph = helper.make_graph(
        nodes, "constant_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", FEATURES])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 1])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1])
