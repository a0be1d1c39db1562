#!/usr/bin/env python3
"""The save files of waves/ as GTKWave shows them: each opened by GTKWave itself (under Xvfb, from
the repository root, as docs/cli.md says) on a short dump of a kernel of its family, read back
through GTKWave's Tcl interface.

- Every instruction field the save file puts through a translate filter shows, at times the dump
  gives it a value, the name the ISA description (firmware/isa/ncore_isa.json) gives that value:
  the string GTKWave displays beside the signal, not the save file's text.
- The waves take most of the window's width ([size] in the save file): GTKWave widens the signal
  pane to fit its longest name, so a long name or group label takes the width from the waves.

The expected names come from the ISA description and the values from the dump read with fst2vcd,
so neither the filter files nor GTKWave's reading of the dump is taken on trust.

usage: check_waves_gtkwave.py <ncore-sim> <gtkwave> <xvfb-run> <fst2vcd> <ncore_isa.json>
                              <repository root> <scratch dir>
"""
import json
import os
import re
import subprocess
import sys
from checklist import check, finish, vcd_records

SIM, GTKWAVE, XVFB_RUN, FST2VCD, ISA, ROOT, DIR = sys.argv[1:8]
os.makedirs(DIR, exist_ok=True)

# A short run of a kernel of each save file's family; the fast PE array gives the same signals at
# the ports (cli.waves checks every save file's signals against the RTL array's dumps) in a second.
SAVE_KERNELS = {
    "vector_add": ("--kernel", "stream", "-n", "25600", "--free-dim", "200"),
    "transpose": ("--kernel", "transpose", "-n", "128", "--pe-model", "fast"),
    "matmul": ("--kernel", "matmul_blocked", "-k", "128", "-m", "128", "-n", "512", "--pe-model", "fast"),
    "conv": ("--kernel", "conv", "--batch", "1", "--height", "6", "--width", "6", "--pool-size", "2",
             "--pe-model", "fast"),
}
WAVES_SHARE = 0.55  # the waves' least share of the window's width
MARKERS_PER_FIELD = 3  # distinct named values looked at per filtered field


def isa_names():
    """Filter file stem -> {value: name}, from the ISA description: its enums, and the opcodes."""
    isa = json.loads(re.sub(r"^\s*//.*$", "", open(ISA).read(), flags=re.M))
    names = {name: {v["value"]: v["name"] for v in e["values"]} for name, e in isa["enums"].items()}
    names["opcode"] = {i["opcode"]: i["name"] for i in isa["instructions"]}
    return names


def save_traces(text):
    """The save file's traces in GTKWave's order (its trace index): (alias or label, signal, filter)."""
    traces, pending_filter = [], None
    for line in text.splitlines():
        if line.startswith("^") and not line.startswith(("^>", "^<")):
            pending_filter = os.path.basename(line.split(None, 1)[1])[:-4]
        elif line.startswith("-"):  # a group's opening or closing line, or a comment
            traces.append((line[1:], None, None))
        elif line and line[0] not in "[*@":
            m = re.match(r"^\+\{([^}]*)\} (.*)$", line)
            alias, rest = (m.group(1), m.group(2)) if m else (None, line)
            signal = re.sub(r"^\(\d+\)", "", rest.split()[1]) if rest.startswith("#{") else rest
            traces.append((alias or signal, signal, pending_filter))
            pending_filter = None
    return traces


def histories(dump, signals):
    """signal -> [(time, value or None for x/z)] from the dump, read with fst2vcd."""
    ids, hist, t = {}, {s: [] for s in signals}, 0
    for rec in vcd_records(FST2VCD, dump):
        if rec[0] == "var":
            if rec[2] in hist:
                ids.setdefault(rec[3], []).append(rec[2])
        elif rec[0] == "time":
            t = rec[1]
        elif rec[0] == "bits":
            for name in ids.get(rec[2], ()):
                hist[name].append((t, int(rec[1], 2) if set(rec[1]) <= {"0", "1"} else None))
    end = t
    return hist, end


