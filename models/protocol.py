"""The evaluation protocol of docs/labels.md, enforced by code.

A *market* is one or more `ticksentry features --export` folders of one venue (LOBSTER: one
export of three symbols; SSE 600519: one export per trading day). Its windows are split by
trading time: the exports' time ranges laid end to end (overnight gaps removed), the first 70 %
is train, the next 15 % validation, the last 15 % test, so the test split is always later in
time than validation (for one export this is exactly dataset.split_of and `ticksentry eval`).
Train and validation rows whose label horizon reaches into the next split are purged.

Access is restricted by type, so that nothing can be chosen on the test split:
  - Study.train(), Study.validation() hand out Split views of the train / validation rows;
  - select() and fit_operating_point() take a validation Split and raise ProtocolError for any
    other (tests/models/test_protocol.py asserts it);
  - Study.test() hands out the test rows once; a second call raises ProtocolError.
Leave-one-market-out and held-out-symbols evaluations read the held-out rows through
Study.held_out(), which refuses rows of a market or symbol that the model's training saw.
"""
import os
from dataclasses import dataclass

import numpy as np

from dataset import SPLIT_TRAIN, SPLIT_VAL, load_export, window_seconds

BUDGET_FALSE_PER_SYMBOL_HOUR = 1.0


class ProtocolError(RuntimeError):
    """A use of the data that the protocol forbids (selection on test, reading test twice)."""


@dataclass
class Market:
    """The windows of one market, exports concatenated in time order."""
    name: str
    windows: np.ndarray   # [N, T, F] float32
    labels: np.ndarray    # [N] uint8
    symbols: list         # names, "MARKET:SYMBOL" unique across markets
    symbol: np.ndarray    # [N] int32 index into symbols
    end_ts_ns: np.ndarray
    event_ts_ns: np.ndarray
    rule_score: np.ndarray
    zscore: np.ndarray
    split: np.ndarray     # [N] 0 train, 1 validation, 2 test
    purged: np.ndarray    # [N] bool: label horizon reaches into the next split
    window_s: float       # seconds of one symbol's data a window stands for
    horizon_s: float
    label: dict           # the first export's label parameters
    feature_names: list
    task: str = "any"     # whose labels: any (training label), detect, forecast
    datasets: tuple = ()  # the exports' folder names (data sets), in time order
    dataset: np.ndarray = None  # [N] int32 index into datasets

    def __len__(self):
        return int(self.labels.size)


def trading_time_split(ranges, end_ts_ns, export_of_row):
    """Split per row (0/1/2) by trading time: `ranges` [(t0, t1)] per export, in time order."""
    spans = np.array([float(t1 - t0) for t0, t1 in ranges])
    offset = np.r_[0.0, np.cumsum(spans)[:-1]]
    total = spans.sum()
    x = np.empty(end_ts_ns.size, dtype=np.float64)
    for k, (t0, _) in enumerate(ranges):
        m = export_of_row == k
        x[m] = offset[k] + (end_ts_ns[m] - t0).astype(np.float64)
    return np.where(x < SPLIT_TRAIN * total, 0, np.where(x < SPLIT_VAL * total, 1, 2)), x, total


def load_market(name, paths, task="any"):
    """A Market from export folders of one venue (ordered by their start time); labels and
    event times of `task` (dataset.TASKS)."""
    exports = sorted((load_export(p, task=task) for p in paths),
                     key=lambda d: d.manifest["time_range_ns"][0])
    if not exports:
        raise ValueError(f"market {name}: no export folders")
    symbols, parts = [], {k: [] for k in ("windows", "labels", "symbol", "end_ts_ns",
                                          "event_ts_ns", "rule_score", "zscore", "export")}
    for k, ds in enumerate(exports):
        if ds.window != exports[0].window:
            raise ValueError(f"market {name}: {ds.path} has T={ds.window}, "
                             f"{exports[0].path} T={exports[0].window}")
        remap = []
        for s in ds.symbols:
            full = f"{name}:{s}"
            if full not in symbols:
                symbols.append(full)
            remap.append(symbols.index(full))
        parts["windows"].append(np.asarray(ds.windows, dtype=np.float32))
        parts["symbol"].append(np.asarray(remap, np.int32)[ds.symbol])
        parts["export"].append(np.full(len(ds), k, np.int32))
        for key in ("labels", "end_ts_ns", "event_ts_ns", "rule_score", "zscore"):
            parts[key].append(np.asarray(getattr(ds, key)))
    cat = {k: np.concatenate(v) for k, v in parts.items()}
    ranges = [tuple(d.manifest["time_range_ns"]) for d in exports]
    split, x, total = trading_time_split(ranges, cat["end_ts_ns"], cat["export"])
    horizon = exports[0].horizon_s
    # Purge: a train (validation) row whose horizon reaches past the split's end.
    h = horizon * 1e9
    purged = ((split == 0) & (x + h >= SPLIT_TRAIN * total)) | \
             ((split == 1) & (x + h >= SPLIT_VAL * total))
    return Market(name=name, windows=cat["windows"], labels=cat["labels"], symbols=symbols,
                  symbol=cat["symbol"], end_ts_ns=cat["end_ts_ns"],
                  event_ts_ns=cat["event_ts_ns"], rule_score=cat["rule_score"],
                  zscore=cat["zscore"], split=split, purged=purged,
                  window_s=window_seconds(exports[0]), horizon_s=horizon,
                  label=exports[0].manifest.get("label", {}),
                  feature_names=exports[0].manifest.get("feature_names") or [], task=task,
                  datasets=tuple(os.path.basename(os.path.normpath(d.path)) for d in exports),
                  dataset=cat["export"])


