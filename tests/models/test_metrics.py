#!/usr/bin/python3
"""The evaluation metrics on hand-made cases whose answers are known, with the definitions of
`ticksentry eval`: tie-averaged ROC-AUC, step-wise average precision, per-symbol alert cooldown,
the alert budget, event-level recall and lead time."""
import unittest

import common  # noqa: F401
import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

import metrics

S = 10**9


class MetricsTest(unittest.TestCase):
    def test_aucs_agree_with_sklearn_on_random_scores_with_ties(self):
        rng = np.random.default_rng(1)
        y = rng.random(500) < 0.1
        s = np.round(rng.random(500) + 0.3 * y, 2).astype(np.float32)  # many ties
        self.assertAlmostEqual(metrics.roc_auc(s, y), roc_auc_score(y, s), places=9)
        self.assertAlmostEqual(metrics.average_precision(s, y), average_precision_score(y, s),
                               places=9)
        self.assertIsNone(metrics.roc_auc(s, np.zeros(500, bool)))

    def test_cooldown_budget_recall_and_lead(self):
        # One symbol, windows every 5 s; an event at t=100 s labels the windows ending 45..95 s.
        end = np.arange(0, 200, 5, dtype=np.int64) * S
        y = (end >= 45 * S) & (end < 100 * S)
        ev = np.where(y, 100 * S, -1)
        sym = np.zeros(end.size, np.int32)
        score = np.zeros(end.size, np.float32)
        score[(end >= 70 * S) & (end < 100 * S)] = 0.9   # alerts 30 s ahead of the event
        score[[2, 30]] = 0.5                             # two false alarms at t=10 s and 150 s
        # Budget 1 false alert: 0.5 would give 2, so the threshold is 0.9.
        m = metrics.detector_metrics(y, score, sym, end, ev, symbol_hours=1.0, horizon_s=60)
        self.assertAlmostEqual(m["threshold"], 0.9, places=6)
        self.assertEqual((m["alerts"], m["false_alerts"]), (1, 0))  # cooldown: one alert
        self.assertEqual((m["events"], m["events_detected"]), (1, 1))
        self.assertEqual(m["recall"], 1.0)
        self.assertEqual(m["precision"], 1.0)
        self.assertAlmostEqual(m["median_lead_s"], 30.0)
        # Budget 2 allows 0.5: the false alarm at 10 s fires, the one at 150 s too (cooldown
        # since the 70 s alert has passed), and the event is still found at 70 s.
        m2 = metrics.detector_metrics(y, score, sym, end, ev, symbol_hours=2.0, horizon_s=60)
        self.assertAlmostEqual(m2["threshold"], 0.5, places=6)
        self.assertEqual(m2["false_alerts"], 2)
        self.assertAlmostEqual(m2["precision"], 1 / 3)

    def test_no_threshold_fits_the_budget(self):
        y = np.array([0, 0, 1], bool)
        s = np.array([0.9, 0.8, 0.1], np.float32)
        end = np.array([0, 100, 200], np.int64) * S
        m = metrics.detector_metrics(y, s, np.array([0, 1, 2]), end, np.array([-1, -1, 250 * S]),
                                     symbol_hours=0.5, horizon_s=60)
        self.assertIsNone(m["threshold"])
        self.assertEqual((m["alerts"], m["events_detected"]), (0, 0))
        self.assertIsNone(m["precision"])
        self.assertEqual(m["recall"], 0.0)


