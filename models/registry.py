"""Model versions and the release gate.

models/registry.json holds every recorded model version (format in docs/models-registry.md):
    {"format_version": 2, "models": [
        {"name": "alert-default", "version": 3, "created": ISO, "stage": "candidate",
         "onnx": "versions/alert-default-v3.onnx", "sha256": "...", "bytes": N, "metrics": {...}, "data": {...},
         "config": {...}, "gate": {...}, "benchmark": {...},
         "plans": {"cpu": "versions/alert-default-v3.cpu.plan"},            # optional
         "history": [{"stage": "prod", "from": "candidate", "at": ISO, "by": "alice", "why": "...",
                      "replaced": 2, "gate": {...}}]}]}                   # written by the C++ side
Versions count up per name. This script records candidates (stage "candidate"); the stages
shadow, staging, prod and retired are set by `ticksentry models` (src/serve/model_registry.h),
which runs the promotion gate and keeps the history. Format 1 (no plans, no history) is read as
well; every write is format 2, and fields this script does not know are kept.

Gate (`make model`): on the VALIDATION split (the test split is read once, to report, never to
gate; docs/labels.md), a candidate is refused when its PR-AUC drops by more than 0.5 % relative
to the shipped model's on the same windows (cand < shipped * (1 - 0.005)), or when it is below
the best baseline's PR-AUC there; the reason states both numbers. The promotion gate of
`ticksentry models promote` (src/serve/promotion_gate.h) does the same with block-bootstrap
intervals.

Each recorded version carries "operating_point": the alert threshold fitted on validation for
1 false alert per symbol-hour; serving a registry version decides with exactly that threshold.
"""
import datetime
import hashlib
import json
import os
import shutil

GATE_MAX_RELATIVE_DROP = 0.005
FORMAT_VERSION = 2
READABLE_FORMATS = (1, 2)
STAGES = ("candidate", "shadow", "staging", "prod", "retired")


class RegistryError(ValueError):
    pass


def gate(candidate_pr_auc, shipped_pr_auc, max_drop=GATE_MAX_RELATIVE_DROP, baseline=None,
         split="validation"):
    """Returns {"passed": bool, "reason": str, ...}; a missing shipped metric passes the prod
    comparison (first model). baseline: (name, PR-AUC) of the best baseline on the same windows.
    split: the windows' split; "test" is refused (the protocol never gates on test)."""
    if split == "test":
        raise RegistryError("the gate never reads the test split (docs/labels.md): gate on "
                            "validation")
    if candidate_pr_auc is None:
        return {"passed": False, "reason": f"candidate PR-AUC undefined ({split} split has one "
                "class)", "candidate_pr_auc": None, "shipped_pr_auc": shipped_pr_auc}
    out = {"split": split, "candidate_pr_auc": candidate_pr_auc,
           "shipped_pr_auc": shipped_pr_auc, "max_relative_drop": max_drop}
    base_txt = ""
    if baseline is not None and baseline[1] is not None:
        out["baseline"], out["baseline_pr_auc"] = baseline
        base_txt = f"; best baseline {baseline[0]} {baseline[1]:.4f}"
        if candidate_pr_auc < baseline[1]:
            ship = "none" if shipped_pr_auc is None else f"{shipped_pr_auc:.4f}"
            out.update(passed=False, reason=f"PR-AUC {candidate_pr_auc:.4f} on {split} is below "
                       f"the best baseline {baseline[0]}'s {baseline[1]:.4f} (shipped model: "
                       f"{ship})")
            return out
    if shipped_pr_auc is None:
        out.update(passed=True, reason="no shipped model to compare with" + base_txt)
        return out
    floor = shipped_pr_auc * (1.0 - max_drop)
    out["floor"] = floor
    drop = (shipped_pr_auc - candidate_pr_auc) / shipped_pr_auc if shipped_pr_auc > 0 else 0.0
    out["relative_drop"] = drop
    if candidate_pr_auc < floor:
        out.update(passed=False, reason=f"PR-AUC {candidate_pr_auc:.4f} is {100 * drop:.2f} % below "
                   f"the shipped model's {shipped_pr_auc:.4f} (limit {100 * max_drop:.1f} %)"
                   + base_txt)
    else:
        out.update(passed=True, reason=f"PR-AUC {candidate_pr_auc:.4f} vs shipped "
                   f"{shipped_pr_auc:.4f} (floor {floor:.4f})" + base_txt)
    return out


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def load(path):
    if not os.path.exists(path):
        return {"format_version": FORMAT_VERSION, "models": []}
    try:
        with open(path) as f:
            reg = json.load(f)
    except ValueError as e:
        raise RegistryError(f"{path}: not valid JSON ({e})") from e
    if not isinstance(reg, dict) or not isinstance(reg.get("models"), list):
        raise RegistryError(f"{path}: expected an object with a \"models\" list")
    if reg.get("format_version") not in READABLE_FORMATS:
        raise RegistryError(f"{path}: format_version {reg.get('format_version')!r}, "
                            f"this tool reads {READABLE_FORMATS}")
    for m in reg["models"]:
        if m.get("stage") not in STAGES:
            raise RegistryError(f"{path}: {m.get('name')} v{m.get('version')}: stage {m.get('stage')!r} "
                                f"is not one of {STAGES}")
    return reg


def prod(reg, name):
    """The entry of `name` in stage prod, or None."""
    return next((m for m in reg["models"] if m.get("name") == name and m.get("stage") == "prod"), None)


def copy_next_version(reg, path, name, onnx_path):
    """The next version number of `name` in `reg` (loaded from `path`), with `onnx_path` copied
    next to the registry as versions/<name>-v<version>.onnx; returns (version, rel, dst): `rel`
    is the entry's "onnx" (relative to the registry's folder), `dst` the copy's path."""
    versions = [m.get("version", 0) for m in reg["models"] if m.get("name") == name]
    version = max(versions, default=0) + 1
    rel = os.path.join("versions", f"{name}-v{version}.onnx")
    dst = os.path.join(os.path.dirname(os.path.abspath(path)), rel)
    os.makedirs(os.path.dirname(dst), exist_ok=True)
    shutil.copyfile(onnx_path, dst)
    return version, rel, dst


def record_candidate(path, name, onnx_path, metrics, **extra):
    """Appends a new version of `name` with stage "candidate"; returns the entry.

    The ONNX file is copied next to the registry as versions/<name>-v<version>.onnx (the entry's
    "onnx", relative to the registry's folder), so a recorded version outlives the build tree."""
    reg = load(path)
    version, rel, dst = copy_next_version(reg, path, name, onnx_path)
    entry = {"name": name, "version": version,
             "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
             "stage": "candidate", "onnx": rel, "sha256": sha256_file(dst),
             "bytes": os.path.getsize(dst), "metrics": metrics}
    entry.update(extra)
    reg["models"].append(entry)
    reg["format_version"] = FORMAT_VERSION
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(reg, f, indent=1)
    os.replace(tmp, path)
    return entry
