"""The baselines a model must beat at equal alert volume (docs/labels.md "Baselines").

Score baselines, parameter-free, from each window's last feature row or the export's columns:
  rules      the exporter's rule score (1 when any default rule fired in the last R s; binary,
             so its only threshold rarely fits the alert budget)
  ret60      |ret_60s_bps| / (vol_long_bps x sqrt(60)): the 60 s return in units of the
             symbol's own 60 s volatility (vol floored at the label's vol_floor_bps)
  volume_z   the volume-vs-profile z-score feature (volume_z), the quantity of volume_burst
  zscore     the exporter's |10 s return| / rolling volatility column
  rules_rank the unit-free rule score: each default rule's measured quantity (RULE_QUANTITIES:
             the 60 s and 10 s return in sigma, volume and trade-count z, the spread, the book
             imbalance, the top-5 depth drop) as its tail probability p among the symbol's own
             earlier windows (causal, expanding, no labels), the score max -log10 p. A rank is
             unchanged by any rescaling of prices or sizes, so a stock, a coin and a futures
             contract score on one scale, and one threshold means the same surprise everywhere
Fitted baselines on the same windows the networks see, summarised per feature (last row,
mean, min, max over the window; normalised with the training split's statistics, constant
features and the unit-dependent ones (dataset.UNIT_DEPENDENT_FEATURES) dropped, clipped to +-8):
  logreg     scikit-learn LogisticRegression (balanced classes)
  gbm        scikit-learn HistGradientBoostingClassifier (fixed small settings, seeded)
Fitted baselines see the training split only; nothing here reads validation or test labels.
"""
import numpy as np

from dataset import UNIT_DEPENDENT_FEATURES

CLIP = 8.0
SCORE_BASELINES = ("rules", "ret60", "volume_z", "zscore", "rules_rank")
# rules_rank: (feature, transform) per default rule quantity; "abs" = |x|, "neg" = -x.
RULE_QUANTITIES = (("ret_60s_sigma", "abs"),   # rapid_rise, accelerating_drop, high_dive
                   ("ret_10s_sigma", "abs"),   # the same rules' 10 s leg
                   ("volume_z", "id"),         # volume_burst
                   ("trade_count_z", "id"),    # volume_burst's trade count
                   ("spread_ticks", "id"),     # spread_widening (a rank: the tick unit drops out)
                   ("imbalance_5", "abs"),     # book_imbalance
                   ("depth_change", "neg"))    # depth / liquidity rules: depth gone in 10 s
RANK_MIN_HISTORY = 12  # earlier windows of the symbol before a rank counts (1 min at stride 5)
FITTED_BASELINES = ("logreg", "gbm")


def _col(names, name, default):
    return names.index(name) if name in names else default


def score_baseline(name, split):
    """Scores of a parameter-free baseline over a protocol Split's rows."""
    if name == "rules":
        return split.column("rule_score").astype(np.float32)
    if name == "zscore":
        return split.column("zscore").astype(np.float32)
    m0 = split.parts[0][0]
    names = list(m0.feature_names)
    last = np.concatenate([m.windows[r, -1, :] for m, r in split.parts]).astype(np.float64)
    if name == "ret60":
        floor = float(m0.label.get("vol_floor_bps", 0.5)) or 0.5
        ret = last[:, _col(names, "ret_60s_bps", 2)]
        vol = np.maximum(last[:, _col(names, "vol_long_bps", 5)], floor)
        return (np.abs(ret) / (vol * np.sqrt(60.0))).astype(np.float32)
    if name == "volume_z":
        return last[:, _col(names, "volume_z", 7)].astype(np.float32)
    if name == "rules_rank":
        return np.concatenate([rules_rank_of_market(m)[r] for m, r in split.parts])
    raise ValueError(f"unknown baseline {name!r} (one of {SCORE_BASELINES + FITTED_BASELINES})")


def _quantity(last, names, name, how, floor):
    """One rule quantity per row from the last feature rows."""
    if name in ("ret_60s_sigma", "ret_10s_sigma"):
        sec = 60.0 if name == "ret_60s_sigma" else 10.0
        ret = last[:, _col(names, "ret_60s_bps" if sec == 60 else "ret_10s_bps",
                           2 if sec == 60 else 1)]
        x = ret / (np.maximum(last[:, _col(names, "vol_long_bps", 5)], floor) * np.sqrt(sec))
    else:
        default = {"volume_z": 7, "trade_count_z": 8, "spread_ticks": 12, "imbalance_5": 10,
                   "depth_change": 14}[name]
        x = last[:, _col(names, name, default)]
    return np.abs(x) if how == "abs" else -x if how == "neg" else x