class AgreesWithTicksentryEval(unittest.TestCase):
    """models/metrics.py and `ticksentry eval` give the same numbers on the same scores."""

    def test_same_metrics_as_the_cli(self):
        import os

        import engine_cli
        import evaluate
        import export_onnx
        import torch
        from nets import build_model
        try:
            binary = engine_cli.find_binary()
        except engine_cli.EngineError as e:
            self.skipTest(str(e))
        if not engine_cli.supports(binary, "eval"):
            self.skipTest(f"{binary} has no eval subcommand")
        d = common.scratch("metrics-cli")
        data = common.make_synth(os.path.join(d, "data"), symbols=3, rows=3000, stride=5)
        torch.manual_seed(0)
        model = build_model({"kind": "tcn", "channels": 8, "dilations": [1, 2]}, 20).eval()
        onnx_path = os.path.join(d, "m.onnx")
        export_onnx.export(model, 20, onnx_path)
        for split in ("test", "all"):
            py = evaluate.evaluate_python(onnx_path, data, split, binary)
            cli = evaluate.evaluate_cli(onnx_path, data, split, binary)
            self.assertAlmostEqual(py["symbol_hours"], cli["symbol_hours"], places=9)
            self.assertEqual(py["windows"], cli["windows"])
            for det in ("model", "rules", "zscore"):
                a, b = py["detectors"][det], cli["detectors"][det]
                for k in ("roc_auc", "pr_auc", "threshold", "alerts", "false_alerts",
                          "precision", "recall", "events", "events_detected", "median_lead_s"):
                    with self.subTest(split=split, detector=det, metric=k):
                        if a[k] is None or b[k] is None:
                            self.assertEqual(a[k], b[k])
                        else:
                            self.assertAlmostEqual(a[k], b[k], places=5)


class EvalCliMeasuresWhatTheReportMeasures(unittest.TestCase):
    """`ticksentry eval --threshold T` and models/intervals.py (the report's numbers) on the same
    model, data and threshold: the same events, alerts and point values of every metric (the
    intervals' replicates use different generators, so only their presence is compared)."""

    @classmethod
    def setUpClass(cls):
        import os
        import subprocess
        binary = os.environ.get("TICKSENTRY_BIN")
        if not binary or not os.path.exists(binary):
            raise unittest.SkipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        cls.binary, cls.dir = binary, common.scratch("eval-cli")
        cls.data = os.path.join(cls.dir, "data")
        subprocess.run([binary, "features", "--export", cls.data, "--format", "sim", "--symbols", "6",
                        "--sim-seconds", "1800", "--seed", "11", "--window", "30"], check=True,
                       stdout=subprocess.DEVNULL)

    def test_same_events_alerts_and_metrics_at_the_same_threshold(self):
        import json
        import os
        import subprocess

        import baseline_onnx
        import intervals
        import onnx
        import protocol
        m = protocol.load_market("sim", [self.data], task="detect")
        rows = np.flatnonzero(m.split == 2)
        score = baseline_onnx.score_of("ret60", m.windows[rows], m.feature_names)
        distinct = np.unique(score)[::-1]
        k = min(40, distinct.size - 2)
        thr = float((distinct[k] + distinct[k + 1]) / 2)  # between two scores: no tie to round
        model = os.path.join(self.dir, "ret60.onnx")
        onnx.save(baseline_onnx.build("ret60", m.feature_names, window=m.windows.shape[1]), model)
        out = os.path.join(self.dir, "eval.json")
        subprocess.run([self.binary, "eval", "--model", model, "--data", self.data, "--split", "test",
                        "--task", "detect", "--threshold", repr(thr), "--json", out], check=True,
                       stdout=subprocess.DEVNULL)
        with open(out) as f:
            got = json.load(f)["detectors"]["model"]
        want = intervals.metrics_with_intervals(
            score, m.labels[rows], m.symbol[rows], m.end_ts_ns[rows], m.event_ts_ns[rows],
            np.full(rows.size, "sim"), m.window_s, m.horizon_s, thr)
        self.assertGreater(want["events"], 0)
        self.assertGreater(want["alerts"], 0)
        for key, theirs in (("events", "events"), ("events_caught", "events_detected"),
                            ("alerts", "alerts"), ("false_alerts", "false_alerts")):
            self.assertEqual(got[theirs], want[key], key)
        self.assertAlmostEqual(got["symbol_hours"], want["symbol_hours"], places=6)
        for key in ("recall", "precision", "false_alerts_per_symbol_hour", "median_lead_s",
                    "pr_auc", "roc_auc"):
            w, g = want[key]["value"], got["intervals"][key]["value"]
            if w is None:
                self.assertIsNone(g, key)
            else:
                self.assertAlmostEqual(g, w, places=3, msg=key)
            self.assertEqual(got["intervals"][key]["lo"] is None, want[key]["lo"] is None, key)
        w = want["p10_lead_s"]["value"]
        self.assertTrue((w is None and got["p10_lead_s"] is None) or
                        abs(got["p10_lead_s"] - w) < 1e-9)


if __name__ == "__main__":
    unittest.main()
