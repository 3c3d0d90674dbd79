#!/usr/bin/python3
"""Unit invariance (docs/labels.md "Features"): the first 30,000 LOBSTER AAPL messages and the
same with every size x 1e8 and every price x 100 give identical labels and identical features,
except the features the current feature engine still computes in absolute units (listed in
UNIT_DEPENDENT, each with why; the test fails if another one starts to differ). Every model the
pipeline fits leaves those out (train.input_stats, baselines.FittedBaseline), so its
probabilities are identical: a neural model, logistic regression, and the baselines served as
models (baseline_onnx, run by the engine). Needs ../shared/data/lobster and the
ticksentry binary (TICKSENTRY_BIN, set by ctest); skips with a message otherwise."""
import csv
import gzip
import os
import subprocess
import sys
import unittest

import common
import numpy as np
import torch

import baseline_onnx
import baselines
import engine_cli
import train
from dataset import UNIT_DEPENDENT_FEATURES
from nets import build_model

DATA = os.environ.get("TICKSENTRY_DATA_DIR") or os.path.join(common.REPO, "..", "shared", "data")
STEM = "AAPL_2012-06-21_34200000_57600000_{}_1.csv"
ROWS = 30000
SIZE_X, PRICE_X = 10**8, 100
EMPTY = 9999999999  # LOBSTER's empty-level price
# Features the engine computes in absolute units today: the models' own list.
UNIT_DEPENDENT = {why.split(":")[0]: why for why in UNIT_DEPENDENT_FEATURES.values()}
# Columns of the export besides the features that still depend on units:
UNIT_DEPENDENT_COLUMNS = {"rule_score": "rules with absolute size thresholds (volume_burst min size)"}


def excerpt(src_dir, dst_dir, scaled):
    os.makedirs(dst_dir, exist_ok=True)
    for kind in ("message", "orderbook"):
        name = STEM.format(kind)
        with gzip.open(os.path.join(src_dir, name + ".gz"), "rt") as f, \
                open(os.path.join(dst_dir, name), "w") as g:
            for k, row in enumerate(csv.reader(f)):
                if k == ROWS:
                    break
                if scaled and kind == "message":
                    row[3] = str(int(row[3]) * SIZE_X)
                    row[4] = str(int(row[4]) * PRICE_X)
                elif scaled:
                    row = [str(int(v) * SIZE_X) if i % 2 else
                           (v if abs(int(v)) == EMPTY else str(int(v) * PRICE_X))
                           for i, v in enumerate(row)]
                g.write(",".join(row) + "\n")
    return os.path.join(dst_dir, STEM.format("message"))


class UnitInvarianceTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        lob = os.path.join(DATA, "lobster")
        binary = os.environ.get("TICKSENTRY_BIN")
        if not os.path.exists(os.path.join(lob, STEM.format("message") + ".gz")):
            raise unittest.SkipTest(f"no LOBSTER data at {lob} (see ../shared/data/README.md)")
        if not binary or not os.path.exists(binary):
            raise unittest.SkipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        base = common.scratch("units")
        cls.out = {}
        for scaled in (False, True):
            tag = "scaled" if scaled else "orig"
            msg = excerpt(lob, os.path.join(base, tag), scaled)
            exp = os.path.join(base, "export-" + tag)
            subprocess.run([binary, "features", "--export", exp, "--format", "lobster", msg],
                           check=True, stdout=subprocess.DEVNULL)
            cls.out[tag] = exp
        import json
        with open(os.path.join(cls.out["orig"], "manifest.json")) as f:
            cls.names = json.load(f)["feature_names"]

    def load(self, tag, name):
        return np.load(os.path.join(self.out[tag], name + ".npy"))

    def test_labels_and_unit_free_features_are_identical(self):
        for col in ("labels", "event_ts_ns", "labels_detect", "labels_forecast", "end_ts_ns", "symbol",
                    "zscore", "rule_score"):
            same = np.array_equal(self.load("orig", col), self.load("scaled", col))
            if col in UNIT_DEPENDENT_COLUMNS:
                print(f"{col}: {'same' if same else 'differs'} ({UNIT_DEPENDENT_COLUMNS[col]})")
            else:
                self.assertTrue(same, f"{col} changes with the units")
        a, b = self.load("orig", "windows"), self.load("scaled", "windows")
        self.assertEqual(a.shape, b.shape)
        differ = []
        for k, name in enumerate(self.names):
            x, y = a[..., k].astype(np.float64), b[..., k].astype(np.float64)
            err = float(np.max(np.abs(x - y) / np.maximum(1.0, np.abs(x))))
            if err > 1e-5:
                differ.append(name)
                print(f"{name}: differs, max relative error {err:.3g} "
                      f"({UNIT_DEPENDENT.get(name, 'NOT EXPECTED')})")
        self.assertTrue(set(differ) <= set(UNIT_DEPENDENT),
                        f"features that now depend on units: {set(differ) - set(UNIT_DEPENDENT)}")

    def test_the_models_leave_out_exactly_the_unit_dependent_features(self):
        self.assertEqual({self.names[k] for k in UNIT_DEPENDENT_FEATURES}, set(UNIT_DEPENDENT))

    def test_neural_probabilities_are_identical(self):
        """Every architecture the study trains (configs/study.toml kinds), normalised as
        train.fit normalises: the same probabilities for both units."""
        a, b = self.load("orig", "windows"), self.load("scaled", "windows")
        mean, std = train.input_stats(a)  # what train.fit normalises with
        for kind in ("gru", "lstm", "transformer", "tcn"):
            torch.manual_seed(1)
            model = build_model({"kind": kind, "hidden": 16, "clip": 8.0}, a.shape[2]).eval()
            dropped = model.norm.set_stats(mean, std)
            self.assertTrue(set(UNIT_DEPENDENT_FEATURES) <= set(dropped), kind)
            pa, pb = train.predict(model, a), train.predict(model, b)
            print(f"{kind}: max |diff| {float(np.max(np.abs(pa - pb))):.3g} over {a.shape[0]} windows")
            np.testing.assert_allclose(pa, pb, atol=1e-6, err_msg=kind)

    def _fitted_logreg(self, windows, kind="logreg"):
        """A fitted baseline as study.py fits it (labels: any two classes will do)."""
        vz = windows[:, -1, self.names.index("volume_z")]
        y = (vz > np.median(vz)).astype(np.uint8)

        class TrainSplit:  # the part of protocol.Split that FittedBaseline.fit reads
            kind = "train"

            def windows(self):
                return windows

            def column(self, key):
                return y
        return baselines.FittedBaseline(kind).fit(TrainSplit())

    def test_baseline_probabilities_are_identical_and_the_engine_serves_them_so(self):
        import onnx
        a, b = self.load("orig", "windows"), self.load("scaled", "windows")
        fitted_logreg = self._fitted_logreg(np.asarray(a, np.float32))
        fitted_gbm = self._fitted_logreg(np.asarray(a, np.float32), "gbm")
        binary = os.environ["TICKSENTRY_BIN"]
        tmp = common.scratch("units-onnx")
        n = min(512, a.shape[0])
        for kind in ("ret60", "zscore", "volume_z", "logreg", "gbm"):
            fitted = fitted_gbm if kind == "gbm" else fitted_logreg
            pa = baseline_onnx.score_of(kind, a, self.names, fitted=fitted)
            pb = baseline_onnx.score_of(kind, b, self.names, fitted=fitted)
            np.testing.assert_allclose(pa, pb, atol=1e-6, err_msg=kind)
            path = os.path.join(tmp, f"{kind}.onnx")
            onnx.save(baseline_onnx.build(kind, self.names, fitted=fitted, window=a.shape[1]), path)
            plan = path + ".plan"
            engine_cli.build_plan(path, plan, binary, max_batch=n, t_min=a.shape[1],
                                  t_max=a.shape[1])
            ea = engine_cli.infer(plan, np.asarray(a[:n], np.float32), binary, n).reshape(-1)
            eb = engine_cli.infer(plan, np.asarray(b[:n], np.float32), binary, n).reshape(-1)
            print(f"{kind}: engine vs numpy max |diff| {float(np.max(np.abs(ea - pa[:n]))):.3g}, "
                  f"orig vs scaled {float(np.max(np.abs(ea - eb))):.3g}")
            np.testing.assert_allclose(ea, pa[:n], atol=1e-5, err_msg=kind)
            np.testing.assert_allclose(ea, eb, atol=1e-6, err_msg=kind)


if __name__ == "__main__":
    sys.exit(unittest.main())
