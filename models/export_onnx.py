#!/usr/bin/python3
"""Export a trained alert model to ONNX and check it.

    /usr/bin/python3 models/export_onnx.py --checkpoint RUN/model.pt --out M.onnx
        [--check-data EXPORT_DIR] [--ticksentry BIN] [--no-engine-check]

The graph reads "x" float32 [batch, T, 20] (both axes dynamic) and writes "prob" float32
[batch, 1], sigmoid applied, feature normalization baked in as the first layer. Checks, each a
failure (exit 1) when it does not hold:
  1. onnx.checker.check_model(full_check=True), and the input/output names and dynamic axes;
  2. the ticksentry engine (`ticksentry build` + `ticksentry infer`, CPU) against PyTorch on
     inputs of several batch sizes and T in {30, 60, 120}: max |difference| <= 1e-5. Inputs are
     real windows from --check-data when given (random rows otherwise), at raw feature scale.
onnx 1.12 has no reference evaluator, so the engine is the ONNX runtime this check uses.
"""
import argparse
import json
import os
import sys
import tempfile
import warnings

import numpy as np
import onnx
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_cli  # noqa: E402
from nets import build_model  # noqa: E402

TOLERANCE = 1e-5
OPSET = 14
CHECK_SHAPES = ((1, 30), (7, 60), (64, 120), (256, 60))


class ExportError(RuntimeError):
    pass


def load_checkpoint(path):
    if not os.path.exists(path):
        raise ExportError(f"{path}: checkpoint not found (train.py writes RUN/model.pt)")
    ck = torch.load(path, map_location="cpu")
    model = build_model(ck["config"]["model"], ck["features"])
    model.load_state_dict(ck["state_dict"])
    return model.eval(), ck


def export(model, features, out_path, opset=OPSET):
    example = torch.randn(2, 60, features)
    warnings.filterwarnings("ignore", category=UserWarning, module="torch")
    warnings.filterwarnings("ignore", category=torch.jit.TracerWarning)
    # Grad stays enabled: under no_grad torch 1.13 takes the fused TransformerEncoderLayer fast
    # path, which exports a different graph (see models/fixtures.py).
    torch.onnx.export(model, (example,), out_path, opset_version=opset,
                      input_names=["x"], output_names=["prob"],
                      dynamic_axes={"x": {0: "batch", 1: "seq"}, "prob": {0: "batch"}},
                      do_constant_folding=True)
    proto = onnx.load(out_path)
    onnx.checker.check_model(proto, full_check=True)
    inp, out = proto.graph.input, proto.graph.output
    if [i.name for i in inp] != ["x"] or [o.name for o in out] != ["prob"]:
        raise ExportError(f"{out_path}: inputs {[i.name for i in inp]}, outputs "
                          f"{[o.name for o in out]}; expected ['x'] and ['prob']")
    dims = inp[0].type.tensor_type.shape.dim
    if not (dims[0].dim_param and dims[1].dim_param and dims[2].dim_value == features):
        raise ExportError(f"{out_path}: x dims {dims}: batch and seq must be dynamic, "
                          f"features {features}")
    return proto


def check_inputs(features, check_data, seed=5):
    rng = np.random.default_rng(seed)
    pool = None
    if check_data:
        w = np.load(os.path.join(check_data, "windows.npy"), mmap_mode="r")
        pool = w
    cases = []
    for b, t in CHECK_SHAPES:
        if pool is not None:
            idx = np.sort(rng.choice(pool.shape[0], size=min(b, pool.shape[0]), replace=False))
            x = np.asarray(pool[idx], dtype=np.float32)
            if x.shape[0] < b:
                x = np.concatenate([x] * (b // x.shape[0] + 1))[:b]
            x = x[:, -t:, :] if t <= x.shape[1] else np.concatenate(
                [x, x[:, -(t - x.shape[1]):, :]], axis=1)
        else:
            x = rng.standard_normal((b, t, features)).astype(np.float32)
        cases.append(np.ascontiguousarray(x))
    return cases


def engine_check(model, onnx_path, cases, binary=None):
    """Max |engine - PyTorch| per case; raises ExportError above TOLERANCE."""
    results = []
    with tempfile.TemporaryDirectory(prefix="ts-export-") as tmp:
        plan = os.path.join(tmp, "model.plan")
        engine_cli.build_plan(onnx_path, plan, binary)
        for x in cases:
            with torch.no_grad():
                ref = model(torch.from_numpy(x)).numpy()
            got = engine_cli.infer(plan, x, binary)
            if got.shape != ref.shape:
                raise ExportError(f"engine output shape {got.shape}, PyTorch {ref.shape}")
            diff = float(np.abs(got - ref).max())
            results.append({"batch": x.shape[0], "seq": x.shape[1], "max_abs_diff": diff})
            if not diff <= TOLERANCE:
                raise ExportError(f"engine vs PyTorch at batch {x.shape[0]} T {x.shape[1]}: max "
                                  f"|diff| {diff:.3g} > {TOLERANCE}")
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--checkpoint", required=True)
    ap.add_argument("--out", required=True, help="ONNX file to write")
    ap.add_argument("--check-data", help="export folder: check on real windows")
    ap.add_argument("--ticksentry", help="ticksentry binary (default: build/models, build/release)")
    ap.add_argument("--no-engine-check", action="store_true",
                    help="skip the engine comparison (checker only)")
    ap.add_argument("--opset", type=int, default=OPSET)
    args = ap.parse_args(argv)
    try:
        model, ck = load_checkpoint(args.checkpoint)
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        export(model, ck["features"], args.out, args.opset)
        size = os.path.getsize(args.out)
        print(f"export: {args.out} ({size} bytes, opset {args.opset}); onnx.checker ok")
        report = {"onnx": args.out, "bytes": size, "opset": args.opset, "engine_check": None}
        if not args.no_engine_check:
            cases = check_inputs(ck["features"], args.check_data)
            res = engine_check(model, args.out, cases, args.ticksentry)
            worst = max(r["max_abs_diff"] for r in res)
            print(f"export: engine vs PyTorch on {len(res)} shapes "
                  f"({', '.join(str(r['batch']) + 'x' + str(r['seq']) for r in res)}): "
                  f"max |diff| {worst:.2e} <= {TOLERANCE}")
            report["engine_check"] = {"tolerance": TOLERANCE, "cases": res, "max_abs_diff": worst}
        with open(os.path.splitext(args.out)[0] + ".export.json", "w") as f:
            json.dump(report, f, indent=1)
    except (ExportError, engine_cli.EngineError, onnx.checker.ValidationError) as e:
        print(f"export: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
