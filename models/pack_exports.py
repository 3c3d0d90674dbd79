#!/usr/bin/python3
"""Pack feature exports small enough to travel (the GPU machine's 64 MiB working-tree limit), and
unpack them bit for bit.

    /usr/bin/python3 models/pack_exports.py pack --exports build/models-data --out PACK_DIR
    python3 models/pack_exports.py unpack --pack PACK_DIR --out build/models-data

A symbol's consecutive windows overlap by T − k rows (k = the rows between their ends), so a
window is stored as the k rows it adds to the symbol's previous window whenever the overlap is
exact, else whole; the other arrays and files are copied as they are. Each export becomes one
compressed .npz (plus its small text files); unpack rebuilds windows.npy and checks the values' sha256.
"""
import argparse
import hashlib
import json
import os
import shutil
import sys

import numpy as np

TEXT = ("manifest.json", "onsets.csv")


def pack_windows(w, symbol, end_ts, row_ns):
    n, t, f = w.shape
    ref = np.full(n, -1, np.int64)
    shift = np.zeros(n, np.int32)
    rows = []
    last = {}
    for i in range(n):
        s = int(symbol[i])
        j = last.get(s)
        last[s] = i
        if j is not None:
            k = int(round((int(end_ts[i]) - int(end_ts[j])) / row_ns))
            if 1 <= k < t and np.array_equal(w[i, :t - k], w[j, k:]):
                ref[i], shift[i] = j, k
                rows.append(np.asarray(w[i, t - k:]))
                continue
        rows.append(np.asarray(w[i]))
    return ref, shift, np.concatenate(rows) if rows else np.zeros((0, f), np.float32)


def unpack_windows(ref, shift, rows, t):
    n, f = ref.size, rows.shape[1]
    w = np.empty((n, t, f), np.float32)
    at = 0
    for i in range(n):
        j, k = int(ref[i]), int(shift[i])
        if j < 0:
            w[i] = rows[at:at + t]
            at += t
        else:
            w[i, :t - k] = w[j, k:]
            w[i, t - k:] = rows[at:at + k]
            at += k
    return w


def sha(path):
    """sha256 of the array's values (not the file: .npy headers differ in padding)."""
    w = np.load(path, mmap_mode="r")
    h = hashlib.sha256(str((w.dtype.str, w.shape)).encode())
    for s in range(0, w.shape[0], 4096):
        h.update(np.ascontiguousarray(w[s:s + 4096]).tobytes())
    return h.hexdigest()


def pack(exports, out):
    os.makedirs(out, exist_ok=True)
    for name in sorted(os.listdir(exports)):
        src = os.path.join(exports, name)
        if not os.path.exists(os.path.join(src, "manifest.json")):
            continue
        with open(os.path.join(src, "manifest.json")) as fh:
            man = json.load(fh)
        w = np.load(os.path.join(src, "windows.npy"), mmap_mode="r")
        arrays = {fn[:-4]: np.load(os.path.join(src, fn)) for fn in os.listdir(src)
                  if fn.endswith(".npy") and fn != "windows.npy"}
        ref, shift, rows = pack_windows(w, arrays["symbol"], arrays["end_ts_ns"],
                                        float(man.get("row_interval_ns", 1e9)))
        dst = os.path.join(out, name)
        os.makedirs(dst, exist_ok=True)
        np.savez_compressed(os.path.join(dst, "pack.npz"), w_ref=ref, w_shift=shift,
                            w_rows=rows, w_t=np.int64(w.shape[1]), **arrays)
        for fn in TEXT:
            if os.path.exists(os.path.join(src, fn)):
                shutil.copyfile(os.path.join(src, fn), os.path.join(dst, fn))
        with open(os.path.join(dst, "windows.sha256"), "w") as fh:
            fh.write(sha(os.path.join(src, "windows.npy")))
        print(f"pack: {name}: {w.shape[0]} windows, {rows.shape[0]} rows stored "
              f"({os.path.getsize(os.path.join(dst, 'pack.npz')) / 2**20:.1f} MiB)")


def unpack(pack_dir, out):
    for name in sorted(os.listdir(pack_dir)):
        src = os.path.join(pack_dir, name)
        if not os.path.exists(os.path.join(src, "pack.npz")):
            continue
        dst = os.path.join(out, name)
        os.makedirs(dst, exist_ok=True)
        z = np.load(os.path.join(src, "pack.npz"))
        w = unpack_windows(z["w_ref"], z["w_shift"], z["w_rows"], int(z["w_t"]))
        np.save(os.path.join(dst, "windows.npy"), w)
        for k in z.files:
            if not k.startswith("w_"):
                np.save(os.path.join(dst, k + ".npy"), z[k])
        for fn in TEXT:
            if os.path.exists(os.path.join(src, fn)):
                shutil.copyfile(os.path.join(src, fn), os.path.join(dst, fn))
        with open(os.path.join(src, "windows.sha256")) as fh:
            want = fh.read().strip()
        got = sha(os.path.join(dst, "windows.npy"))
        if got != want:
            raise SystemExit(f"unpack: {name}: windows.npy sha256 {got} != packed {want}")
        print(f"unpack: {name}: {w.shape[0]} windows, sha256 ok")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("pack", "unpack"))
    ap.add_argument("--exports")
    ap.add_argument("--pack")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    if a.command == "pack":
        pack(a.exports, a.out)
    else:
        unpack(a.pack, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
