#!/usr/bin/python3
"""models/REPORT.md is generated from models/report.json, the hand-written notes
(models/REPORT_NOTES.md) state no number at all (every number is generated, so none goes
stale), and report.json has the fixed schema: per evaluation, detector and metric a value with
its interval; the goal per evaluation and per data set; what more data would be needed."""
import json
import os
import re
import unittest

import common

NUMBER = re.compile(r"\d")


class ReportTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(common.MODELS, "REPORT.md")) as f:
            self.report = f.read()
        with open(os.path.join(common.MODELS, "REPORT_NOTES.md")) as f:
            self.notes = f.read().rstrip()
        with open(os.path.join(common.MODELS, "report.json")) as f:
            self.json = json.load(f)

    def test_the_report_is_exactly_what_report_py_writes_from_report_json(self):
        import report
        self.assertEqual("\n".join(report.render(self.json, common.MODELS)) + "\n", self.report,
                         "models/REPORT.md differs from what models/report.py renders from "
                         "models/report.json: edited by hand, or stale")

    def test_the_model_card_is_exactly_what_model_card_py_writes(self):
        import model_card
        import registry
        entry = registry.prod(registry.load(os.path.join(common.MODELS, "registry.json")),
                              "alert-default")
        with open(os.path.join(common.MODELS, "MODEL_CARD.md")) as f:
            self.assertEqual("\n".join(model_card.card(self.json, entry, "alert-default")) + "\n",
                             f.read(), "models/MODEL_CARD.md is not what models/model_card.py "
                             "writes from report.json and the registry")

    def test_notes_are_copied_in_after_the_generated_tables(self):
        self.assertTrue(self.report.rstrip().endswith(self.notes))

    def test_the_notes_state_no_number(self):
        digits = [line for line in self.notes.splitlines() if NUMBER.search(line)]
        self.assertEqual(digits, [], "REPORT_NOTES.md is written by hand: numbers belong in "
                         "the generated part (models/report.py)")

    def test_the_goal_is_judged_for_every_evaluation_and_data_set(self):
        goal = self.json["goal"]
        self.assertEqual(set(goal["evaluations"]), set(self.json["evaluations"]))
        for name, g in goal["evaluations"].items():
            if g["met"] is None:
                continue
            self.assertEqual(g["met"], not g["fails"], name)
            for key in ("recall", "false_alerts_per_symbol_hour", "precision", "pr_auc",
                        "median_lead_s", "p10_lead_s"):
                self.assertEqual(set(g[key]), {"value", "lo", "hi"}, f"{name} {key}")
            self.assertGreaterEqual(g["events_needed"]["needed"],
                                    self.json["data_needed"]["events_for_recall_pm_0_1"])
        measured = {(r["task"], r["dataset"]) for r in goal["datasets"]}
        for market, info in self.json["protocol"]["markets"].items():
            for ds in info["datasets"]:
                for task in self.json["protocol"]["tasks"]:
                    self.assertIn(f"| {task} | {ds} |", self.report, f"{ds} has no goal row")
                    if (task, ds) not in measured:
                        self.assertIn(f"| {task} | {ds} | – |", self.report)

    def test_markets_without_validation_events_are_named_with_what_follows(self):
        gaps = self.json["data_needed"]["no_validation_events"]
        for r in self.json["data_needed"]["markets"]:
            named = any(g["market"] == r["market"] and g["task"] == r["task"] for g in gaps)
            self.assertEqual(named, r["split_events"][1] == 0, r)
            if named:
                self.assertIn(f"**{r['market']}, {r['task']}**", self.report)

    def test_json_has_the_fixed_schema(self):
        self.assertEqual(self.json["format_version"], 4)
        for key in ("run", "evaluations", "goal", "data_needed", "market_operating_points"):
            self.assertIn(key, self.json)
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


class GoalArithmeticTest(unittest.TestCase):
    """The report's verdicts and data-need counts on hand-made numbers whose answers are known."""

    @staticmethod
    def row(events, caught, fa, lead=-2.0, lo=None, hi=None):
        c = lambda v, a=None, b=None: {"value": v, "lo": a, "hi": b}  # noqa: E731
        return {"events": events, "events_caught": caught, "symbol_hours": 10.0,
                "recall": c(caught / events if events else None, lo, hi),
                "false_alerts_per_symbol_hour": c(fa), "precision": c(0.5), "pr_auc": c(0.4),
                "median_lead_s": c(lead), "p10_lead_s": c(lead)}

    def test_each_condition_of_the_goal(self):
        import report
        above = {"interval_above_baseline": True}
        self.assertTrue(report.judge("detect", above, self.row(10, 6, 1.0))["met"])
        self.assertIn("recall", report.judge("detect", above, self.row(10, 5, 0.5))["fails"][0])
        self.assertIn("false alerts", report.judge("detect", above, self.row(10, 8, 1.5))["fails"][0])
        self.assertIn("lead", report.judge("forecast", above, self.row(10, 8, 0.5, 9.0))["fails"][0])
        self.assertTrue(report.judge("forecast", above, self.row(10, 8, 0.5, 10.0))["met"])
        self.assertFalse(report.judge("detect", {"interval_above_baseline": False},
                                      self.row(10, 8, 0.5))["met"])
        self.assertIsNone(report.judge("detect", above, self.row(0, 0, 0.0))["met"])

    def test_events_needed_for_a_recall_interval_of_a_tenth(self):
        import report
        self.assertEqual(report.EVENTS_FOR_PM_01, 92)  # 1.96^2 * 0.6 * 0.4 / 0.1^2 = 92.2
        # 20 events measured with an interval of +-0.2: four times the events for +-0.1.
        n = report.events_needed(self.row(20, 10, 0.5, lo=0.3, hi=0.7))
        self.assertAlmostEqual(n["from_interval"], 80.0)
        self.assertEqual(n["needed"], 92)
        n = report.events_needed(self.row(20, 10, 0.5, lo=0.1, hi=0.9))
        self.assertAlmostEqual(n["needed"], 320.0)
        self.assertIsNone(report.events_needed(self.row(20, 0, 0.5, lo=0.0, hi=0.0))["from_interval"])

    def test_symbol_hours_a_market_needs_and_its_missing_validation_events(self):
        import report
        ds = {"d1": {"symbols": ["m:A"], "split_symbol_hours": [7.0, 1.5, 1.5],
                     "split_events": {"detect": [18, 0, 2]}, "split_positives": {"detect": [1, 0, 1]}}}
        study = {"tasks": ["detect"], "markets": {"m": {"datasets": ds}}}
        (r,) = report.data_needed(study)
        self.assertAlmostEqual(r["events_per_symbol_hour"], 2.0)
        # 92 events in a test split that is 15 % of the time, at 2 events per symbol-hour.
        self.assertAlmostEqual(r["symbol_hours_needed"], 92 / 2.0 / 0.15)
        self.assertAlmostEqual(r["more_symbol_hours"], 92 / 2.0 / 0.15 - 10.0)
        (g,) = report.validation_gaps(study, {})
        self.assertEqual((g["market"], g["test_events"], g["held_out_events"]), ("m", 2, None))


if __name__ == "__main__":
    unittest.main()
