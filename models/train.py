#!/usr/bin/python3
"""Train an alert model on a `ticksentry features --export` folder.

    /usr/bin/python3 models/train.py --config models/configs/default.toml [--data DIR] --out RUN

Reproducible: every random choice is seeded from the config's [train] seed, torch runs with a
fixed thread count and deterministic algorithms, so the same config, data and thread count give
the same weights. Splits are by time (dataset.py: 70 % train, 15 % validation, 15 % test, never
shuffled across time); windows are shuffled only inside the training split. Windows whose label
horizon reaches into the next split are purged from train and validation so no label peeks
across a boundary. Class imbalance: negatives may be subsampled to `neg_per_pos` per positive,
and the loss weighs positives by the remaining negative/positive ratio (capped). Early stopping
on validation PR-AUC with `patience` epochs; the best epoch's weights are kept. Progress goes to
stdout, one line per epoch.

Writes RUN/model.pt (weights, config, normalization stats) and RUN/train.json (config, seed,
data summary, per-epoch history, best validation metrics).
"""
import argparse
import copy
import functools
import datetime
import json
import os
import sys
import time
import tomllib

import numpy as np
import torch
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dataset import (UNIT_DEPENDENT_FEATURES, DatasetError, load_export,  # noqa: E402
                     split_bounds_ns, split_masks)
from nets import KINDS, build_model, parameter_count  # noqa: E402
from sklearn.metrics import average_precision_score, roc_auc_score  # noqa: E402

DEFAULT_CLIP = 8.0  # normalised inputs are squashed into (-8, 8) (docs/labels.md)
DEFAULTS = {
    "data": {"path": "", "max_train_windows": 60000, "neg_per_pos": 0},
    "model": {"kind": "gru", "hidden": 32, "layers": 1, "dropout": 0.1},
    "train": {"seed": 1, "epochs": 30, "batch_size": 256, "lr": 2e-3, "weight_decay": 1e-4,
              "patience": 5, "threads": 2, "max_minutes": 12.0, "pos_weight_cap": 50.0,
              "purge": True},
}


class ConfigError(ValueError):
    pass


def load_config(path):
    try:
        with open(path, "rb") as f:
            user = tomllib.load(f)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read ({e.strerror})") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: not valid TOML ({e})") from e
    cfg = copy.deepcopy(DEFAULTS)
    for section, values in user.items():
        if section not in cfg:
            raise ConfigError(f"{path}: unknown section [{section}] (known: {', '.join(cfg)})")
        if not isinstance(values, dict):
            raise ConfigError(f"{path}: [{section}] is not a table")
        for k, v in values.items():
            if section != "model" and k not in cfg[section]:
                raise ConfigError(f"{path}: unknown key {section}.{k}")
            cfg[section][k] = v
    if cfg["model"].get("kind") not in KINDS:
        raise ConfigError(f"{path}: model kind {cfg['model'].get('kind')!r} unknown "
                          f"(one of {', '.join(KINDS)})")
    t = cfg["train"]
    for key in ("epochs", "batch_size", "patience", "threads"):
        if not isinstance(t[key], int) or t[key] < 1:
            raise ConfigError(f"{path}: train.{key} must be a positive integer, got {t[key]!r}")
    if not (isinstance(t["lr"], (int, float)) and t["lr"] > 0):
        raise ConfigError(f"{path}: train.lr must be > 0, got {t['lr']!r}")
    return cfg


def seed_everything(seed, threads):
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)


def select_rows(ds, split, purge, rng, max_windows, neg_per_pos):
    """Row indices of a split: purged at its right boundary, negatives subsampled."""
    mask = split_masks(ds)[split]
    if purge and split in ("train", "val"):
        b1, b2 = split_bounds_ns(ds.manifest)
        limit = (b1 if split == "train" else b2) - int(ds.horizon_s * 1e9)
        mask &= ds.end_ts_ns < limit
    rows = np.flatnonzero(mask)
    y = ds.labels[rows]
    pos, neg = rows[y == 1], rows[y == 0]
    if neg_per_pos and pos.size and neg.size > neg_per_pos * pos.size:
        neg = rng.choice(neg, size=int(neg_per_pos * pos.size), replace=False)
    if max_windows and pos.size + neg.size > max_windows:
        keep_neg = max(0, max_windows - pos.size)
        if keep_neg < neg.size:
            neg = rng.choice(neg, size=keep_neg, replace=False)
        if pos.size > max_windows:
            pos = rng.choice(pos, size=max_windows, replace=False)
    return np.sort(np.concatenate([pos, neg]))


