#!/usr/bin/python3
"""Writes the current-format plan seeds of plan_fuzz (fuzz/corpus/plan_fuzz/*-v<N>.plan): four
small ONNX models, each built by `ticksentry build --backend cpu` into a plan of the format this
ticksentry writes, with a model manifest section where the model is a window model [batch, T, F]
(the manifest's fields come from the graph and the flags below, so the fuzzer mutates every field
of the manifest parser: input name, T, F, F feature names, output, columns, probability column,
threshold, name, version). Re-run after a plan format change, with the release build:
  /usr/bin/python3 fuzz/corpus/make_plan_seeds.py [build/release/src/app/ticksentry]
The older seeds (reshape.plan, gather.plan, mlp.plan, concat.plan: format 2) stay as seeds of
the loader's older-version path."""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT = os.path.join(HERE, "plan_fuzz")
F = 20


def model(name, nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, name, inputs, outputs, [numpy_helper.from_array(a, n) for n, a in inits])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(m)
    return m


def x(dims):
    return helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)


rng = np.random.default_rng(25)
models = {
    # Reshape(x, [-1]) of the probe: no manifest (its output is not per row), so the plan's
    # manifest section is the "none" form (version 0).
    "reshape": (model("reshape", [helper.make_node("Reshape", ["x", "shape"], ["y"])], [x(["batch", "seq", F])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])],
                      [("shape", np.array([-1], np.int64))]),
                ["--noManifest"], "x:1x1x20", "x:4x8x20"),
    # Gather(axis 1) of the last step → Sigmoid: [batch, 1, 20] → the manifest of a window model
    # with F columns out; probability column 3, a threshold, a name and a version (JSON).
    "gather": (model("gather", [helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
                                helper.make_node("Sigmoid", ["g"], ["y"])],
                     [x(["batch", 8, F])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", F])],
                     [("idx", np.array(7, np.int64))]),
               {"output_columns": F, "probability_column": 3, "threshold": 0.75, "name": "fuzz-gather",
                "version": "3"}, "x:1x8x20", "x:4x8x20"),
    # MatMul → Add → Relu → ReduceMean over T → MatMul → Sigmoid: [batch, T, 20] → [batch, 1],
    # T dynamic (manifest T 0), a threshold.
    "mlp": (model("mlp", [helper.make_node("MatMul", ["x", "w1"], ["h"]), helper.make_node("Add", ["h", "b1"], ["a"]),
                          helper.make_node("Relu", ["a"], ["r"]),
                          helper.make_node("ReduceMean", ["r"], ["m"], axes=[1], keepdims=0),
                          helper.make_node("MatMul", ["m", "w2"], ["l"]), helper.make_node("Sigmoid", ["l"], ["y"])],
                    [x(["batch", "seq", F])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 1])],
                    [("w1", rng.standard_normal((F, 8)).astype(np.float32)),
                     ("b1", rng.standard_normal(8).astype(np.float32)),
                     ("w2", rng.standard_normal((8, 1)).astype(np.float32))]),
            ["--threshold", "0.5"], "x:1x2x20", "x:4x16x20"),
    # Transpose → Concat → ReduceMean → Softmax: two output columns, the probability in column 1.
    "concat": (model("concat", [helper.make_node("Transpose", ["x"], ["t"], perm=[0, 2, 1]),
                                helper.make_node("ReduceMean", ["t"], ["m"], axes=[2], keepdims=0),
                                helper.make_node("Slice", ["m", "s0", "s1", "s2"], ["p"]),
                                helper.make_node("Concat", ["p", "p"], ["c"], axis=1),
                                helper.make_node("Softmax", ["c"], ["y"], axis=1)],
                     [x(["batch", 4, F])], [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 2])],
                     [("s0", np.array([0], np.int64)), ("s1", np.array([1], np.int64)),
                      ("s2", np.array([1], np.int64))]),
               ["--probabilityColumn", "1", "--threshold", "0.9"], "x:1x4x20", "x:8x4x20"),
}


def main():
    exe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build/release/src/app/ticksentry")
    fmt = None
    with tempfile.TemporaryDirectory() as tmp:
        for name, (m, extra, lo, hi) in models.items():
            onnx_path = os.path.join(tmp, name + ".onnx")
            onnx.save(m, onnx_path)
            if isinstance(extra, dict):
                with open(os.path.join(tmp, name + ".manifest.json"), "w") as f:
                    json.dump(extra, f)
                extra = []
            plan = os.path.join(tmp, name + ".plan")
            subprocess.run([exe, "build", "--backend", "cpu", "--onnx", onnx_path, "--saveEngine", plan,
                            "--minShapes", lo, "--optShapes", lo, "--maxShapes", hi] + extra, check=True)
            data = open(plan, "rb").read()
            fmt = int.from_bytes(data[8:12], "little")
            with open(os.path.join(OUT, "%s-v%d.plan" % (name, fmt)), "wb") as f:
                f.write(data)
    print("wrote the plan seeds of format", fmt, "to", OUT)


main()
