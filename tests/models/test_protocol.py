#!/usr/bin/python3
"""The evaluation protocol (docs/labels.md) as code: nothing is chosen on test (select and the
operating-point fit refuse any split but validation, the test split reads once), test is later
in time than validation, held-out symbols and markets never reach training, the intervals are
reproducible and contain their point value, the baselines follow their formulas, constant
features are dropped and inputs clipped, and the default decision follows its rule."""
import unittest

import common
import numpy as np
import torch

import baselines
import intervals
import protocol
import study
import task_gate
from nets import build_model


def two_markets():
    a = common.make_synth(common.scratch("proto_a"), symbols=2, rows=2400, seed=3, event_gap=200)
    b1 = common.make_synth(common.scratch("proto_b1"), symbols=1, rows=1800, seed=4, event_gap=200)
    b2 = common.make_synth(common.scratch("proto_b2"), symbols=1, rows=1800, seed=5, event_gap=200)
    return protocol.load_market("A", [a]), protocol.load_market("B", [b1, b2])


class ProtocolTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = two_markets()

    def test_selection_and_threshold_read_validation_only(self):
        st = protocol.Study([self.a, self.b])
        va = st.validation()
        scores = {"x": va.column("zscore"), "y": va.column("rule_score")}
        best, values = protocol.select(scores, va)
        self.assertIn(best, scores)
        self.assertEqual(values[best], max(values.values()))
        op = protocol.fit_operating_point(va, scores["x"])
        self.assertEqual(op["fitted_on"], "validation")
        self.assertLessEqual(op["validation_false_alerts"], va.symbol_hours())
        for other in (st.train(), st.test()):
            s = {"x": other.column("zscore")}
            with self.assertRaisesRegex(protocol.ProtocolError, "validation split only"):
                protocol.select(s, other)
            with self.assertRaisesRegex(protocol.ProtocolError, "validation split only"):
                protocol.fit_operating_point(other, s["x"])
        with self.assertRaisesRegex(protocol.ProtocolError, "validation split only"):
            protocol.select(scores, va.column("labels"))  # a bare array is no validation split

    def test_the_test_split_is_read_once(self):
        st = protocol.Study([self.a])
        self.assertGreater(len(st.test()), 0)
        with self.assertRaisesRegex(protocol.ProtocolError, "already read"):
            st.test()

    def test_test_is_later_in_time_than_validation_and_validation_than_train(self):
        # Market B spans two exports (two "days"): the split runs over their trading time laid
        # end to end, so test is the end of the second day.
        for m in (self.a, self.b):
            for k in range(2):
                self.assertTrue((m.split[:-1] <= m.split[1:]).all() or m.name == "B")
        b = self.b
        day = np.r_[0, np.flatnonzero(np.diff(b.end_ts_ns) < 0) + 1, b.end_ts_ns.size]
        second = np.arange(day[1], day[2])
        self.assertTrue((b.split[:day[1]] == 0).all(), "the first day is all train")
        self.assertEqual(set(np.unique(b.split[second])), {0, 1, 2})
        v, t = second[b.split[second] == 1], second[b.split[second] == 2]
        self.assertLess(b.end_ts_ns[v].max(), b.end_ts_ns[t].min())
        # Purged: no train or validation row's label horizon reaches the next split.
        st = protocol.Study([b])
        for split, nxt in ((st.train(), 1), (st.validation(), 2)):
            (_, rows), = split.parts
            first_next = b.end_ts_ns[second][b.split[second] == nxt].min()
            self.assertTrue((b.end_ts_ns[rows[rows >= day[1]]] + b.horizon_s * 1e9
                             < first_next).all())

    def test_held_out_symbols_and_markets_never_reach_training(self):
        held = self.a.symbols[1]
        st = protocol.Study([self.a, self.b], exclude_symbols=[held])
        for split in (st.train(), st.validation(), st.test()):
            self.assertNotIn(held, set(split.symbol_names()))
        out = st.held_out()
        self.assertEqual(set(out.symbol_names()), {held})
        self.assertEqual(len(out), int((self.a.symbol == 1).sum()))
        lomo = protocol.Study([self.a, self.b], exclude_markets=["B"])
        self.assertEqual(set(lomo.train().market_names()), {"A"})
        self.assertEqual(set(lomo.held_out().market_names()), {"B"})
        with self.assertRaisesRegex(protocol.ProtocolError, "holds nothing out"):
            protocol.Study([self.a]).held_out()


