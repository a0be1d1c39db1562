#!/usr/bin/env python3
"""The reference check of the kernels that sum in fp32 (matmul, conv): results as accurate as
float32 arithmetic allows pass, against the forward error bound of the accumulation, and the
report says which bound it used. The cases are those an element-wise rtol/atol 1e-8 check
failed: a conv with signed weights and a bias (batch 2, 128 -> 256 channels, 18 x 12, pool 2)
and matmul -k 256 -m 128 -n 512 with standard-normal inputs in fp32 and fp16. Each output is
also checked here against a float64 NumPy reference and the same bound computed from the
inputs, independently of ncore-sim.

usage: check_bounds.py <ncore-sim> <scratch dir>
"""
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

C = Checks(sys.argv[1], sys.argv[2])
path, run, check = C.path, C.run, C.check
rng = np.random.default_rng(2024)
U32 = 2.0 ** -24
MANT = {"fp32": 24, "fp16": 11}
ETA = {"fp32": 2.0 ** -149, "fp16": 2.0 ** -24}


def bound(ref, mag, n, dtype, out):
    u_dt = 2.0 ** -MANT[dtype]
    gamma = n * U32 / (1 - n * U32) * (1 + u_dt)
    return gamma * mag + u_dt * (np.abs(out) + np.abs(ref)) + 2 * ETA[dtype]


def report_checks(name, rc, out, js):
    check(rc == 0 and "Correctness passed? True" in out, f"{name}: passes ({rc}: {out.splitlines()[:3]})")
    check("forward error bound" in out and "sum|terms|" in out, f"{name}: the report names the bound")
    rule = js["compare"][next(iter(js["compare"]))]
    check(js["correct"] is True and 0 <= rule["max_bound_ratio"] <= 1 and "gamma(" in rule["rule"],
          f"{name}: the JSON has the rule and the error's share of the bound ({rule})")


# --- conv: batch 2, 128 -> 256, 18 x 12, signed weights, bias, pool 2 -------------------------
X = rng.uniform(-0.3, 0.7, (2, 128, 18, 12)).astype(np.float32)
W = rng.uniform(-0.5, 0.5, (256, 128, 3, 3)).astype(np.float32)
b = rng.uniform(-0.5, 0.5, 256).astype(np.float32)
for f, a in (("x.npy", X), ("w.npy", W), ("bias.npy", b)):
    np.save(path(f), a)
rc, out = run("--kernel", "conv", "--x", path("x.npy"), "--w", path("w.npy"), "--bias", path("bias.npy"),
              "--pool-size", 2, "--backend", "golden", "--out", path("conv.npy"), "--json", path("conv.json"))
report_checks("conv", rc, out, json.load(open(path("conv.json"))))


def conv64(x, w, bias, absolute):
    x, w, bias = (np.abs(a) if absolute else a for a in (x.astype(np.float64), w.astype(np.float64), bias.astype(np.float64)))
    B, Ci, H, Wd = x.shape
    Co, _, K, _ = w.shape
    Ho, Wo = H - K + 1, Wd - K + 1
    acc = np.zeros((B, Co, Ho, Wo)) + bias[None, :, None, None]
    for i in range(K):
        for j in range(K):
            acc += np.einsum("oc,bchw->bohw", w[:, :, i, j], x[:, :, i:i + Ho, j:j + Wo])
    p = 2
    return acc[:, :, :Ho // p * p, :Wo // p * p].reshape(B, Co, Ho // p, p, Wo // p, p).max(axis=(3, 5))


got = np.load(path("conv.npy")).astype(np.float64)
ref, mag = conv64(X, W, b, False), conv64(X, W, b, True)
err = np.abs(got - ref)
check(bool(np.all(err <= bound(ref, mag, 128 * 9 + 9 + 1, "fp32", got))),
      f"conv: within the bound of a float64 reference (max abs error {err.max():.3g})")
check(not np.allclose(got, ref, rtol=1e-5, atol=1e-8),
      "conv: a case the element-wise rtol 1e-5 / atol 1e-8 check fails (what the bound is for)")

# --- matmul -k 256 -m 128 -n 512, standard normal, fp32 and fp16 -----------------------------
for dtype, npt in (("fp32", np.float32), ("fp16", np.float16)):
    L = rng.standard_normal((256, 128)).astype(npt)
    R = rng.standard_normal((256, 512)).astype(npt)
    np.save(path("l.npy"), L)
    np.save(path("r.npy"), R)
    rc, out = run("--kernel", "matmul", "-k", 256, "-m", 128, "-n", 512, "--dtype", dtype, "--input",
                  f"lhsT={path('l.npy')}", "--input", f"rhs={path('r.npy')}", "--backend", "golden",
                  "--out", path("mm.npy"), "--json", path("mm.json"))
    report_checks(f"matmul {dtype}", rc, out, json.load(open(path("mm.json"))))
    got = np.load(path("mm.npy")).astype(np.float64)
    L64, R64 = L.astype(np.float64), R.astype(np.float64)
    ref, mag = L64.T @ R64, np.abs(L64).T @ np.abs(R64)
    err = np.abs(got - ref)
    check(bool(np.all(err <= bound(ref, mag, 256 + 2 + 1, dtype, got))),
          f"matmul {dtype}: within the bound of a float64 reference (max abs error {err.max():.3g})")

C.finish("bound checks")
