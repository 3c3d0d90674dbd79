"""Detector metrics, with the definitions `ticksentry eval` uses (docs/labels.md):

- ROC-AUC and PR-AUC (average precision) of a score against the labels.
- Alert budget: the lowest threshold at which false alerts (windows with label 0 and
  score >= threshold) number at most 1 per symbol-hour of the split; precision and recall there.
- Detection lead time: per labelled event (distinct event_ts_ns among positive rows, per symbol),
  event start - end of the first window that alerts at that threshold; the median over detected
  events, seconds.
"""
import numpy as np
from sklearn.metrics import average_precision_score, precision_recall_curve, roc_auc_score


def _auc_or_none(fn, y, s):
    if y.min() == y.max():
        return None  # one class only: undefined
    return float(fn(y, s))


def budget_threshold(y, s, budget_false_alerts):
    """Lowest threshold with at most `budget_false_alerts` negatives scoring >= it.

    Returns inf when even the highest score would exceed the budget (no alerts allowed)."""
    neg = np.sort(s[y == 0])[::-1]
    k = int(np.floor(budget_false_alerts))
    if neg.size == 0:
        return float(s.min()) if s.size else float("inf")
    if k >= neg.size:
        return float(s.min())
    # Scores >= thr must include at most k negatives: thr just above the (k+1)-th highest negative.
    return float(np.nextafter(np.float32(neg[k]), np.float32(np.inf)))


def detector_metrics(y, s, symbol, end_ts_ns, event_ts_ns, symbol_hours, curve_points=200):
    y = np.asarray(y).astype(np.int64)
    s = np.asarray(s, dtype=np.float64)
    out = {"windows": int(y.size), "positives": int(y.sum()), "symbol_hours": symbol_hours,
           "roc_auc": _auc_or_none(roc_auc_score, y, s),
           "pr_auc": _auc_or_none(average_precision_score, y, s)}
    budget = max(0.0, symbol_hours)  # 1 false alert per symbol-hour
    thr = budget_threshold(y, s, budget)
    alert = s >= thr
    tp = int(np.count_nonzero(alert & (y == 1)))
    fp = int(np.count_nonzero(alert & (y == 0)))
    out["budget_false_alerts"] = budget
    out["threshold"] = thr if np.isfinite(thr) else None
    out["false_alerts"] = fp
    out["precision_at_budget"] = tp / (tp + fp) if tp + fp else None
    out["recall_at_budget"] = tp / int(y.sum()) if y.sum() else None
    # Lead time per event.
    leads = []
    events = 0
    pos = np.flatnonzero(y == 1)
    keys = {}
    for i in pos:
        keys.setdefault((int(symbol[i]), int(event_ts_ns[i])), []).append(i)
    for (_, ev), rows in keys.items():
        events += 1
        hits = [i for i in rows if alert[i]]
        if hits:
            first = min(hits, key=lambda i: end_ts_ns[i])
            leads.append((ev - int(end_ts_ns[first])) / 1e9)
    out["events"] = events
    out["events_detected"] = len(leads)
    out["median_lead_time_s"] = float(np.median(leads)) if leads else None
    if y.min() != y.max():
        p, r, _ = precision_recall_curve(y, s)
        idx = np.unique(np.linspace(0, p.size - 1, min(curve_points, p.size)).astype(int))
        out["pr_curve"] = {"precision": [float(v) for v in p[idx]],
                           "recall": [float(v) for v in r[idx]]}
    return out