def feature_stats(windows):
    flat = windows.reshape(-1, windows.shape[-1]).astype(np.float64)
    return flat.mean(axis=0), flat.std(axis=0)


def input_stats(windows):
    """The Normalize statistics a model is fitted with: feature_stats, with the std of every
    unit-dependent feature (dataset.UNIT_DEPENDENT_FEATURES) set to 0, so Normalize drops it as it
    drops a constant one."""
    mean, std = feature_stats(windows)
    std = std.copy()
    for k in UNIT_DEPENDENT_FEATURES:
        if k < std.size:
            std[k] = 0.0
    return mean, std


def predict(model, x, batch=2048):
    model.eval()
    out = []
    with torch.no_grad():
        for s in range(0, x.shape[0], batch):
            out.append(torch.sigmoid(model.logits(torch.from_numpy(x[s:s + batch]))).numpy()[:, 0])
    return np.concatenate(out) if out else np.zeros(0, dtype=np.float32)


def score(y, p):
    if y.size == 0 or y.min() == y.max():
        return {"pr_auc": None, "roc_auc": None}
    return {"pr_auc": float(average_precision_score(y, p)), "roc_auc": float(roc_auc_score(y, p))}


def fit(cfg, xtr, ytr, xva, yva, log=functools.partial(print, flush=True), t_start=None):
    """Trains cfg's model on (xtr, ytr); the epoch is chosen on the validation windows (xva, yva)
    by PR-AUC (early stopping), the only place validation enters. Features constant over the
    training windows are dropped (Normalize gives them weight 0) and normalised inputs are clipped
    softly to +-clip (cfg model.clip, default 8). Returns (model, summary dict)."""
    tc = cfg["train"]
    t_start = time.time() if t_start is None else t_start
    if yva.size == 0 or yva.min() == yva.max():
        raise DatasetError(f"the validation windows need both classes ({yva.size} windows, "
                           f"{int(yva.sum()) if yva.size else 0} positive); early stopping has "
                           "nothing to watch")
    mean, std = input_stats(xtr)
    cfg["model"].setdefault("clip", DEFAULT_CLIP)  # saved with the weights: export rebuilds it
    mcfg = cfg["model"]
    model = build_model(mcfg, xtr.shape[2])
    dropped = model.norm.set_stats(mean, std)
    n_pos = float(ytr.sum())
    pos_weight = min(float(tc["pos_weight_cap"]), (ytr.size - n_pos) / max(n_pos, 1.0))
    loss_fn = nn.BCEWithLogitsLoss(pos_weight=torch.tensor([pos_weight]))
    opt = torch.optim.AdamW(model.parameters(), lr=float(tc["lr"]),
                            weight_decay=float(tc["weight_decay"]))
    log(f"train: {mcfg['kind']} ({parameter_count(model)} parameters): "
        f"train {ytr.size} windows ({int(n_pos)} positive), val {yva.size} "
        f"({int(yva.sum())} positive), pos_weight {pos_weight:.2f}, {tc['threads']} threads, "
        f"features dropped (constant or unit-dependent): {dropped or 'none'}")
    xt, yt = torch.from_numpy(xtr), torch.from_numpy(ytr)[:, None]
    gen = torch.Generator().manual_seed(int(tc["seed"]))
    best, best_state, best_epoch, history, stale = -1.0, None, 0, [], 0
    stop_reason = "epochs"
    for epoch in range(1, int(tc["epochs"]) + 1):
        t0 = time.time()
        model.train()
        perm = torch.randperm(xt.shape[0], generator=gen)
        total = 0.0
        for s in range(0, perm.numel(), int(tc["batch_size"])):
            idx = perm[s:s + int(tc["batch_size"])]
            opt.zero_grad()
            loss = loss_fn(model.logits(xt[idx]), yt[idx])
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            total += float(loss) * idx.numel()
        m = score(yva, predict(model, xva))
        row = {"epoch": epoch, "loss": total / xt.shape[0], "val_pr_auc": m["pr_auc"],
               "val_roc_auc": m["roc_auc"], "seconds": time.time() - t0}
        history.append(row)
        improved = m["pr_auc"] is not None and m["pr_auc"] > best
        if improved:
            best, best_epoch, stale = m["pr_auc"], epoch, 0
            best_state = copy.deepcopy(model.state_dict())
        else:
            stale += 1
        log(f"epoch {epoch:3d}/{tc['epochs']}  loss {row['loss']:.4f}  val PR-AUC "
            f"{m['pr_auc']:.4f}  ROC-AUC {m['roc_auc']:.4f}  {row['seconds']:.1f}s"
            f"{'  *' if improved else ''}")
        if stale >= int(tc["patience"]):
            stop_reason = f"early stop: no validation gain for {tc['patience']} epochs"
            break
        if (time.time() - t_start) / 60.0 > float(tc["max_minutes"]):
            stop_reason = f"time budget of {tc['max_minutes']} minutes reached"
            break
    model.load_state_dict(best_state)
    log(f"train: best epoch {best_epoch} (val PR-AUC {best:.4f}); {stop_reason}; "
        f"{time.time() - t_start:.0f}s")
    return model, {"history": history, "best_epoch": best_epoch, "best_val_pr_auc": best,
                   "stop_reason": stop_reason, "pos_weight": pos_weight,
                   "dropped_features": dropped}


