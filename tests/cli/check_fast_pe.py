#!/usr/bin/env python3
"""ncore-sim --pe-model fast: the simulation-only PE array (rtl/sim/ncore_pe_array.sv, the
`_fastpe` models) gives the RTL array's results bit for bit and cycle for cycle, in check mode
(every instruction also against the golden model): matmul_tiled, matmul_blocked, transpose and
the conv in every dtype, matmuls of edge values (subnormals, signed zeros, infinities, NaNs,
sums that cancel exactly), trn1; and the same random Programs of ncore-regress (tiny and trn2)
with the same cycles and the same HBM at the end. The report, the JSON and the profile summary
name the PE array that ran.

usage: check_fast_pe.py <ncore-sim> <ncore-regress> <scratch dir>
"""
import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

C = Checks(sys.argv[1], sys.argv[3])
REGRESS = sys.argv[2]
path, run, check = C.path, C.run, C.check

# Edge-value matmul inputs, lhsT (k, m) and rhs (k, n) as float32: each column of lhsT has its
# kind, so each result element mixes classes.
rng = np.random.default_rng(7)
k, m, n = 256, 128, 512
lhsT = rng.uniform(-1, 1, (k, m)).astype(np.float32)
rhs = rng.uniform(-1, 1, (k, n)).astype(np.float32)
tiny = np.float32(1e-41)                                   # subnormal
lhsT[:, 0:8] = tiny * rng.integers(-3, 4, (k, 8))          # subnormal products and sums
lhsT[:, 8:16] = np.float32(2.0) ** -70                     # products below the smallest normal
rhs[:, 0:16] *= np.float32(2.0) ** -60
lhsT[:, 16:24] = 0.0
# Signed zeros: a sum starts at +0, and +0 + -0 = +0, so a -0 sum needs a negative product that
# rounds to zero (underflow below half the smallest subnormal): -0 products and -2^-200 ones.
lhsT[0::2, 24:32] = -0.0
lhsT[1::2, 24:32] = -(np.float32(2.0) ** -100)
rhs[:, 300:310] = np.abs(rhs[:, 300:310]) * np.float32(2.0) ** -100
lhsT[::2, 32:40] = 1.0
lhsT[1::2, 32:40] = -1.0                                   # exact cancellation: sums of +-x
rhs[1::2, :] = rhs[0::2, :]
lhsT[5, 40:44] = np.inf
lhsT[6, 44:48] = -np.inf                                   # inf, and inf - inf with the row above
lhsT[5, 44:48] = np.inf
lhsT[9, 48:52] = np.nan
lhsT[:, 52:56] = np.float32(3.0e38)                        # overflow to infinity
rhs[3, 100:104] = -0.0
rhs[4, 200:204] = 0.0
np.save(path("lhsT_edge.npy"), lhsT)
np.save(path("rhs_edge.npy"), rhs)
EDGE = ["--input", f"lhsT={path('lhsT_edge.npy')}", "--input", f"rhs={path('rhs_edge.npy')}"]

CASES = {
    "matmul_tiled fp32": ["--kernel", "matmul", "-k", 256, "-m", 128, "-n", 512],
    "matmul_blocked bf16": ["--kernel", "matmul_blocked", "-k", 256, "-m", 256, "-n", 1024, "--dtype", "bf16"],
    "matmul_blocked fp16": ["--kernel", "matmul_blocked", "-k", 384, "-m", 128, "-n", 512, "--dtype", "fp16"],
    "matmul edge values fp32": ["--kernel", "matmul", *EDGE],
    "matmul edge values bf16": ["--kernel", "matmul", "--dtype", "bf16", *EDGE],
    "transpose fp32": ["--kernel", "transpose", "-n", 256, "-m", 384],
    "conv fp32 pool 2": ["--kernel", "conv", "--batch", 1, "--pool-size", 2],
    "conv fp16 256 channels": ["--kernel", "conv", "--batch", 1, "--in-channels", 256, "--out-channels", 256,
                               "--height", 12, "--width", 10, "--dtype", "fp16"],
    "conv bf16 trn1": ["--kernel", "conv", "--batch", 1, "--dtype", "bf16", "--config", "trn1"],
}
SAME = ("cycles", "evaluated_cycles", "skipped_cycles", "instructions", "checked_instructions", "dma_transfer_count",
        "pe_macs", "pe_array_busy_cycles", "hbm_read_bytes", "hbm_write_bytes", "correct")
