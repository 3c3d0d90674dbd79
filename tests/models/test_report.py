#!/usr/bin/python3
"""models/REPORT.md is generated from models/report.json, and the hand-written findings
(models/REPORT_NOTES.md) state no number that the generated part does not contain: a stale note
fails here."""
import json
import os
import re
import unittest

import common

NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+")


class ReportTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(common.MODELS, "REPORT.md")) as f:
            self.report = f.read()
        with open(os.path.join(common.MODELS, "REPORT_NOTES.md")) as f:
            self.notes = f.read().rstrip()
        with open(os.path.join(common.MODELS, "report.json")) as f:
            self.json = json.load(f)

    def test_notes_are_copied_in_after_the_generated_tables(self):
        self.assertTrue(self.report.rstrip().endswith(self.notes))

    def test_every_number_in_the_notes_is_in_the_generated_report(self):
        generated = self.report[:self.report.rfind(self.notes)]
        missing = sorted({n for n in NUMBER.findall(self.notes) if n not in generated})
        self.assertEqual(missing, [], "numbers in REPORT_NOTES.md that the generated report does "
                         "not contain (stale notes)")

    def test_json_has_the_fixed_schema(self):
        self.assertEqual(self.json["format_version"], 3)
        self.assertEqual(self.json["protocol"]["tasks"], ["detect", "forecast"])
        for task in self.json["protocol"]["tasks"]:
            pooled = self.json["evaluations"][f"{task}/pooled"]
            self.assertEqual(pooled["task"], task)
            self.assertEqual(pooled["measured_on"], "test")
            for det, m in pooled["results"]["all"].items():
                for key in ("pr_auc", "roc_auc", "recall", "precision",
                            "false_alerts_per_symbol_hour", "median_lead_s", "p10_lead_s"):
                    self.assertEqual(set(m[key]), {"value", "lo", "hi"}, f"{det} {key}")
                op = pooled["operating_points"][det]
                self.assertEqual(op["fitted_on"], "validation")
            self.assertIn(pooled["decision"]["default"], pooled["results"]["all"])
            self.assertIn(pooled["decision"]["served"], pooled["results"]["all"])
            for m in pooled["results"]["all"].values():  # forecast leads are ahead of the onset
                lead = m["p10_lead_s"]["value"]
                if task == "forecast" and lead is not None:
                    self.assertGreater(lead, 0)

    def test_the_served_default_is_the_registrys_prod_version(self):
        import registry
        prod = registry.prod(registry.load(os.path.join(common.MODELS, "registry.json")),
                             "alert-default")
        served = self.json["evaluations"]["detect/pooled"]["decision"]["served"]
        self.assertEqual(prod.get("detector", "neural"), served)
        with open(os.path.join(common.MODELS, "MODEL_CARD.md")) as f:
            self.assertIn(f"**{served}**", f.read())


if __name__ == "__main__":
    unittest.main()
