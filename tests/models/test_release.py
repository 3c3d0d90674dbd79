#!/usr/bin/python3
"""The default decision, served (models/release.py, models/baseline_onnx.py): when no neural
model earns the default, the chosen baseline becomes the registry's prod version of the default
model, as a graph the engine runs with the same input and output as a neural model, at its
validation threshold mapped onto that graph's probability (the same alerts); the previous prod is
retired with the reason; recording the same default again changes nothing; a baseline without a
graph (rules) is served as the best one with a graph; gradient boosting and logistic regression
run in the engine as graphs; prod stays unless a change passed the gate and was confirmed. Engine checks need TICKSENTRY_BIN (set by
ctest); they skip with a message otherwise."""
import json
import os
import shutil
import subprocess
import unittest

import common
import numpy as np

import baseline_onnx
import baselines
import engine_cli
import protocol
import registry
import release
import study


def evaluation(det, threshold, served=None):
    return {"name": "detect/pooled", "task": "detect",
            "decision": {"default": det, "served": served or det, "why": "a test decision"},
            "operating_points": {(served or det): {
                "threshold": threshold, "budget_false_alerts_per_symbol_hour": 1.0,
                "fitted_on": "validation", "validation_alerts": 3, "validation_false_alerts": 1,
                "validation_events_detected": 2, "validation_events": 4}}}


class ReleaseTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        d = common.make_synth(common.scratch("release_data"), symbols=2, rows=2400, seed=3,
                              event_gap=200)
        cls.market = protocol.load_market("A", [d], task="detect")
        cls.binary = os.environ.get("TICKSENTRY_BIN")

    def test_the_mapped_threshold_gives_the_same_alerts_as_the_score_threshold(self):
        split = protocol.Study([self.market]).validation()
        raw = baselines.score_baseline("ret60", split).astype(np.float64)
        p = baseline_onnx.score_of("ret60", split.windows(), self.market.feature_names)
        for t in np.quantile(raw, [0.5, 0.9, 0.99]):
            t = float(raw[np.argmin(np.abs(raw - t))])  # a threshold is one of the scores
            np.testing.assert_array_equal(p.astype(np.float32) >= baseline_onnx.prob_threshold(t),
                                          raw >= t)

    def test_a_baseline_without_a_graph_is_served_as_the_best_one_with_a_graph(self):
        with self.assertRaises(baseline_onnx.BaselineGraphError):
            baseline_onnx.build("rules", self.market.feature_names)
        det = {k: {"all": {"pr_auc": {"value": v, "lo": v - 0.1, "hi": v + 0.1},
                           "events_caught": 2, "events": 4}}
               for k, v in (("gru", 0.3), ("rules", 0.5), ("ret60", 0.4))}
        d = study.decide(det, "gru", "rules", "ret60")
        self.assertEqual((d["default"], d["served"]), ("rules", "ret60"))
        self.assertIn("ret60", d["why"])

    def test_the_default_baseline_becomes_prod_and_the_old_prod_retires(self):
        if not self.binary or not os.path.exists(self.binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        tmp = common.scratch("release")
        reg = os.path.join(tmp, "registry.json")
        os.makedirs(os.path.join(tmp, "versions"))
        shutil.copyfile(os.path.join(common.MODELS, "default.onnx"),
                        os.path.join(tmp, "versions", "alert-default-v1.onnx"))
        with open(reg, "w") as f:
            json.dump({"format_version": 2, "models": [
                {"name": "alert-default", "version": 1, "stage": "prod",
                 "onnx": "versions/alert-default-v1.onnx", "sha256": "x",
                 "operating_point": {"threshold": 0.94}}]}, f)
        out = os.path.join(tmp, "out")
        meta = release.write_default(evaluation("ret60", 2.5), {"fitted": {}, "neural": {}},
                                     [self.market], out, log=lambda *_: None)
        self.assertEqual(meta["kind"], "baseline")
        e = release.record(out, reg, "alert-default", self.binary)
        self.assertEqual((e["version"], e["stage"], e["detector"]), (2, "prod", "ret60"))
        self.assertAlmostEqual(e["operating_point"]["threshold"],
                               baseline_onnx.prob_threshold(2.5))
        self.assertEqual(e["operating_point"]["score_threshold"], 2.5)
        self.assertLessEqual(e["engine_check_max_abs_err"], 1e-5)
        r = registry.load(reg)
        old = next(m for m in r["models"] if m["version"] == 1)
        self.assertEqual(old["stage"], "retired")
        self.assertIn("ret60", old["history"][-1]["why"])
        self.assertEqual(registry.prod(r, "alert-default")["version"], 2)
        self.assertTrue(os.path.exists(os.path.join(tmp, e["onnx"])))
        self.assertIsNone(release.record(out, reg, "alert-default", self.binary),
                          "the same default again records nothing")

    def test_fitted_baselines_as_graphs_match_scikit_learn_in_the_engine(self):
        if not self.binary or not os.path.exists(self.binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        st = protocol.Study([self.market])
        for kind in ("logreg", "gbm"):
            fitted = baselines.FittedBaseline(kind).fit(st.train())
            out = common.scratch(f"release_{kind}")
            release.write_default(evaluation(kind, 0.7), {"fitted": {kind: fitted}},
                                  [self.market], out, log=lambda *_: None)
            err = release.check_with_engine(out, self.binary)
            print(f"{kind}: engine vs scikit-learn max |diff| {err:.3g}")
            self.assertLessEqual(err, 1e-5, kind)
            va = st.validation()
            np.testing.assert_allclose(
                baseline_onnx.score_of(kind, va.windows(), self.market.feature_names,
                                       fitted=fitted), fitted.score(va), atol=1e-6)

    def test_a_gated_candidate_is_recorded_with_its_gate_and_the_engine_reads_it(self):
        if not self.binary or not os.path.exists(self.binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        tmp = common.scratch("release_candidate")
        reg = os.path.join(tmp, "registry.json")
        with open(reg, "w") as f:
            json.dump({"format_version": 2, "models": []}, f)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        shutil.copyfile(os.path.join(common.MODELS, "default.onnx"),
                        os.path.join(out, "candidate-forecast.onnx"))
        gate = {"passed": False, "reason": "forecast, validation: refused (a test)"}
        with open(os.path.join(out, "candidate-forecast.json"), "w") as f:
            json.dump({"detector": "gru", "task": "forecast", "evaluation": "forecast/pooled",
                       "gate": gate, "operating_point": {"threshold": 0.8}}, f)
        (e,) = release.record_candidates(out, reg, "alert-default")
        self.assertEqual((e["stage"], e["task"], e["gate"]), ("candidate", "forecast", gate))
        p = subprocess.run([self.binary, "models", "--registry", reg], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("candidate", p.stdout)

    def test_a_refit_of_prods_fitted_detector_does_not_replace_it_ungated(self):
        if not self.binary or not os.path.exists(self.binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        tmp = common.scratch("release_refit")
        reg = os.path.join(tmp, "registry.json")
        with open(reg, "w") as f:
            json.dump({"format_version": 2, "models": [
                {"name": "alert-default", "version": 4, "stage": "prod", "detector": "gbm",
                 "onnx": "versions/alert-default-v4.onnx", "sha256": "another model"}]}, f)
        fitted = baselines.FittedBaseline("gbm").fit(protocol.Study([self.market]).train())
        out = os.path.join(tmp, "out")
        release.write_default(evaluation("gbm", 0.5), {"fitted": {"gbm": fitted}},
                              [self.market], out, log=lambda *_: None)
        self.assertIsNone(release.record(out, reg, "alert-default", self.binary))
        self.assertEqual(registry.prod(registry.load(reg), "alert-default")["version"], 4)

    def test_prod_stays_when_the_change_is_not_gated_and_confirmed(self):
        tmp = common.scratch("release_stays")
        reg = os.path.join(tmp, "registry.json")
        with open(reg, "w") as f:
            json.dump({"format_version": 2, "models": [
                {"name": "alert-default", "version": 1, "stage": "prod", "detector": "ret60",
                 "onnx": "versions/alert-default-v1.onnx", "sha256": "x"}]}, f)
        out = os.path.join(tmp, "out")
        ev = evaluation("volume_z", 5.0)
        ev["default_change"] = {"promote": False, "why": "gate refused (a test)"}
        release.write_default(ev, {}, [self.market], out, log=lambda *_: None)
        self.assertIsNone(release.record(out, reg, "alert-default", self.binary))
        self.assertEqual(registry.prod(registry.load(reg), "alert-default")["version"], 1)

    def test_an_engine_that_disagrees_is_refused(self):
        if not self.binary or not os.path.exists(self.binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        out = common.scratch("release_bad")
        release.write_default(evaluation("volume_z", 5.0), {}, [self.market], out,
                              log=lambda *_: None)
        want = np.load(os.path.join(out, "check_prob.npy"))
        np.save(os.path.join(out, "check_prob.npy"), want + 0.01)
        with self.assertRaises(engine_cli.EngineError):
            release.check_with_engine(out, self.binary)


if __name__ == "__main__":
    unittest.main()
