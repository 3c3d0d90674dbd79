#!/usr/bin/python3
"""Per-market operating points (models/market_ops.py): rows go to the group serving puts their
symbol in; a group is fitted on its own validation rows or, with too little validation data,
keeps the pooled threshold; the prod entry of models/registry.json carries a threshold for every
group of models/configs/market_groups.toml; and serving applies them: `ticksentry replay` with
the shipped registry and those groups logs each group's registry threshold and judges every
model alert on a Bitstamp day by the crypto group's threshold (not the configured 0.9). The
serving check needs TICKSENTRY_BIN (set by ctest) and the real data; it skips otherwise."""
import json
import os
import shutil
import subprocess
import unittest

import common
import numpy as np

import engine_cli
import market_ops
import protocol
import registry

REGISTRY = os.path.join(common.MODELS, "registry.json")


class GroupsTest(unittest.TestCase):
    def test_symbols_go_to_the_group_serving_gives_them(self):
        groups = market_ops.load_groups()
        self.assertEqual([g["name"] for g in groups], ["crypto", "us", "sh", "sz"])
        want = {"BITSTAMP:BTCUSD": "crypto", "BINANCE:BTCUSDT": "crypto", "AAPL": "us",
                "600519.SH": "sh", "600000.SH": "sh", "000001.SZ": "sz", "300918.SZ": "sz",
                "430047.BJ": None}
        for sym, g in want.items():
            self.assertEqual(market_ops.group_of(sym, groups), g, sym)


def synth_market(name, symbol, hours, events, seed):
    """A market of one symbol: 5 s windows, `events` onsets, scores high on the event rows."""
    rng = np.random.default_rng(seed)
    n = int(hours * 3600 / 5)
    labels = np.zeros(n, np.uint8)
    end = np.arange(n, dtype=np.int64) * 5_000_000_000 + 1_700_000_000_000_000_000
    event_ts = np.zeros(n, np.int64)
    for k in np.linspace(n * 0.75, n * 0.84, events).astype(int) if events else []:
        labels[k:k + 3] = 1
        event_ts[k:k + 3] = end[k + 2]
    split = np.where(np.arange(n) < 0.7 * n, 0, np.where(np.arange(n) < 0.85 * n, 1, 2))
    score = rng.uniform(0, 0.5, n).astype(np.float32)
    score[labels == 1] = 0.9
    m = protocol.Market(name=name, windows=np.zeros((n, 1, 1), np.float32), labels=labels,
                        symbols=[f"{name}:{symbol}"], symbol=np.zeros(n, np.int32), end_ts_ns=end,
                        event_ts_ns=event_ts, rule_score=score, zscore=score, split=split,
                        purged=np.zeros(n, bool), window_s=5.0, horizon_s=60.0, label={},
                        feature_names=[], task="detect")
    return m, score


class FitTest(unittest.TestCase):
    def test_a_group_without_validation_data_keeps_the_pooled_threshold(self):
        big, s1 = synth_market("lobster", "AAPL", 30, 4, 1)
        small, s2 = synth_market("bitstamp", "BITSTAMP:BTCUSD", 6, 0, 2)  # 0.9 h validation
        none, s3 = synth_market("szse", "000001.SZ", 30, 0, 3)
        study = protocol.Study([big, small, none])
        va = study.validation()
        score = np.concatenate([s[m.split == 1] for m, s in ((big, s1), (small, s2), (none, s3))])
        fits = market_ops.fit_groups(va, score, market_ops.load_groups(), 0.42)
        self.assertTrue(fits["us"]["fitted"])
        self.assertNotEqual(fits["us"]["threshold"], 0.42)
        self.assertLessEqual(fits["us"]["validation_false_alerts"], 1.0 * 4.5)
        self.assertEqual(fits["crypto"]["threshold"], 0.42)
        self.assertIn("symbol-hours", fits["crypto"]["why"])
        self.assertEqual(fits["sz"]["threshold"], 0.42)
        self.assertIn("no validation event", fits["sz"]["why"])
        self.assertEqual(fits["sh"]["validation_windows"], 0)

    def test_the_fit_refuses_test_rows(self):
        big, s1 = synth_market("lobster", "AAPL", 30, 4, 1)
        te = protocol.Study([big]).test()
        with self.assertRaises(protocol.ProtocolError):
            market_ops.fit_groups(te, s1[big.split == 2], market_ops.load_groups(), 0.42)


