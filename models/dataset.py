"""Loading and splitting a feature export (the dataset contract of `ticksentry features --export`).

An export folder holds windows.npy [N, T, F] float32, labels.npy [N] uint8, symbol.npy [N] int32,
end_ts_ns.npy / event_ts_ns.npy [N] int64, rule_score.npy / zscore.npy [N] float32 and
manifest.json; the two tasks' labels (docs/labels.md) in labels_detect.npy / labels_forecast.npy
with event_ts_detect_ns.npy / event_ts_forecast_ns.npy. load_export(path, task=...) reads the
task's pair in place of labels / event_ts_ns ("any": the joint training label). It checks every file against the contract and raises DatasetError with
a message that names the file and what is wrong; nothing here aborts on bad input.

Splits are by time, never shuffled across time: with [t0, t1] = manifest "time_range_ns", a row
whose window ends at e belongs to
    train       e <  t0 + 0.70 (t1 - t0)
    validation  t0 + 0.70 (t1 - t0) <= e < t0 + 0.85 (t1 - t0)
    test        e >= t0 + 0.85 (t1 - t0)
(docs/labels.md states the same rule; `ticksentry eval --split test` uses it too).
"""
import json
import os
from dataclasses import dataclass, field

import numpy as np

FEATURE_COUNT = 20
WINDOW_MIN, WINDOW_MAX = 30, 120
SPLIT_TRAIN, SPLIT_VAL = 0.70, 0.85  # cumulative fractions of the time range
SPLITS = ("train", "val", "test")

# file name → (dtype, rank)
_ARRAYS = {
    "windows": (np.float32, 3),
    "labels": (np.uint8, 1),
    "symbol": (np.int32, 1),
    "end_ts_ns": (np.int64, 1),
    "event_ts_ns": (np.int64, 1),
    "rule_score": (np.float32, 1),
    "zscore": (np.float32, 1),
}


TASKS = ("any", "detect", "forecast")
# Features the feature engine still computes in absolute units (column: why). Models leave them
# out (weight 0, like a constant feature), so that no model output changes with the units of
# prices or sizes (docs/labels.md "Inputs"; tests/models/test_units.py checks both).
UNIT_DEPENDENT_FEATURES = {
    12: "spread_ticks: ticks of the reader's fixed tick (LOBSTER $0.01): prices x 100 give x 100",
    13: "microprice_dev_ticks: the same tick unit",
    19: "large_trade_ratio: large = an absolute notional / share count",
}


class DatasetError(ValueError):
    """A feature export that does not follow the dataset contract."""


@dataclass
class Dataset:
    path: str
    manifest: dict
    windows: np.ndarray      # [N, T, F] float32 (memory-mapped)
    labels: np.ndarray       # [N] uint8
    symbol: np.ndarray       # [N] int32
    end_ts_ns: np.ndarray    # [N] int64
    event_ts_ns: np.ndarray  # [N] int64
    rule_score: np.ndarray   # [N] float32
    zscore: np.ndarray       # [N] float32
    symbols: list = field(default_factory=list)
    task: str = "any"

    @property
    def window(self):
        return int(self.windows.shape[1])

    @property
    def horizon_s(self):
        return float(self.manifest.get("label", {}).get("horizon_s", 0.0))

    def __len__(self):
        return int(self.labels.shape[0])