class IntervalTest(unittest.TestCase):
    def test_block_bootstrap_is_seeded_and_brackets_the_point_value(self):
        a, _ = two_markets()
        st = protocol.Study([a])
        te = st.test()
        score = te.column("zscore")
        r1 = intervals.split_metrics(te, score, threshold=float(np.quantile(score, 0.99)))
        r2 = intervals.split_metrics(te, score, threshold=float(np.quantile(score, 0.99)))
        self.assertEqual(r1, r2)
        for key in ("pr_auc", "roc_auc"):
            c = r1["all"][key]
            self.assertLessEqual(c["lo"], c["value"] + 1e-12)
            self.assertGreaterEqual(c["hi"], c["value"] - 1e-12)
            self.assertLess(c["lo"], c["hi"])
        self.assertIn(f"symbol:{a.symbols[0]}", r1)
        self.assertEqual(r1["all"]["events"], sum(r1[f"symbol:{s}"]["events"] for s in a.symbols))

    def test_budget_metrics_at_a_fixed_threshold(self):
        # One symbol, 5 s windows; an event at 100 s labels windows ending 45..95 s; the score
        # crosses 0.9 at 70 s (30 s ahead) and once falsely at 150 s.
        S = 10**9
        end = np.arange(0, 200, 5, dtype=np.int64) * S
        y = (end >= 45 * S) & (end < 100 * S)
        ev = np.where(y, 100 * S, -1)
        score = np.zeros(end.size, np.float32)
        score[(end >= 70 * S) & (end < 100 * S)] = 0.95
        score[30] = 0.95
        m = intervals.metrics_with_intervals(score, y, np.zeros(end.size, np.int32), end, ev,
                                             np.full(end.size, "X"), 5.0, 60.0, 0.9)
        self.assertEqual((m["events"], m["events_caught"], m["alerts"], m["false_alerts"]),
                         (1, 1, 2, 1))
        self.assertAlmostEqual(m["median_lead_s"]["value"], 30.0)
        self.assertEqual(m["precision"]["value"], 0.5)
        self.assertAlmostEqual(m["false_alerts_per_symbol_hour"]["value"], 1 / (40 * 5 / 3600))


class BaselineAndFeatureTest(unittest.TestCase):
    def test_ret60_is_the_return_in_units_of_its_own_volatility(self):
        a, _ = two_markets()
        st = protocol.Study([a])
        va = st.validation()
        last = va.windows()[:, -1, :]
        got = baselines.score_baseline("ret60", va)
        want = np.abs(last[:, 2]) / (np.maximum(last[:, 5], 0.5) * np.sqrt(60))
        np.testing.assert_allclose(got, want, rtol=1e-5)
        np.testing.assert_array_equal(baselines.score_baseline("volume_z", va), last[:, 7])
        with self.assertRaisesRegex(ValueError, "validation"):
            baselines.FittedBaseline("logreg").fit(va)  # fitted baselines train on train only
        lr = baselines.FittedBaseline("logreg").fit(st.train())
        self.assertEqual(lr.score(va).shape, (len(va),))

    def test_constant_features_are_dropped_and_inputs_clipped(self):
        torch.manual_seed(0)
        model = build_model({"kind": "gru", "hidden": 8, "clip": 8.0}, 20).eval()
        mean, std = np.zeros(20), np.ones(20)
        std[[16, 17]] = 0.0  # always 0 in training (dist_limit_* on LOBSTER)
        self.assertEqual(model.norm.set_stats(mean, std), [16, 17])
        x = torch.randn(4, 30, 20)
        y = x.clone()
        y[:, :, 16] = 1e5  # another market's value of the constant feature
        with torch.no_grad():
            self.assertTrue(torch.equal(model(x), model(y)))
            z = model.norm(x * 1e6)
        self.assertLessEqual(float(z.abs().max()), 8.0)


