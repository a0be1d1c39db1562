"""ncore-sweep: a kernel over a grid of configurations (kernel parameters, input shapes and dtypes,
hardware presets, simulator options), each configuration a run of its own on a Dask distributed
cluster, with a row per configuration as it arrives.

  ncore-sweep --kernel NAME --grid NAME=V1,V2,... [--grid ...] [--set PARAMETER=V1,V2,...]
  ncore-sweep --kernel-file FILE.py --function NAME --input NAME=DIMS[:DTYPE] ... [--output NAME=DIMS]
              [--reference EXPR] --grid NAME=V1,V2,...
              [--out NAME] [--scheduler tcp://HOST:PORT | --workers N] [--timeout SECONDS] [--fresh]
              [--no-plots] [--build DIR] [-q] [--version]

The kernel: a C++ kernel by name (ncore-sim --kernel NAME; its options are grid names: n, m, k,
row_chunk, free_dim, in_channels, pool_size, ...), or an NKI Python kernel file in either namespace
(neuronxcc.nki or today's nki) and the function to run. A Python kernel's inputs are random, uniform
in [0, 1), with the dimensions --input gives (numbers or grid names, `K,M` or `2*K,M`); a kernel that
writes its result into an argument gets it from --output (NaN-filled); its keyword arguments are
the grid names its signature has. --reference EXPR (NumPy over the inputs' names, `lhsT.T @ rhs`)
checks the result: the largest error within --tolerance (default by dtype: fp32 1e-4, fp16 1e-2,
bf16 5e-2) of the largest reference value; without it `correct` is empty. A C++ kernel is checked
against its own reference, as ncore-sim checks it.

Grid names every kernel has: config (trn2, trn1: the hardware preset), dtype (fp32, bf16, fp16), and
the simulator options pe_model (rtl, fast), threads (1, 2; default 1: a configuration a core),
check (0, 1), backend (rtl, golden), dma_queues, seed. A grid name with one value is a fixed
setting; every combination of the values is a configuration. --set PARAMETER=V1,V2,... adds
what-if hardware to the grid: the preset run with that parameter changed (the timing parameters:
clock_mhz, hbm_bytes_per_us, hbm_latency_ns, dma_fixed_cost_ns, dma_queue_issue_ns,
dma_queue_inflight, dma_engine_inflight, kernel_start_ns, ...; a parameter the RTL is built with is
a row with the rule it breaks, or with the Verilated model it would need).

Each configuration runs in a process of its own (ncore-sim, or build/ncore-python for a kernel file)
on a worker of the cluster, under --timeout (default 600 s; a run cut by it is a row with that error).
Without --scheduler the cluster is a local one of this machine's cores (--workers N); with it, the
scheduler's workers, which need the build at the same path (docs/sweeps.md: starting a cluster).

Output, rewritten as each row arrives: NAME.json (the sweep and its rows) and NAME.csv (a row a
configuration: its grid values, correct, latency_us, cycles, mfu_percent, what dominates the time
and its share, the time breakdown in percent, the simulator's wall time, the task's wall time and
host, error); at the end NAME.png (latency against each swept name, matplotlib) and NAME.html (the
same plots and the table, a self-contained page). A configuration that breaks a rule of NKI or of
the hardware, fails or is cut by the time limit is a row with its error. Run again with the same
--out, a sweep resumes: configurations already in NAME.json are not run again (--fresh: start over).
The best configuration (the lowest latency among the correct rows) is named at the end.

Exit status: 0 when every configuration ran (errors included: they are rows), 2 on bad arguments,
130 interrupted (Ctrl-C: the rows that arrived stay in NAME.json, and the same command resumes).
"""
import argparse
import csv
import itertools
import json
import os
import sys
import time

import _ncore_native

from ncore import _cluster, _sweep_plots

# Grid names that are simulator or hardware settings rather than kernel parameters.
SIM_NAMES = ("config", "dtype", "pe_model", "threads", "check", "backend", "dma_queues", "seed")
DTYPES = {"fp32": "fp32", "float32": "fp32", "bf16": "bf16", "bfloat16": "bf16", "fp16": "fp16", "float16": "fp16"}
DEFAULT_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 5e-2}
PE_SIDE = 128  # the tensor engine's rows and columns on trn2 and trn1


