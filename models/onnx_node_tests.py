#!/usr/bin/python3
"""Converts the ONNX project's backend node tests into a form the C++ conformance test reads
without protobuf: per case <out>/<case>/model.onnx (the generated model, byte for byte),
input_<i>.npy, output_<i>.npy, and <out>/manifest.json.

Run with Debian's python (python3-onnx ships the generator of the node tests):
    /usr/bin/python3 models/onnx_node_tests.py --out build/<dir>/onnx-node-tests

The cases are kept exactly as generated: opsets as given, shape-like and weight inputs (Reshape's
shape, Slice's starts/ends, GRU's W) as runtime inputs, data as given. The manifest lists every
node test whose inputs and outputs are tensors of a dtype .npy carries, with its ops and opset;
the conformance test selects those whose ops the backend registers (the engine's claim), so the
list of ops is the backend's, not this script's. Left out (with the reason in the manifest):
sequence/optional inputs or outputs, dtypes without a .npy form the engine reads (strings,
complex, uint16/32/64, float8).
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
from onnx import numpy_helper  # noqa: E402
from onnx.backend.test import cmd_tools  # noqa: E402

NPY_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.float16, np.int64, np.int32,
                                    np.int8, np.uint8, np.bool_)}


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return None


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


def is_tensor_type(value_info):
    return value_info.type.HasField("tensor_type")


def select_case(src_dir, name, out_dir):
    """Returns a manifest entry; 'reason' is set when the case is left out."""
    entry = {"name": name}
    model_path = os.path.join(src_dir, "model.onnx")
    model = onnx.load(model_path)
    entry["ops"] = sorted({n.op_type for n in model.graph.node})
    entry["opset"] = default_opset(model)
    if any(n.domain not in ("", "ai.onnx") for n in model.graph.node):
        entry["reason"] = "non-default domain"
        return entry
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
        entry["reason"] = "dtype without an .npy form the engine reads: " + ",".join(sorted(set(bad)))
        return entry
    case_out = os.path.join(out_dir, name)
    os.makedirs(case_out, exist_ok=True)
    shutil.copyfile(model_path, os.path.join(case_out, "model.onnx"))
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
    left_out = [e for e in entries if "reason" in e]
    manifest = {"script_sha256": sha, "onnx": onnx.__version__, "generated": len(entries),
                "cases": selected,
                "left_out": [{"name": e["name"], "ops": e["ops"], "reason": e["reason"]}
                             for e in left_out]}
    with open(manifest_path + ".tmp", "w") as f:
        json.dump(manifest, f, indent=1)
    os.replace(manifest_path + ".tmp", manifest_path)
    print(f"onnx_node_tests: {len(entries)} node tests generated, {len(selected)} written as "
          f"generated, {len(left_out)} left out (see manifest)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
