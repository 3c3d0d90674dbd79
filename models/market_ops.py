#!/usr/bin/python3
"""Per-market operating points of the served default (docs/labels.md "Operating point").

    /usr/bin/python3 models/market_ops.py --registry models/registry.json [--version 4]
        [--datasets models/configs/datasets.toml] [--exports build/models-data]
        [--groups models/configs/market_groups.toml] [--ticksentry BIN]
        [--write] [--out bench/results/market-ops-DATE.json]

One pooled threshold (1 false alert per symbol-hour over all markets' validation rows) does not
keep the budget in each market: the served default's scores are not calibrated alike across
venues. This fits one threshold per symbol group (the [[model.groups]] of --groups, matched as
serving matches them: first group wins, markets by the symbol's suffix) on the VALIDATION rows of
that group only, with protocol.fit_operating_point. A group with fewer than MIN_SYMBOL_HOURS
validation symbol-hours or no validation event keeps the pooled threshold (written for it
explicitly: serving gives a config group the registry does not name the config's threshold, not
the registry's), and the output says why.

--write puts them into the registry entry's operating_point.groups (serving applies them to the
config's groups of the same names, docs/models-registry.md) with the fit's numbers in
operating_point.group_fits. Then the test split is read ONCE (protocol.Study.test) and each
group is measured at the pooled threshold and at its own, with block-bootstrap intervals
(intervals.py); nothing is chosen there.
"""
import argparse
import datetime
import fnmatch
import json
import os
import platform
import subprocess
import sys
import tomllib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import datasets  # noqa: E402
import engine_cli  # noqa: E402
import intervals  # noqa: E402
import protocol  # noqa: E402
import registry  # noqa: E402
import task_gate  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_GROUPS = os.path.join(HERE, "configs", "market_groups.toml")
MIN_SYMBOL_HOURS = 2.0  # below this the budget allows at most one false alert: too coarse a fit


class MarketOpsError(ValueError):
    pass


def load_groups(path=DEFAULT_GROUPS):
    """The [[model.groups]] specs of a ticksentry config, in order: [{name, symbols, markets}]."""
    with open(path, "rb") as f:
        cfg = tomllib.load(f)
    groups = cfg.get("model", {}).get("groups", [])
    if not groups:
        raise MarketOpsError(f"{path}: no [[model.groups]]")
    out = []
    for g in groups:
        if "regex" in g:
            raise MarketOpsError(f"{path}: group {g.get('name')}: regex groups are not supported here")
        out.append({"name": g["name"], "symbols": list(g.get("symbols", [])),
                    "markets": list(g.get("markets", []))})
    return out


def market_of(name):
    """src/core/symbol_table.cpp market_of."""
    if name.endswith(".SH") or name.endswith(".SS"):
        return "SH"
    if name.endswith(".SZ"):
        return "SZ"
    if name.endswith(".BJ"):
        return "BJ"
    if name and "." not in name:
        return "US"
    return "unknown"


def group_of(name, groups):
    """The first group `name` (a feed symbol, no study prefix) matches, as serving decides
    (src/detect/symbol_groups.cpp), or None."""
    for g in groups:
        if g["markets"] and market_of(name) not in g["markets"]:
            continue
        if not g["symbols"] or any(fnmatch.fnmatchcase(name, p) for p in g["symbols"]):
            return g["name"]
    return None


def row_groups(split, groups):
    """Per row of a Split, its group name ("" = none)."""
    feed = [s.split(":", 1)[1] for s in split.symbol_names()]  # drop the study's "MARKET:"
    cache = {}
    return np.array([cache.setdefault(s, group_of(s, groups) or "") for s in feed], dtype=object)


