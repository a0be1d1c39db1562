"""The handout's part 1 driver (run_benchmark.py) for the kernels in kernels.py, unchanged in its
workflow: random inputs, a correctness check against NumPy, then nki.benchmark's p99 latency.
On this model the latency is the simulated one (NeuronCore time at the modelled clock).

    ncore-python run_benchmark.py --kernel tiled -n 25600
    ncore-python run_benchmark.py --kernel transpose -n 1024 -m 1024 --profile_name transpose_1k

--row_chunk and --free_dim (not in the handout's script) set the kernels' ROW_CHUNK and FREE_DIM.
"""
import argparse
import os
import sys

import numpy as np

import neuronxcc.nki as nki

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernels import (matrix_transpose, vector_add_naive, vector_add_stream,  # noqa: E402
                     vector_add_tiled)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel", required=True, choices=["naive", "tiled", "stream", "transpose"])
    parser.add_argument("-n", type=int, required=True)
    parser.add_argument("-m", type=int, default=None)
    parser.add_argument("--profile_name", default=None, help="Name used to save .NEFF and .NTFF files")
    parser.add_argument("--row_chunk", type=int, default=None, help="tiled: ROW_CHUNK (default: the kernel's)")
    parser.add_argument("--free_dim", type=int, default=None, help="stream: FREE_DIM (default: the kernel's)")
    args = parser.parse_args()

    np.random.seed(0)
    kwargs = {}
    if args.kernel == "transpose":
        m = args.m or args.n
        a = np.random.rand(args.n, m).astype(np.float32)
        inputs, expected, kernel = (a,), a.T, matrix_transpose
    else:
        a = np.random.rand(args.n).astype(np.float32)
        b = np.random.rand(args.n).astype(np.float32)
        inputs, expected = (a, b), a + b
        kernel = {"naive": vector_add_naive, "tiled": vector_add_tiled, "stream": vector_add_stream}[args.kernel]
        if args.kernel == "tiled" and args.row_chunk:
            kwargs["ROW_CHUNK"] = args.row_chunk
        if args.kernel == "stream" and args.free_dim:
            kwargs["FREE_DIM"] = args.free_dim

    out = nki.baremetal(kernel)(*inputs, **kwargs)
    print("Correctness passed?", np.allclose(out.reshape(expected.shape), expected))

    bench_kwargs = {}
    if args.profile_name:
        bench_kwargs = dict(save_neff_name="file.neff", save_trace_name=args.profile_name + ".ntff")
    bench = nki.benchmark(kernel, warmup=5, iters=20, **bench_kwargs)
    bench(*inputs, **kwargs)
    latency = bench.benchmark_result.nc_latency.get_latency_percentile(99)
    print(f"Execution time: {latency:.3f} us")


if __name__ == "__main__":
    main()