@dataclass(frozen=True)
class Split:
    """Rows of one split of one or more markets. kind: train | validation | test | held_out."""
    kind: str
    parts: tuple  # ((Market, rows ndarray), ...)

    def windows(self):
        return np.concatenate([m.windows[r] for m, r in self.parts]) if self.parts else \
            np.zeros((0, 1, 1), np.float32)

    def column(self, key):
        return np.concatenate([getattr(m, key)[r] for m, r in self.parts])

    def symbol_names(self):
        """Per row, the "MARKET:SYMBOL" name."""
        return np.concatenate([np.asarray(m.symbols, dtype=object)[m.symbol[r]]
                               for m, r in self.parts])

    def market_names(self):
        return np.concatenate([np.full(r.size, m.name, dtype=object) for m, r in self.parts])

    def dataset_names(self):
        """Per row, the data set (export folder name) it comes from."""
        return np.concatenate([np.asarray(m.datasets, dtype=object)[m.dataset[r]]
                               if m.dataset is not None else np.full(r.size, m.name, dtype=object)
                               for m, r in self.parts])

    def symbol_hours(self):
        return float(sum(r.size * m.window_s for m, r in self.parts) / 3600.0)

    def __len__(self):
        return int(sum(r.size for _, r in self.parts))

    def subset(self, mask):
        """The rows where `mask` (over this split's rows, in order) holds; same kind."""
        out, at = [], 0
        for m, r in self.parts:
            k = mask[at:at + r.size]
            at += r.size
            if k.any():
                out.append((m, r[k]))
        return Split(self.kind, tuple(out))


class Study:
    """Markets, and which of them (and which symbols) training may see.

    exclude_markets / exclude_symbols: held out of train and validation entirely (leave one
    market out, held-out symbols); they are read only through held_out()."""

    def __init__(self, markets, exclude_markets=(), exclude_symbols=()):
        self.markets = list(markets)
        self.exclude_markets = set(exclude_markets)
        self.exclude_symbols = set(exclude_symbols)
        self._test_read = False

    def _rows(self, market, split_id, purge):
        if market.name in self.exclude_markets:
            return np.zeros(0, np.int64)
        keep = market.split == split_id
        if purge:
            keep &= ~market.purged
        if self.exclude_symbols:
            names = np.asarray(market.symbols, dtype=object)[market.symbol]
            keep &= ~np.isin(names, list(self.exclude_symbols))
        return np.flatnonzero(keep)

    def _split(self, kind, split_id, purge):
        parts = tuple((m, r) for m in self.markets
                      for r in [self._rows(m, split_id, purge)] if r.size)
        return Split(kind, parts)

    def train(self):
        return self._split("train", 0, purge=True)

    def validation(self):
        return self._split("validation", 1, purge=True)

    def test(self):
        """The test rows of the markets and symbols training saw: readable once per study."""
        if self._test_read:
            raise ProtocolError("the test split was already read: it is read once, to report")
        self._test_read = True
        return self._split("test", 2, purge=False)

    def held_out(self):
        """Every row of the held-out markets and symbols (never seen in training or selection)."""
        parts = []
        for m in self.markets:
            names = np.asarray(m.symbols, dtype=object)[m.symbol]
            keep = np.isin(names, list(self.exclude_symbols)) | (m.name in self.exclude_markets)
            r = np.flatnonzero(keep)
            if r.size:
                parts.append((m, r))
        if not parts:
            raise ProtocolError("this study holds nothing out")
        return Split("held_out", tuple(parts))


def require_validation(split, what):
    if not isinstance(split, Split) or split.kind != "validation":
        kind = split.kind if isinstance(split, Split) else type(split).__name__
        raise ProtocolError(f"{what} reads the validation split only, not {kind}")


def fit_operating_point(split, score, budget=BUDGET_FALSE_PER_SYMBOL_HOUR):
    """The alert threshold for `budget` false alerts per symbol-hour on validation rows."""
    import metrics
    require_validation(split, "fit_operating_point")
    y = split.column("labels").astype(bool)
    horizon = split.parts[0][0].horizon_s
    m = metrics.at_budget(np.asarray(score, np.float32), y, _global_symbol(split),
                          split.column("end_ts_ns"), split.column("event_ts_ns"),
                          budget * split.symbol_hours(), int(round(horizon * 1e9)), patience=50)
    thr = m["threshold"]
    return {"threshold": thr, "budget_false_alerts_per_symbol_hour": budget,
            "fitted_on": "validation", "validation_alerts": m["alerts"],
            "validation_false_alerts": m["false_alerts"],
            "validation_events_detected": m["events_detected"],
            "validation_events": m["events"]}


def select(candidates, split, key="pr_auc"):
    """The candidate with the highest validation metric. candidates: {name: score array over
    split's rows}. Raises ProtocolError unless `split` is the validation split."""
    import metrics
    require_validation(split, "select")
    y = split.column("labels").astype(bool)
    values = {}
    for name, s in candidates.items():
        v = metrics.average_precision(s, y) if key == "pr_auc" else metrics.roc_auc(s, y)
        values[name] = -1.0 if v is None else v
    best = max(values, key=values.get)
    return best, values


def _global_symbol(split):
    """Row → an int id unique across the split's markets (for cooldowns and events)."""
    names = split.symbol_names()
    _, ids = np.unique(names, return_inverse=True)
    return ids.astype(np.int32)
