#!/usr/bin/env python3
"""ncore-sim --waves: a full dump, a dump limited to scopes, and one limited to a cycle window,
read back with GTKWave's fst2vcd.

usage: check_waves.py <ncore-sim> <fst2vcd> <scratch dir>
"""
import os
import re
import subprocess
import sys

SIM, FST2VCD, DIR = sys.argv[1:4]
os.makedirs(DIR, exist_ok=True)
failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def dump(name, *extra):
    path = os.path.join(DIR, name)
    p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--free-dim", "200", "--waves", path, *extra],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"run with {' '.join(extra) or 'a full dump'} exits 0 ({p.returncode}) {p.stderr.strip()}")
    vcd = subprocess.run([FST2VCD, path], capture_output=True, text=True).stdout
    scopes, stack, times = set(), [], []
    for line in vcd.splitlines():
        if line.startswith("$scope"):
            stack.append(line.split()[2])
        elif line.startswith("$upscope"):
            stack.pop()
        elif line.startswith("$var"):
            scopes.add(".".join(stack))
        elif line.startswith("#"):
            times.append(int(line[1:]))
    return os.path.getsize(path), scopes, times


full_size, full, full_times = dump("full.fst")
check(any(s.endswith("ncore_top.u_dma") for s in full) and any(s.endswith("ncore_top.u_dve") for s in full),
      "the full dump has the DMA and vector engine scopes")

ve_size, ve, _ = dump("ve.fst", "--waves-scope", "ve")
check(bool(ve) and all(".ncore_top.u_dve" in s for s in ve), f"a 've' dump holds only the vector engine ({sorted(ve)[:3]})")
check(ve_size < full_size, f"the scoped dump is smaller ({ve_size} < {full_size} bytes)")

seq_size, seq, _ = dump("seq.fst", "--waves-scope", "seq,dma")
check(all(s.endswith("ncore_top") or ".ncore_top.u_dma" in s for s in seq) and any(s.endswith("ncore_top") for s in seq),
      "a 'seq,dma' dump holds the core's ports and the DMA block only")

# A window of cycles 3200 to 4000 (the loads move data once their 1300 ns fixed cost is paid):
# at 2.4 GHz, 416.7 ps per cycle. The dump's header time 0 aside, every time lies in the window.
win_size, _, times = dump("win.fst", "--waves-window", "3200:4000")
times = [t for t in times if t > 0]
lo, hi = 3200 * 1e6 / 2400, 4000 * 1e6 / 2400
check(len(times) > 100 and min(times) >= lo - 1 and max(times) <= hi + 1,
      f"the windowed dump spans cycles 3200..4000 only ({len(times)} times, "
      f"{min(times) if times else None}..{max(times) if times else None} ps)")
check(win_size < full_size, f"the windowed dump is smaller ({win_size} < {full_size} bytes)")

p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--waves", os.path.join(DIR, "x.fst"), "--waves-scope",
                    "nope"], capture_output=True, text=True)
check(p.returncode == 3 and "unknown" in p.stderr, f"an unknown scope is refused ({p.returncode}: {p.stderr.strip()})")
p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--waves-window", "5:1"], capture_output=True, text=True)
check(p.returncode == 2, f"a window without --waves is refused ({p.returncode})")

print(f"dump sizes: full {full_size} B, ve {ve_size} B, seq+dma {seq_size} B, window {win_size} B")
sys.exit(1 if failures else 0)
