#!/usr/bin/env python3
"""Runs Debian's Yosys (0.23) on the RTL and reports cells per module (docs/synthesis.md).

  tools/synth/synth.py [--out DIR] [--quick] [--json FILE] [--markdown FILE] [--timeout S]

Three parts, one table:
- the engines' datapaths (tools/synth/ncore_synth_units.sv: the tensor engine's PE, a lane of the
  vector and of the scalar engine, a DMA engine's cast, a PSUM partition's accumulation), each
  synthesized by the package functions the engines call: `proc; flatten; opt` gives word-level
  cells, then `techmap; opt -fast` gate-level cells (UNITS says which go to gates);
- every RTL module (rtl/ncore.f), read as written (`read_verilog -sv -defer`) and elaborated on its
  own (`hierarchy -top`): a module Yosys reads is synthesized the same way; for one it does not, the
  construct it stops at, by name (CONSTRUCTS);
- the full-size core (trn2), every file read and `hierarchy -top ncore_top` run.

Yosys 0.23 implements no `import` of a package: the one change made to the sources before Yosys
reads them is that every name a wildcard import brings in is written package-qualified
(pkg::name), and so is every enum value a package uses inside itself (Yosys 0.23 resolves a
package's own enum values, unqualified, to implicitly declared wires). Nothing else is rewritten.

The run fails (exit 1), and with it the test synth.quick, when the RTL stops synthesizing: a
datapath or a module Yosys reads does not synthesize, or reads with a name it leaves unresolved
(an implicitly declared wire); a module of READS stops; a module stops at a construct CONSTRUCTS
does not name (the claim docs/synthesis.md makes would no longer hold); or anything but an engine
lane does not finish within --timeout (a lane that does not is reported, not failed). --quick
skips the two engine lanes (minutes each) and the gate level of the modules it reads; what it
runs takes seconds.
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RTL = os.path.join(ROOT, "rtl")
UNITS_SV = os.path.join(ROOT, "tools", "synth", "ncore_synth_units.sv")

# (module, what it is, in --quick, to gate level). The two lanes stop at word level: `techmap` of
# the vector lane (its divides, remainders and 128-bit multiplies, pow's and fmod's loops unrolled)
# went past 17 GB before its last `opt` finished, and the scalar lane is larger.
UNITS = [
    ("ncore_synth_pe", "the tensor engine's PE: pe_unpack of both operands, pe_fma", True, True),
    ("ncore_synth_psum_acc", "a PSUM partition's accumulation: f32_add", True, True),
    ("ncore_synth_dma_cast", "a DMA engine's element cast through fp32", True, True),
    ("ncore_synth_dve_lane", "a vector-engine lane: conversions and fp_alu (every ALU op)", False, False),
    ("ncore_synth_act_lane", "a scalar-engine lane: multiply, add, fp_act (every function), accumulator",
     False, False),
]

# The parameters a module Yosys reads is synthesized with: those of its instance in the core (the
# trn2 vector engine's clock enable). A module not listed takes its defaults.
MODULE_PARAMS = {"ncore_clk_en": {"Num": 2, "Den": 5}}

# The modules Yosys 0.23 reads today: one of them that stops fails the run (a module rewritten in
# the subset Yosys reads joins the list).
READS = {"ncore_clk_en"}

# The constructs of the RTL that Yosys 0.23 does not read, each with what its error looks like
# (the message, and the source line it points at). A module that stops at anything else fails the
# run: either the RTL took up a construct the docs do not name, or it broke.
CONSTRUCTS = [
    {"name": "packed array of more than one dimension",
     "example": "logic [P-1:0][31:0] rd_data_i",
     "message": re.compile(r"syntax error, unexpected '\['"),
     "line": re.compile(r"\[[^\]]*\]\s*\[[^\]]*\]\s*\w")},
]

TOKEN = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\])*\"|`\w+|\d+'[sS]?[bodhBODH][0-9a-fA-FxXzZ_?]+|"
                   r"'[01xzXZ]|[A-Za-z_]\w*|::|\s+|.", re.S)
IMPORT = re.compile(r"\bimport\s+(\w+)::(\*|\w+)\s*;")


# ---------------------------------------------------------------------------------------------
# The sources: package imports written out (see the header)
# ---------------------------------------------------------------------------------------------

def strip_comments(text):
    return re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.S)


def package_symbols(text):
    """A package's name, its enum values and its other names (typedefs, functions, localparams)."""
    s = strip_comments(text)
    name = re.search(r"^\s*package\s+(\w+)", s, re.M).group(1)
    enums, other = set(), set()
    for m in re.finditer(r"typedef\s+enum[^{]*\{([^}]*)\}\s*(\w+)\s*;", s, re.S):
        other.add(m.group(2))
        for v in m.group(1).split(","):
            enums.add(v.split("=")[0].strip())
    for m in re.finditer(r"typedef\s+struct\s+packed\s*\{.*?\}\s*(\w+)\s*;", s, re.S):
        other.add(m.group(1))
    for m in re.finditer(r"\bfunction\s+automatic\s+(.*?)\(", s, re.S):
        other.add(re.findall(r"\w+", m.group(1))[-1])
    for m in re.finditer(r"\blocalparam\b([^=;]*?)=", s):
        other.add([t for t in re.findall(r"\[[^\]]*\]|\w+", m.group(1)) if not t.startswith("[")][-1])
    return name, enums, other


