"""Shared by the models/ tests: import path, skip when Debian's python packages are missing,
a scratch folder per test (TS_TEST_TMP from ctest, else a temporary one), a small synthetic
export."""
import os
import shutil
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS = os.path.join(REPO, "models")
sys.path.insert(0, MODELS)

SKIP = 77
try:
    import numpy  # noqa: F401
    import onnx  # noqa: F401
    import sklearn  # noqa: F401
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    print(f"SKIP: {e} (install python3-torch python3-onnx python3-sklearn: make deps)")
    sys.exit(SKIP)


def scratch(name):
    base = os.environ.get("TS_TEST_TMP") or tempfile.mkdtemp(prefix="ts-models-test-")
    path = os.path.join(base, name)
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    return path


def make_synth(out, symbols=2, rows=1500, window=30, stride=10, seed=3, event_gap=150):
    subprocess.run([sys.executable, os.path.join(MODELS, "synth.py"), "--out", out,
                    "--symbols", str(symbols), "--rows", str(rows), "--window", str(window),
                    "--stride", str(stride), "--seed", str(seed),
                    "--event-gap", str(event_gap)], check=True,
                   stdout=subprocess.DEVNULL)
    return out
