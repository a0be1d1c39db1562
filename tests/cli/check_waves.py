#!/usr/bin/env python3
"""ncore-sim --waves: a full dump, a dump limited to scopes, and one limited to a cycle window,
read back with GTKWave's fst2vcd; and the GTKWave save files of waves/: path-free, every signal
they name present in a dump of their kernel, each field they put through a translate filter a
vector of its bits. (check_waves_gtkwave.py checks what GTKWave shows with them.)

usage: check_waves.py <ncore-sim> <fst2vcd> <scratch dir> <waves dir>
"""
import json
import os
import re
import subprocess
import sys
from checklist import check, finish, vcd_records

SIM, FST2VCD, DIR, WAVES = sys.argv[1:5]
os.makedirs(DIR, exist_ok=True)


def dump(name, *extra, kernel=("--kernel", "stream", "-n", "25600", "--free-dim", "200"), names=None):
    path = os.path.join(DIR, name)
    p = subprocess.run([SIM, *kernel, "--waves", path, *extra], capture_output=True, text=True)
    check(p.returncode == 0, f"run with {' '.join(extra) or 'a full dump'} exits 0 ({p.returncode}) {p.stderr.strip()}")
    scopes, times = set(), []
    for rec in vcd_records(FST2VCD, path):
        if rec[0] == "var":
            scopes.add(rec[1])
            if names is not None:  # GTKWave's name: the path, and the range of a vector
                names.add(rec[2])
        elif rec[0] == "time":
            times.append(rec[1])
    return os.path.getsize(path), scopes, times


full_size, full, full_times = dump("full.fst")
check(any(s.endswith("ncore_top.u_dma") for s in full) and any(s.endswith("ncore_top.u_dve") for s in full),
      "the full dump has the DMA and vector engine scopes")

ve_size, dve, _ = dump("dve.fst", "--waves-scope", "dve")
check(bool(dve) and all(".ncore_top.u_dve" in s for s in dve), f"a 'dve' dump holds only the vector engine ({sorted(dve)[:3]})")
check(ve_size < full_size, f"the scoped dump is smaller ({ve_size} < {full_size} bytes)")

seq_size, seq, _ = dump("seq.fst", "--waves-scope", "seq,dma")
check(all(s.endswith("ncore_top") or ".ncore_top.u_dma" in s for s in seq) and any(s.endswith("ncore_top") for s in seq),
      "a 'seq,dma' dump holds the core's ports and the DMA block only")

conv = ("--kernel", "conv", "--batch", "1", "--height", "6", "--width", "6")
_, pe_act, _ = dump("pe_act.fst", "--waves-scope", "pe,act", kernel=conv)
check(bool(pe_act) and all(".ncore_top.u_pe" in s or ".ncore_top.u_act" in s for s in pe_act)
      and any(".ncore_top.u_act" in s for s in pe_act) and any(".ncore_top.u_pe" in s for s in pe_act),
      "a 'pe,act' dump of the conv kernel holds the tensor and scalar engines only")

# A window of 800 cycles from 3200 cycles after the kernel's start-up (the loads move data once
# their 1300 ns fixed cost is paid): at 2.4 GHz, 416.7 ps per cycle. The dump's header time 0
# aside, every time lies in the window.
p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--json", os.path.join(DIR, "win.json")],
                   capture_output=True, text=True)
start = json.load(open(os.path.join(DIR, "win.json")))["start_cycles"] if p.returncode == 0 else 0
w0, w1 = start + 3200, start + 4000
win_size, _, times = dump("win.fst", "--waves-window", f"{w0}:{w1}")
times = [t for t in times if t > 0]
lo, hi = w0 * 1e6 / 2400, w1 * 1e6 / 2400
check(len(times) > 100 and min(times) >= lo - 1 and max(times) <= hi + 1,
      f"the windowed dump spans cycles {w0}..{w1} only ({len(times)} times, "
      f"{min(times) if times else None}..{max(times) if times else None} ps)")
check(win_size < full_size, f"the windowed dump is smaller ({win_size} < {full_size} bytes)")