class UnitFreeRuleScoreTest(unittest.TestCase):
    def test_tail_surprise_is_causal_and_matches_counting(self):
        rng = np.random.default_rng(0)
        v = rng.integers(0, 20, 1500).astype(float)
        got = baselines.causal_tail_surprise(v, chunk=97)
        want = [0.0 if i < baselines.RANK_MIN_HISTORY else
                -np.log10(((v[:i] >= v[i]).sum() + 1) / (i + 1)) for i in range(v.size)]
        np.testing.assert_allclose(got, want, atol=1e-12)
        w = v.copy()
        w[1000:] = 99.0  # the future never changes an earlier score
        np.testing.assert_array_equal(baselines.causal_tail_surprise(w)[:1000], got[:1000])

    def test_the_score_is_unchanged_by_units_and_comparable_across_symbols(self):
        a, _ = two_markets()
        before = baselines.score_baseline("rules_rank", protocol.Study([a]).validation())
        self.assertGreater(float(before.max()), 1.0)  # an injected event is a rare value
        b, _ = two_markets()
        b.windows = np.array(b.windows)
        b.windows[:, :, 12] *= 100.0  # spread in ticks of a 100x smaller tick
        b.windows[:, :, 7] = b.windows[:, :, 7] * 1e3 + 5.0  # any increasing map of a quantity
        after = baselines.score_baseline("rules_rank", protocol.Study([b]).validation())
        np.testing.assert_allclose(after, before, atol=1e-6)
        # Scores are tail probabilities: for each symbol the same scale, whatever its units.
        self.assertLessEqual(float(before.max()), np.log10(len(a)) + 1e-9)


class TaskGateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a, cls.b = two_markets()

    def test_the_gate_reads_validation_only_and_states_both_numbers(self):
        st = protocol.Study([self.a, self.b])
        va = st.validation()
        y = va.column("labels").astype(np.float32)
        good = y + np.random.default_rng(1).random(y.size).astype(np.float32) * 0.5
        weak = baselines.score_baseline("zscore", va)
        g = task_gate.gate("detect", va, ("gru", good), ("alert-default v3 (zscore)", weak),
                           ("volume_z", baselines.score_baseline("volume_z", va)), reps=50)
        self.assertTrue(g["passed"], g["reason"])
        self.assertIn("alert-default v3", g["reason"])
        g = task_gate.gate("detect", va, ("gru", weak), ("alert-default v3 (ret60)", good),
                           ("volume_z", good), reps=50)
        self.assertFalse(g["passed"])
        self.assertIn("served default's and the best baseline's", g["reason"])
        self.assertIn(f"{g['served']['pr_auc']['value']:.3f}", g["reason"])
        for other in (st.train(), st.test()):
            with self.assertRaisesRegex(protocol.ProtocolError, "validation split only"):
                task_gate.gate("detect", other, ("gru", np.zeros(len(other))), None,
                               ("zscore", np.zeros(len(other))))


class DecisionTest(unittest.TestCase):
    def cell(self, v, lo=None, hi=None):
        return {"value": v, "lo": lo, "hi": hi}

    def det(self, pr, lo, hi, caught):
        return {"all": {"pr_auc": self.cell(pr, lo, hi), "events_caught": caught, "events": 10}}

    def test_neural_only_when_its_interval_is_above_and_it_catches_more(self):
        d = {"gru": self.det(0.30, 0.22, 0.38, 7), "ret60": self.det(0.20, 0.1, 0.3, 5)}
        self.assertEqual(study.decide(d, "gru", "ret60")["default"], "gru")
        d["gru"] = self.det(0.30, 0.18, 0.38, 7)  # interval reaches below the baseline's 0.20
        r = study.decide(d, "gru", "ret60")
        self.assertEqual(r["default"], "ret60")
        self.assertIn("interval is not above", r["why"])
        d["gru"] = self.det(0.30, 0.22, 0.38, 5)  # catches no more events
        r = study.decide(d, "gru", "ret60")
        self.assertEqual(r["default"], "ret60")
        self.assertIn("does not catch more events", r["why"])
        d["gru"] = self.det(0.30, 0.22, 0.38, 7)  # better on test, but refused on validation
        r = study.decide(d, "gru", "ret60", gate={"passed": False})
        self.assertEqual(r["default"], "ret60")
        self.assertIn("gate refused it on validation", r["why"])


if __name__ == "__main__":
    unittest.main()