def default_build():
    """The build this package runs from (build/python/_ncore_native...so)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(_ncore_native.__file__)))


def parse_value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_grid(items, option="--grid"):
    """['M=1,2,4', 'dtype=fp32'] -> {'M': [1, 2, 4], 'dtype': ['fp32']} (in the order given)."""
    grid = {}
    for item in items or ():
        name, eq, values = item.partition("=")
        name = name.strip().lstrip("-").replace("-", "_")
        if not eq or not name or not values.strip():
            raise ValueError(f"{option} {item}: expected NAME=V1,V2,...")
        if name in grid:
            raise ValueError(f"{option} {name} is given twice")
        grid[name] = [parse_value(v.strip()) for v in values.split(",") if v.strip()]
    return grid


def configurations(grid):
    """Every combination of the grid's values, in order (the last name varying fastest)."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def key_of(config):
    return json.dumps(config, sort_keys=True)


class Spec:
    """What a sweep runs: the kernel, how each configuration becomes a command, and its files."""

    def __init__(self, kernel=None, kernel_file=None, function=None, inputs=None, outputs=None, reference=None,
                 tolerance=None, build=None, timeout=600, sets=()):
        if bool(kernel) == bool(kernel_file):
            raise ValueError("give a C++ kernel by name (kernel) or an NKI Python kernel file (kernel_file), not both")
        if kernel_file and not function:
            raise ValueError("a kernel file needs the function to run (--function)")
        if kernel_file and not os.path.isfile(kernel_file):
            raise ValueError(f"--kernel-file {kernel_file}: no such file")
        self.kernel, self.function, self.reference, self.tolerance = kernel, function, reference, tolerance
        self.kernel_file = os.path.abspath(kernel_file) if kernel_file else None
        self.inputs, self.outputs = dict(inputs or {}), dict(outputs or {})
        self.build = os.path.abspath(build or default_build())
        self.timeout, self.sets = timeout, list(sets)
        tool = os.path.join(self.build, "sim", "ncore-sim") if kernel else os.path.join(self.build, "ncore-python")
        if not os.access(tool, os.X_OK):
            raise ValueError(f"{tool} is not an executable: build first (make build) or give --build")
        self.tool = tool

    def describe(self):
        return {"kernel": self.kernel, "kernel_file": self.kernel_file, "function": self.function,
                "inputs": self.inputs, "outputs": self.outputs, "reference": self.reference,
                "tolerance": self.tolerance}

    def title(self):
        return self.kernel or f"{os.path.basename(self.kernel_file)}:{self.function}"

    def command(self, config):
        """The task of one configuration (_cluster.task: its command, environment and time limit)."""
        sim = {k: config[k] for k in SIM_NAMES if k in config}
        sim.setdefault("threads", 1)
        env = {"NCORE_SET": ",".join(f"{k}={config[k]}" for k in self.sets)} if self.sets else {}
        if "dtype" in sim:
            sim["dtype"] = DTYPES.get(str(sim["dtype"]), sim["dtype"])
        if self.kernel:
            cmd = [self.tool, "--kernel", self.kernel, "--json", _cluster.OUT, "--quiet"]
            for name, value in config.items():
                if name in SIM_NAMES or name in self.sets:
                    continue
                cmd += [f"-{name}" if len(name) == 1 else "--" + name.replace("_", "-"), str(value)]
            for name, value in sim.items():
                if name == "check":
                    cmd += ["--check"] if str(value).lower() in ("1", "true", "yes") else []
                else:
                    cmd += ["--" + name.replace("_", "-"), str(value)]
            return _cluster.task(cmd, env, timeout=self.timeout)
        spec = dict(self.describe(), config=config, options=sim, sets=self.sets)
        return _cluster.task([self.tool, "-m", "ncore._sweep_run", json.dumps(spec), _cluster.OUT],
                             dict(env, NCORE_QUIET="1"), self.timeout)


def last_line(text):
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return lines[-1] if lines else ""