class RegistryTest(unittest.TestCase):
    def test_prod_carries_a_threshold_for_every_group(self):
        prod = registry.prod(registry.load(REGISTRY), "alert-default")
        op = prod["operating_point"]
        names = [g["name"] for g in market_ops.load_groups()]
        self.assertEqual(sorted(op["groups"]), sorted(names))
        for g, t in op["groups"].items():
            self.assertTrue(0 < t <= 1, g)
            fit = op["group_fits"][g]
            self.assertEqual(fit["threshold"], t)
            if not fit["fitted"]:
                self.assertEqual(t, op["threshold"], f"{g} fell back: the pooled threshold")


class ServingTest(unittest.TestCase):
    def test_replay_judges_alerts_by_the_group_threshold(self):
        self.replay_judged_by_group_thresholds(groups_in_config=True)

    def test_without_config_groups_serving_takes_the_registrys(self):
        # The config declares no [[model.groups]]: serving reads the operating point's
        # groups_config (relative to the registry) and still applies every group's threshold.
        log = self.replay_judged_by_group_thresholds(groups_in_config=False)
        self.assertIn("symbol groups from", log)

    def replay_judged_by_group_thresholds(self, groups_in_config):
        try:
            binary = engine_cli.find_binary()
        except engine_cli.EngineError as e:
            self.skipTest(str(e))
        data = os.environ.get("TICKSENTRY_DATA_DIR") or os.path.join(common.REPO, "..", "shared",
                                                                     "data")
        capture = os.path.join(data, "crypto/bitstamp-l3-20150501/2015-05-01.log.gz")
        if not os.path.exists(capture):
            self.skipTest(f"{capture} missing")
        d = common.scratch("market_ops_serving" + ("" if groups_in_config else "_registry_groups"))
        prod = registry.prod(registry.load(REGISTRY), "alert-default")
        os.makedirs(os.path.join(d, "versions"))
        shutil.copy(REGISTRY, os.path.join(d, "registry.json"))
        shutil.copy(os.path.join(common.MODELS, prod["onnx"]), os.path.join(d, prod["onnx"]))
        groups_config = prod["operating_point"]["groups_config"]
        os.makedirs(os.path.dirname(os.path.join(d, groups_config)), exist_ok=True)
        shutil.copy(os.path.join(common.MODELS, groups_config), os.path.join(d, groups_config))
        with open(market_ops.DEFAULT_GROUPS) as f:
            groups = f.read() if groups_in_config else ""
        cfg = os.path.join(d, "ticksentry.toml")
        with open(cfg, "w") as f:
            f.write(f'[model]\nregistry = "{d}/registry.json"\nname = "alert-default"\n'
                    'threshold = 0.9\n' + groups)
        alerts = os.path.join(d, "alerts.jsonl")
        p = subprocess.run([binary, "replay", "--config", cfg, "--format", "bitstamp-l3", capture,
                            "--no-stdout", "--no-notify", "--jsonl", alerts, "--audit-db", ""],
                           capture_output=True, text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        log = p.stdout + p.stderr
        for g, t in prod["operating_point"]["groups"].items():
            self.assertIn(f"group {g} {t:.6f}", log)
        judged = []
        with open(alerts) as f:
            for line in f:
                a = json.loads(line)
                if isinstance(a.get("model"), dict) and a["symbol"] == "BITSTAMP:BTCUSD":
                    judged.append(a["model"]["threshold"])
        self.assertGreater(len(judged), 0, "no model alert on the Bitstamp day")
        want = prod["operating_point"]["groups"]["crypto"]
        for t in judged:
            self.assertAlmostEqual(t, want, places=6)
        return log

if __name__ == "__main__":
    unittest.main()
