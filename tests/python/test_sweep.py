"""ncore-sweep and ncore.sweep on a real Dask cluster: a scheduler and two worker processes on the
loopback address, started and stopped by each test. A sweep's rows equal the same configurations
run one by one with ncore-sim; a worker killed mid-sweep loses no configuration and counts none
twice; an interrupted sweep resumes with the configurations it had not finished; a configuration
that breaks a rule is a row with its error."""
import json
import os
import signal
import socket
import subprocess
import time

from dask_cluster import cluster  # noqa: F401: the fixture

import ncore

BUILD = os.path.dirname(os.path.abspath(os.environ.get("NCORE_PYTHON", "build/ncore-python")))
SIM = os.environ.get("NCORE_SIM", os.path.join(BUILD, "sim", "ncore-sim"))
SWEEP = os.path.join(BUILD, "ncore-sweep")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# transpose_tiled: one DMA per 128 x 128 tile each way, about a second of simulation per configuration
GRID = {"n": [128, 256, 384], "m": [128, 256]}


def one_by_one(config, tmp_path):
    """ncore-sim on one configuration, in this process's own way: its figures."""
    out = tmp_path / "one.json"
    subprocess.run([SIM, "--kernel", "transpose_tiled", "-n", str(config["n"]), "-m", str(config["m"]),
                    "--threads", "1", "--json", str(out), "--quiet"], check=True, capture_output=True)
    return json.loads(out.read_text())


def assert_rows_match(rows, tmp_path):
    for r in rows:
        want = one_by_one(r["config"], tmp_path)
        assert r["error"] is None, r
        assert (r["correct"], r["cycles"], r["latency_us"], r["dominant"]) == \
            (want["correct"], want["cycles"], want["time_us"], want["dominant"]), r
        assert want["correct"] is True


def rows_of(path):
    with open(path) as f:
        return json.load(f)["rows"]


def test_sweep_equals_one_by_one(cluster, tmp_path):
    res = ncore.sweep("transpose_tiled", grid=GRID, out=str(tmp_path / "s"), scheduler=cluster.address,
                      plots=True, quiet=True)
    configs = [{"n": n, "m": m} for n in GRID["n"] for m in GRID["m"]]
    assert [r["config"] for r in res["rows"]] == configs
    assert_rows_match(res["rows"], tmp_path)
    assert all(r["host"] == socket.gethostname() for r in res["rows"])
    assert res["best"] == min(res["rows"], key=lambda r: r["latency_us"])
    assert rows_of(tmp_path / "s.json") == res["rows"]
    csv_lines = (tmp_path / "s.csv").read_text().splitlines()
    assert csv_lines[0].startswith("n,m,correct,latency_us,cycles,mfu_percent,dominant")
    assert len(csv_lines) == 1 + len(configs)
    page = (tmp_path / "s.html").read_text()
    assert "__NCORE_" not in page and '"swept": ["n", "m"]' in page
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"


