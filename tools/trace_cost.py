"""See tools/trace-cost."""
import argparse
import json
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "kernels", "python", "examples"))

import ncore  # noqa: E402
import matmul_tutorial  # noqa: E402
from conv2d import fused_conv2d_maxpool  # noqa: E402
from kernels import matrix_transpose, vector_add_tiled  # noqa: E402
from matrix import matmul_blocked  # noqa: E402
from today import conv2d as today_conv2d, kernels as today_kernels, matrix as today_matrix  # noqa: E402
from today import tutorials as today_tutorials  # noqa: E402

import neuronxcc.nki.language as old_nl  # noqa: E402


def _conv_args():
    return (np.zeros((1, 256, 224, 224), np.float16), np.zeros((256, 256, 3, 3), np.float16), np.zeros(256, np.float16))


def _tutorial_args():
    """The matmul tutorial's shape: lhsT [K, M], rhs [K, N], M = 4096, K = N = 8192 (bfloat16 sized:
    float16 here, NumPy having no bfloat16; the trace is the same but for the dtype)."""
    return np.zeros((8192, 4096), np.float16), np.zeros((8192, 8192), np.float16)


def _old_fully_optimized(lhsT, rhs):
    """matmul_tutorial.py's fully optimized kernel (it writes into a result argument) returning it."""
    result = old_nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=old_nl.shared_hbm)
    matmul_tutorial.nki_matmul_fully_optimized_(lhsT, rhs, result)
    return result


_old_fully_optimized = matmul_tutorial.nki.jit(_old_fully_optimized)

# (label, neuronxcc.nki kernel, today's nki kernel, arguments, keyword arguments, C++ twin or None)
CASES = [
    ("conv 1x256->256 224x224 fp16 (CS149)", fused_conv2d_maxpool, today_conv2d.fused_conv2d_maxpool, _conv_args, {},
     ("conv", "fp16", dict(batch=1, in_channels=256, out_channels=256, height=224, width=224))),
    ("conv 1x256->256 224x224 fp16 pool 2", fused_conv2d_maxpool, today_conv2d.fused_conv2d_maxpool, _conv_args,
     {"pool_size": 2},
     ("conv", "fp16", dict(batch=1, in_channels=256, out_channels=256, height=224, width=224, pool_size=2))),
    ("tiled n=25600 ROW_CHUNK=1", vector_add_tiled, today_kernels.vector_add_tiled,
     lambda: (np.zeros(25600, np.float32), np.zeros(25600, np.float32)), {"ROW_CHUNK": 1},
     ("tiled", "fp32", dict(n=25600, row_chunk=1))),
    ("transpose 4096x4096", matrix_transpose, today_kernels.matrix_transpose,
     lambda: (np.zeros((4096, 4096), np.float32),), {}, ("transpose", "fp32", dict(n=4096, m=4096))),
    ("matmul_blocked 2048^3 bf16-size fp16", matmul_blocked, today_matrix.matmul_blocked,
     lambda: (np.zeros((2048, 2048), np.float16), np.zeros((2048, 2048), np.float16)), {},
     ("matmul_blocked", "fp16", dict(k=2048, m=2048, n=2048))),
    ("matmul tutorial fully optimized 4096x8192x8192", _old_fully_optimized,
     today_tutorials.nki_matmul_fully_optimized_, _tutorial_args, {}, None),
]


def best(fn, repeat):
    """The least wall time and the least CPU time of `repeat` runs (CPU time leaves out the time
    other processes take the CPU: the steadier figure on a loaded machine), and fn's result."""
    wall, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        r = fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(wall), min(cpu), r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", default=None)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    rows = []
    print(f"{'case':48} {'insns':>8} {'neuronxcc s':>11} {'nki s':>8} {'c++ s':>8} {'nxcc/c++':>8} {'nki/c++':>8}")
    for label, kernel, today, args, kwargs, cpp in CASES:
        arrays = args()
        tp, cp, prog = best(lambda: ncore.trace(kernel, *arrays, **kwargs), a.repeat)
        tt, ct, tprog = best(lambda: ncore.trace(today, *arrays, **kwargs), a.repeat)
        row = dict(case=label, instructions=prog.instruction_count(), python_seconds=tp, python_cpu_seconds=cp,
                   nki_seconds=tt, nki_cpu_seconds=ct, nki_instructions=tprog.instruction_count())
        cells = ["", ""]
        tc = None
        if cpp is not None:
            name, dt, params = cpp
            tc, cc, cprog = best(lambda: ncore.declared(name, dtype=dt, **params), a.repeat)
            row.update(cpp_seconds=tc, cpp_cpu_seconds=cc, ratio=tp / tc, cpu_ratio=cp / cc, nki_ratio=tt / tc,
                       same_program=prog.code() == cprog.code(), nki_same_program=tprog.code() == cprog.code())
            cells = [f"{tp / tc:8.2f}", f"{tt / tc:8.2f}"]
        rows.append(row)
        c = f"{tc:8.3f}" if tc is not None else f"{'-':>8}"
        same = ""
        if cpp is not None and not row["same_program"]:
            same = "  (the neuronxcc Program differs from C++'s!)"
        elif cpp is not None and not row["nki_same_program"]:
            same = "  (nki: another placement)"
        print(f"{label:48} {prog.instruction_count():8d} {tp:11.3f} {tt:8.3f} {c} {cells[0]:>8} {cells[1]:>8}{same}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(cases=rows, repeat=a.repeat, load_average=list(os.getloadavg()),
                           cpus=os.cpu_count()), f, indent=2)


if __name__ == "__main__":
    main()