def qualify(text, packages):
    """text with its package imports written out as package-qualified names."""
    m = re.search(r"^\s*package\s+(\w+)", strip_comments(text), re.M)
    own = m.group(1) if m else None
    names = {}
    for im in IMPORT.finditer(strip_comments(text)):
        pkg, what = im.group(1), im.group(2)
        if pkg in packages:
            enums, other = packages[pkg]
            for n in (enums | other if what == "*" else {what}):
                names[n] = pkg
    if own:
        for n in packages[own][0]:
            names[n] = own
    out, in_enum = [], 0
    for tok in (t.group(0) for t in TOKEN.finditer(text)):
        if tok == "enum":
            in_enum = 1
        elif in_enum == 1 and tok == "{":
            in_enum = 2
        elif in_enum == 2 and tok == "}":
            in_enum = 0
        if tok in names and in_enum != 2:
            prev = next((o for o in reversed(out) if not o.isspace()), "")
            if prev not in ("::", ".", "`"):
                tok = names[tok] + "::" + tok
        out.append(tok)
    return IMPORT.sub(lambda im: "" if im.group(1) in packages else im.group(0), "".join(out))


def prepare(src_dir):
    """The RTL (rtl/ncore.f) and the units, qualified, in src_dir: the package files, the modules."""
    files = [f.strip() for f in open(os.path.join(RTL, "ncore.f")) if f.strip()]
    texts = {f: open(os.path.join(RTL, f)).read() for f in files}
    texts["ncore_synth_units.sv"] = open(UNITS_SV).read()
    packages = {}
    for f, t in texts.items():
        if f.endswith("_pkg.sv"):
            name, enums, other = package_symbols(t)
            packages[name] = (enums, other)
    os.makedirs(src_dir, exist_ok=True)
    for h in glob.glob(os.path.join(RTL, "*.svh")):  # the includes: the assertion macros, shared port lists
        shutil.copy(h, src_dir)
    for f, t in texts.items():
        with open(os.path.join(src_dir, f), "w") as o:
            o.write(qualify(t, packages))
    pkgs = [f for f in files if f.endswith("_pkg.sv")]
    mods = [f for f in files if not f.endswith("_pkg.sv")]
    return pkgs, mods


# ---------------------------------------------------------------------------------------------
# Yosys and what its logs say
# ---------------------------------------------------------------------------------------------