def markers(hist, end, names):
    """Up to MARKERS_PER_FIELD times, each in the middle of a stretch holding a value that has a name."""
    times, seen = [], set()
    for (t0, v), (t1, _) in zip(hist, hist[1:] + [(end, None)]):
        if v in names and v not in seen and t1 - t0 >= 2:
            seen.add(v)
            times.append(((t0 + t1) // 2, v))
        if len(times) == MARKERS_PER_FIELD:
            break
    return times


TCL = r"""
# Written by check_waves_gtkwave.py: let the window settle, then report what GTKWave shows.
set out [open {OUT} w]
set last -1
for {set i 0} {$i < 100} {incr i} {
  gtkwave::nop
  after 20
  set w [gtkwave::getWaveWidth]
  if {$w == $last && $i > 10} break
  set last $w
}
puts $out "wave_width $last"
puts $out "traces [gtkwave::getTotalNumTraces]"
foreach idx {INDICES} {
  puts $out "name $idx [gtkwave::getTraceNameFromIndex $idx]"
}
foreach {t idx} {QUERIES} {
  gtkwave::setMarker $t
  gtkwave::nop
  puts $out "value $t $idx [gtkwave::getTraceValueAtMarkerFromIndex $idx]"
}
close $out
exit
"""


def gtkwave(dump, save, queries, indices):
    """Opens dump with save in GTKWave under Xvfb, from the repository root; returns its reports."""
    out = os.path.join(DIR, f"{os.path.basename(save)[:-5]}.out")
    script = os.path.join(DIR, f"{os.path.basename(save)[:-5]}.tcl")
    if os.path.exists(out):
        os.remove(out)
    tcl = (TCL.replace("{OUT}", "{" + out + "}")
              .replace("{INDICES}", "{" + " ".join(map(str, indices)) + "}")
              .replace("{QUERIES}", "{" + " ".join(f"{t} {i}" for t, i in queries) + "}"))
    open(script, "w").write(tcl)
    # A screen larger than the save file's [size], so that the window has the size it asks for;
    # HOME in the scratch directory so that no user's .gtkwaverc changes what is shown.
    env = dict(os.environ, HOME=DIR, NO_AT_BRIDGE="1")
    rel_save = os.path.relpath(save, ROOT)
    p = subprocess.run([XVFB_RUN, "-a", "-s", "-screen 0 2400x1600x24", GTKWAVE, dump, rel_save, "-S", script],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    lines = open(out).read().splitlines() if os.path.exists(out) else []
    check(p.returncode == 0 and lines, f"GTKWave opens {rel_save} and runs the script ({p.returncode}"
          f"{': ' + p.stderr.strip()[-300:] if p.returncode or not lines else ''})")
    return lines


names_of = isa_names()
saves = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "waves")) if f.endswith(".gtkw"))
check(saves == sorted(SAVE_KERNELS), f"waves/ holds a save file per kernel family ({saves})")
for save in saves:
    path = os.path.join(ROOT, "waves", save + ".gtkw")
    text = open(path).read()
    width = int(re.search(r"^\[size\] (\d+) (\d+)$", text, flags=re.M).group(1))
    traces = save_traces(text)
    fields = [(i, alias, signal, f) for i, (alias, signal, f) in enumerate(traces) if f]
    check(bool(fields) and all(f in names_of for _, _, _, f in fields),
          f"waves/{save}.gtkw names its fields' filters after the ISA's enums ({sorted({f for *_, f in fields})})")

    dump = os.path.join(DIR, save + ".fst")
    p = subprocess.run([SIM, *SAVE_KERNELS[save], "--waves", dump], capture_output=True, text=True)
    check(p.returncode == 0, f"{' '.join(SAVE_KERNELS[save])} --waves exits 0 ({p.returncode}) {p.stderr.strip()}")
    hist, end = histories(dump, {signal for _, _, signal, _ in fields})

    queries, expect = [], {}
    for i, alias, signal, f in fields:
        times = markers(hist[signal], end, names_of[f])
        check(bool(times), f"waves/{save}.gtkw: {alias} takes a named value in the dump ({hist[signal][:4]})")
        for t, v in times:
            queries.append((t, i))
            expect[(t, i)] = (alias, v, names_of[f][v])

    lines = gtkwave(dump, path, queries, [i for i, *_ in fields])
    report = {}
    for line in lines:
        key, _, rest = line.partition(" ")
        report.setdefault(key, []).append(rest)

    n = int(report.get("traces", ["0"])[0])
    check(n == len(traces), f"waves/{save}.gtkw: GTKWave shows its {len(traces)} traces ({n})")
    shown = dict(r.split(" ", 1) for r in report.get("name", []) if " " in r)
    # GTKWave shows an alias's last hierarchy level (its default hier_max_level 1)
    wrong = [f"{alias}: '{shown.get(str(i))}'" for i, alias, *_ in fields
             if shown.get(str(i)) is None or alias.rsplit(".", 1)[-1] != shown[str(i)].rsplit(".", 1)[-1]]
    check(not wrong, f"waves/{save}.gtkw: GTKWave's traces {[i for i, *_ in fields]} are its filtered fields"
          f"{' (not: ' + ', '.join(wrong) + ')' if wrong else ''}")

    got = {}
    for r in report.get("value", []):
        t, i, *value = r.split(" ", 2)
        got[(int(t), int(i))] = value[0] if value else ""
    for (t, i), (alias, v, name) in expect.items():
        width_bits = re.search(r"\[(\d+):(\d+)\]$", alias)
        digits = (int(width_bits.group(1)) - int(width_bits.group(2)) + 4) // 4 if width_bits else 1
        check(got.get((t, i)) == name,
              f"waves/{save}.gtkw at {t} ps: {alias} = {v:0{digits}X} shows '{name}' (GTKWave shows '{got.get((t, i))}')")

    wave_width = int(report.get("wave_width", ["0"])[0])
    check(wave_width >= WAVES_SHARE * width,
          f"waves/{save}.gtkw: the waves take {wave_width} of the window's {width} pixels "
          f"({wave_width / width:.0%}, at least {WAVES_SHARE:.0%})")
finish()
