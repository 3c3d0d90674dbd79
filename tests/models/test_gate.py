#!/usr/bin/python3
"""The release gate (on validation: refuse a candidate whose PR-AUC is more than 0.5 % below the
shipped model's or below the best baseline's; never on test) and the registry it records candidates in."""
import hashlib
import json
import os
import subprocess
import sys
import unittest

import common
import registry


class GateTest(unittest.TestCase):
    def test_equal_or_better_passes(self):
        self.assertTrue(registry.gate(0.40, 0.40)["passed"])
        self.assertTrue(registry.gate(0.45, 0.40)["passed"])

    def test_small_drop_within_half_percent_passes(self):
        g = registry.gate(0.40 * (1 - 0.004), 0.40)
        self.assertTrue(g["passed"], g["reason"])

    def test_drop_over_half_percent_is_refused(self):
        g = registry.gate(0.40 * (1 - 0.006), 0.40)
        self.assertFalse(g["passed"])
        self.assertIn("0.60 %", g["reason"])
        self.assertIn("limit 0.5 %", g["reason"])

    def test_first_model_passes(self):
        g = registry.gate(0.3, None)
        self.assertTrue(g["passed"])
        self.assertIn("no shipped model", g["reason"])

    def test_undefined_candidate_is_refused(self):
        self.assertFalse(registry.gate(None, 0.4)["passed"])

    def test_below_the_best_baseline_is_refused_with_both_numbers(self):
        g = registry.gate(0.20, 0.19, baseline=("ret60", 0.25))
        self.assertFalse(g["passed"])
        self.assertIn("ret60's 0.2500", g["reason"])
        self.assertIn("shipped model: 0.1900", g["reason"])
        g = registry.gate(0.30, 0.19, baseline=("ret60", 0.25))
        self.assertTrue(g["passed"])
        self.assertIn("best baseline ret60 0.2500", g["reason"])

    def test_the_gate_never_reads_the_test_split(self):
        with self.assertRaisesRegex(registry.RegistryError, "never reads the test split"):
            registry.gate(0.4, 0.4, split="test")


class RegistryTest(unittest.TestCase):
    def setUp(self):
        self.dir = common.scratch("registry")
        self.onnx = os.path.join(self.dir, "m.onnx")
        with open(self.onnx, "wb") as f:
            f.write(b"not really onnx but bytes to hash")
        self.reg = os.path.join(self.dir, "registry.json")

    def test_versions_count_up_and_entries_are_candidates(self):
        a = registry.record_candidate(self.reg, "alert", self.onnx, {"pr_auc": 0.3})
        b = registry.record_candidate(self.reg, "alert", self.onnx, {"pr_auc": 0.31})
        c = registry.record_candidate(self.reg, "other", self.onnx, {"pr_auc": 0.2})
        self.assertEqual((a["version"], b["version"], c["version"]), (1, 2, 1))
        reg = json.load(open(self.reg))
        self.assertEqual(len(reg["models"]), 3)
        self.assertTrue(all(m["stage"] == "candidate" for m in reg["models"]))
        self.assertEqual(reg["models"][1]["metrics"]["pr_auc"], 0.31)
        self.assertEqual(reg["models"][0]["sha256"],
                         hashlib.sha256(b"not really onnx but bytes to hash").hexdigest())
        # The recorded file lives next to the registry, one per version.
        self.assertEqual(reg["models"][1]["onnx"], os.path.join("versions", "alert-v2.onnx"))
        self.assertTrue(os.path.exists(os.path.join(self.dir, "versions", "alert-v2.onnx")))

    def test_corrupt_registry_is_refused(self):
        with open(self.reg, "w") as f:
            f.write("[1, 2")
        with self.assertRaises(registry.RegistryError) as cm:
            registry.record_candidate(self.reg, "alert", self.onnx, {})
        self.assertIn("not valid JSON", str(cm.exception))
        with open(self.reg, "w") as f:
            json.dump({"models": {}}, f)
        with self.assertRaises(registry.RegistryError):
            registry.load(self.reg)


class CliErrorsTest(unittest.TestCase):
    """The pipeline and the evaluator refuse bad input with a message and a non-zero exit."""

    def run_py(self, script, *args):
        return subprocess.run([sys.executable, os.path.join(common.MODELS, script)] + list(args),
                              capture_output=True, text=True)

    def test_pipeline_without_data(self):
        work = common.scratch("pipeline-nodata")
        p = self.run_py("pipeline.py", "--data", "/nonexistent/export", "--work", work)
        self.assertEqual(p.returncode, 1)
        self.assertIn("pipeline: error: /nonexistent/export: not a folder", p.stderr)

    def test_evaluate_bad_data(self):
        d = common.scratch("evaluate-bad")
        p = self.run_py("evaluate.py", "--data", d)
        self.assertEqual(p.returncode, 1)
        self.assertIn("manifest.json is missing", p.stderr)


if __name__ == "__main__":
    unittest.main()