def yosys(script, log, timeout):
    """Runs one script; (exit code or None after the timeout, seconds)."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(["yosys", "-l", log, "-p", script], stdout=subprocess.DEVNULL,
                           stderr=subprocess.STDOUT, timeout=timeout)
        rc = p.returncode
    except subprocess.TimeoutExpired:
        rc = None
    return rc, time.monotonic() - t0


def cells(stat_file):
    """Total cells and the cells by type of a `stat` report."""
    text = open(stat_file).read()
    total = int(re.search(r"Number of cells:\s+(\d+)", text).group(1))
    kinds = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s+(\$\S+)\s+(\d+)$", text, re.M)}
    return total, kinds


def first_error(log, src):
    """The first error of a log: file, line, Yosys's message, the source line and the construct."""
    text = open(log).read()
    m = re.search(r"^(\S+?):(\d+): ERROR: (.*)$", text, re.M)
    if not m:
        m2 = re.search(r"^ERROR: (.*)$", text, re.M)
        return {"error": m2.group(1) if m2 else "no error in the log", "construct": None}
    f, line, msg = os.path.basename(m.group(1)), int(m.group(2)), m.group(3)
    path = os.path.join(src, f)
    code = open(path).read().split("\n")[line - 1].strip() if os.path.exists(path) else ""
    code = re.sub(r"\s+", " ", code.split("//")[0]).strip().rstrip(",;")
    construct = next((c["name"] for c in CONSTRUCTS if c["message"].search(msg) and c["line"].search(code)),
                     None)
    return {"file": f, "line": line, "error": msg, "code": code, "construct": construct}


def implicit_wires(log):
    return sorted(set(re.findall(r"Identifier `([^']+)' is implicitly declared", open(log).read())))


def synth_script(read, top, params, coarse, gates):
    """read, elaborate top, `proc; flatten; opt` (stat to coarse), and if gates `techmap; opt -fast`."""
    chparams = "".join(f" -chparam {k} {v}" for k, v in params.items())
    script = f"{read}; hierarchy -check -top {top}{chparams}; proc; flatten; opt; tee -q -o {coarse} stat"
    if gates:
        script += f"; techmap; opt -fast; tee -q -o {gates} stat"
    return script


def synthesize(name, read, params, to_gates, logs, src, timeout):
    """One module synthesized (or not): a result row for the report."""
    log = os.path.join(logs, name + ".log")
    coarse = os.path.join(logs, name + ".coarse.txt")
    gates = os.path.join(logs, name + ".gates.txt") if to_gates else None
    for f in (coarse, gates):
        if f and os.path.exists(f):
            os.remove(f)
    rc, secs = yosys(synth_script(read, name, params, coarse, gates), log, timeout)
    r = {"module": name, "seconds": round(secs, 1)}
    if params:
        r["params"] = params
    if rc is None:
        r["error"] = {"error": f"not finished in {timeout} s", "construct": None, "timeout": True}
        return r
    implicit = implicit_wires(log)
    if rc != 0 or not os.path.exists(gates or coarse):
        r["error"] = first_error(log, src)
    elif implicit:
        r["error"] = {"error": "implicitly declared (unresolved names): " + ", ".join(implicit), "construct": None}
    else:
        r["word_cells"], r["word_cell_types"] = cells(coarse)
        if gates:
            r["gate_cells"], r["gate_cell_types"] = cells(gates)
    return r


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------

def verdict(r):
    """(ok, the table's cell) for one row: cells, or where and at what Yosys stops."""
    e = r.get("error")
    if not e:
        return True, "yes"
    where = f"{e['file']}:{e['line']}" if "line" in e else ""
    if e.get("timeout"):  # an engine lane (not in --quick) may take longer: reported, not failed
        return r.get("kind") == "unit" and not r.get("quick"), e["error"]
    if e.get("construct"):
        ok = r.get("kind") == "module" and r["module"] not in READS
        return ok, f"no: {where} {e['construct']} (`{e['code']}`)"
    return False, f"FAILED: {where} {e['error']}".replace("  ", " ")


def markdown(report):
    rows = ["| module | what | read by Yosys 0.23 | word-level cells | gate-level cells | seconds |",
            "|---|---|---|---|---|---|"]
    for r in report["units"] + report["modules"] + [report["top"]]:
        _, v = verdict(r)
        params = ", ".join(f"{k}={v}" for k, v in r.get("params", {}).items())
        what = r["what"] + (f" ({params})" if params else "")
        rows.append(f"| `{r['module']}` | {what} | {v.replace('|', chr(92) + '|')} | {r.get('word_cells', '-')} "
                    f"| {r.get('gate_cells', '-')} | {r['seconds']} |")
    return "\n".join(rows) + "\n"


