#!/usr/bin/python3
"""The export contract as the trainer reads it: a good export loads and splits 70/15/15 by
time; every kind of bad export is refused with a message that names the file and the fault."""
import json
import os
import unittest

import common
import numpy as np
from dataset import DatasetError, load_export, split_bounds_ns, split_masks


class DatasetTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.good = common.make_synth(common.scratch("good"))

    def corrupt(self, name, fn):
        """A copy of the good export with one file changed by fn(path)."""
        d = common.scratch(name)
        for f in os.listdir(self.good):
            with open(os.path.join(self.good, f), "rb") as src, \
                    open(os.path.join(d, f), "wb") as dst:
                dst.write(src.read())
        fn(d)
        return d

    def assertRefused(self, d, *fragments):
        with self.assertRaises(DatasetError) as cm:
            load_export(d)
        for frag in fragments:
            self.assertIn(frag, str(cm.exception))

    def test_good_export_loads_and_splits_by_time(self):
        ds = load_export(self.good)
        self.assertEqual(ds.windows.shape[1:], (30, 20))
        m = split_masks(ds)
        total = m["train"].astype(int) + m["val"].astype(int) + m["test"].astype(int)
        self.assertTrue(np.all(total == 1), "every row in exactly one split")
        # Splits follow time: every train row ends before every val row, val before test.
        self.assertLess(ds.end_ts_ns[m["train"]].max(), ds.end_ts_ns[m["val"]].min())
        self.assertLess(ds.end_ts_ns[m["val"]].max(), ds.end_ts_ns[m["test"]].min())
        b1, b2 = split_bounds_ns(ds.manifest)
        t0, t1 = ds.manifest["time_range_ns"]
        self.assertAlmostEqual((b1 - t0) / (t1 - t0), 0.70, places=6)
        self.assertAlmostEqual((b2 - t0) / (t1 - t0), 0.85, places=6)
        self.assertAlmostEqual(m["test"].mean(), 0.15, delta=0.02)

    def test_missing_file(self):
        d = self.corrupt("missing", lambda d: os.remove(os.path.join(d, "labels.npy")))
        self.assertRefused(d, "labels.npy is missing")

    def test_wrong_dtype(self):
        def f(d):
            y = np.load(os.path.join(d, "labels.npy"))
            np.save(os.path.join(d, "labels.npy"), y.astype(np.int64))
        self.assertRefused(self.corrupt("dtype", f), "labels.npy", "int64", "uint8")

    def test_window_out_of_range(self):
        def f(d):
            w = np.load(os.path.join(d, "windows.npy"))
            np.save(os.path.join(d, "windows.npy"), np.ascontiguousarray(w[:, :20, :]))
            m = json.load(open(os.path.join(d, "manifest.json")))
            m["window"] = 20
            json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
        self.assertRefused(self.corrupt("window", f), "T=20", "30..120")

    def test_wrong_feature_count(self):
        def f(d):
            w = np.load(os.path.join(d, "windows.npy"))
            np.save(os.path.join(d, "windows.npy"), np.ascontiguousarray(w[:, :, :19]))
        self.assertRefused(self.corrupt("features", f), "19 features")

    def test_rows_not_in_time_order(self):
        def f(d):
            e = np.load(os.path.join(d, "end_ts_ns.npy"))
            np.save(os.path.join(d, "end_ts_ns.npy"), e[::-1].copy())
        self.assertRefused(self.corrupt("order", f), "not ordered by end_ts_ns")

    def test_label_not_binary(self):
        def f(d):
            y = np.load(os.path.join(d, "labels.npy"))
            y[3] = 2
            np.save(os.path.join(d, "labels.npy"), y)
        self.assertRefused(self.corrupt("label", f), "values other than 0 and 1")

    def test_non_finite_feature(self):
        def f(d):
            w = np.load(os.path.join(d, "windows.npy"))
            w[5, 7, 3] = np.nan
            np.save(os.path.join(d, "windows.npy"), w)
        self.assertRefused(self.corrupt("nan", f), "1 non-finite")

    def test_count_mismatch(self):
        def f(d):
            s = np.load(os.path.join(d, "symbol.npy"))
            np.save(os.path.join(d, "symbol.npy"), s[:-1].copy())
        self.assertRefused(self.corrupt("count", f), "symbol.npy", "rows")

    def test_manifest_problems(self):
        def bad_json(d):
            open(os.path.join(d, "manifest.json"), "w").write("{not json")
        self.assertRefused(self.corrupt("badjson", bad_json), "not valid JSON")

        def wrong_version(d):
            m = json.load(open(os.path.join(d, "manifest.json")))
            m["format_version"] = 2
            json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
        self.assertRefused(self.corrupt("version", wrong_version), "format_version 2")

        def no_range(d):
            m = json.load(open(os.path.join(d, "manifest.json")))
            del m["time_range_ns"]
            json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
        self.assertRefused(self.corrupt("norange", no_range), "time_range_ns")

    def test_not_a_folder(self):
        self.assertRefused("/nonexistent/export", "not a folder")


if __name__ == "__main__":
    unittest.main()