def row_of(config, result, timeout):
    """The row of one configuration from its task's result."""
    row = {"config": config, "correct": None, "latency_us": None, "cycles": None, "mfu_percent": None,
           "dominant": None, "dominant_percent": None, "breakdown_percent": None, "sim_wall_seconds": None,
           "task_seconds": result.get("wall_seconds"), "host": result.get("host"), "error": result.get("error")}
    fig = None
    if result.get("out"):
        try:
            fig = json.loads(result["out"])
        except ValueError:
            fig = None
    if row["error"]:
        return row
    if result.get("timed_out"):
        row["error"] = f"cut by the time limit ({timeout} s)"
        return row
    if fig is None or result.get("returncode") not in (0, 1):
        why = last_line(result.get("stderr")) or last_line(result.get("stdout"))
        why = why[len("error: "):] if why.startswith("error: ") else why
        row["error"] = f"exit status {result.get('returncode')}: {why}" if why else f"exit status {result.get('returncode')}"
        return row
    if fig.get("error"):
        row["error"] = fig["error"]
        return row
    cycles = fig.get("cycles")
    row.update(correct=fig.get("correct"), latency_us=fig.get("time_us"), cycles=cycles,
               sim_wall_seconds=fig.get("wall_seconds"), dominant=fig.get("dominant"))
    if cycles:
        macs = fig.get("pe_macs") or 0
        row["mfu_percent"] = round(100.0 * macs / (PE_SIDE * PE_SIDE * cycles), 3)
        parts = fig.get("time_breakdown_cycles") or {}
        row["breakdown_percent"] = {k: round(100.0 * v / cycles, 2) for k, v in parts.items()}
        if row["dominant"] in row["breakdown_percent"]:
            row["dominant_percent"] = row["breakdown_percent"][row["dominant"]]
    return row


def best_row(rows):
    """The row of the lowest latency among those that ran without error and are not wrong."""
    ok = [r for r in rows if not r["error"] and r["latency_us"] is not None and r["correct"] is not False]
    return min(ok, key=lambda r: r["latency_us"]) if ok else None


def config_text(config, names=None):
    return " ".join(f"{k}={v}" for k, v in config.items() if names is None or k in names)


def duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def row_summary(row):
    if row["error"]:
        return f"error: {row['error']}"
    if row["latency_us"] is None:
        return f"correct {row['correct']} (no timing)"
    verdict = {True: "correct", False: "WRONG", None: "unchecked"}[row["correct"]]
    dom = f", {row['dominant']} dominates ({row['dominant_percent']:.0f} %)" if row["dominant"] else ""
    return f"{row['latency_us']:.2f} us, {verdict}, MFU {row['mfu_percent']:.1f} %{dom}"


class Output:
    """NAME.json and NAME.csv, rewritten as rows arrive; the rows an earlier run left (resume)."""

    def __init__(self, name, spec, grid, fresh):
        self.json_path, self.csv_path = name + ".json", name + ".csv"
        folder = os.path.dirname(os.path.abspath(self.json_path))
        if not os.path.isdir(folder):
            raise ValueError(f"--out {name}: no folder {folder}")
        self.head = {"tool": version_line(), "sweep": spec.describe(), "grid": grid}
        self.rows = {}
        if os.path.exists(self.json_path) and not fresh:
            with open(self.json_path) as f:
                old = json.load(f)
            if old.get("sweep") != spec.describe():
                raise ValueError(f"{self.json_path} holds a sweep of another kernel or inputs: --fresh starts over, "
                                 "or give another --out")
            self.rows = {key_of(r["config"]): r for r in old.get("rows", [])}

    def add(self, row, names):
        self.rows[key_of(row["config"])] = row
        self.write(names)

    def write(self, names, best=None):
        doc = dict(self.head, rows=list(self.rows.values()), best=best)
        write_atomic(self.json_path, json.dumps(doc, indent=1) + "\n")
        parts = sorted({p for r in self.rows.values() for p in (r["breakdown_percent"] or {})})
        fields = list(names) + ["correct", "latency_us", "cycles", "mfu_percent", "dominant", "dominant_percent"] + \
            [f"{p}_percent" for p in parts] + ["sim_wall_seconds", "task_seconds", "host", "error"]
        tmp = self.csv_path + ".tmp"
        with open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            for r in self.rows.values():
                flat = dict(r["config"], **{k: v for k, v in r.items() if k not in ("config", "breakdown_percent")})
                flat.update({f"{p}_percent": v for p, v in (r["breakdown_percent"] or {}).items()})
                w.writerow(["" if flat.get(k) is None else flat.get(k) for k in fields])
        os.replace(tmp, self.csv_path)


