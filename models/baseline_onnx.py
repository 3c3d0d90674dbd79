"""A baseline as a model: the same ONNX contract as the neural models (x float32 [batch, T, 20]
raw features → prob float32 [batch, 1]), so the engine serves it and the same decision stage
(threshold, hysteresis, cooldown) turns it into alerts (docs/labels.md "The default decision").

Scores that are not probabilities are mapped into (0, 1) by the monotone
    p = 0.5 + 0.5 s / (1 + |s|)
so every threshold t on the score is the threshold prob_threshold(t) on p: the alerts are the
same. Baselines built here:
  ret60     |ret_60s_bps| / (max(vol_long_bps, floor) sqrt(60)) of the last row
  zscore    |ret_10s_bps| / (max(vol_long_bps, floor) sqrt(10)) of the last row
  volume_z  volume_z of the last row
  logreg    baselines.FittedBaseline("logreg"): last row, mean, min, max over the window,
            normalised, clipped to +-CLIP, logistic regression (its own probability)
  gbm       baselines.FittedBaseline("gbm"), the same inputs, scikit-learn's histogram gradient
            boosting as dense algebra (the engine has no tree operator): every split node's
            test x[f] > t at once (Gather, Greater, Cast → C [B, splits]); a leaf is reached when
            all tests on its path go its way: C @ M + b counts them (M +1 for a right turn, -1
            for a left one, b the left turns), leaf = count > depth - 0.5; prob = sigmoid(
            baseline + leaves @ values), its own probability
`rules` (the exporter's record of rule alerts) has no graph here: build() raises
BaselineGraphError naming it.
"""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 13
SCORE_MAPPED = ("ret60", "zscore", "volume_z")
GRAPHS = SCORE_MAPPED + ("logreg", "gbm")
FITTED = ("logreg", "gbm")


class BaselineGraphError(ValueError):
    pass


def prob_of_score(s):
    s = np.asarray(s, np.float64)
    return 0.5 + 0.5 * s / (1.0 + np.abs(s))


def lowered(p):
    """p lowered by 4 float32 steps (None stays None): a window scored exactly p in float64 on
    validation still reaches it when the engine rounds its float32 arithmetic differently."""
    if p is None:
        return None
    p = np.float32(p)
    for _ in range(4):
        p = np.nextafter(p, np.float32(0))
    return float(p)


def prob_threshold(t):
    """The threshold on p equivalent to threshold t on the score (None stays None), lowered by
    4 float32 steps so that the window scored exactly t on validation still reaches it when the
    engine rounds its float32 arithmetic differently from numpy's float64."""
    if t is None:
        return None
    p = np.float32(prob_of_score(t))
    for _ in range(4):
        p = np.nextafter(p, np.float32(0))
    return float(p)


class _Graph:
    def __init__(self):
        self.nodes, self.inits, self.n = [], [], 0

    def const(self, value, dtype=np.float32):
        self.n += 1
        name = f"c{self.n}"
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype), name))
        return name

    def op(self, op, inputs, **attrs):
        self.n += 1
        out = f"t{self.n}"
        self.nodes.append(helper.make_node(op, inputs, [out], **attrs))
        return out

    def last_row(self, x):
        """x [B, T, F] → [B, 1, F]."""
        return self.op("Slice", [x, self.const([-1], np.int64), self.const([2 ** 62], np.int64),
                                 self.const([1], np.int64)])

    def feature(self, row, index):
        """[B, 1, F] → [B, 1] (one column)."""
        return self.op("Gather", [row, self.const(index, np.int64)], axis=2)

    def abs(self, v):
        """|v| as Max(v, -v) (the engine's CPU backend has no Abs)."""
        return self.op("Max", [v, self.op("Neg", [v])])

    def time_max(self, x, window):
        """Max over the T axis of x [B, T, F] → [B, 1, F], for T = window (the engine's CPU
        backend has no ReduceMax): a binary tree of Max over one-row slices."""
        level = [self.op("Slice", [x, self.const([t], np.int64), self.const([t + 1], np.int64),
                                   self.const([1], np.int64)]) for t in range(window)]
        while len(level) > 1:
            nxt = [self.op("Max", [level[i], level[i + 1]]) for i in range(0, len(level) - 1, 2)]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return level[0]

    def ratio(self, row, ret_idx, vol_idx, floor, seconds):
        vol = self.op("Max", [self.feature(row, vol_idx), self.const(floor)])
        den = self.op("Mul", [vol, self.const(np.sqrt(seconds))])
        return self.op("Div", [self.abs(self.feature(row, ret_idx)), den])

    def mapped(self, s):
        """0.5 + 0.5 s / (1 + |s|)."""
        den = self.op("Add", [self.abs(s), self.const(1.0)])
        half = self.op("Mul", [self.op("Div", [s, den]), self.const(0.5)])
        return self.op("Add", [half, self.const(0.5)])


