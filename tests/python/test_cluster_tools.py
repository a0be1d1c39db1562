"""The long tools with --scheduler, on a real Dask cluster (a scheduler and two worker processes on the
loopback address, started and stopped by each test), against the same tool on one machine:
ncore-regress spread by seed range runs the same Programs with the same counts and no mismatch; the
conv harness's cases and the fidelity table's rows come out the same (wall times aside)."""
import json
import os
import subprocess
import sys

from dask_cluster import cluster  # noqa: F401: the fixture

BUILD = os.path.dirname(os.path.abspath(os.environ.get("NCORE_PYTHON", "build/ncore-python")))
SIM = os.environ.get("NCORE_SIM", os.path.join(BUILD, "sim", "ncore-sim"))
REGRESS = os.path.join(BUILD, "tb", "regress", "ncore-regress")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run_json(cmd, path):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    with open(path) as f:
        return json.load(f), p.stdout


def test_regress_by_seed_range(cluster, tmp_path):
    args = ["--preset", "tiny,trn2", "--seed", "3", "--count", "10", "--out", str(tmp_path / "out"), "-q"]
    one, _ = run_json([REGRESS, *args, "--json", str(tmp_path / "one.json")], tmp_path / "one.json")
    spread, out = run_json([REGRESS, *args, "--json", str(tmp_path / "spread.json"), "--scheduler", cluster.address,
                            "--chunk", "4"], tmp_path / "spread.json")
    assert "3 seed ranges on 2 workers" in out
    # program k: preset k % 2, seed 3 + k / 2; each one's cycles and final HBM as one process ran it
    assert [(r["preset"], r["seed"]) for r in spread["program_results"]] == \
        [(("tiny", "trn2")[k % 2], 3 + k // 2) for k in range(10)]
    for key in ("program_results", "programs", "instructions", "checked_instructions", "cycles", "census",
                "census_missed", "failures", "mismatches", "hangs", "deadlocks"):
        assert spread[key] == one[key], key
    for name in ("tiny", "trn2"):
        for key in ("programs", "instructions", "checked_instructions", "cycles"):
            assert spread["per_preset"][name][key] == one["per_preset"][name][key]
    assert spread["mismatches"] == 0 and all(r["ok"] for r in spread["program_results"])


def without_walls(report, rows):
    for r in report[rows]:
        r.pop("wall_seconds", None)
    return report


def test_conv_harness_cases(cluster, tmp_path):
    cmd = [sys.executable, os.path.join(ROOT, "tools", "conv-harness"), "--sim", SIM, "--cases", "correctness",
           "--groups", "small,small+bias", "--backend", "golden"]
    one, _ = run_json(cmd + ["--json", str(tmp_path / "one.json")], tmp_path / "one.json")
    spread, _ = run_json(cmd + ["--json", str(tmp_path / "spread.json"), "--scheduler", cluster.address],
                         tmp_path / "spread.json")
    assert len(one["correctness"]) == 8 and all(r["passed"] for r in one["correctness"])
    assert without_walls(spread, "correctness") == without_walls(one, "correctness")


def test_fidelity_rows(cluster, tmp_path):
    cmd = [sys.executable, os.path.join(ROOT, "tools", "fidelity"), "--sim", SIM, "--cases", "quick", "--check"]
    one, _ = run_json(cmd + ["--json", str(tmp_path / "one.json")], tmp_path / "one.json")
    spread, _ = run_json(cmd + ["--json", str(tmp_path / "spread.json"), "--scheduler", cluster.address],
                         tmp_path / "spread.json")
    assert len(one["cases"]) >= 4
    assert without_walls(spread, "cases") == without_walls(one, "cases")
