"""Running the ticksentry CLI from Python: build a plan from ONNX, run a plan on .npy inputs.

The binary is found in this order: the `binary` argument, $TICKSENTRY_BIN, then the first of
build/models, build/release under the repository root. Errors come back as EngineError with the
command and its output.
"""
import os
import subprocess
import tempfile

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FEATURES = 20
INFER_CHUNK = 4096  # rows per `ticksentry infer` call (the plan's max batch)


class EngineError(RuntimeError):
    pass


def find_binary(binary=None):
    cands = [binary, os.environ.get("TICKSENTRY_BIN"),
             os.path.join(REPO, "build/models/src/app/ticksentry"),
             os.path.join(REPO, "build/release/src/app/ticksentry")]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    raise EngineError("ticksentry binary not found: pass --ticksentry, set TICKSENTRY_BIN, or "
                      "build it (cmake --preset release -B build/models && cmake --build "
                      "build/models --target ticksentry)")


def _run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise EngineError(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stdout}{p.stderr}")
    return p.stdout


def supports(binary, subcommand):
    """Whether the binary lists `subcommand` among its subcommands (in `--help`)."""
    p = subprocess.run([binary, "--help"], capture_output=True, text=True)
    return any(line.split()[:1] == [subcommand] for line in p.stdout.splitlines()
               if line.startswith("  "))


def build_plan(onnx_path, plan_path, binary=None, max_batch=INFER_CHUNK, t_min=30, t_max=120):
    b = find_binary(binary)
    opt_b, opt_t = min(64, max_batch), min(max(60, t_min), t_max)
    return _run([b, "build", "--onnx", onnx_path, "--saveEngine", plan_path,
                 "--minShapes", f"x:1x{t_min}x{FEATURES}",
                 "--optShapes", f"x:{opt_b}x{opt_t}x{FEATURES}",
                 "--maxShapes", f"x:{max_batch}x{t_max}x{FEATURES}"])


def infer(plan_path, x, binary=None, chunk=INFER_CHUNK):
    """Runs the plan on x [N, T, F] in chunks; returns the first output as [N, ...] float32."""
    b = find_binary(binary)
    outs = []
    with tempfile.TemporaryDirectory(prefix="ts-infer-") as tmp:
        xin, yout = os.path.join(tmp, "x.npy"), os.path.join(tmp, "y.npy")
        for s in range(0, x.shape[0], chunk):
            np.save(xin, np.ascontiguousarray(x[s:s + chunk], dtype=np.float32))
            _run([b, "infer", "--loadEngine", plan_path, "--input", f"x={xin}", "--output", yout])
            outs.append(np.load(yout))
    return np.concatenate(outs, axis=0)