def print_row(r):
    ok, v = verdict(r)
    print(f"{r['module']:24s} {r.get('word_cells', '-'):>10} {r.get('gate_cells', '-'):>10} "
          f"{r['seconds']:8.1f}  {v}" + ("" if ok else f" (log {r['log']})"), flush=True)


def module_what(path):
    """The first sentence of a module file's opening paragraph: what the module is for."""
    lines = []
    for line in open(path):
        if not line.startswith("//"):
            if lines:
                break
            continue
        lines.append(line[2:].strip())
    first = re.split(r"(?<=[.:;])\s", " ".join(lines), maxsplit=1)[0].rstrip(".:;")
    if first.count("(") > first.count(")") or len(first) > 80:
        first = first.split(" (")[0]  # the sentence's head, without its aside
    return first


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "synth"), help="work directory (logs, sources)")
    ap.add_argument("--quick", action="store_true", help="no engine lanes, modules to word level only")
    ap.add_argument("--json", help="write the results here (default: OUT/synth.json)")
    ap.add_argument("--markdown", help="write the table here (default: OUT/synth.md)")
    ap.add_argument("--timeout", type=int, default=1800, help="seconds for one Yosys run (default 1800)")
    a = ap.parse_args()
    if not shutil.which("yosys"):
        sys.exit("synth: yosys not found (apt-get install yosys; tools/install-deps installs it)")
    version = subprocess.run(["yosys", "-V"], capture_output=True, text=True).stdout.strip()
    src, logs = os.path.join(a.out, "src"), os.path.join(a.out, "logs")
    os.makedirs(logs, exist_ok=True)
    pkgs, mods = prepare(src)
    read_pkgs = f"read_verilog -sv -defer -I{src} " + " ".join(os.path.join(src, f) for f in pkgs)
    report = {"yosys": version, "quick": a.quick, "units": [], "modules": []}

    print(f"{'module':24s} {'word cells':>10s} {'gate cells':>10s} {'seconds':>8s}  read by Yosys 0.23")
    for unit, what, quick, to_gates in UNITS:
        if a.quick and not quick:
            continue
        read = f"{read_pkgs} {os.path.join(src, 'ncore_synth_units.sv')}"
        r = synthesize(unit, read, {}, to_gates, logs, src, a.timeout)
        r.update(kind="unit", what=what, quick=quick, log=os.path.join(logs, unit + ".log"))
        report["units"].append(r)
        print_row(r)

    # Every module's file on its own, after the packages (-defer: elaborated by `hierarchy` only,
    # with the parameters of MODULE_PARAMS).
    for f in mods:
        module = f[:-3]
        read = f"{read_pkgs} {os.path.join(src, f)}"
        r = synthesize(module, read, MODULE_PARAMS.get(module, {}), not a.quick, logs, src, a.timeout)
        r.update(kind="module", what=module_what(os.path.join(RTL, f)), log=os.path.join(logs, module + ".log"))
        report["modules"].append(r)
        print_row(r)

    # The full-size core: every file read, the design elaborated from the top (`hierarchy` only).
    log = os.path.join(logs, "ncore_top_trn2.log")
    files = " ".join(os.path.join(src, g) for g in mods)
    rc, secs = yosys(f"{read_pkgs} {files}; hierarchy -check -top ncore_top -chparam Preset 0", log, a.timeout)
    top = {"module": "core (trn2)", "kind": "module", "log": log, "seconds": round(secs, 1),
           "what": "every file read, `hierarchy -top ncore_top -chparam Preset 0`"}
    if rc != 0:
        top["error"] = first_error(log, src) if rc is not None else {"error": "timeout", "construct": None}
    report["top"] = top
    print_row(top)

    failed = [r["module"] for r in report["units"] + report["modules"] + [top] if not verdict(r)[0]]
    report["failed"] = failed
    out_json = a.json or os.path.join(a.out, "synth.json")
    out_md = a.markdown or os.path.join(a.out, "synth.md")
    with open(out_json, "w") as o:
        json.dump(report, o, indent=1)
    with open(out_md, "w") as o:
        o.write(markdown(report))
    print(f"\nwritten: {out_json}, {out_md}")
    if failed:
        print("synth: FAILED: " + ", ".join(failed), file=sys.stderr)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
