"""Detector metrics with the definitions of `ticksentry eval` (src/serve/eval_metrics.cpp), so a
report made here and one made by the C++ evaluator agree:

- ROC-AUC (ties averaged) and PR-AUC (average precision, step-wise) over the split's windows.
- Symbol-hours of the split: windows x stride x row interval / 3600 (each window stands for
  `stride` rows of its symbol's data).
- Alerts: a window with score >= threshold alerts unless its symbol alerted less than H
  (the label horizon) before: a cooldown, as the serving path has. A false alert is an alert on a
  window with label 0.
- Alert budget: the lowest candidate threshold (every distinct score, or 1000 evenly spaced
  among them) with false alerts <= 1 per symbol-hour of the split.
- Precision = true alerts / alerts; recall = labelled events (distinct (symbol, event_ts_ns)
  among positive windows) with at least one window >= threshold / events.
- Median lead time: over detected events, event start - end of the event's first window whose
  score is >= threshold, seconds.
"""
import numpy as np

MAX_CANDIDATES = 1000
CURVE_POINTS = 200


def roc_auc(score, label):
    score = np.asarray(score, dtype=np.float32)
    label = np.asarray(label).astype(bool)
    pos = int(label.sum())
    neg = label.size - pos
    if pos == 0 or neg == 0:
        return None
    # Average ranks of ties (1-based), as the C++ evaluator (vectorised: the bootstrap calls
    # this hundreds of times).
    _, inv, counts = np.unique(score, return_inverse=True, return_counts=True)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    ranks = (starts + 0.5 * (counts + 1))[inv].astype(np.float64)
    return float((ranks[label].sum() - pos * (pos + 1) / 2) / (pos * neg))


def _threshold_groups(score, label):
    """(thresholds, tp, fp) at the end of each group of equal scores, highest first."""
    order = np.argsort(-score, kind="stable")
    s, y = score[order], label[order]
    tp, fp = np.cumsum(y), np.cumsum(~y)
    last = np.r_[s[1:] != s[:-1], True]
    return s[last].astype(np.float64), tp[last], fp[last]


def average_precision(score, label):
    score = np.asarray(score, dtype=np.float32)
    label = np.asarray(label).astype(bool)
    pos = int(label.sum())
    if pos == 0:
        return None
    _, tp, fp = _threshold_groups(score, label)
    recall = tp / pos
    precision = tp / (tp + fp)
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def pr_curve(score, label, max_points=CURVE_POINTS):
    score = np.asarray(score, dtype=np.float32)
    label = np.asarray(label).astype(bool)
    pos = int(label.sum())
    t, tp, fp = _threshold_groups(score, label)
    pts = np.stack([t, tp / (tp + fp), tp / pos if pos else np.zeros_like(t)], axis=1)
    if len(pts) > max_points >= 2:
        pts = pts[[k * (len(pts) - 1) // (max_points - 1) for k in range(max_points)]]
    return {"columns": ["threshold", "precision", "recall"], "points": pts.tolist()}


def _alerts(score, symbol, end_ts, t, cooldown_ns):
    """Boolean mask of windows that alert at threshold t (with the per-symbol cooldown)."""
    hit = score >= t
    alert = np.zeros(score.size, dtype=bool)
    last = {}
    for i in np.flatnonzero(hit):
        s = int(symbol[i])
        prev = last.get(s)
        if prev is not None and end_ts[i] - prev < cooldown_ns:
            continue
        last[s] = int(end_ts[i])
        alert[i] = True
    return alert


def alerts_at(score, label, symbol, end_ts, event_ts, t, cooldown_ns):
    alert = _alerts(score, symbol, end_ts, t, cooldown_ns)
    alerts = int(alert.sum())
    false_alerts = int(np.count_nonzero(alert & ~label))
    first_hit = {}
    for i in np.flatnonzero(label):
        key = (int(symbol[i]), int(event_ts[i]))
        first_hit.setdefault(key, None)
        if score[i] >= t and first_hit[key] is None:
            first_hit[key] = int(end_ts[i])
    leads = [(ev - end) * 1e-9 for (_, ev), end in first_hit.items() if end is not None]
    events = len(first_hit)
    return {"threshold": float(t) if np.isfinite(t) else None, "alerts": alerts,
            "false_alerts": false_alerts,
            "precision": (alerts - false_alerts) / alerts if alerts else None,
            "recall": len(leads) / events if events else None,
            "events": events, "events_detected": len(leads),
            "median_lead_s": float(np.median(leads)) if leads else None}


def at_budget(score, label, symbol, end_ts, event_ts, max_false_alerts, cooldown_ns,
              patience=None):
    """patience: stop the scan (highest candidate first) after this many consecutive candidates
    over the budget (None: check every one, as `ticksentry eval` does). With a cooldown false
    alerts are not monotone in t, but they rarely fall back under the budget after 50 lower
    candidates broke it; the protocol's operating-point fit uses 50 for speed."""
    distinct = np.unique(score)[::-1]
    if distinct.size > MAX_CANDIDATES:
        distinct = distinct[[k * (distinct.size - 1) // (MAX_CANDIDATES - 1)
                             for k in range(MAX_CANDIDATES)]]
    best = np.inf
    over = 0
    for t in distinct:  # false alerts need not be monotone in t with a cooldown: check each
        alert = _alerts(score, symbol, end_ts, t, cooldown_ns)
        if np.count_nonzero(alert & ~label) <= max_false_alerts:
            best = min(best, float(t))
            over = 0
        else:
            over += 1
            if patience is not None and over >= patience:
                break
    return alerts_at(score, label, symbol, end_ts, event_ts, best, cooldown_ns)


def detector_metrics(label, score, symbol, end_ts_ns, event_ts_ns, symbol_hours, horizon_s,
                     false_per_symbol_hour=1.0):
    label = np.asarray(label).astype(bool)
    score = np.asarray(score, dtype=np.float32)
    out = {"roc_auc": roc_auc(score, label), "pr_auc": average_precision(score, label)}
    out.update(at_budget(score, label, np.asarray(symbol), np.asarray(end_ts_ns),
                         np.asarray(event_ts_ns), false_per_symbol_hour * symbol_hours,
                         int(round(horizon_s * 1e9))))
    out["false_alerts_per_symbol_hour"] = (out["false_alerts"] / symbol_hours
                                           if symbol_hours > 0 else 0.0)
    out["pr_curve"] = pr_curve(score, label)
    return out