# The feature set's column order (src/features/feature_set.h): a name the export does not give
# (an older or synthetic export) is looked up here.
CANONICAL = ["ret_1s_bps", "ret_10s_bps", "ret_60s_bps", "ret_300s_bps", "vol_short_bps",
             "vol_long_bps", "vol_ratio", "volume_z", "trade_count_z", "imbalance_1",
             "imbalance_5", "imbalance_10", "spread_ticks", "microprice_dev_ticks", "depth_change",
             "trade_flow_imbalance", "dist_limit_up", "dist_limit_down", "ret_from_prev_close",
             "large_trade_ratio"]


def _col(names, name):
    if name in names:
        return names.index(name)
    if len(names) == len(CANONICAL):
        return CANONICAL.index(name)
    raise BaselineGraphError(f"feature {name!r} is not among the export's features")


def build(kind, feature_names, vol_floor_bps=0.5, zscore_floor_bps=1.0, fitted=None, window=60):
    """The ONNX model of baseline `kind` over features `feature_names` (the export's order).
    logreg's graph is for windows of exactly `window` rows (its min and max over the window are
    unrolled); the score baselines read the last row of any T."""
    names = list(feature_names)
    f = len(names)
    g = _Graph()
    x = "x"
    if kind == "ret60":
        row = g.last_row(x)
        prob = g.mapped(g.ratio(row, _col(names, "ret_60s_bps"), _col(names, "vol_long_bps"),
                                vol_floor_bps, 60.0))
    elif kind == "zscore":
        row = g.last_row(x)
        prob = g.mapped(g.ratio(row, _col(names, "ret_10s_bps"), _col(names, "vol_long_bps"),
                                zscore_floor_bps, 10.0))
    elif kind == "volume_z":
        prob = g.mapped(g.feature(g.last_row(x), _col(names, "volume_z")))
    elif kind in FITTED:
        if fitted is None or getattr(fitted, "kind", None) != kind:
            raise BaselineGraphError(f"{kind} needs its fitted baselines.FittedBaseline")
        row = g.last_row(x)
        mean = g.op("ReduceMean", [x], axes=[1], keepdims=1)
        mx = g.time_max(x, window)
        mn = g.op("Neg", [g.time_max(g.op("Neg", [x]), window)])
        feats = g.op("Concat", [row, mean, mn, mx], axis=2)           # [B, 1, 4F]
        z = g.op("Mul", [g.op("Sub", [feats, g.const(fitted.mean)]), g.const(fitted.inv_std)])
        from baselines import CLIP
        z = g.op("Max", [g.op("Min", [z, g.const(CLIP)]), g.const(-CLIP)])
        if kind == "logreg":
            coef = np.asarray(fitted.model.coef_, np.float32).reshape(4 * f, 1)
            logit = g.op("Add", [g.op("MatMul", [z, g.const(coef)]),
                                 g.const(np.asarray(fitted.model.intercept_, np.float32))])
        else:
            logit = _trees(g, g.op("Flatten", [z], axis=1), fitted.model)  # [B, 1]
        prob = g.op("Sigmoid", [logit])                               # [B, 1, 1] / [B, 1]
    else:
        raise BaselineGraphError(f"baseline {kind!r} has no graph (only {', '.join(GRAPHS)}): "
                                 "it cannot be served as a model")
    out = g.op("Flatten", [prob], axis=1)
    g.nodes[-1].output[0] = "prob"
    del out
    graph = helper.make_graph(
        g.nodes, f"baseline_{kind}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                       ["batch", window if kind in FITTED else "T", f])],
        [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["batch", 1])], g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="ticksentry models/baseline_onnx.py")
    model.doc_string = f"baseline {kind} (docs/labels.md); prob = {'logistic regression' if kind == 'logreg' else 'gradient-boosted trees' if kind == 'gbm' else '0.5 + 0.5 s / (1 + |s|) of the score'}"
    onnx.checker.check_model(model)
    return model


