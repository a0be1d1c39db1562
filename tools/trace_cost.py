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
from conv2d import fused_conv2d_maxpool  # noqa: E402
from kernels import matrix_transpose, vector_add_tiled  # noqa: E402
from matrix import matmul_blocked  # noqa: E402

CASES = [
    ("conv 1x256->256 224x224 fp16 (CS149)", fused_conv2d_maxpool,
     lambda: (np.zeros((1, 256, 224, 224), np.float16), np.zeros((256, 256, 3, 3), np.float16),
              np.zeros(256, np.float16)), {},
     ("conv", "fp16", dict(batch=1, in_channels=256, out_channels=256, height=224, width=224))),
    ("conv 1x256->256 224x224 fp16 pool 2", fused_conv2d_maxpool,
     lambda: (np.zeros((1, 256, 224, 224), np.float16), np.zeros((256, 256, 3, 3), np.float16),
              np.zeros(256, np.float16)), {"pool_size": 2},
     ("conv", "fp16", dict(batch=1, in_channels=256, out_channels=256, height=224, width=224, pool_size=2))),
    ("tiled n=25600 ROW_CHUNK=1", vector_add_tiled,
     lambda: (np.zeros(25600, np.float32), np.zeros(25600, np.float32)), {"ROW_CHUNK": 1},
     ("tiled", "fp32", dict(n=25600, row_chunk=1))),
    ("transpose 4096x4096", matrix_transpose, lambda: (np.zeros((4096, 4096), np.float32),), {},
     ("transpose", "fp32", dict(n=4096, m=4096))),
    ("matmul_blocked 2048^3 bf16-size fp16", matmul_blocked,
     lambda: (np.zeros((2048, 2048), np.float16), np.zeros((2048, 2048), np.float16)), {},
     ("matmul_blocked", "fp16", dict(k=2048, m=2048, n=2048))),
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
    print(f"{'case':42} {'insns':>8} {'python s':>9} {'c++ s':>8} {'ratio':>6} {'cpu ratio':>9}")
    for label, kernel, args, kwargs, (cpp, dt, params) in CASES:
        arrays = args()
        tp, cp, prog = best(lambda: ncore.trace(kernel, *arrays, **kwargs), a.repeat)
        tc, cc, cprog = best(lambda: ncore.declared(cpp, dtype=dt, **params), a.repeat)
        same = prog.code() == cprog.code()
        rows.append(dict(case=label, instructions=prog.instruction_count(), python_seconds=tp, cpp_seconds=tc,
                         ratio=tp / tc, python_cpu_seconds=cp, cpp_cpu_seconds=cc, cpu_ratio=cp / cc,
                         same_program=same))
        print(f"{label:42} {prog.instruction_count():8d} {tp:9.3f} {tc:8.3f} {tp / tc:6.2f} {cp / cc:9.2f}"
              + ("" if same else "  (programs differ!)"))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(cases=rows, repeat=a.repeat, load_average=list(os.getloadavg()),
                           cpus=os.cpu_count()), f, indent=2)


if __name__ == "__main__":
    main()
