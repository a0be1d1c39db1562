"""ncore-regress --scheduler: the lockstep regression's Programs spread over the workers of a Dask
cluster by seed range, each range an ncore-regress process of its own, and their figures merged into
what one process running them all reports: the same Programs (preset k % presets with seed
seed + k / presets, for k below --count), the same counts and the same failures.

ncore-regress runs this module when given --scheduler:

  ncore-python -m ncore._regress --binary PATH [ncore-regress's options] --scheduler ADDRESS [--chunk N]

--chunk: Programs per task (default 20, rounded up to a whole number of presets). --count is needed
(a duration, --minutes, does not split into the same Programs); --replay and --emit run on one
machine. A failure's files are written by the worker that found it, to --out as an absolute path
(a shared path, or each worker's own disk). --max-failures holds per range.
"""
import argparse
import json
import os
import sys
import time

from ncore import _cluster

# ncore-regress options passed on to every range as they are (name, takes a value)
PASSED = [("--min-insns", True), ("--max-insns", True), ("--weight", True), ("--stall-limit", True),
          ("--max-failures", True), ("--shrink-minutes", True), ("--pe-model", True), ("--no-shrink", False),
          ("--no-failure-waves", False)]
SUMMED = ("programs", "instructions", "checked_instructions", "cycles", "rtl_seconds", "mismatches", "hangs",
          "deadlocks")


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="ncore-regress --scheduler", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", required=True, help="the ncore-regress executable")
    ap.add_argument("--preset", default="tiny,trn2")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int)
    ap.add_argument("--json")
    ap.add_argument("--out", default="regress-out")
    ap.add_argument("-q", "--quiet", action="store_true")
    ap.add_argument("--chunk", type=int, default=20)
    ap.add_argument("--minutes", type=float)
    ap.add_argument("--replay", nargs="*")
    ap.add_argument("--emit", action="store_true")
    for name, value in PASSED:
        ap.add_argument(name, action="append" if value else "store_true")
    _cluster.add_scheduler_option(ap, "the ranges of Programs")
    a = ap.parse_args(argv)
    if a.minutes or a.replay is not None or a.emit:
        ap.error("--scheduler splits --count Programs into seed ranges: --minutes, --replay and --emit run on one machine")
    if not a.count or a.count < 1:
        ap.error("--scheduler needs --count N: the Programs to run, split into seed ranges")
    if a.chunk < 1:
        ap.error(f"--chunk {a.chunk}: give 1 or more")
    return a


def ranges(count, presets, chunk):
    """(first program, programs) of each task: whole rounds of the presets, so that program k of the
    whole run is program k - first of its range with the range's seed seed + first / presets."""
    step = -(-chunk // presets) * presets
    return [(k, min(step, count - k)) for k in range(0, count, step)]


def merge(parts, a, presets, wall):
    """One report of the ranges' reports, in their order."""
    j = dict(parts[0])
    for k in SUMMED:
        j[k] = sum(p.get(k, 0) for p in parts)
    j.update(seed=a.seed, presets=presets, wall_seconds=wall,
             instructions_per_second=j["instructions"] / wall if wall > 0 else 0.0,
             program_results=[r for p in parts for r in p["program_results"]],
             failures=[f for p in parts for f in p["failures"]])
    per = {}
    for p in parts:
        for name, t in p.get("per_preset", {}).items():
            acc = per.setdefault(name, dict.fromkeys(t, 0))
            for k, v in t.items():
                acc[k] += v
    j["per_preset"] = per
    census = {}
    for p in parts:
        for b, n in p["census"].items():
            census[b] = census.get(b, 0) + n
    j["census"] = census
    j["census_missed"] = [b for b in parts[0]["census_missed"] if all(b in p["census_missed"] for p in parts)]
    return j


def print_report(j, a, ranges_run, cluster):
    print(f"\nncore-regress: presets {a.preset}, seeds from {a.seed}, {j['steps'][0]}-{j['steps'][1]} steps per "
          f"program, {j['pe_model']} PE array, {ranges_run} seed ranges on {cluster}")
    print(f"{'preset':<8} {'programs':>9} {'instructions':>13} {'checked':>13} {'cycles':>15} {'RTL s':>10}")
    for name, t in list(j["per_preset"].items()) + [("all", j)]:
        checked = t.get("checked_instructions", 0)
        print(f"{name:<8} {t['programs']:>9} {t['instructions']:>13} {checked:>13} {t['cycles']:>15} "
              f"{t['rtl_seconds']:>10.1f}")
    print(f"wall {j['wall_seconds']:.1f} s: {j['instructions_per_second']:.0f} instructions/s")
    missed = j["census_missed"]
    print(f"census bins missed: {len(missed)}{' (' + ', '.join(missed) + ')' if missed else ''}")
    print(f"mismatches {j['mismatches']}, hangs {j['hangs']}, deadlocks {j['deadlocks']}")


def main(argv=None):
    a = parse_args(argv if argv is not None else sys.argv[1:])
    presets = [p for p in a.preset.split(",") if p]
    passed = []
    for name, value in PASSED:
        got = getattr(a, name[2:].replace("-", "_"))
        if value:
            for v in got or ():
                passed += [name, v]
        elif got:
            passed.append(name)
    spans = ranges(a.count, len(presets), a.chunk)
    tasks = [_cluster.task([a.binary, "--preset", ",".join(presets), "--seed", str(a.seed + first // len(presets)),
                            "--count", str(n), "--json", _cluster.OUT, "--out", os.path.abspath(a.out), "-q", *passed])
             for first, n in spans]
    t0 = time.monotonic()
    with _cluster.client(None if a.scheduler == "local" else a.scheduler, a.workers) as c:
        where = _cluster.describe(c)
        results = [None] * len(tasks)

        def arrived(i, r):
            results[i] = r
            if not a.quiet:
                print(f"[{time.monotonic() - t0:.0f} s] seeds from {a.seed + spans[i][0] // len(presets)}: "
                      f"{spans[i][1]} programs on {r['host']}, exit status {r['returncode']}", flush=True)
        _cluster.run_all(c, dict(enumerate(tasks)), arrived)
    bad = [(t, r) for t, r in zip(tasks, results) if r.get("error") or r["out"] is None or r["returncode"] not in (0, 1)]
    for t, r in bad:
        print(f"internal error: {' '.join(t['cmd'])}: {r.get('error') or r['stderr'].strip()[-800:]}", file=sys.stderr)
    if bad:
        return 3
    for r in results:
        if r["returncode"] == 1:
            sys.stdout.write(r["stdout"])  # the range's failures as it reported them
    j = merge([json.loads(r["out"]) for r in results], a, presets, time.monotonic() - t0)
    print_report(j, a, len(spans), where)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(j, f, indent=2)
            f.write("\n")
    return 1 if j["mismatches"] or j["hangs"] or j["deadlocks"] else 0


if __name__ == "__main__":
    sys.exit(main())
