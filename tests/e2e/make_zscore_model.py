#!/usr/bin/python3
"""A tiny ONNX model for `ticksentry eval` tests, written with onnx.helper (no training):

    prob = sigmoid(|x[:, -1, ret_10s]| / ((relu(x[:, -1, vol_long] - 1) + 1) * sqrt(10)) - 2)

i.e. a monotone function of the exporter's rolling z-score baseline (vol floor 1 bps/sqrt(s)),
so eval must give it the z-score's ROC-AUC: a check that eval feeds the right windows, rows and
columns. Input x float32 [batch, seq, 20], output prob float32 [batch, 1] (the dataset contract).

    /usr/bin/python3 make_zscore_model.py OUT.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

RET_10S, VOL_LONG, FEATURES = 1, 5, 20


def const(name, value, dtype=np.float32):
    return numpy_helper.from_array(np.array(value, dtype=dtype), name)


def main(out):
    inits = [
        const("starts", [-1], np.int64), const("ends", [2**62], np.int64), const("axes", [1], np.int64),
        const("col_ret", [RET_10S], np.int64), const("col_vol", [VOL_LONG], np.int64),
        const("one", 1.0), const("sqrt10", np.sqrt(10.0)), const("two", 2.0),
        const("flat", [-1, 1], np.int64),
    ]
    nodes = [
        helper.make_node("Slice", ["x", "starts", "ends", "axes"], ["last"]),          # [b, 1, F]
        helper.make_node("Gather", ["last", "col_ret"], ["ret"], axis=2),              # [b, 1, 1]
        helper.make_node("Gather", ["last", "col_vol"], ["vol"], axis=2),
        helper.make_node("Mul", ["ret", "ret"], ["ret2"]),
        helper.make_node("Sqrt", ["ret2"], ["abs_ret"]),
        helper.make_node("Sub", ["vol", "one"], ["vol_m1"]),
        helper.make_node("Relu", ["vol_m1"], ["vol_r"]),
        helper.make_node("Add", ["vol_r", "one"], ["vol_f"]),
        helper.make_node("Mul", ["vol_f", "sqrt10"], ["den"]),
        helper.make_node("Div", ["abs_ret", "den"], ["z"]),
        helper.make_node("Sub", ["z", "two"], ["logit"]),
        helper.make_node("Sigmoid", ["logit"], ["p3"]),
        helper.make_node("Reshape", ["p3", "flat"], ["prob"]),                         # [b, 1]
    ]
    graph = helper.make_graph(
        nodes, "zscore_model",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", FEATURES])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 1])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, out)


if __name__ == "__main__":
    main(sys.argv[1])