def write_atomic(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def version_line():
    return f"ncore-sweep {_ncore_native.__version__} (revision {_ncore_native.revision})"


class Progress:
    """A line on stderr per row: how many are done, the row, and an estimate of the time left."""

    def __init__(self, total, quiet):
        self.total, self.quiet, self.done, self.t0 = total, quiet, 0, time.monotonic()

    def row(self, row, swept):
        self.done += 1
        if self.quiet:
            return
        left = self.total - self.done
        elapsed = time.monotonic() - self.t0
        eta = f", about {duration(elapsed / self.done * left)} left" if left else ""
        width = 20
        bar = "#" * (width * self.done // self.total) + "." * (width - width * self.done // self.total)
        print(f"ncore-sweep [{bar}] {self.done}/{self.total} {config_text(row['config'], swept) or 'run'}: "
              f"{row_summary(row)}; {duration(elapsed)} so far{eta}", file=sys.stderr, flush=True)


def sweep(kernel=None, *, grid=None, hardware=None, kernel_file=None, function=None, inputs=None, outputs=None,
          reference=None, tolerance=None, out="sweep", scheduler=None, workers=None, timeout=600, fresh=False,
          build=None, plots=True, quiet=False):
    """Runs `kernel` (a C++ kernel's name) or `function` of `kernel_file` (an NKI Python file) over
    every combination of `grid` and `hardware` ({name: [values]}; hardware: what-if preset
    parameters, ncore-sweep --set) on a Dask cluster, as ncore-sweep does (see `ncore-sweep --help`),
    writing out.json, out.csv (and out.png, out.html with `plots`). Returns {"rows": [...], "best":
    row or None, "files": [...]}."""
    hardware = hardware or {}
    both = set(hardware) & set(grid or {})
    if both:
        raise ValueError(f"{', '.join(sorted(both))}: given both as a grid name and as a what-if parameter (--set)")
    spec = Spec(kernel, kernel_file, function, inputs, outputs, reference, tolerance, build, timeout, list(hardware))
    grid = {k: list(v) if isinstance(v, (list, tuple, range)) else [v]
            for k, v in list((grid or {}).items()) + list(hardware.items())}
    configs = configurations(grid)
    swept = [k for k, v in grid.items() if len(v) > 1]
    output = Output(out, spec, grid, fresh)
    todo = {key_of(c): spec.command(c) for c in configs if key_of(c) not in output.rows}
    by_key = {key_of(c): c for c in configs}
    if not quiet:
        print(f"ncore-sweep: {spec.title()}: {len(configs)} configurations, {len(configs) - len(todo)} already in "
              f"{output.json_path}, {len(todo)} to run", file=sys.stderr, flush=True)
    progress = Progress(len(todo), quiet)
    t0 = time.monotonic()
    if todo:
        with _cluster.client(None if scheduler == "local" else scheduler, workers) as c:
            if not quiet:
                print(f"ncore-sweep: cluster of {_cluster.describe(c)}", file=sys.stderr, flush=True)

            def arrived(key, result):
                row = row_of(by_key[key], result, timeout)
                output.add(row, list(grid))
                progress.row(row, swept)
            _cluster.run_all(c, todo, arrived)
    rows = [output.rows[key_of(c)] for c in configs]
    best = best_row(rows)
    output.rows = {key_of(r["config"]): r for r in rows}
    output.write(list(grid), best)
    files = [output.json_path, output.csv_path]
    if plots:
        files += _sweep_plots.write(out, spec.title(), rows, swept, best)
    if not quiet:
        print(f"ncore-sweep: {len(rows)} rows ({sum(1 for r in rows if r['error'])} with an error) in "
              f"{duration(time.monotonic() - t0)}: {', '.join(files)}", file=sys.stderr)
    return {"rows": rows, "best": best, "files": files}


def kernel_io(items, what):
    """['lhsT=K,M:bf16'] -> {'lhsT': ['K,M', 'bf16' or None]}."""
    io = {}
    for item in items or ():
        name, eq, rest = item.partition("=")
        if not eq or not name.isidentifier() or not rest:
            raise ValueError(f"--{what} {item}: expected NAME=DIMS[:DTYPE], e.g. lhsT=K,M or a=128,512:bf16")
        dims, _, dtype = rest.partition(":")
        if dtype and dtype not in DTYPES:
            raise ValueError(f"--{what} {item}: dtype {dtype}: choose one of {', '.join(DTYPES)}")
        io[name] = [dims, DTYPES[dtype] if dtype else None]
    return io


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="ncore-sweep", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--version", action="version", version=version_line())
    ap.add_argument("--kernel", help="a C++ kernel by name (ncore-sim --kernel)")
    ap.add_argument("--kernel-file", help="an NKI Python kernel file (neuronxcc.nki or nki)")
    ap.add_argument("--function", help="with --kernel-file: the kernel function to run")
    ap.add_argument("--grid", action="append", metavar="NAME=V1,V2,...", help="a grid name and its values (repeatable)")
    ap.add_argument("--set", action="append", metavar="NAME=V1,V2,...",
                    help="what-if hardware: a preset parameter and its values (repeatable; docs/sweeps.md)")
    ap.add_argument("--input", action="append", metavar="NAME=DIMS[:DTYPE]", help="a kernel file's input (repeatable)")
    ap.add_argument("--output", action="append", metavar="NAME=DIMS[:DTYPE]",
                    help="a kernel file's result argument, NaN-filled (repeatable)")
    ap.add_argument("--reference", metavar="EXPR", help="the expected result, NumPy over the inputs (kernel files)")
    ap.add_argument("--tolerance", type=float, help="largest error as a share of the largest reference value")
    ap.add_argument("--out", default="sweep", help="the output files' name: NAME.json, .csv, .png, .html (default sweep)")
    _cluster.add_scheduler_option(ap, "the configurations")
    ap.add_argument("--timeout", type=float, default=600, help="seconds a configuration may run (default 600)")
    ap.add_argument("--fresh", action="store_true", help="start over: run the configurations already in NAME.json too")
    ap.add_argument("--no-plots", action="store_true", help="no NAME.png and NAME.html")
    ap.add_argument("--build", help="the build directory (default: the one this command is in)")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    a = ap.parse_args(argv)
    if not a.grid and not a.set:
        ap.error("give the grid: --grid NAME=V1,V2,... (one or more)")
    return ap, a


def main(argv=None):
    ap, a = parse_args(argv)
    try:
        res = sweep(a.kernel, grid=parse_grid(a.grid), hardware=parse_grid(a.set, "--set"), kernel_file=a.kernel_file,
                    function=a.function,
                    inputs=kernel_io(a.input, "input"), outputs=kernel_io(a.output, "output"),
                    reference=a.reference, tolerance=a.tolerance, out=a.out, scheduler=a.scheduler, workers=a.workers,
                    timeout=a.timeout, fresh=a.fresh, build=a.build, plots=not a.no_plots, quiet=a.quiet)
    except ValueError as e:
        ap.error(str(e))
    except KeyboardInterrupt:
        print(f"\nncore-sweep: interrupted; the rows that arrived are in {a.out}.json: run the same command again to "
              "resume", file=sys.stderr)
        return 130
    print_table(res["rows"], res["best"])
    return 0


def print_table(rows, best):
    names = list(rows[0]["config"]) if rows else []
    head = names + ["correct", "latency_us", "MFU %", "dominant", "wall s", "error"]
    table = [[str(r["config"][n]) for n in names] +
             [str(r["correct"]), "" if r["latency_us"] is None else f"{r['latency_us']:.2f}",
              "" if r["mfu_percent"] is None else f"{r['mfu_percent']:.1f}",
              f"{r['dominant']} ({r['dominant_percent']:.0f} %)" if r["dominant"] else "",
              "" if r["sim_wall_seconds"] is None else f"{r['sim_wall_seconds']:.2f}", r["error"] or ""] for r in rows]
    widths = [max(len(x) for x in col) for col in zip(head, *table)]
    for line in [head] + table:
        print("  ".join(x.ljust(w) for x, w in zip(line, widths)).rstrip())
    if best:
        print(f"best: {config_text(best['config'])}: {row_summary(best)}")
    else:
        print("best: none (no configuration ran correctly)")


if __name__ == "__main__":
    sys.exit(main())
