#!/usr/bin/env python3
"""isagen refuses a preset description whose numbers the RTL and the simulator cannot hold: HBM
address bits beyond the ISA's offset field, no HBM credits, no DMA transfer in flight, a missing
parameter; and writes the outputs of the real description.

usage: check_isagen.py <isagen> <ncore_isa.json> <ncore_presets.json> <scratch dir>
"""
import json
import os
import re
import subprocess
import sys
from checklist import check, finish

ISAGEN, ISA, PRESETS, DIR = sys.argv[1:5]
os.makedirs(DIR, exist_ok=True)


def load(path):
    return json.loads(re.sub(r"^\s*//.*$", "", open(path).read(), flags=re.M))


def run(presets):
    path = os.path.join(DIR, "presets.json")
    json.dump(presets, open(path, "w"))
    return subprocess.run([ISAGEN, ISA, path, os.path.join(DIR, "out")], capture_output=True, text=True)


base = load(PRESETS)
p = run(base)
check(p.returncode == 0 and os.path.isfile(os.path.join(DIR, "out", "waves", "filters", "opcode.txt")),
      f"the description as committed generates ({p.returncode}: {p.stderr.strip()})")


def broken(name, value):
    d = json.loads(json.dumps(base))
    v = d["presets"][0]["values"]
    if value is None:
        del v[name]
    else:
        v[name] = value
    return run(d)


for name, value, want in (("hbm_addr_bits", 41, "hbm_addr_bits must be 1 to 40 (the width of ap.offset)"),
                          ("hbm_addr_bits", 0, "hbm_addr_bits must be 1 to 40"),
                          ("dma_hbm_credits", 0, "dma_hbm_credits must be at least 1"),
                          ("dma_queue_inflight", 0, "dma_queue_inflight must be at least 1"),
                          ("dma_engine_inflight", 0, "dma_engine_inflight must be at least 1"),
                          ("dma_hbm_credits", None, "lacks dma_hbm_credits")):
    p = broken(name, value)
    check(p.returncode == 1 and want in p.stderr, f"{name} = {value}: exit 1, '{want}' ({p.returncode}: {p.stderr.strip()})")
finish()
