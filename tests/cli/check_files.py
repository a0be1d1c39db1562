#!/usr/bin/env python3
"""ncore-sim with files, checked against NumPy: .npy inputs and outputs in every dtype, the
JSON report, Program images and listings, the golden backend, malformed input files.

usage: check_files.py <ncore-sim> <scratch dir>
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

C = Checks(sys.argv[1], sys.argv[2])
path, run, check = C.path, C.run, C.check


def bf16_round(x):
    """float32 -> nearest bfloat16 (ties to even), returned as float32."""
    u = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) >> 16 << 16
    return u.astype(np.uint32).view(np.float32)


rng = np.random.default_rng(7)
n = 25600

# fp32: out = a + b exactly, the JSON report.
a = rng.random(n, dtype=np.float32)
b = rng.random(n, dtype=np.float32)
np.save(path("a32.npy"), a)
np.save(path("b32.npy"), b)
rc, out = run("--kernel", "stream", "--free-dim", 200, "--a", path("a32.npy"), "--b", path("b32.npy"),
              "--out", path("o32.npy"), "--json", path("r32.json"), "--check")
check(rc == 0, f"fp32 stream run exits 0 ({rc})\n{out}")
o = np.load(path("o32.npy"))
check(o.dtype == np.float32 and o.shape == (n,), f"fp32 output is float32 [{n}] ({o.dtype} {o.shape})")
check(np.array_equal(o, a + b), "fp32 output equals NumPy's a + b bit for bit")
r = json.load(open(path("r32.json")))
for key in ("kernel", "correct", "cycles", "time_us", "dma_transfer_count", "config", "model_version",
            "model_revision"):
    check(key in r, f"JSON report has '{key}'")
check(r.get("config") == "trn2" and len(r.get("model_revision", "")) >= 7,
      f"JSON: the preset and the model's revision ({r.get('config')}, {r.get('model_revision')})")
check(r.get("kernel") == "stream" and r.get("correct") is True, "JSON: kernel stream, correct true")
check(r.get("dma_transfer_count") == 3, "JSON: 3 DMA transfers at FREE_DIM=200")
check(abs(r.get("time_us", 0) - r.get("cycles", 0) / 2400.0) < 1e-6, "JSON: time_us = cycles at 2400 MHz")

# fp16: inputs and output in float16.
a16 = rng.random(n, dtype=np.float32).astype(np.float16)
b16 = rng.random(n, dtype=np.float32).astype(np.float16)
np.save(path("a16.npy"), a16)
np.save(path("b16.npy"), b16)
rc, out = run("--kernel", "tiled", "--row-chunk", 128, "--dtype", "fp16", "--a", path("a16.npy"), "--b",
              path("b16.npy"), "--out", path("o16.npy"))
check(rc == 0, f"fp16 tiled run exits 0 ({rc})\n{out}")
o16 = np.load(path("o16.npy"))
want16 = (a16.astype(np.float32) + b16.astype(np.float32)).astype(np.float16)
check(o16.dtype == np.float16 and np.array_equal(o16, want16), "fp16 output equals the fp32 sum rounded once")

# bf16: float32 inputs rounded to bfloat16 on the way in; output widened to float32.
rc, out = run("--kernel", "stream", "--dtype", "bf16", "--a", path("a32.npy"), "--b", path("b32.npy"), "--out",
              path("obf.npy"))
check(rc == 0, f"bf16 stream run exits 0 ({rc})\n{out}")
obf = np.load(path("obf.npy"))
check(np.array_equal(obf, bf16_round(bf16_round(a) + bf16_round(b))), "bf16 output equals the sum rounded once")

# Program image and listing: the image runs to the same result and cycle count.
rc, out = run("--kernel", "stream", "-n", n, "--save-image", path("p.ncimg"), "--listing", path("p.lst"),
              "--json", path("r1.json"))
check(rc == 0 and os.path.getsize(path("p.ncimg")) > 0, "image saved")
listing = open(path("p.lst")).read()
check("tensor_tensor" in listing and "dma_copy" in listing, "listing names the instructions")
rc, out = run("--kernel", "stream", "-n", n, "--image", path("p.ncimg"), "--json", path("r2.json"))
check(rc == 0, f"image runs ({rc})\n{out}")
check(json.load(open(path("r1.json")))["cycles"] == json.load(open(path("r2.json")))["cycles"],
      "the image takes as many cycles as the traced kernel")

# A kernel with constants (causal_mask: affine_select's bounds are constant HBM tensors of the
# Program): its image carries them, so the image alone runs to the reference's answer.
rc, out = run("--kernel", "causal_mask", "-n", 256, "-m", 320, "--check", "--save-image", path("cm.ncimg"))
check(rc == 0 and "Correctness passed? True" in out, f"causal_mask in check mode ({rc})\n{out}")
rc, out = run("--kernel", "causal_mask", "-n", 256, "-m", 320, "--image", path("cm.ncimg"), "--out", path("cm.npy"))
check(rc == 0 and "Correctness passed? True" in out, f"causal_mask from its image ({rc})\n{out}")
cm = np.load(path("cm.npy"))
check(np.isneginf(cm[0, 1:]).all() and np.isfinite(np.tril(cm[:, :256])).all(), "-inf exactly above the diagonal")
for dt in ("bf16", "fp16"):
    rc, out = run("--kernel", "causal_mask", "-n", 128, "-m", 96, "--dtype", dt, "--backend", "golden")
    check(rc == 0 and "Correctness passed? True" in out, f"causal_mask {dt} ({rc})\n{out}")

# Golden backend: the same answer.
rc, out = run("--kernel", "stream", "--a", path("a32.npy"), "--b", path("b32.npy"), "--out", path("og.npy"),
              "--backend", "golden")
check(rc == 0 and np.array_equal(np.load(path("og.npy")), o), "golden backend gives the RTL's answer")

# Malformed inputs: clear errors, exit status 2.
with open(path("bad.npy"), "wb") as f:
    f.write(b"not a numpy file at all")
rc, out = run("--kernel", "stream", "--a", path("bad.npy"))
check(rc == 2 and "not a usable .npy file" in out, f"malformed .npy is refused ({rc}: {out.strip()})")
np.save(path("short.npy"), a[:100])
rc, out = run("--kernel", "stream", "-n", n, "--a", path("short.npy"))
check(rc == 2 and "100 elements" in out, f"wrong element count is refused ({rc}: {out.strip()})")
np.save(path("f64.npy"), a.astype(np.float64))
rc, out = run("--kernel", "stream", "--a", path("f64.npy"))
check(rc == 2 and "'<f8'" in out, f"float64 is refused with its type named ({rc}: {out.strip()})")

# Found by the fuzz_npy target: a shape that is not a tuple threw std::out_of_range (an empty
# value) or was read as a scalar (a bare number). Both are refused, saying why.
for value in (b"", b"5", b"[2]"):
    header = b"{'descr': '<f4', 'fortran_order': False, 'shape': " + value + b", }"
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    with open(path("shape.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 8)
    rc, out = run("--kernel", "stream", "--a", path("shape.npy"))
    check(rc == 2 and "is not a tuple" in out, f"shape {value!r} is refused ({rc}: {out.strip()})")

C.finish("file checks")
