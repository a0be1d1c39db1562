"""The handouts' workflow: run_benchmark.py and test_harness.py run unchanged through
ncore-python, and report what ncore-sim reports for the same kernel and sizes."""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "kernels", "python", "examples")
NCORE_PYTHON = os.environ.get("NCORE_PYTHON")
NCORE_SIM = os.environ.get("NCORE_SIM")

needs_build = pytest.mark.skipif(not (NCORE_PYTHON and NCORE_SIM), reason="run from CTest (NCORE_PYTHON, NCORE_SIM)")


def script(name, *args, env=None):
    e = dict(os.environ, **(env or {}))
    p = subprocess.run([NCORE_PYTHON, os.path.join(EXAMPLES, name), *map(str, args)], capture_output=True, text=True,
                       env=e, timeout=1800)
    return p.returncode, p.stdout + p.stderr


def sim_latency(tmp_path, *args):
    j = tmp_path / "r.json"
    p = subprocess.run([NCORE_SIM, *map(str, args), "-q", "--json", str(j)], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(j.read_text())["time_us"]


@needs_build
@pytest.mark.parametrize("kernel,args,sim", [
    ("tiled", ["-n", 2560], ["--kernel", "tiled", "-n", 2560]),
    ("stream", ["-n", 25600], ["--kernel", "stream", "-n", 25600]),
    ("transpose", ["-n", 256, "-m", 384], ["--kernel", "transpose", "-n", 256, "-m", 384]),
])
def test_run_benchmark_reports_ncore_sims_latency(kernel, args, sim, tmp_path):
    rc, out = script("run_benchmark.py", "--kernel", kernel, *args)
    assert rc == 0, out
    assert "Correctness passed? True" in out
    m = re.search(r"Execution time: ([0-9.]+) us", out)
    assert m, out
    assert float(m.group(1)) == pytest.approx(sim_latency(tmp_path, *sim), abs=5e-4)


@needs_build
def test_row_chunk_256_is_refused_in_nkis_words():
    rc, out = script("run_benchmark.py", "--kernel", "tiled", "-n", 25600, "--row_chunk", 256)
    assert rc != 0
    assert "ValueError" in out and "number of partitions 256 exceed architecture limitation of 128." in out
    assert "kernels.py:" in out


@needs_build
def test_test_harness_simulate_small_cases():
    rc, out = script("test_harness.py", "--simulate", "--test_maxpool", "--cases", "small")
    assert rc == 0, out
    assert out.count("PASSED") == 9 and "FAILED" not in out