p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--waves", os.path.join(DIR, "x.fst"), "--waves-scope",
                    "nope"], capture_output=True, text=True)
check(p.returncode == 2 and "unknown scope" in p.stderr, f"an unknown scope is refused ({p.returncode}: {p.stderr.strip()})")
p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--waves-window", "5:1"], capture_output=True, text=True)
check(p.returncode == 2, f"a window without --waves is refused ({p.returncode})")

print(f"dump sizes: full {full_size} B, dve {ve_size} B, seq+dma {seq_size} B, window {win_size} B")

# The save files: one per kernel family, each checked against a short run of one of its kernels.
SAVE_KERNELS = {
    "vector_add": ("--kernel", "stream", "-n", "25600"),
    "transpose": ("--kernel", "transpose", "-n", "128"),
    "matmul": ("--kernel", "matmul_blocked", "-k", "128", "-m", "128", "-n", "512"),
    "conv": ("--kernel", "conv", "--batch", "1", "--height", "6", "--width", "6", "--pool-size", "2"),
}
saves = sorted(f[:-5] for f in os.listdir(WAVES) if f.endswith(".gtkw"))
check(saves == sorted(SAVE_KERNELS), f"waves/ holds a save file per kernel family ({saves})")
for save in saves:
    text = open(os.path.join(WAVES, save + ".gtkw")).read()
    check(not any(l.startswith(("[dumpfile]", "[savefile]")) or "/home/" in l or "/root/" in l
                  for l in text.splitlines()), f"waves/{save}.gtkw names no file path")
    # a trace line is `+{alias} name` (the alias GTKWave shows) or `name`, or for a vector made of a
    # variable's bits `+{alias} #{vector} (0)name ... (N-1)name`; `^N file` names a translate filter
    traces = [re.sub(r"^\+\{[^}]*\} ", "", l) for l in text.splitlines() if l and l[0] not in "[*@-^"]
    signals = sorted({re.sub(r"^\(\d+\)", "", t) for l in traces for t in (l.split()[1:] if l.startswith("#{") else [l])})
    check(all(l.startswith("+{") for l in text.splitlines() if l and l[0] not in "[*@-^"),
          f"waves/{save}.gtkw gives every trace a short alias")
    # GTKWave applies a translate filter file to a vector only (a plain FST variable gets the enum
    # table Verilator dumps with it instead): each filtered field is a vector of all its bits, MSB first.
    lines = text.splitlines()
    filtered = [lines[i + 2] for i, l in enumerate(lines) if l.startswith("^") and i + 2 < len(lines)]
    def whole_vector(line):
        m = re.match(r"^\+\{[^}]*\} #\{(\S+)\[(\d+):(\d+)\]\} (.*)$", line)
        return bool(m) and m.group(4).split() == [f"({i}){m.group(1)}[{m.group(2)}:{m.group(3)}]"
                                                  for i in range(int(m.group(2)) - int(m.group(3)) + 1)]
    bad = [l.split()[0] for l in filtered if not whole_vector(l)]
    check(bool(filtered) and not bad, f"waves/{save}.gtkw: its {len(filtered)} filtered fields are vectors of their bits"
          f"{' (not: ' + ', '.join(bad) + ')' if bad else ''}")
    filters = [l.split(None, 1)[1] for l in text.splitlines() if l.startswith("^")]
    root = os.path.dirname(os.path.abspath(WAVES))
    check(bool(filters) and all(f.startswith("waves/filters/") and os.path.isfile(os.path.join(root, f)) for f in filters),
          f"waves/{save}.gtkw's translate filters are generated files of waves/filters/ ({sorted(set(filters))})")
    names = set()
    dump(f"save_{save}.fst", kernel=SAVE_KERNELS.get(save, ()), names=names)
    missing = [sig for sig in signals if sig not in names]
    check(len(signals) > 10 and not missing,
          f"waves/{save}.gtkw: its {len(signals)} signals are in a dump of {' '.join(SAVE_KERNELS.get(save, ()))}"
          f"{' (missing: ' + ', '.join(missing[:3]) + ')' if missing else ''}")
finish()