def train(cfg, data_path, out_dir, log=functools.partial(print, flush=True)):
    t_start = time.time()
    tc, dc = cfg["train"], cfg["data"]
    seed_everything(int(tc["seed"]), int(tc["threads"]))
    rng = np.random.default_rng(int(tc["seed"]))
    ds = load_export(data_path)
    tr = select_rows(ds, "train", tc["purge"], rng, int(dc["max_train_windows"]),
                     int(dc["neg_per_pos"]))
    va = select_rows(ds, "val", tc["purge"], rng, 0, 0)
    if tr.size == 0 or ds.labels[tr].sum() == 0:
        raise DatasetError(f"{data_path}: the training split has no positive windows")
    if va.size == 0 or ds.labels[va].min() == ds.labels[va].max():
        raise DatasetError(f"{data_path}: the validation split needs both classes "
                           f"({va.size} windows, {int(ds.labels[va].sum()) if va.size else 0} "
                           "positive); early stopping has nothing to watch")
    xtr = np.asarray(ds.windows[tr], dtype=np.float32)
    ytr = ds.labels[tr].astype(np.float32)
    xva = np.asarray(ds.windows[va], dtype=np.float32)
    yva = ds.labels[va].astype(np.int64)
    log(f"train: {data_path}: train {tr.size} windows, val {va.size}, T={ds.window}")
    model, fitted = fit(cfg, xtr, ytr, xva, yva, log, t_start)
    history, best_epoch, best = fitted["history"], fitted["best_epoch"], fitted["best_val_pr_auc"]
    stop_reason, n_pos, pos_weight = fitted["stop_reason"], float(ytr.sum()), fitted["pos_weight"]
    os.makedirs(out_dir, exist_ok=True)
    torch.save({"state_dict": model.state_dict(), "config": cfg, "features": xtr.shape[2],
                "window": ds.window, "feature_names": ds.manifest.get("feature_names")},
               os.path.join(out_dir, "model.pt"))
    summary = {
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "config": cfg, "data": os.path.abspath(data_path),
        "data_manifest": {k: ds.manifest.get(k) for k in
                          ("source", "symbols", "window", "stride", "label", "count", "positives")},
        "train_windows": int(tr.size), "train_positives": int(n_pos),
        "val_windows": int(va.size), "val_positives": int(yva.sum()),
        "pos_weight": pos_weight, "parameters": parameter_count(model),
        "best_epoch": best_epoch, "best_val_pr_auc": best, "stop_reason": stop_reason,
        "seconds": time.time() - t_start, "torch": torch.__version__, "history": history,
        "dropped_features": fitted["dropped_features"],
    }
    with open(os.path.join(out_dir, "train.json"), "w") as f:
        json.dump(summary, f, indent=1)
    return model, summary


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--config", required=True, help="TOML config (models/configs/*.toml)")
    ap.add_argument("--data", help="export folder (overrides [data] path)")
    ap.add_argument("--out", required=True, help="run folder to write model.pt and train.json")
    ap.add_argument("--seed", type=int, help="overrides [train] seed")
    ap.add_argument("--epochs", type=int, help="overrides [train] epochs")
    ap.add_argument("--threads", type=int, help="overrides [train] threads")
    args = ap.parse_args(argv)
    try:
        cfg = load_config(args.config)
        for key in ("seed", "epochs", "threads"):
            if getattr(args, key) is not None:
                cfg["train"][key] = getattr(args, key)
        data = args.data or cfg["data"]["path"]
        if not data:
            raise ConfigError(f"{args.config}: no data folder (set [data] path or pass --data)")
        train(cfg, data, args.out)
    except (ConfigError, DatasetError, ValueError) as e:
        print(f"train: error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