def test_worker_killed_mid_sweep_loses_nothing(cluster, tmp_path):
    out = tmp_path / "k"
    cmd = [SWEEP, "--kernel", "transpose_tiled", "--grid", "n=128,256,384", "--grid", "m=128,256",
           "--out", str(out), "--scheduler", cluster.address, "--no-plots"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # once the first row is in, both workers are busy with the next ones: end one of them
    while not (os.path.exists(f"{out}.json") and rows_of(f"{out}.json")):
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    os.killpg(cluster.workers[0].pid, signal.SIGKILL)
    so, se = p.communicate(timeout=300)
    assert p.returncode == 0, se
    rows = rows_of(f"{out}.json")
    assert sorted(json.dumps(r["config"], sort_keys=True) for r in rows) == \
        sorted(json.dumps({"n": n, "m": m}, sort_keys=True) for n in GRID["n"] for m in GRID["m"])
    assert_rows_match(rows, tmp_path)
    assert "best: n=128 m=128" in so


def test_interrupted_sweep_resumes(cluster, tmp_path):
    out = tmp_path / "r"
    cmd = [SWEEP, "--kernel", "transpose_tiled", "--grid", "n=128,256,384", "--grid", "m=128,256",
           "--out", str(out), "--scheduler", cluster.address, "--no-plots"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    while not (os.path.exists(f"{out}.json") and rows_of(f"{out}.json")):
        assert p.poll() is None, p.communicate()
        time.sleep(0.05)
    os.killpg(p.pid, signal.SIGKILL)  # the sweep stops here, with what it had written
    p.wait()
    done = rows_of(f"{out}.json")
    assert 1 <= len(done) < 6
    second = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stderr
    assert f"6 configurations, {len(done)} already in {out}.json, {6 - len(done)} to run" in second.stderr
    assert second.stderr.count("ncore-sweep [") == 6 - len(done)  # a progress line per configuration run
    rows = rows_of(f"{out}.json")
    assert len(rows) == 6
    for r in done:  # the rows of the first run are kept as they were
        assert r in rows
    assert_rows_match(rows, tmp_path)


def test_bad_configuration_is_a_row(cluster, tmp_path):
    res = ncore.sweep("tiled", grid={"n": [1024], "row_chunk": [128, 256]}, out=str(tmp_path / "b"),
                      scheduler=cluster.address, plots=False, quiet=True)
    good, bad = res["rows"]
    assert good["error"] is None and good["correct"] is True
    assert "number of partitions 256 exceed architecture limitation of 128" in bad["error"]
    assert bad["latency_us"] is None and res["best"] == good
    # an NKI Python kernel file: the same rule, broken in NKI, and a grid name the kernel does not have
    kernels = os.path.join(ROOT, "kernels", "python", "examples", "kernels.py")
    res = ncore.sweep(kernel_file=kernels, function="vector_add_tiled", inputs={"a_vec": ["n", None], "b_vec": ["n", None]},
                      reference="a_vec + b_vec", grid={"n": [1024], "ROW_CHUNK": [128, 256]},
                      out=str(tmp_path / "p"), scheduler=cluster.address, plots=False, quiet=True)
    good, bad = res["rows"]
    assert good["error"] is None and good["correct"] is True, good
    assert "256" in bad["error"] and "128" in bad["error"], bad
    res = ncore.sweep(kernel_file=kernels, function="vector_add_tiled", inputs={"a_vec": ["n", None], "b_vec": ["n", None]},
                      grid={"n": [1024], "TILES": [1]}, out=str(tmp_path / "q"), scheduler=cluster.address, plots=False,
                      quiet=True)
    assert "grid name TILES: not a parameter of vector_add_tiled" in res["rows"][0]["error"]


def test_what_if_hardware(cluster, tmp_path):
    # the kernel start-up is a delay before the first instruction: without it a run is its cycles shorter
    res = ncore.sweep("stream", grid={"n": [25600]}, hardware={"kernel_start_ns": [10200, 5000, 0]},
                      out=str(tmp_path / "w"), scheduler=cluster.address, plots=False, quiet=True)
    base, half, none = res["rows"]
    assert all(r["error"] is None and r["correct"] is True for r in res["rows"])
    clock = 2400  # trn2's MHz
    assert base["cycles"] - half["cycles"] == (10200 - 5000) * clock // 1000
    assert base["cycles"] - none["cycles"] == 10200 * clock // 1000
    assert base["cycles"] == one_by_one_stream(tmp_path)["cycles"]
    # parameters the RTL is built with: the rule a combination breaks, or the model it would need
    res = ncore.sweep("stream", grid={"n": [25600]}, hardware={"dma_engines": [7, 8], "dma_queue_issue_ns": [1300]},
                      out=str(tmp_path / "x"), scheduler=cluster.address, plots=False, quiet=True)
    seven, eight = res["rows"]
    assert "num_partitions (128) must be a multiple of dma_engines (7)" in seven["error"]
    assert "dma_engines=8 is a parameter the RTL is built with" in eight["error"]
    assert "Verilated model of its own" in eight["error"]


def one_by_one_stream(tmp_path):
    out = tmp_path / "stream.json"
    subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--threads", "1", "--json", str(out), "--quiet"],
                   check=True, capture_output=True)
    return json.loads(out.read_text())
