#!/usr/bin/python3
"""The protocol's data sets by name (models/configs/datasets.toml) and their feature exports.

    /usr/bin/python3 models/datasets.py export [--config models/configs/datasets.toml]
        [--data $TICKSENTRY_DATA_DIR] [--out build/models-data] [--ticksentry BIN] [--force]
    /usr/bin/python3 models/datasets.py list [--out build/models-data]

`export` runs `ticksentry features --export OUT/<name> --format <format> <inputs>` for every
data set, in file order. One is left out, with the reason printed, when its input files are
missing or when this build's `ticksentry features` does not know its format (a reader not
merged yet); an export is redone when the binary is newer than its manifest (labels change
with the binary) or with --force. `list` prints each data set, its market and whether its export
is there. study.py and events.py read the same file (markets()), so a new data set plugs in by
adding a block there.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import tomllib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import engine_cli  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
DEFAULT_CONFIG = os.path.join(HERE, "configs", "datasets.toml")
DEFAULT_OUT = os.path.join(REPO, "build", "models-data")


class DatasetsError(ValueError):
    pass


def data_dir(given=None):
    return given or os.environ.get("TICKSENTRY_DATA_DIR") or os.path.join(REPO, "..", "shared",
                                                                          "data")


def load(path=DEFAULT_CONFIG):
    """The data sets, in file order: [{name, market, format, inputs}]."""
    try:
        with open(path, "rb") as f:
            cfg = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise DatasetsError(f"{path}: {e}") from e
    out, seen = [], set()
    for i, d in enumerate(cfg.get("dataset", [])):
        for key in ("name", "market", "format", "inputs"):
            if key not in d:
                raise DatasetsError(f"{path}: dataset {i + 1} has no \"{key}\"")
        if d["name"] in seen:
            raise DatasetsError(f"{path}: dataset name {d['name']!r} appears twice")
        if not isinstance(d["inputs"], list) or not d["inputs"]:
            raise DatasetsError(f"{path}: dataset {d['name']}: inputs must be a non-empty list")
        seen.add(d["name"])
        out.append({**{k: d[k] for k in ("name", "market", "format", "inputs")},
                    "tz": d.get("tz", "UTC")})
    return out


def resolve_inputs(ds, root):
    """The input paths of a data set (each glob sorted), or raises DatasetsError naming the
    pattern that matches nothing."""
    paths = []
    for pattern in ds["inputs"]:
        hits = sorted(glob.glob(os.path.join(root, pattern)))
        if not hits:
            raise DatasetsError(f"no file matches {os.path.join(root, pattern)}")
        paths += hits
    return paths


def export_dir(ds, out):
    return os.path.join(out, ds["name"])


def known_formats(binary):
    """The --format values this binary's `features` accepts (from its own error message)."""
    p = subprocess.run([binary, "features", "--export", os.devnull + "/x", "--format", "?"],
                       capture_output=True, text=True)
    msg = p.stderr + p.stdout
    if "known:" not in msg:
        return None
    tail = msg.split("known:", 1)[1].split(")", 1)[0]
    return {x.strip() for x in tail.split(",") if x.strip()}


def export_all(datasets, root, out, binary, force=False, log=print):
    """Exports every data set it can; returns {name: reason} of those left out."""
    left_out = {}
    formats = known_formats(binary)
    for ds in datasets:
        dst = export_dir(ds, out)
        try:
            paths = resolve_inputs(ds, root)
        except DatasetsError as e:
            left_out[ds["name"]] = str(e)
            log(f"datasets: {ds['name']}: left out: {e}")
            continue
        if formats is not None and ds["format"] not in formats:
            left_out[ds["name"]] = (f"this build's `ticksentry features` has no reader for "
                                    f"format {ds['format']!r} yet")
            log(f"datasets: {ds['name']}: left out: {left_out[ds['name']]}")
            continue
        manifest = os.path.join(dst, "manifest.json")
        if (not force and os.path.exists(manifest)
                and os.path.getmtime(manifest) >= os.path.getmtime(binary)):
            log(f"datasets: {ds['name']}: export up to date ({dst})")
            continue
        cmd = [binary, "features", "--export", dst, "--format", ds["format"]] + paths
        log(f"datasets: {ds['name']}: {' '.join(cmd)}")
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            left_out[ds["name"]] = (p.stderr.strip().splitlines() or ["exit %d" % p.returncode])[-1]
            log(f"datasets: {ds['name']}: left out: {left_out[ds['name']]}")
            continue
        log("  " + p.stderr.strip().replace("\n", "\n  "))
    # Reasons name the data folder as the variable, not this machine's path.
    left_out = {k: v.replace(root.rstrip("/"), "$TICKSENTRY_DATA_DIR") for k, v in left_out.items()}
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "left_out.json"), "w") as f:
        json.dump(left_out, f, indent=1)
    return left_out


def left_out(out):
    """{name: reason} of the last `export` (empty when it has not run)."""
    try:
        with open(os.path.join(out, "left_out.json")) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def markets(datasets, out):
    """{market: [export folders that exist]}, in file order; markets without one are absent."""
    res = {}
    for ds in datasets:
        dst = export_dir(ds, out)
        if os.path.exists(os.path.join(dst, "manifest.json")):
            res.setdefault(ds["market"], []).append(dst)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("export", "list"))
    ap.add_argument("--config", default=DEFAULT_CONFIG)
    ap.add_argument("--data", help="the data folder (default $TICKSENTRY_DATA_DIR, else "
                    "../shared/data beside the repository)")
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--ticksentry")
    ap.add_argument("--force", action="store_true")
    args = ap.parse_args(argv)
    try:
        sets = load(args.config)
        if args.command == "list":
            for ds in sets:
                there = os.path.exists(os.path.join(export_dir(ds, args.out), "manifest.json"))
                print(f"{ds['name']}\t{ds['market']}\t{ds['format']}\t"
                      f"{'exported' if there else 'not exported'}")
            return 0
        left = export_all(sets, data_dir(args.data), args.out,
                          engine_cli.find_binary(args.ticksentry), args.force)
    except (DatasetsError, engine_cli.EngineError) as e:
        print(f"datasets: error: {e}", file=sys.stderr)
        return 1
    print(f"datasets: {len(sets) - len(left)} of {len(sets)} exported or up to date; "
          f"left out: {', '.join(left) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