def fit_groups(va, score, groups, pooled):
    """Per group: its validation threshold, or the pooled one with the reason."""
    protocol.require_validation(va, "per-group operating points")  # also when every group falls back
    rg = row_groups(va, groups)
    markets = va.market_names()
    out = {}
    for g in groups:
        name = g["name"]
        m = rg == name
        sub = va.subset(m)
        hours = sub.symbol_hours() if len(sub) else 0.0
        y = sub.column("labels") if len(sub) else np.zeros(0)
        ev = len({(s, e) for s, e, lab in zip(sub.symbol_names(), sub.column("event_ts_ns"), y)
                  if lab}) if len(sub) else 0
        info = {"validation_windows": int(m.sum()), "validation_symbol_hours": round(hours, 3),
                "validation_events": ev,
                "study_markets": sorted(set(markets[m])) if m.any() else []}
        if hours < MIN_SYMBOL_HOURS or ev == 0:
            info.update(threshold=pooled, fitted=False,
                        why=(f"{hours:.2f} validation symbol-hours (< {MIN_SYMBOL_HOURS:g})"
                             if hours < MIN_SYMBOL_HOURS else "no validation event")
                        + ": the pooled threshold")
        else:
            op = protocol.fit_operating_point(sub, score[m])
            if not np.isfinite(op["threshold"]) or not (0 < op["threshold"] <= 1):
                info.update(threshold=pooled, fitted=False,
                            why=f"no threshold in (0, 1] keeps the budget ({op['threshold']}): "
                                "the pooled threshold")
            else:
                info.update(threshold=float(op["threshold"]), fitted=True,
                            why="fitted on this group's validation rows",
                            **{k: op[k] for k in ("validation_alerts", "validation_false_alerts",
                                                  "validation_events_detected")})
        out[name] = info
    return out


def measure(te, score, groups, fits, pooled):
    """Test rows: per group at the pooled and at its own threshold; all groups together with
    each row at its group's threshold (scores shifted by it: alerts are the same, PR-AUC of the
    shifted scores is not a model metric and is left out)."""
    rg = row_groups(te, groups)
    res = {}

    def cells(m):
        keep = ("events", "events_caught", "alerts", "false_alerts", "symbol_hours", "windows",
                "threshold", "recall", "precision", "false_alerts_per_symbol_hour",
                "median_lead_s", "p10_lead_s", "pr_auc", "roc_auc")
        return {k: m[k] for k in keep if k in m}

    for g in groups:
        name = g["name"]
        mask = rg == name
        if not mask.any():
            res[name] = {"test_windows": 0}
            continue
        sub = te.subset(mask)
        s = score[mask]
        res[name] = {"test_windows": int(mask.sum()),
                     "study_markets": sorted(set(te.market_names()[mask])),
                     "pooled": cells(intervals.split_metrics(sub, s, pooled, by=())["all"]),
                     "group": cells(intervals.split_metrics(sub, s, fits[name]["threshold"],
                                                            by=())["all"])}
    thr = np.array([fits[n]["threshold"] if n in fits else pooled for n in rg], np.float32)
    shifted = np.asarray(score, np.float32) - thr
    both = {"pooled": cells(intervals.split_metrics(te, score, pooled, by=())["all"]),
            "group": cells(intervals.split_metrics(te, shifted, np.float32(0.0), by=())["all"])}
    for k in ("pr_auc", "roc_auc"):
        both["group"].pop(k, None)
    both["group"]["threshold"] = "per group"
    res["all"] = both
    return res


