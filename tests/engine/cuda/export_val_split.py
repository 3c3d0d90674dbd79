#!/usr/bin/python3
"""Writes the validation split of a feature export (models/dataset.py's split rule: windows whose
end time falls in 70..85 % of the export's time range) as OUT/windows.npy [N, T, F] float32 and
OUT/labels.npy [N] uint8, for the CUDA backend's AUC test (cuda_accuracy_test.cpp, which reads
TS_AUC_DATA=OUT). Run with Debian's python (numpy):

    /usr/bin/python3 tests/engine/cuda/export_val_split.py build/models-data/lobster OUT
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "models"))
import dataset  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    ds = dataset.load_export(src)
    val = dataset.split_masks(ds)["val"]
    os.makedirs(out, exist_ok=True)
    np.save(os.path.join(out, "windows.npy"), np.ascontiguousarray(ds.windows[val], dtype=np.float32))
    np.save(os.path.join(out, "labels.npy"), ds.labels[val].astype(np.uint8))
    print(f"{out}: {int(val.sum())} validation windows, {int(ds.labels[val].sum())} positive")


if __name__ == "__main__":
    main()
