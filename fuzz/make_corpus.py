#!/usr/bin/env python3
"""fuzz/make_corpus.py: writes the seed corpus of the three fuzz targets.

The seeds are small on purpose (libFuzzer mutates them millions of times):
a few valid inputs of each kind, and a few that are wrong in the ways real
files go wrong. Run once from the project root; the files are committed:
    python3 fuzz/make_corpus.py
"""
import json
import os
import struct

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def put(target, name, data):
    d = os.path.join(ROOT, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- safetensors -----------------------------------------------------------
def safetensors(tensors, meta=None, pad=True):
    """tensors: list of (name, dtype, shape, values). Returns the file bytes."""
    header, blob = {}, b""
    if meta is not None:
        header["__metadata__"] = meta
    for name, dtype, shape, values in tensors:
        fmt = "<%d%s" % (len(values), "f" if dtype == "F32" else "d")
        raw = struct.pack(fmt, *values)
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [len(blob), len(blob) + len(raw)]}
        blob += raw
    h = json.dumps(header, separators=(",", ":")).encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + blob


SMOKE = {"img": "32", "channels": "3", "patch": "4", "dim": "32", "depth": "2",
         "heads": "2", "mlp_ratio": "4", "freq_dim": "32", "norm": "layernorm",
         "qk_norm": "false", "mlp": "gelu", "mlp_multiple_of": "1", "pos": "learned",
         "rope_base": "100", "bias": "true", "seed": "0", "lr": "0.000300000014",
         "weight_decay": "0", "batch": "16", "steps": "60", "flip": "true", "threads": "0"}
TRAIN = {"train.step": "20", "train.noise_rng": "0x000000000a5ee1f0 0 0x00000000",
         "train.data": "seed=0 epoch=0 pos=3 rng=0x9e3779b97f4a7c15 spare=0:0x00000000",
         "train.seconds": "1.5", "train.max_logit": "2.03,1.93", "train.preset": "smoke"}

put("safetensors", "tiny_f32", safetensors([("w", "F32", [2, 2], [1, 2, 3, 4])], {"dim": "32"}))
put("safetensors", "f64", safetensors([("a", "F64", [3], [0.5, -1e300, 3])]))
put("safetensors", "scalar_empty", safetensors([("s", "F32", [], [7]), ("e", "F32", [0], []),
                                                ("v", "F32", [2, 3], [0, 1, 2, 3, 4, 5])]))
put("safetensors", "checkpoint_like", safetensors(
    [("head.bias", "F32", [3], [0.1, 0.2, 0.3]), ("adamw_m.head.bias", "F32", [3], [0, 0, 0]),
     ("adamw_v.head.bias", "F32", [3], [0, 0, 0]), ("pos_row", "F32", [2, 1], [0.01, -0.02])],
    dict(SMOKE, **TRAIN)))
put("safetensors", "unpadded", safetensors([("x", "F32", [1], [1.0])], {}, pad=False))
put("safetensors", "empty_header", struct.pack("<Q", 2) + b"{}")

# --- cifar -----------------------------------------------------------------
# First byte: bit 7 set = records from the length, else (byte % 4) + 1.
def record(label, shift):
    return bytes([label]) + bytes((i * 7 + shift) & 255 for i in range(3072))

put("cifar", "one_record", bytes([0x00]) + record(3, 0))
put("cifar", "two_records", bytes([0x80]) + record(0, 1) + record(9, 2))
put("cifar", "bad_label", bytes([0x80]) + record(10, 0))
put("cifar", "too_short", bytes([0x01]) + record(1, 5))          # 2 records asked, 1 given
put("cifar", "one_byte_long", bytes([0x00]) + record(2, 9) + b"\x00")

# --- config ----------------------------------------------------------------
put("config", "smoke", "dim=32\ndepth=2\nheads=2\nfreq_dim=32\nbatch=16\nsteps=60\n")
put("config", "modern", "modern\npos=rope2d\nmlp_multiple_of=64\n")
put("config", "floats", "lr=1e-3\nmlp_ratio=2.5\nrope_base=10000\nweight_decay=0.05\n")
put("config", "bad", "dim=abc\nheads=-1\nnorm=batchnorm\nmodern=false\nlr=nan\nbogus=1\n")
put("config", "seed", "seed=18446744073709551615\nflip=false\nbias=0\nqk_norm=1\nthreads=2\n")
put("config", "invalid_combo", "dim=30\nheads=4\npos=rope2d\n")