def causal_tail_surprise(values, min_history=RANK_MIN_HISTORY, chunk=512):
    """-log10 p per row, p = (earlier values >= this one + 1) / (earlier values + 1), over the
    rows before it (in the given order); 0 while fewer than min_history came before."""
    v = np.asarray(values, np.float64)
    n = v.size
    out = np.zeros(n)
    prior = np.zeros(0)
    for s in range(0, n, chunk):
        c = v[s:s + chunk]
        ge = prior.size - np.searchsorted(prior, c, side="left")
        # within the chunk: earlier rows j < i with c[j] >= c[i]
        tri = np.tril(np.ones((c.size, c.size), bool), k=-1)
        ge = ge + ((c[None, :] >= c[:, None]) & tri).sum(axis=1)
        seen = s + np.arange(c.size)
        p = (ge + 1.0) / (seen + 1.0)
        out[s:s + chunk] = np.where(seen >= min_history, -np.log10(p), 0.0)
        prior = np.sort(np.r_[prior, c])
    return out


def rules_rank_of_market(market):
    """The rules_rank score of every row of a protocol Market (cached on it): per symbol, in
    time order, the largest causal tail surprise over RULE_QUANTITIES."""
    cached = getattr(market, "_rules_rank", None)
    if cached is not None:
        return cached
    names = list(market.feature_names)
    floor = float(market.label.get("vol_floor_bps", 0.5)) or 0.5
    last = np.asarray(market.windows[:, -1, :], np.float64)
    qs = [_quantity(last, names, q, how, floor) for q, how in RULE_QUANTITIES]
    out = np.zeros(len(market), np.float32)
    for s in np.unique(market.symbol):
        rows = np.flatnonzero(market.symbol == s)
        rows = rows[np.argsort(market.end_ts_ns[rows], kind="stable")]
        best = np.zeros(rows.size)
        for q in qs:
            best = np.maximum(best, causal_tail_surprise(q[rows]))
        out[rows] = best
    market._rules_rank = out
    return out


def summarise(windows):
    """[N, T, F] → [N, 4F]: last row, mean, min, max over the window."""
    w = np.asarray(windows, np.float64)
    return np.concatenate([w[:, -1, :], w.mean(axis=1), w.min(axis=1), w.max(axis=1)], axis=1)


class FittedBaseline:
    def __init__(self, kind, seed=1):
        if kind not in FITTED_BASELINES:
            raise ValueError(f"unknown fitted baseline {kind!r}")
        self.kind, self.seed = kind, seed

    def fit(self, split, max_rows=20000):
        if split.kind != "train":
            raise ValueError(f"a fitted baseline trains on the train split, not {split.kind}")
        from sklearn.ensemble import HistGradientBoostingClassifier
        from sklearn.linear_model import LogisticRegression
        x = summarise(split.windows())
        y = split.column("labels").astype(int)
        rng = np.random.default_rng(self.seed)
        if y.size > max_rows:  # keep every positive, subsample negatives
            pos, neg = np.flatnonzero(y == 1), np.flatnonzero(y == 0)
            neg = rng.choice(neg, size=max(0, max_rows - pos.size), replace=False)
            keep = np.sort(np.r_[pos, neg])
            x, y = x[keep], y[keep]
        self.mean = x.mean(axis=0)
        std = x.std(axis=0)
        self.constant = std <= 1e-9 * np.maximum(1.0, np.abs(self.mean))
        f = x.shape[1] // 4  # the four summaries of summarise(), each over the F features
        for k in UNIT_DEPENDENT_FEATURES:  # left out like a constant feature
            self.constant[[k + j * f for j in range(4) if k < f]] = True
        self.inv_std = np.where(self.constant, 0.0, 1.0 / np.maximum(std, 1e-12))
        z = self._norm(x)
        if self.kind == "logreg":
            self.model = LogisticRegression(C=1.0, class_weight="balanced", max_iter=500)
        else:
            self.model = HistGradientBoostingClassifier(max_iter=80, learning_rate=0.1,
                                                        max_leaf_nodes=15, l2_regularization=1.0,
                                                        random_state=self.seed)
        self.model.fit(z, y)
        return self

    def _norm(self, x):
        return np.clip((x - self.mean) * self.inv_std, -CLIP, CLIP)

    def score(self, split):
        return self.model.predict_proba(self._norm(summarise(split.windows())))[:, 1].astype(
            np.float32)
