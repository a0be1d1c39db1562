#!/usr/bin/env python3
"""ncore-sim --profile: the summary's figures against what the kernel's loop structure says
they must be, the trace-event JSON (check_trace.py), and the golden backend's counts-only
profile.

vector_add_stream runs T = n / (128 * FREE_DIM) iterations, each two loads (HBM -> SBUF), one
tensor_tensor and one store (SBUF -> HBM) of 128 x FREE_DIM elements. So, with e bytes per
element: 3T transfers of n/T*e bytes each; HBM reads 2ne and writes ne; the SBUF takes 2ne from
the loads and ne from the vector engine, and gives ne to the stores (16-byte lines, all full
here) and 2n x 4 to the vector engine (its reads count the 32-bit word of each lane, whatever
the element size); no PSUM traffic, no matmul.

usage: check_profile.py <ncore-sim> <scratch dir>
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace  # noqa: E402
from checklist import check, finish  # noqa: E402

SIM, DIR = sys.argv[1:3]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.makedirs(DIR, exist_ok=True)
ENGINES = {"tensor", "scalar", "gpsimd", "vector", "sync"}


def source_line(loc):
    """The text of kernel source line 'file:line'."""
    path, line = loc.rsplit(":", 1)
    with open(os.path.join(REPO, path)) as f:
        return f.read().splitlines()[int(line) - 1]


def run(name, n, free_dim, dtype="fp32", backend="rtl"):
    prefix = os.path.join(DIR, name)
    for ext in (".summary.json", ".trace.json", ".timeline.html"):
        if os.path.exists(prefix + ext):
            os.remove(prefix + ext)
    cmd = [SIM, "--kernel", "stream", "-n", str(n), "--free-dim", str(free_dim), "--dtype", dtype,
           "--backend", backend, "--profile", prefix]
    p = subprocess.run(cmd, capture_output=True, text=True)
    check(p.returncode == 0 and "Correctness passed? True" in p.stdout,
          f"{name}: {' '.join(cmd[1:])} runs and is correct ({p.returncode}) {p.stderr.strip()}")
    return prefix, p.stdout


def check_rtl(name, n, free_dim, dtype="fp32"):
    e = {"fp32": 4, "bf16": 2, "fp16": 2}[dtype]
    T = n // (128 * free_dim)
    prefix, out = run(name, n, free_dim, dtype)
    with open(prefix + ".summary.json") as f:
        j = json.load(f)
    s = j["summary"]
    latency = int(re.search(r"Latency: (\d+) cycles", out).group(1))

    # the text summary: the metrics, by neuron-profile's names
    for metric in ("total_time", "neuroncore_cycle_count", "dma_transfer_count", "dma_transfer_total_bytes",
                   "hbm_read_bytes", "hbm_write_bytes", "sbuf_read_bytes", "sbuf_write_bytes", "psum_read_bytes",
                   "psum_write_bytes", "vector_engine_active_time_percent", "vector_instruction_count",
                   "matmul_instruction_count", "mfu_estimated_percent", "vector_semaphore_wait_time"):
        check(re.search(rf"^\s+{metric}\s+\S", out, re.M) is not None, f"{name}: the text summary shows {metric}")
        check(metric in s, f"{name}: summary.json has {metric}")

    # time
    check(s["cycles"] == latency, f"{name}: cycles {s['cycles']} = the reported latency {latency}")
    check(abs(s["total_time"] - latency / 2.4e9) < 1e-12, f"{name}: total_time {s['total_time']} s = cycles / 2.4 GHz")
    check(s["neuroncore_cycle_count"] == latency * 1200 // 2400,
          f"{name}: neuroncore_cycle_count {s['neuroncore_cycle_count']} = total_time x 1.2 GHz")
    # the start-up (trn2: 10200 ns) inside total_time, and the breakdown covering it once
    check(abs(s["kernel_start_time"] - 10200e-9) < 1e-12, f"{name}: kernel_start_time {s['kernel_start_time']} s = 10.2 us")
    parts = {k: v for k, v in s.items() if k.startswith("time_")}
    check(set(parts) == {"time_start_up", "time_compute", "time_dma_descriptors", "time_dma_data",
                         "time_dma_fixed_cost", "time_other"}, f"{name}: the time breakdown's parts {sorted(parts)}")
    check(abs(sum(parts.values()) - s["total_time"]) < 1e-12, f"{name}: the time_* add up to total_time")
    check(s["time_start_up"] == s["kernel_start_time"], f"{name}: time_start_up = kernel_start_time")
    check(sum(j["time_breakdown_cycles"].values()) == latency and j["dominant"] in j["time_breakdown_cycles"],
          f"{name}: time_breakdown_cycles add up to the latency, dominant {j['dominant']}")
    check(s["time_compute"] > 0 and s["time_dma_fixed_cost"] >= 2 * 1300e-9,
          f"{name}: compute {s['time_compute']} s, DMA fixed cost {s['time_dma_fixed_cost']} s (two 1.3 us at least)")
    check(s["dma_descriptor_cycles"] > 0 and s["time_dma_descriptors"] <= s["dma_descriptor_cycles"] / 2.4e9 + 1e-12,
          f"{name}: descriptor time within the RTL's descriptor cycles ({s['dma_descriptor_cycles']})")

    # DMA and memories, from the loop structure
    check(s["dma_transfer_count"] == 3 * T, f"{name}: dma_transfer_count {s['dma_transfer_count']} = 3 x {T} iterations")
    check(s["dma_transfer_total_bytes"] == 3 * n * e, f"{name}: dma_transfer_total_bytes {s['dma_transfer_total_bytes']} = 3 x {n} x {e}")
    check(s["hbm_read_bytes"] == 2 * n * e, f"{name}: hbm_read_bytes {s['hbm_read_bytes']} = 2 x {n} x {e}")
    check(s["hbm_write_bytes"] == n * e, f"{name}: hbm_write_bytes {s['hbm_write_bytes']} = {n} x {e}")
    check(s["sbuf_write_bytes"] == 3 * n * e, f"{name}: sbuf_write_bytes {s['sbuf_write_bytes']} = (2 loads + 1 add) x {n} x {e}")
    check(s["sbuf_read_bytes"] == n * e + 2 * n * 4,
          f"{name}: sbuf_read_bytes {s['sbuf_read_bytes']} = store {n} x {e} + add 2 x {n} x 4 (word per lane)")
    check(s["psum_read_bytes"] == 0 and s["psum_write_bytes"] == 0, f"{name}: no PSUM traffic")

    # instructions
    engines = {x["engine"]: x for x in j["engines"]}
    check(set(engines) == ENGINES, f"{name}: one entry per engine ({sorted(engines)})")
    vec = engines["vector"]["by_opcode"]
    check(vec.get("tensor_tensor") == T, f"{name}: {vec.get('tensor_tensor')} tensor_tensor = {T} iterations")
    check(set(vec) <= {"tensor_tensor", "sem_wait"} and vec.get("sem_wait", 0) <= T,
          f"{name}: the vector engine ran tensor_tensor and at most one sem_wait per iteration ({vec})")
    check(s["vector_instruction_count"] == sum(vec.values()), f"{name}: vector_instruction_count = its opcodes' sum")
    for eng in ENGINES - {"vector"}:
        check(s[f"{eng}_instruction_count"] == 0, f"{name}: {eng}_instruction_count is 0")
    check(s["matmul_instruction_count"] == 0 and s["mfu_estimated_percent"] == 0, f"{name}: no matmul, MFU 0")
    queues = j["dma_queues"]
    check(sum(q["by_opcode"].get("dma_copy", 0) for q in queues) == 3 * T, f"{name}: the queues' transfers add up")
    # The vector engine needs at least 2 x FREE_DIM of its cycles (2.5 master cycles each at
    # 0.96 GHz) per tensor_tensor: two inputs, one element per lane per cycle.
    active = engines["vector"]["active_cycles"]
    check(T * 2 * free_dim * 2.5 <= active <= latency,
          f"{name}: vector engine active {active} cycles, between {T * 2 * free_dim * 2.5:.0f} and the run")
    check(abs(s["vector_engine_active_time_percent"] - 100 * active / latency) < 1e-6, f"{name}: active percent")
    check(0 <= s["vector_semaphore_wait_time"] <= s["total_time"], f"{name}: vector_semaphore_wait_time in range")

    # the trace
    errors, tracks = check_trace.check(prefix + ".trace.json")
    check(not errors, f"{name}: trace.json is valid trace-event JSON without overlaps {errors[:3]}")
    first = list(tracks.values())[0] if tracks else {"name": None, "slices": []}
    check(first["name"] == "start-up" and len(first["slices"]) == 1 and first["slices"][0]["ts"] == 0
          and abs(first["slices"][0]["dur"] - 10.2) < 1e-9, f"{name}: the first track is the 10.2 us start-up")
    tracks = {tid: t for tid, t in tracks.items() if t["name"] != "start-up"}
    insn_slices = [ev for t in tracks.values() for ev in t["slices"] if ev["name"] != "sem_wait"]
    span = max(ev["args"]["cycles"]["end"] for ev in insn_slices) - min(ev["args"]["cycles"]["start"] for ev in insn_slices)
    check(abs(s["total_active_time"] - span / 2.4e9) < 1e-12 and
          s["total_active_time"] <= s["total_time"] - s["kernel_start_time"],
          f"{name}: total_active_time {s['total_active_time']} s: first start to last end in the trace ({span} cycles)")
    by_name = {t["name"]: t["slices"] for t in tracks.values()}
    check(ENGINES <= set(by_name), f"{name}: a track per engine ({sorted(by_name)})")
    vslices = by_name.get("vector", [])
    check(len(vslices) == s["vector_instruction_count"], f"{name}: vector track has {len(vslices)} slices")
    dma = [ev for t in tracks.values() for ev in t["slices"] if ev["cat"] == "dma" and ev["name"] == "dma_copy"]
    check(len(dma) == 3 * T and all(re.fullmatch(r"q\d+", ev["args"]["stream"]) for ev in dma),
          f"{name}: {len(dma)} transfers on DMA queue tracks")
    check(sum(ev["args"]["bytes"] for ev in dma) == 3 * n * e, f"{name}: the transfers' bytes add up")
    tt = [ev for ev in vslices if ev["name"] == "tensor_tensor"]
    check(len(tt) == T and all("tensor_tensor" in source_line(ev["args"]["source"]) for ev in tt),
          f"{name}: each tensor_tensor slice names its kernel source line ({tt[0]['args']['source'] if tt else None})")
    check(all("dma_copy" in source_line(ev["args"]["source"]) for ev in dma), f"{name}: each transfer names its dma_copy line")
    check(all(ev["args"]["wait"] and ev["args"]["wait"].startswith("S[") for ev in tt),
          f"{name}: each tensor_tensor says which semaphore it waited on ({tt[0]['args']['wait'] if tt else None})")
    check(all(ev["args"]["instruction"].startswith(ev["name"]) for t in tracks.values() for ev in t["slices"]),
          f"{name}: every slice carries its instruction text")
    with open(prefix + ".trace.json") as f:
        events = json.load(f)["traceEvents"]
    pending = [ev["args"]["count"] for ev in events if ev["ph"] == "C" and ev["name"] == "pending DMA transfers"]
    check(pending and max(pending) >= 1 and pending[-1] == 0, f"{name}: pending-DMA counter rises and returns to 0")
    util = [ev["args"]["percent"] for ev in events if ev["ph"] == "C" and ev["name"] == "tensor engine utilisation"]
    check(util and max(util) == 0, f"{name}: tensor-engine utilisation counter, 0 without matmuls")

    # the page: self-contained
    with open(prefix + ".timeline.html") as f:
        page = f.read()
    check(not re.search(r"<script[^>]*\ssrc=|<link\b|https?://", page), f"{name}: the timeline page loads nothing from outside")
    print(f"{name}: {latency} cycles, trace {os.path.getsize(prefix + '.trace.json')} B, "
          f"page {os.path.getsize(prefix + '.timeline.html')} B")


check_rtl("stream_fd200", 25600, 200)        # the handout's case: one iteration
check_rtl("stream_fd100_x4", 51200, 100)     # four iterations over four DMA queues
check_rtl("stream_bf16", 25600, 200, "bf16")  # 2-byte elements: engine reads still count 4 per lane

# The golden backend: counts, no timing, no trace.
prefix, out = run("golden", 51200, 100, backend="golden")
with open(prefix + ".summary.json") as f:
    g = json.load(f)
s = g["summary"]
check(g["backend"] == "golden" and s["dma_transfer_count"] == 12 and s["dma_transfer_total_bytes"] == 3 * 51200 * 4,
      "golden: the transfer count and bytes")
check({x["engine"]: x for x in g["engines"]}["vector"]["by_opcode"].get("tensor_tensor") == 4, "golden: 4 tensor_tensor")
check(all(s[k] is None for k in ("total_time", "neuroncore_cycle_count", "sbuf_read_bytes", "hbm_read_bytes",
                                 "vector_engine_active_time_percent", "mfu_estimated_percent", "total_active_time",
                                 "kernel_start_time", "time_start_up", "time_dma_descriptors")),
      "golden: times and RTL counters are null")
check("n/a" in out and "--backend rtl" in out, "golden: the text says timing needs the RTL backend")
check(not os.path.exists(prefix + ".trace.json") and not os.path.exists(prefix + ".timeline.html"),
      "golden: no trace or timeline")

p = subprocess.run([SIM, "--kernel", "stream", "-n", "25600", "--profile", os.path.join(DIR, "no_such_dir", "x")],
                   capture_output=True, text=True)
check(p.returncode == 2 and "cannot write there" in p.stderr and "Latency" not in p.stdout,
      f"an unwritable --profile path is bad input, found before the run ({p.returncode})")
finish()
