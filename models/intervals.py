"""Detector metrics with block-bootstrap 95 % intervals (docs/labels.md "Metrics").

Rows are grouped into blocks of BLOCK_S seconds of one market's time (every symbol of the market
in the same block, so correlation across symbols and within a burst stays inside a block).
Each of `reps` replicates draws as many blocks as there are, with replacement; an interval is
the 2.5 % and 97.5 % quantiles of the replicates (a replicate where a metric is undefined, e.g.
no positive row, is left out of that metric). The point value is the metric on the rows as they
are. Seeded: the same rows give the same intervals.

At the operating point (a threshold fixed beforehand on validation), the alerts (with the
per-symbol cooldown of metrics.py) are computed once on the rows in time order; an event
belongs to the block of its first positive window. Metrics there: events caught / total,
precision, false alerts per symbol-hour, median and 10th-percentile lead time (event start -
end of the first window at or above the threshold, seconds; negative = after the onset).
"""
import numpy as np

import metrics

BLOCK_S = 300.0
REPS = 100
SEED = 7


def _blocks(end_ts_ns, market, block_s):
    key = np.char.add(np.asarray(market, dtype=str),
                      (np.asarray(end_ts_ns) // int(block_s * 1e9)).astype(str))
    _, ids = np.unique(key, return_inverse=True)
    return ids


def _interval(values):
    v = np.asarray([x for x in values if x is not None and np.isfinite(x)], dtype=np.float64)
    if v.size < 10:
        return None, None
    return float(np.quantile(v, 0.025)), float(np.quantile(v, 0.975))


def _cell(value, reps):
    lo, hi = _interval(reps)
    return {"value": value, "lo": lo, "hi": hi}


def operating_rows(score, label, symbol, end_ts, event_ts, threshold, cooldown_ns):
    """Per row: alert (bool); per event: (row of its first positive window, lead s or None)."""
    alert = metrics._alerts(score, symbol, end_ts, threshold if threshold is not None else np.inf,
                            cooldown_ns)
    events = {}
    for i in np.flatnonzero(label):
        key = (int(symbol[i]), int(event_ts[i]))
        if key not in events:
            events[key] = [i, None]
        if events[key][1] is None and threshold is not None and score[i] >= threshold:
            events[key][1] = (int(event_ts[i]) - int(end_ts[i])) * 1e-9
    return alert, list(events.values())


def metrics_with_intervals(score, label, symbol, end_ts_ns, event_ts_ns, market, window_s,
                           horizon_s, threshold, block_s=BLOCK_S, reps=REPS, seed=SEED):
    score = np.asarray(score, np.float32)
    label = np.asarray(label).astype(bool)
    symbol = np.asarray(symbol)
    end_ts_ns = np.asarray(end_ts_ns, np.int64)
    event_ts_ns = np.asarray(event_ts_ns, np.int64)
    block = _blocks(end_ts_ns, market, block_s)
    nb = int(block.max()) + 1 if block.size else 0
    rows_of = [np.flatnonzero(block == b) for b in range(nb)]
    alert, events = operating_rows(score, label, symbol, end_ts_ns, event_ts_ns, threshold,
                                   int(round(horizon_s * 1e9)))
    per = np.zeros((nb, 4))  # alerts, false alerts, symbol-hours, events
    np.add.at(per[:, 0], block, alert)
    np.add.at(per[:, 1], block, alert & ~label)
    np.add.at(per[:, 2], block, np.broadcast_to(np.asarray(window_s) / 3600.0, block.shape))
    leads_of = [[] for _ in range(nb)]
    caught = np.zeros(nb)
    for first, lead in events:
        b = block[first]
        per[b, 3] += 1
        if lead is not None:
            caught[b] += 1
            leads_of[b].append(lead)

    def budget_values(idx):
        a, fa, h, ev = per[idx].sum(axis=0)
        c = caught[idx].sum()
        leads = [x for b in idx for x in leads_of[b]]
        return {"recall": c / ev if ev else None, "precision": (a - fa) / a if a else None,
                "false_alerts_per_symbol_hour": fa / h if h else None,
                "median_lead_s": float(np.median(leads)) if leads else None,
                "p10_lead_s": float(np.quantile(leads, 0.1)) if leads else None}

    point = budget_values(np.arange(nb))
    point.update(pr_auc=metrics.average_precision(score, label),
                 roc_auc=metrics.roc_auc(score, label))
    rng = np.random.default_rng(seed)
    samples = {k: [] for k in point}
    for _ in range(reps if nb > 1 else 0):
        idx = rng.integers(0, nb, nb)
        rows = np.concatenate([rows_of[b] for b in idx])
        v = budget_values(idx)
        v["pr_auc"] = metrics.average_precision(score[rows], label[rows])
        v["roc_auc"] = metrics.roc_auc(score[rows], label[rows])
        for k, x in v.items():
            samples[k].append(x)
    out = {k: _cell(point[k], samples[k]) for k in point}
    a, fa, h, _ = per.sum(axis=0)
    out["threshold"] = threshold
    out["events"] = len(events)
    out["events_caught"] = int(caught.sum())
    out["alerts"] = int(a)
    out["false_alerts"] = int(fa)
    out["symbol_hours"] = float(h)
    out["windows"] = int(label.size)
    out["positives"] = int(label.sum())
    out["blocks"] = nb
    return out


def split_metrics(split, score, threshold, by=("market", "symbol"), **kw):
    """metrics_with_intervals over a protocol Split, overall and per market / data set / symbol
    (a group of one market is left out: it is "all"; a single data set is "all" under its own
    name, so that every data set measured has a "dataset:NAME" group)."""
    from protocol import _global_symbol
    cols = dict(label=split.column("labels"), symbol=_global_symbol(split),
                end_ts_ns=split.column("end_ts_ns"), event_ts_ns=split.column("event_ts_ns"),
                market=split.market_names())
    window_s = np.concatenate([np.full(r.size, m.window_s) for m, r in split.parts])
    horizon_s = split.parts[0][0].horizon_s
    score = np.asarray(score, np.float32)
    out = {"all": metrics_with_intervals(score, window_s=window_s, horizon_s=horizon_s,
                                         threshold=threshold, **cols, **kw)}
    groups = {"market": split.market_names, "symbol": split.symbol_names,
              "dataset": split.dataset_names}
    for g in by:
        names = groups[g]()
        uniq = sorted(set(names))
        if len(uniq) < 2 and g == "market":
            continue
        if len(uniq) < 2 and g == "dataset":
            out[f"dataset:{uniq[0]}"] = out["all"]
            continue
        for name in uniq:
            m = names == name
            out[f"{g}:{name}"] = metrics_with_intervals(
                score[m], window_s=window_s[m], horizon_s=horizon_s, threshold=threshold,
                **{k: v[m] for k, v in cols.items()}, **kw)
    return out