for label, args in CASES.items():
    res, rcs, outs = {}, {}, {}
    for pe in ("rtl", "fast"):
        tag = f"{label.replace(' ', '_')}_{pe}"
        rc, out = run(*args, "--check", "--threads", 1, "--pe-model", pe, "--json", path(tag + ".json"),
                      "--out", path(tag + ".npy"))
        rcs[pe] = rc
        # Edge values make the reference comparison fail (exit 1); check mode must not (exit 3).
        check(rc in ((0, 1) if "edge" in label else (0,)), f"{label} on the {pe} PE array runs in check mode ({rc})"
              + ("" if rc in (0, 1) else f"\n{out}"))
        check(f"{pe} PE array" in out, f"{label}: the report names the {pe} PE array")
        res[pe] = json.load(open(path(tag + ".json"))) if os.path.exists(path(tag + ".json")) else {}
        check(res[pe].get("pe_model") == pe, f"{label}: JSON pe_model = {pe} ({res[pe].get('pe_model')})")
        outs[pe] = open(path(tag + ".npy"), "rb").read() if os.path.exists(path(tag + ".npy")) else None
    check(rcs["rtl"] == rcs["fast"], f"{label}: the same exit status ({rcs})")
    for key in SAME:
        check(res["rtl"].get(key) == res["fast"].get(key),
              f"{label}: {key} the same on both PE arrays ({res['rtl'].get(key)}, {res['fast'].get(key)})")
    check(outs["rtl"] is not None and outs["rtl"] == outs["fast"], f"{label}: the outputs are the same bits")
    if "edge" in label and outs["rtl"]:
        o = np.load(path(f"{label.replace(' ', '_')}_rtl.npy")).astype(np.float32)
        bits = o.view(np.uint32)
        check(bool(np.isnan(o).any() and np.isinf(o).any() and (bits == 0x80000000).any() and (bits == 0).any()),
              f"{label}: the output has NaN, infinity, -0 and +0")
        if "fp32" in label:
            sub = (np.abs(o) > 0) & (np.abs(o) < np.finfo(np.float32).tiny)
            check(bool(sub.any()), f"{label}: the output has subnormals")

# The profile summary names the PE array.
rc, out = run("--kernel", "transpose", "-n", 128, "--pe-model", "fast", "--profile", path("prof"))
summary = json.load(open(path("prof.summary.json"))) if rc == 0 else {}
check(rc == 0 and summary.get("pe_model") == "fast" and "pe_model=fast" in out,
      f"--profile: the summary names the fast PE array ({summary.get('pe_model')})")
# The environment selects it too; the fast models run on one thread.
env = dict(os.environ, NCORE_PE_MODEL="fast")
p = subprocess.run([C.sim, "--kernel", "transpose", "-n", "128", "--json", path("env.json")], capture_output=True,
                   text=True, env=env)
j = json.load(open(path("env.json"))) if p.returncode == 0 else {}
check(j.get("pe_model") == "fast" and j.get("rtl_threads") == 1,
      f"NCORE_PE_MODEL=fast: the fast PE array on one thread ({j.get('pe_model')}, {j.get('rtl_threads')})")
rc, out = run("--kernel", "transpose", "-n", 128, "--pe-model", "fast", "--threads", 2)
check(rc == 2 and "thread" in out, f"--pe-model fast --threads 2 is refused ({rc}): {out.strip()[:200]}")
rc, out = run("--kernel", "transpose", "-n", 128, "--pe-model", "slow")
check(rc != 0, f"--pe-model slow is refused ({rc})")

# The same random Programs on both PE arrays: the same cycles and HBM, each in lockstep.
reg = {}
for pe in ("rtl", "fast"):
    js = path(f"regress_{pe}.json")
    p = subprocess.run([REGRESS, "--preset", "tiny,trn2", "--seed", "101", "--count", "24", "--weight",
                        "multiply_moving=40", "--weight", "load_stationary=15", "--pe-model", pe, "--json", js,
                        "--out", path(f"regress_{pe}"), "--no-shrink"], capture_output=True, text=True)
    check(p.returncode == 0, f"ncore-regress on the {pe} PE array: every Program passes in lockstep "
                             f"({p.returncode})" + ("" if p.returncode == 0 else "\n" + p.stdout[-2000:]))
    reg[pe] = json.load(open(js)) if os.path.exists(js) else {}
    check(reg[pe].get("pe_model") == pe, f"ncore-regress names the {pe} PE array")
a, b = reg["rtl"].get("program_results", []), reg["fast"].get("program_results", [])
check(len(a) == 24 and a == b, f"ncore-regress: the same {len(a)} Programs give the same cycles, MACs and HBM "
                               f"on both PE arrays")
check(sum(r["pe_macs"] for r in a) > 0, "ncore-regress: the Programs use the tensor engine")

C.finish()