def _load_array(path, name):
    fn = os.path.join(path, name + ".npy")
    if not os.path.exists(fn):
        raise DatasetError(f"{path}: {name}.npy is missing")
    try:
        arr = np.load(fn, mmap_mode="r" if name == "windows" else None, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise DatasetError(f"{fn}: not a readable .npy file ({e})") from e
    dtype, rank = _ARRAYS[name]
    if arr.dtype != dtype:
        raise DatasetError(f"{fn}: dtype {arr.dtype}, the contract says {np.dtype(dtype)}")
    if arr.ndim != rank:
        raise DatasetError(f"{fn}: rank {arr.ndim} (shape {arr.shape}), the contract says {rank}")
    return arr


def _task_arrays(path, task):
    """(labels, event_ts_ns) of `task` from an export folder."""
    out = []
    for name, dtype in ((f"labels_{task}", np.uint8), (f"event_ts_{task}_ns", np.int64)):
        fn = os.path.join(path, name + ".npy")
        if not os.path.exists(fn):
            raise DatasetError(f"{path}: {name}.npy is missing (an export older than the "
                               f"{task} task: export it again with `ticksentry features`)")
        arr = np.load(fn, allow_pickle=False)
        if arr.dtype != dtype or arr.ndim != 1:
            raise DatasetError(f"{fn}: {arr.dtype} rank {arr.ndim}, the contract says "
                               f"{np.dtype(dtype)} rank 1")
        out.append(arr)
    return out


def load_export(path, check_finite=True, task="any"):
    """Loads and checks one export folder; raises DatasetError on any contract violation.
    task: "any" (labels.npy), "detect" or "forecast" (that task's labels and event times)."""
    if task not in TASKS:
        raise DatasetError(f"unknown task {task!r} (known: {', '.join(TASKS)})")
    if not os.path.isdir(path):
        raise DatasetError(f"{path}: not a folder (expected a `ticksentry features --export` output)")
    mpath = os.path.join(path, "manifest.json")
    if not os.path.exists(mpath):
        raise DatasetError(f"{path}: manifest.json is missing")
    try:
        with open(mpath) as f:
            manifest = json.load(f)
    except ValueError as e:
        raise DatasetError(f"{mpath}: not valid JSON ({e})") from e
    if not isinstance(manifest, dict):
        raise DatasetError(f"{mpath}: top level is not an object")
    if manifest.get("format_version") != 1:
        raise DatasetError(f"{mpath}: format_version {manifest.get('format_version')!r}, "
                           "this trainer reads format_version 1")
    for key in ("symbols", "time_range_ns", "window", "label", "count"):
        if key not in manifest:
            raise DatasetError(f"{mpath}: key \"{key}\" is missing")

    arrays = {name: _load_array(path, name) for name in _ARRAYS}
    if task != "any":
        arrays["labels"], arrays["event_ts_ns"] = _task_arrays(path, task)
    w = arrays["windows"]
    n, t, f = w.shape
    if f != FEATURE_COUNT:
        raise DatasetError(f"{path}/windows.npy: {f} features per row, the feature set has "
                           f"{FEATURE_COUNT}")
    if not WINDOW_MIN <= t <= WINDOW_MAX:
        raise DatasetError(f"{path}/windows.npy: window T={t} outside {WINDOW_MIN}..{WINDOW_MAX}")
    if manifest["window"] != t:
        raise DatasetError(f"{mpath}: window {manifest['window']} but windows.npy has T={t}")
    if manifest["count"] != n:
        raise DatasetError(f"{mpath}: count {manifest['count']} but windows.npy has {n} rows")
    names = manifest.get("feature_names")
    if names is not None and len(names) != f:
        raise DatasetError(f"{mpath}: {len(names)} feature_names for {f} columns")
    for name, arr in arrays.items():
        if name != "windows" and arr.shape[0] != n:
            raise DatasetError(f"{path}/{name}.npy: {arr.shape[0]} rows, windows.npy has {n}")
    if n == 0:
        raise DatasetError(f"{path}: the export holds no windows")
    labels = arrays["labels"]
    if labels.max() > 1:
        raise DatasetError(f"{path}/labels.npy: values other than 0 and 1 "
                           f"(max {int(labels.max())})")
    symbols = list(manifest["symbols"])
    sym = arrays["symbol"]
    if sym.min() < 0 or sym.max() >= len(symbols):
        raise DatasetError(f"{path}/symbol.npy: index out of range 0..{len(symbols) - 1} "
                           f"(min {int(sym.min())}, max {int(sym.max())})")
    end = arrays["end_ts_ns"]
    if np.any(np.diff(end) < 0):
        raise DatasetError(f"{path}/end_ts_ns.npy: rows are not ordered by end_ts_ns")
    tr = manifest["time_range_ns"]
    if not (isinstance(tr, list) and len(tr) == 2 and tr[0] < tr[1]):
        raise DatasetError(f"{mpath}: time_range_ns {tr!r} is not [first, last] with first < last")
    ev = arrays["event_ts_ns"]
    if np.any((labels == 1) & (ev < 0)):
        raise DatasetError(f"{path}/event_ts_ns.npy: a positive row has no event time (-1)")
    if check_finite:
        # Chunked so a large memory-mapped export is never read at once.
        bad = 0
        for s in range(0, n, 65536):
            bad += int(np.count_nonzero(~np.isfinite(w[s:s + 65536])))
        if bad:
            raise DatasetError(f"{path}/windows.npy: {bad} non-finite values (NaN or inf)")
        for name in ("rule_score", "zscore"):
            if not np.all(np.isfinite(arrays[name])):
                raise DatasetError(f"{path}/{name}.npy: non-finite values")
    return Dataset(path=path, manifest=manifest, symbols=symbols, task=task, **arrays)


def split_of(end_ts_ns, manifest):
    """Split name per row: 0 train, 1 validation, 2 test (the C++ evaluator's arithmetic:
    x = end - first, in doubles, against 0.70 and 0.85 of the span)."""
    t0, t1 = manifest["time_range_ns"]
    span = float(t1 - t0)
    x = (np.asarray(end_ts_ns, dtype=np.int64) - t0).astype(np.float64)
    return np.where(x < SPLIT_TRAIN * span, 0, np.where(x < SPLIT_VAL * span, 1, 2))


def split_bounds_ns(manifest):
    """(train_end, val_end): the two time boundaries of the 70/15/15 split, ns (approximate to
    1 ns; split_of() is the rule)."""
    t0, t1 = manifest["time_range_ns"]
    span = t1 - t0
    return t0 + int(SPLIT_TRAIN * span), t0 + int(SPLIT_VAL * span)


def split_masks(ds):
    """Boolean masks {train, val, test} over the rows, by the window's end time."""
    s = split_of(ds.end_ts_ns, ds.manifest)
    return {"train": s == 0, "val": s == 1, "test": s == 2}


def window_seconds(ds):
    """Seconds of one symbol's data a window stands for: stride x row interval."""
    return float(ds.manifest.get("stride", 1)) * float(ds.manifest.get("row_interval_ns", 1e9)) / 1e9