def write_registry(path, version, fits, name="alert-default"):
    with open(path) as f:
        reg = json.load(f)  # key order kept (docs/models-registry.md)
    for e in reg["models"]:
        if e["name"] == name and e["version"] == version:
            op = e.setdefault("operating_point", {})
            # Every group, the pooled threshold for those that fell back: a config group that the
            # registry does not name keeps the threshold the config gave it (the configured
            # [model] threshold when it sets none), not the registry's (model_wiring.cpp).
            op["groups"] = {g: f["threshold"] for g, f in fits.items()}
            op["group_fits"] = {g: {k: v for k, v in f.items()} for g, f in fits.items()}
            op["groups_config"] = "configs/market_groups.toml"  # relative to the registry, as onnx is
            break
    else:
        raise MarketOpsError(f"{path}: no {name} v{version}")
    with open(path, "w") as f:
        json.dump(reg, f, indent=1)  # as registry.py writes it: small diffs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--registry", default=os.path.join(HERE, "registry.json"))
    ap.add_argument("--version", type=int, default=None, help="default: the prod version")
    ap.add_argument("--datasets", default=datasets.DEFAULT_CONFIG)
    ap.add_argument("--exports", default=datasets.DEFAULT_OUT)
    ap.add_argument("--groups", default=DEFAULT_GROUPS)
    ap.add_argument("--ticksentry")
    ap.add_argument("--write", action="store_true", help="write the fit into the registry")
    ap.add_argument("--out", help="JSON result (bench/results/...)")
    ap.add_argument("--validation-only", action="store_true",
                    help="fit and print; do not read the test split")
    args = ap.parse_args(argv)
    binary = engine_cli.find_binary(args.ticksentry)
    reg = registry.load(args.registry)
    entry = registry.prod(reg, "alert-default") if args.version is None else \
        next(e for e in reg["models"] if e["name"] == "alert-default" and e["version"] == args.version)
    pooled = float(entry["operating_point"]["threshold"])
    groups = load_groups(args.groups)
    paths = datasets.markets(datasets.load(args.datasets), args.exports)
    if not paths:
        raise MarketOpsError(f"no exports under {args.exports}: run models/datasets.py export")
    markets = [protocol.load_market(n, p, task=entry.get("task", "detect")) for n, p in paths.items()]
    study = protocol.Study(markets)
    regdir = os.path.dirname(os.path.abspath(args.registry))
    va = study.validation()
    s_va = task_gate.served_scores(entry, va, binary, regdir)
    refit = protocol.fit_operating_point(va, s_va)
    fits = fit_groups(va, s_va, groups, pooled)
    for g, f in fits.items():
        print(f"validation {g}: threshold {f['threshold']:.6g} ({f['why']}; "
              f"{f['validation_symbol_hours']} symbol-hours, {f['validation_events']} events)")
    if args.write:
        write_registry(args.registry, entry["version"], fits)
        print(f"wrote operating_point.groups of alert-default v{entry['version']} into {args.registry}")
    if args.validation_only:
        return 0
    te = study.test()  # read once, to report
    s_te = task_gate.served_scores(entry, te, binary, regdir)
    res = measure(te, s_te, groups, fits, pooled)
    for g, r in res.items():
        if "pooled" not in r:
            print(f"test {g}: no rows")
            continue
        for k in ("pooled", "group"):
            c = r[k]
            fa = c["false_alerts_per_symbol_hour"]
            t = c["threshold"]
            t = t if isinstance(t, str) else f"{t:.4f}"
            v = fa["value"]
            print(f"test {g:7s} {k:6s} thr {t} caught {c['events_caught']}/{c['events']} "
                  f"false/sym-h {v if v is None else round(v, 2)} [{fa['lo']}, {fa['hi']}]")
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    out = {"what": "per-market operating points of alert-default (models/market_ops.py)",
           "model": f"alert-default v{entry['version']} ({entry.get('detector')})",
           "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
           "machine": f"{platform.node()} ({os.cpu_count()} cores)", "commit": commit,
           "binary": binary, "exports": args.exports, "groups_config": args.groups,
           "budget_false_alerts_per_symbol_hour": protocol.BUDGET_FALSE_PER_SYMBOL_HOUR,
           "min_validation_symbol_hours": MIN_SYMBOL_HOURS,
           "block_s": intervals.BLOCK_S, "reps": intervals.REPS,
           "pooled_threshold_registry": pooled,
           "pooled_threshold_refit_on_these_exports": refit["threshold"],
           "validation": fits, "test": res}
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(out, f, indent=1, default=float)
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
