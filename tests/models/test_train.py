#!/usr/bin/python3
"""Training smoke run on a tiny synthetic export: a checkpoint and a history come out, the same
seed gives the same weights, and bad configs are refused with a clear message."""
import json
import os
import subprocess
import sys
import unittest

import common
import torch
import train

TINY = """
[data]
max_train_windows = 400
[model]
kind = "{kind}"
hidden = 8
d_model = 8
heads = 2
channels = 8
dilations = [1, 2]
[train]
seed = 4
epochs = 2
batch_size = 128
patience = 2
threads = 1
"""


class TrainTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = common.scratch("train")
        cls.data = common.make_synth(os.path.join(cls.dir, "data"), rows=2000, stride=8)

    def config(self, kind, text=None):
        path = os.path.join(self.dir, f"{kind}.toml")
        with open(path, "w") as f:
            f.write(text if text is not None else TINY.format(kind=kind))
        return path

    def run_train(self, cfg, out):
        return subprocess.run([sys.executable, os.path.join(common.MODELS, "train.py"),
                               "--config", cfg, "--data", self.data, "--out", out],
                              capture_output=True, text=True)

    def test_gru_smoke_is_reproducible(self):
        cfg = self.config("gru")
        a, b = os.path.join(self.dir, "a"), os.path.join(self.dir, "b")
        pa = self.run_train(cfg, a)
        self.assertEqual(pa.returncode, 0, pa.stderr)
        self.assertIn("epoch   1/2", pa.stdout)  # progress shown
        summary = json.load(open(os.path.join(a, "train.json")))
        self.assertGreaterEqual(len(summary["history"]), 1)
        self.assertGreater(summary["pos_weight"], 1.0)  # imbalance handled
        self.assertIsNotNone(summary["best_val_pr_auc"])
        pb = self.run_train(cfg, b)
        self.assertEqual(pb.returncode, 0, pb.stderr)
        sa = torch.load(os.path.join(a, "model.pt"))["state_dict"]
        sb = torch.load(os.path.join(b, "model.pt"))["state_dict"]
        for k in sa:
            self.assertTrue(torch.equal(sa[k], sb[k]), f"{k} differs between two seeded runs")
        # Normalization baked in: the stats are the training split's, not identity.
        self.assertFalse(torch.allclose(sa["norm.mean"], torch.zeros_like(sa["norm.mean"])))

    def test_every_kind_trains(self):
        for kind in ("lstm", "transformer", "tcn"):
            cfg = train.load_config(self.config(kind))
            cfg["train"]["epochs"] = 1
            _, summary = train.train(cfg, self.data, os.path.join(self.dir, kind), log=lambda s: None)
            self.assertEqual(len(summary["history"]), 1, kind)

    def test_bad_configs_are_refused(self):
        out = os.path.join(self.dir, "bad")
        p = self.run_train(self.config("bad1", "[train]\nepochz = 3\n"), out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown key train.epochz", p.stderr)
        p = self.run_train(self.config("bad2", "[train]\nepochs = 0\n"), out)
        self.assertIn("train.epochs must be a positive integer", p.stderr)
        p = self.run_train(self.config("bad3", "[model]\nkind = \"rnn\"\n"), out)
        self.assertEqual(p.returncode, 2)
        self.assertIn("model kind 'rnn' unknown", p.stderr)
        p = self.run_train(self.config("bad4", "[train\n"), out)
        self.assertIn("not valid TOML", p.stderr)
        p = subprocess.run([sys.executable, os.path.join(common.MODELS, "train.py"), "--config",
                            self.config("gru"), "--data", "/nonexistent", "--out", out],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("not a folder", p.stderr)


if __name__ == "__main__":
    unittest.main()
