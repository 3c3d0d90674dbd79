#!/usr/bin/python3
"""export_onnx.py on small models of every kind (random weights, non-trivial normalization):
the ONNX passes onnx.checker, has x [batch, seq, 20] → prob [batch, 1] with dynamic axes, and
the ticksentry engine (build + infer) matches PyTorch within 1e-5 at several batch sizes and T.
A model whose weights change after export must fail the same check (the check can fail)."""
import os
import unittest

import common
import engine_cli
import export_onnx
import numpy as np
import onnx
import torch
from nets import build_model

SMALL = {"gru": {"hidden": 16, "clip": 3.0}, "lstm": {"hidden": 16}, "tcn": {"channels": 16},
         "transformer": {"d_model": 16, "heads": 2}}


def small_model(kind, seed):
    torch.manual_seed(seed)
    m = build_model(dict(kind=kind, dropout=0.0, **SMALL[kind]), 20)
    rng = np.random.default_rng(seed)
    m.norm.set_stats(rng.normal(0, 5, 20), rng.uniform(0.5, 20, 20))
    return m.eval()


class ExportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        try:
            cls.binary = engine_cli.find_binary()
        except engine_cli.EngineError as e:
            raise unittest.SkipTest(str(e))
        cls.dir = common.scratch("export")

    def test_every_kind_exports_and_matches_the_engine(self):
        for i, kind in enumerate(SMALL):
            with self.subTest(kind=kind):
                model = small_model(kind, 10 + i)
                path = os.path.join(self.dir, f"{kind}.onnx")
                proto = export_onnx.export(model, 20, path)
                x = proto.graph.input[0].type.tensor_type.shape.dim
                self.assertEqual((x[0].dim_param != "", x[1].dim_param != "", x[2].dim_value),
                                 (True, True, 20))
                self.assertEqual(proto.graph.output[0].name, "prob")
                # Raw-scale inputs: the normalization must happen inside the graph.
                cases = [c * 10.0 + 3.0 for c in export_onnx.check_inputs(20, None, seed=i)]
                res = export_onnx.engine_check(model, path, cases, self.binary)
                self.assertEqual(sorted((r["batch"], r["seq"]) for r in res),
                                 sorted(export_onnx.CHECK_SHAPES))
                self.assertLessEqual(max(r["max_abs_diff"] for r in res), 1e-5)
                self.assertLess(os.path.getsize(path), 1 << 20)

    def test_mismatch_is_caught(self):
        model = small_model("gru", 3)
        path = os.path.join(self.dir, "mismatch.onnx")
        export_onnx.export(model, 20, path)
        with torch.no_grad():
            model.head.bias += 0.5  # PyTorch now differs from the exported graph
        cases = export_onnx.check_inputs(20, None)
        with self.assertRaises(export_onnx.ExportError) as cm:
            export_onnx.engine_check(model, path, cases, self.binary)
        self.assertIn("engine vs PyTorch", str(cm.exception))

    def test_cli_reports_a_missing_checkpoint(self):
        self.assertEqual(export_onnx.main(["--checkpoint", "/nonexistent/model.pt", "--out",
                                           os.path.join(self.dir, "x.onnx")]), 1)

    def test_checker_runs_on_the_shipped_model(self):
        shipped = os.path.join(common.MODELS, "default.onnx")
        if not os.path.exists(shipped):
            self.skipTest("no shipped model yet")
        proto = onnx.load(shipped)
        onnx.checker.check_model(proto, full_check=True)
        self.assertEqual([i.name for i in proto.graph.input], ["x"])
        self.assertLess(os.path.getsize(shipped), 1 << 20)


if __name__ == "__main__":
    unittest.main()
