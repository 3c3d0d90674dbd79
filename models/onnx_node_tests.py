#!/usr/bin/python3
"""Selects the ONNX project's backend node tests for the ops the engine supports and converts
them into a form the C++ conformance test reads without protobuf: per case
<out>/<case>/model.onnx, input_<i>.npy, output_<i>.npy, and <out>/manifest.json.

Run with Debian's python (python3-onnx ships the generator of the node tests):
    /usr/bin/python3 models/onnx_node_tests.py --out build/<dir>/onnx-node-tests

Selection (every case is listed in the manifest, with the reason when it is left out):
- every node of the model is one of SUPPORTED_OPS (the ops of issue 3);
- inputs and outputs are tensors of a dtype the engine knows (no strings, sequences, optionals);
- the default-domain opset is 14..17. Node test models declare the opset in which their op last
  changed, often older than 14 (Gemm 13, Conv 11...). Where no op of the model changed between
  that opset and 17 the model means exactly the same at opset 17, so its opset import is raised
  to 17 and the case kept ("opset_from" in the manifest); otherwise onnx's version converter is
  tried, and the case is left out if that fails.
- shape-like and weight inputs become initializers (noted per case in "folded"): the node tests
  feed e.g. Reshape's shape, Slice's starts/ends, Squeeze's axes and GRU/LSTM's W/R/B as runtime
  inputs, while exported models always carry them as constants, and the engine (like TensorRT
  without shape-tensor inputs) needs them at build time. The values are the test's own.
- an input whose data shape disagrees with the model's declared static shape but has the same
  element count (test_gemm_default_scalar_bias feeds [1] for a declared scalar) is reshaped to
  the declared shape.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings

import numpy as np

# onnx 1.12's test generators still use these numpy aliases (removed in numpy 1.24).
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    for _alias, _type in (("float", float), ("int", int), ("bool", bool), ("object", object),
                          ("complex", complex)):
        if not hasattr(np, _alias):
            setattr(np, _alias, _type)

import onnx  # noqa: E402
from onnx import numpy_helper, version_converter  # noqa: E402
from onnx.backend.test import cmd_tools  # noqa: E402

SUPPORTED_OPS = [
    "GRU", "LSTM", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh",
    "Gelu", "Erf", "Softmax", "LayerNormalization", "ReduceMean", "Pow", "Sqrt", "Conv",
    "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Slice", "Gather", "Concat",
    "Shape", "Constant", "ConstantOfShape", "Identity", "Cast", "Where", "Expand",
]
TARGET_OPSET = 17
# (op, input index) whose value the engine needs at build time.
BUILD_TIME_INPUTS = {
    ("Reshape", 1), ("Expand", 1), ("Slice", 1), ("Slice", 2), ("Slice", 3), ("Slice", 4),
    ("Squeeze", 1), ("Unsqueeze", 1), ("ConstantOfShape", 0),
    ("GRU", 1), ("GRU", 2), ("GRU", 3), ("LSTM", 1), ("LSTM", 2), ("LSTM", 3), ("LSTM", 7),
}
NPY_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int64, np.int32,
                                    np.int8, np.uint8, np.bool_)}


def primary_op(case_name, ops):
    """The op a case tests: its only op, else the supported op its name starts with (longest
    match, so 'test_constantofshape_*' is ConstantOfShape and '*_expanded' cases keep their
    op's name)."""
    if len(ops) == 1:
        return next(iter(ops))
    key = case_name[len("test_"):].replace("_", "").lower()
    best = ""
    for op in SUPPORTED_OPS:
        if key.startswith(op.lower()) and len(op) > len(best):
            best = op
    return best or sorted(ops)[0]


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


def changed_after(ops, opset):
    """Ops whose definition changed after `opset` (up to TARGET_OPSET)."""
    out = []
    for op in sorted(ops):
        latest = onnx.defs.get_schema(op, TARGET_OPSET).since_version
        if latest > opset:
            out.append(f"{op}-{latest}")
    return out


def raise_opset(model):
    """Returns (model at opset 14..17, opset_from, note) or (None, opset, reason)."""
    opset = default_opset(model)
    if opset is None:
        return None, None, "no default-domain opset"
    if opset >= 14:
        return model, opset, ""
    ops = {n.op_type for n in model.graph.node}
    changed = changed_after(ops, opset)
    if not changed:
        for o in model.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = TARGET_OPSET
        return model, opset, f"opset raised {opset}→{TARGET_OPSET} (ops unchanged)"
    try:
        converted = version_converter.convert_version(model, TARGET_OPSET)
        onnx.checker.check_model(converted)
    except Exception as e:  # the converter raises plain RuntimeErrors
        return None, opset, (f"opset {opset}, {', '.join(changed)} changed since and the "
                             f"version converter failed: {str(e).splitlines()[0][:120]}")
    return converted, opset, f"converted {opset}→{TARGET_OPSET} ({', '.join(changed)})"


def load_tensors(case_dir, prefix):
    data_dir = os.path.join(case_dir, "test_data_set_0")
    out = []
    i = 0
    while os.path.exists(os.path.join(data_dir, f"{prefix}_{i}.pb")):
        t = onnx.TensorProto()
        with open(os.path.join(data_dir, f"{prefix}_{i}.pb"), "rb") as f:
            t.ParseFromString(f.read())
        out.append((t.name, numpy_helper.to_array(t)))
        i += 1
    return out


def fold_build_time_inputs(model, inputs):
    """Turns graph inputs that feed BUILD_TIME_INPUTS into initializers holding the test data."""
    feeds = set()
    for n in model.graph.node:
        for k, name in enumerate(n.input):
            if name and (n.op_type, k) in BUILD_TIME_INPUTS:
                feeds.add(name)
    graph_inputs = [v.name for v in model.graph.input]
    kept, folded = [], []
    for i, (tname, arr) in enumerate(inputs):
        gname = tname or graph_inputs[i]
        if gname in feeds:
            model.graph.initializer.append(numpy_helper.from_array(arr, gname))
            folded.append(gname)
        else:
            kept.append((gname, arr))
    if folded:
        remaining = [v for v in model.graph.input if v.name not in folded]
        del model.graph.input[:]
        model.graph.input.extend(remaining)
        onnx.checker.check_model(model)
    return kept, folded


def match_declared_shapes(model, inputs):
    declared = {}
    for v in model.graph.input:
        dims = v.type.tensor_type.shape.dim
        if v.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            declared[v.name] = [d.dim_value for d in dims]
    out = []
    for tname, arr in inputs:
        want = declared.get(tname)
        if want is not None and list(arr.shape) != want and int(np.prod(want)) == arr.size:
            arr = arr.reshape(want)
        out.append((tname, arr))
    return out


def is_tensor_type(value_info):
    return value_info.type.HasField("tensor_type")


def select_case(src_dir, name, out_dir):
    """Returns a manifest entry; 'reason' is set when the case is left out."""
    entry = {"name": name}
    model = onnx.load(os.path.join(src_dir, "model.onnx"))
    ops = {n.op_type for n in model.graph.node}
    entry["ops"] = sorted(ops)
    unsupported = sorted(ops - set(SUPPORTED_OPS))
    if unsupported or any(n.domain not in ("", "ai.onnx") for n in model.graph.node):
        entry["reason"] = "unsupported ops: " + ",".join(unsupported or ["non-default domain"])
        return entry
    entry["op"] = primary_op(name, ops)
    if not all(is_tensor_type(v) for v in list(model.graph.input) + list(model.graph.output)):
        entry["reason"] = "non-tensor input or output (sequence/optional)"
        return entry
    try:
        inputs = load_tensors(src_dir, "input")
        outputs = load_tensors(src_dir, "output")
    except Exception as e:
        entry["reason"] = f"cannot read test data: {e}"
        return entry
    bad = [str(a.dtype) for _, a in inputs + outputs if a.dtype not in NPY_DTYPES]
    if bad:
        entry["reason"] = "dtype not supported by the engine: " + ",".join(sorted(set(bad)))
        return entry
    model, opset_from, note = raise_opset(model)
    entry["opset_from"] = opset_from
    if model is None:
        entry["reason"] = note
        return entry
    if note:
        entry["note"] = note
    inputs, folded = fold_build_time_inputs(model, inputs)
    if folded:
        entry["folded"] = folded
    inputs = match_declared_shapes(model, inputs)
    case_out = os.path.join(out_dir, name)
    os.makedirs(case_out, exist_ok=True)
    onnx.save(model, os.path.join(case_out, "model.onnx"))
    graph_inputs = [v.name for v in model.graph.input
                    if v.name not in {i.name for i in model.graph.initializer}]
    graph_outputs = [v.name for v in model.graph.output]
    entry["inputs"] = []
    for i, (tname, arr) in enumerate(inputs):
        np.save(os.path.join(case_out, f"input_{i}.npy"), arr)
        entry["inputs"].append({"name": tname or graph_inputs[i], "file": f"{name}/input_{i}.npy",
                                "dtype": str(arr.dtype), "shape": list(arr.shape)})
    entry["outputs"] = []
    for i, (tname, arr) in enumerate(outputs):
        np.save(os.path.join(case_out, f"output_{i}.npy"), arr)
        entry["outputs"].append({"name": tname or graph_outputs[i],
                                 "file": f"{name}/output_{i}.npy",
                                 "dtype": str(arr.dtype), "shape": list(arr.shape)})
    return entry


def script_sha256():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--force", action="store_true", help="regenerate even if up to date")
    args = ap.parse_args()
    out_dir = os.path.abspath(args.out)
    manifest_path = os.path.join(out_dir, "manifest.json")
    sha = script_sha256()
    if not args.force and os.path.exists(manifest_path):
        try:
            with open(manifest_path) as f:
                if json.load(f).get("script_sha256") == sha:
                    print(f"onnx_node_tests: {out_dir} is up to date")
                    return 0
        except (OSError, ValueError):
            pass
    if os.path.isdir(out_dir):
        shutil.rmtree(out_dir)
    os.makedirs(out_dir)
    with tempfile.TemporaryDirectory(prefix="onnx-node-gen-") as gen:
        # The generator writes <gen>/{node,real,simple}/...; only node tests are used.
        saved = sys.argv
        sys.argv = ["cmd_tools", "generate-data", "-o", gen]
        try:
            cmd_tools.main()
        finally:
            sys.argv = saved
        node_dir = os.path.join(gen, "node")
        names = sorted(d for d in os.listdir(node_dir) if d.startswith("test_"))
        entries = [select_case(os.path.join(node_dir, n), n, out_dir) for n in names]
    selected = [e for e in entries if "reason" not in e]
    left_out = [e for e in entries if "reason" in e and "op" in e]  # supported op, other reason
    per_op = {}
    for e in selected:
        per_op[e["op"]] = per_op.get(e["op"], 0) + 1
    manifest = {"script_sha256": sha, "onnx": onnx.__version__, "generated": len(entries),
                "supported_ops": SUPPORTED_OPS, "cases": selected,
                "left_out": [{"name": e["name"], "op": e["op"], "reason": e["reason"]}
                             for e in left_out],
                "cases_per_op": dict(sorted(per_op.items()))}
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(manifest_path + ".tmp", manifest_path)
    print(f"onnx_node_tests: {len(entries)} node tests generated, {len(selected)} selected "
          f"for {len(per_op)} ops, {len(left_out)} of supported ops left out (see manifest)")
    for op in SUPPORTED_OPS:
        print(f"  {op:20s} {per_op.get(op, 0)}")
    for e in left_out:
        print(f"  left out {e['name']}: {e['reason']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
