#!/usr/bin/python3
"""Data sets by name (models/datasets.py) and the event catalogue (models/events.py): a new data
set plugs in with one block; a bad block is refused naming the file; missing inputs and formats
this build cannot read are left out with the reason; the catalogue lists every onset of every
export with its exchange-local time, kind, size and split, and the data sets left out; the tasks'
labels are read by name and an export without them is refused with what to do."""
import json
import os
import unittest

import common
import numpy as np

import datasets
import events
from dataset import DatasetError, load_export


def write(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


class DatasetsTest(unittest.TestCase):
    def test_the_shipped_file_names_every_market_of_the_protocol(self):
        sets = datasets.load()
        self.assertTrue({"lobster", "sse", "szse", "bitstamp"} <= {d["market"] for d in sets})
        self.assertEqual(len({d["name"] for d in sets}), len(sets))

    def test_a_bad_block_is_refused_naming_the_file(self):
        tmp = common.scratch("datasets_bad")
        p = write(os.path.join(tmp, "d.toml"), '[[dataset]]\nname = "a"\nmarket = "m"\n')
        with self.assertRaisesRegex(datasets.DatasetsError, "d.toml.*format"):
            datasets.load(p)
        p = write(os.path.join(tmp, "e.toml"), '[[dataset]]\nname = "a"\nmarket = "m"\n'
                  'format = "x"\ninputs = ["a"]\n[[dataset]]\nname = "a"\nmarket = "m"\n'
                  'format = "x"\ninputs = ["b"]\n')
        with self.assertRaisesRegex(datasets.DatasetsError, "twice"):
            datasets.load(p)

    def test_missing_inputs_and_unknown_formats_are_left_out_with_the_reason(self):
        binary = os.environ.get("TICKSENTRY_BIN")
        if not binary or not os.path.exists(binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        tmp = common.scratch("datasets_left")
        os.makedirs(os.path.join(tmp, "data", "x"))
        write(os.path.join(tmp, "data", "x", "f.csv"), "a\n")
        sets = [{"name": "gone", "market": "m", "format": "lobster", "inputs": ["nope/*"]},
                {"name": "future", "market": "m", "format": "no-such-reader", "inputs": ["x/*"]}]
        left = datasets.export_all(sets, os.path.join(tmp, "data"), os.path.join(tmp, "out"),
                                   binary, log=lambda *_: None)
        self.assertIn("no file matches", left["gone"])
        self.assertIn("no reader for format 'no-such-reader'", left["future"])
        self.assertEqual(datasets.left_out(os.path.join(tmp, "out")), left)
        self.assertEqual(datasets.markets(sets, os.path.join(tmp, "out")), {})

    def test_the_catalogue_lists_every_onset_with_time_kind_size_and_split(self):
        tmp = common.scratch("events")
        out = os.path.join(tmp, "exports")
        d = common.make_synth(os.path.join(out, "syn-day"), symbols=2, rows=1200, seed=3)
        with open(os.path.join(d, "manifest.json")) as f:
            m = json.load(f)
        t0, t1 = m["time_range_ns"]
        m["label"].update(min_move_bps=10, settle_s=60)
        with open(os.path.join(d, "manifest.json"), "w") as f:
            json.dump(m, f)
        write(os.path.join(d, "onsets.csv"), "symbol,kind,ts_ns,size,unit\n"
              f"SYN0,price_move,{t0 + 60 * 10**9},-23.5,bps\n"
              f"SYN1,volume_shock,{t1 - 10 * 10**9},14.25,z\n")
        sets = [{"name": "syn-day", "market": "syn", "format": "x", "inputs": [], "tz": "Asia/Shanghai"},
                {"name": "later", "market": "syn", "format": "y", "inputs": [], "tz": "UTC"}]
        with open(os.path.join(out, "left_out.json"), "w") as f:
            json.dump({"later": "no reader yet"}, f)
        md = "\n".join(events.markdown(sets, out, "now"))
        self.assertIn("| syn-day | syn | SYN0, SYN1 |", md)
        self.assertIn("-23.5 bps in H", md)
        self.assertIn("volume z 14.2", md)
        # The first window ends at 14:30:29 UTC (T = 30); + 60 s, in Shanghai time (UTC+8).
        self.assertIn("2026-01-05 22:31:29", md)
        self.assertRegex(md, r"price_move \| -23.5 bps in H \| train \|")
        self.assertRegex(md, r"volume_shock \| volume z 14.2 \| test \|")
        self.assertIn("| later | syn | y | no reader yet |", md)
        self.assertIn("min_move_bps 10", md)

    def test_task_labels_are_read_by_name_and_required(self):
        d = common.make_synth(common.scratch("tasks"), symbols=1, rows=1200, seed=3)
        det, fc = load_export(d, task="detect"), load_export(d, task="forecast")
        self.assertTrue(np.array_equal(fc.labels, load_export(d).labels))
        self.assertFalse(np.any(det.labels.astype(bool) & fc.labels.astype(bool)))
        self.assertTrue(np.all(det.event_ts_ns[det.labels == 1] <= det.end_ts_ns[det.labels == 1]))
        self.assertTrue(np.all(fc.event_ts_ns[fc.labels == 1] > fc.end_ts_ns[fc.labels == 1]))
        os.remove(os.path.join(d, "labels_detect.npy"))
        with self.assertRaisesRegex(DatasetError, "labels_detect.npy is missing.*export it again"):
            load_export(d, task="detect")


class PhaseAwareLabelsOnRealData(unittest.TestCase):
    """The labels of docs/labels.md on the real Shanghai and Shenzhen data, through `ticksentry
    features --export` as `make model` runs it: no onset in a call auction, from the open's or
    the lunch reopen's first prices (within settle_s), in the lunch break or in the closing
    auction. Needs the data (../shared/data) and the binary (TICKSENTRY_BIN); skips otherwise."""

    SETS = ("sse-600519-20230201", "szse-5stocks-20220601")

    def test_no_onset_from_an_auction_a_reopen_or_a_break(self):
        import subprocess
        import zoneinfo
        from datetime import datetime
        binary = os.environ.get("TICKSENTRY_BIN")
        if not binary or not os.path.exists(binary):
            self.skipTest("TICKSENTRY_BIN is not set to a built ticksentry (run via ctest)")
        root = datasets.data_dir()
        sets = {d["name"]: d for d in datasets.load()}
        out = common.scratch("phases")
        checked = 0
        for name in self.SETS:
            ds = sets[name]
            try:
                inputs = datasets.resolve_inputs(ds, root)
            except datasets.DatasetsError as e:
                self.skipTest(f"{name}: {e}")
            dst = os.path.join(out, name)
            subprocess.run([binary, "features", "--export", dst, "--format", ds["format"], *inputs],
                           check=True, stdout=subprocess.DEVNULL)
            with open(os.path.join(dst, "manifest.json")) as f:
                settle = json.load(f)["label"]["settle_s"]
            tz = zoneinfo.ZoneInfo(ds["tz"])
            onsets = events.read_onsets(dst)
            self.assertGreater(len(onsets), 0, f"{name}: no onset at all")
            for r in onsets:
                t = datetime.fromtimestamp(r["ts_ns"] / 1e9, tz)
                s = t.hour * 3600 + t.minute * 60 + t.second + t.microsecond / 1e6
                at = f"{name}: {r['kind']} at {t:%H:%M:%S}"
                self.assertGreaterEqual(s, 9.5 * 3600 + settle, at + " (auction or the open's first prices)")
                self.assertFalse(11.5 * 3600 <= s < 13 * 3600 + settle, at + " (lunch or its reopen)")
                self.assertLess(s, 14 * 3600 + 57 * 60, at + " (closing auction)")
                checked += 1
        print(f"{checked} onsets checked")


if __name__ == "__main__":
    unittest.main()
