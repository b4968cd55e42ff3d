#!/usr/bin/env python3
"""Reads a meshslice checkpoint as any Python user would, with json and numpy alone, and checks it.

    read_checkpoint.py CHECKPOINT_DIR GATHERED.safetensors

Every tensor of CHECKPOINT_DIR/model.safetensors must equal the one of the same name in
GATHERED.safetensors (the run's own weights, gathered another way), every file's size and CRC-32
must be what CHECKPOINT_DIR/trainer.json records, and optimizer.safetensors must hold each
parameter's state under its name. Exit 77 (a skip for ctest) without numpy.
"""
import json
import struct
import sys
import zlib

try:
    import numpy as np
except ImportError:
    print("numpy is not installed (Debian: python3-numpy): skipped")
    sys.exit(77)


def read_safetensors(path):
    """The safetensors layout: 8-byte little-endian header length, JSON header, raw data."""
    with open(path, "rb") as f:
        length = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(length))
        data = f.read()
    dtypes = {"F32": "<f4", "F64": "<f8", "BF16": "<u2"}
    tensors = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        begin, end = t["data_offsets"]
        values = np.frombuffer(data[begin:end], dtype=dtypes[t["dtype"]])
        if t["dtype"] == "BF16":  # numpy has no bfloat16: its bits are a float32's upper half
            values = (values.astype("<u4") << 16).view("<f4")
        tensors[name] = values.reshape(t["shape"])
    return header.get("__metadata__", {}), tensors


def main(checkpoint, gathered_path):
    with open(f"{checkpoint}/trainer.json") as f:
        trainer = json.load(f)
    for name, facts in trainer["files"].items():
        with open(f"{checkpoint}/{name}", "rb") as f:
            data = f.read()
        assert len(data) == facts["bytes"], f"{name}: {len(data)} bytes, trainer.json says {facts['bytes']}"
        crc = f"{zlib.crc32(data):08x}"
        assert crc == facts["crc32"], f"{name}: CRC-32 {crc}, trainer.json says {facts['crc32']}"
    meta, model = read_safetensors(f"{checkpoint}/model.safetensors")
    _, gathered = read_safetensors(gathered_path)
    assert sorted(model) == sorted(gathered), "the checkpoint and the gathered weights name different tensors"
    worst = 0.0
    for name, tensor in model.items():
        assert tensor.shape == gathered[name].shape, f"{name}: shape {tensor.shape} vs {gathered[name].shape}"
        worst = max(worst, float(np.max(np.abs(tensor.astype(np.float64) - gathered[name]))))
    assert worst == 0.0, f"largest difference {worst}"
    _, optimizer = read_safetensors(f"{checkpoint}/optimizer.safetensors")
    states = {"adamw": ["exp_avg", "exp_avg_sq"], "sgd": ["momentum"]}[trainer["optimizer"]]
    for name, tensor in model.items():
        for state in states:
            assert optimizer[f"{name}.{state}"].shape == tensor.shape, f"{name}.{state}"
    try:  # the reference implementation, where installed (PyPI: safetensors), reads it the same
        from safetensors.numpy import load_file
        reference = load_file(f"{checkpoint}/model.safetensors")
        assert all(np.array_equal(reference[n], t) for n, t in model.items()), "safetensors differs"
        print("the safetensors library reads the same tensors")
    except ImportError:
        print("the safetensors library is not installed: that check skipped")
    print(f"{checkpoint}: step {trainer['step']} ({meta.get('step')} in the header), "
          f"{len(model)} tensors equal to the gathered weights, {len(optimizer)} optimizer "
          f"tensors, both files' sizes and CRC-32 as trainer.json records")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
