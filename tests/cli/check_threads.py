#!/usr/bin/env python3
"""ncore-sim --threads: the two-thread trn2 model gives the single-thread model's results bit
for bit and cycle for cycle (tensor-engine kernels in check mode), and auto picks the two-thread
model only for Programs that use the tensor engine.

usage: check_threads.py <ncore-sim> <scratch dir>
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

C = Checks(sys.argv[1], sys.argv[2])
path, run, check = C.path, C.run, C.check


CASES = {
    "matmul bf16": ["--kernel", "matmul_blocked", "-k", 256, "-m", 256, "-n", 1024, "--dtype", "bf16"],
    "transpose fp32": ["--kernel", "transpose", "-n", 256, "-m", 384],
    "conv fp16 pool 2": ["--kernel", "conv", "--batch", 1, "--in-channels", 256, "--pool-size", 2, "--dtype", "fp16"],
}
SAME = ("cycles", "evaluated_cycles", "skipped_cycles", "instructions", "checked_instructions", "dma_transfer_count",
        "pe_macs", "pe_array_busy_cycles", "hbm_read_bytes", "hbm_write_bytes")
for label, args in CASES.items():
    res = {}
    for t in (1, 2):
        tag = f"{label.replace(' ', '_')}_{t}"
        rc, out = run(*args, "--check", "--threads", t, "--json", path(tag + ".json"), "--out", path(tag + ".npy"))
        check(rc == 0, f"{label} on {t} thread(s) passes in check mode ({rc})\n{out}")
        check(f"{t} thread" in out, f"{label}: the report names {t} thread(s)")
        res[t] = json.load(open(path(tag + ".json"))) if rc == 0 else {}
        check(res[t].get("rtl_threads") == t, f"{label}: JSON rtl_threads = {t} ({res[t].get('rtl_threads')})")
    for key in SAME:
        check(res[1].get(key) == res[2].get(key), f"{label}: {key} the same on 1 and 2 threads "
                                                  f"({res[1].get(key)}, {res[2].get(key)})")
    o1 = open(path(f"{label.replace(' ', '_')}_1.npy"), "rb").read()
    o2 = open(path(f"{label.replace(' ', '_')}_2.npy"), "rb").read()
    check(o1 == o2, f"{label}: the outputs of 1 and 2 threads are the same bits")

# auto: two threads for a tensor-engine Program on a machine with two cores, one otherwise.
two = (os.cpu_count() or 1) >= 2
rc, _ = run("--kernel", "transpose", "-n", 128, "--json", path("auto_pe.json"))
check(rc == 0 and json.load(open(path("auto_pe.json")))["rtl_threads"] == (2 if two else 1),
      "auto: the transpose runs on the two-thread model (machine with two cores or more)")
rc, _ = run("--kernel", "stream", "-n", 25600, "--json", path("auto_ve.json"))
check(rc == 0 and json.load(open(path("auto_ve.json")))["rtl_threads"] == 1,
      "auto: vector add (no tensor engine) runs on the single-thread model")
rc, _ = run("--kernel", "stream", "-n", 25600, "--config", "trn1", "--threads", "auto", "--json", path("auto_trn1.json"))
check(rc == 0 and json.load(open(path("auto_trn1.json")))["rtl_threads"] == 1, "auto: trn1 runs on one thread")

C.finish()