def tree_tables(model):
    """The split tests and leaf paths of a fitted binary HistGradientBoostingClassifier:
    (feature [S], threshold [S], M [S, L], b [L], depth [L], value [L], baseline)."""
    feats, thrs, leaves = [], [], []   # leaves: (value, [(split index, went_right)])
    for (pred,) in model._predictors:
        nodes = pred.nodes
        if np.any(nodes["is_categorical"]):
            raise BaselineGraphError("gbm: categorical splits have no graph")
        index = {}

        def walk(i, path):
            nd = nodes[i]
            if nd["is_leaf"]:
                leaves.append((float(nd["value"]), path))
                return
            index[i] = len(feats)
            feats.append(int(nd["feature_idx"]))
            thrs.append(float(nd["num_threshold"]))
            walk(int(nd["left"]), path + [(index[i], False)])
            walk(int(nd["right"]), path + [(index[i], True)])
        walk(0, [])
    s, n = len(feats), len(leaves)
    m = np.zeros((max(s, 1), n), np.float32)
    b = np.zeros(n, np.float32)
    depth = np.zeros(n, np.float32)
    for j, (_, path) in enumerate(leaves):
        for k, right in path:
            m[k, j] = 1.0 if right else -1.0
            b[j] += 0.0 if right else 1.0
        depth[j] = len(path)
    value = np.array([v for v, _ in leaves], np.float32)
    base = float(np.asarray(model._baseline_prediction).reshape(-1)[0])
    return (np.asarray(feats or [0], np.int64), np.asarray(thrs or [np.inf], np.float32), m, b,
            depth, value, base)


def _trees(g, z, model):
    """The raw score baseline + sum of the reached leaves' values, z [B, K] → [B, 1]."""
    feats, thrs, m, b, depth, value, base = tree_tables(model)
    right = g.op("Cast", [g.op("Greater", [g.op("Gather", [z, g.const(feats, np.int64)], axis=1),
                                           g.const(thrs)])], to=TensorProto.FLOAT)
    count = g.op("Add", [g.op("MatMul", [right, g.const(m)]), g.const(b)])
    reached = g.op("Cast", [g.op("Greater", [count, g.const(depth - 0.5)])],
                   to=TensorProto.FLOAT)
    return g.op("Add", [g.op("MatMul", [reached, g.const(value.reshape(-1, 1))]),
                        g.const(np.float32(base))])


def score_of(kind, windows, feature_names, vol_floor_bps=0.5, zscore_floor_bps=1.0,
             fitted=None):
    """The baseline's probability computed in numpy (what the graph must reproduce)."""
    names = list(feature_names)
    w = np.asarray(windows, np.float64)
    last = w[:, -1, :]
    if kind == "ret60":
        s = np.abs(last[:, _col(names, "ret_60s_bps")]) / (
            np.maximum(last[:, _col(names, "vol_long_bps")], vol_floor_bps) * np.sqrt(60.0))
    elif kind == "zscore":
        s = np.abs(last[:, _col(names, "ret_10s_bps")]) / (
            np.maximum(last[:, _col(names, "vol_long_bps")], zscore_floor_bps) * np.sqrt(10.0))
    elif kind == "volume_z":
        s = last[:, _col(names, "volume_z")]
    elif kind in FITTED:
        from baselines import summarise
        return fitted.model.predict_proba(fitted._norm(summarise(w)))[:, 1]
    else:
        raise BaselineGraphError(f"baseline {kind!r} has no graph")
    return prob_of_score(s)
