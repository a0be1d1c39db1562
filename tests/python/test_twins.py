"""Each NKI Python kernel of kernels/python/examples traces to the same Program as its C++ twin in
kernels/src (same instructions bit for bit, same HBM layout; names and source lines aside), and
gives the same cycles and bits on the RTL."""
import numpy as np
import pytest

import neuronxcc.nki as nki

import ncore
from conv2d import fused_conv2d_maxpool
from kernels import (vector_add_direct_allocation, vector_add_direct_allocation_bad, vector_add_load_store,
                     vector_add_naive, vector_add_stream, vector_add_tiled)
from kernels import matrix_transpose
from matrix import matmul_blocked, matmul_tiled

NP = {"fp32": np.float32, "fp16": np.float16}


def vec(n, dt):
    return np.zeros(n, NP[dt])


# (python kernel, its arguments, extra keyword arguments, C++ kernel name, its parameters)
CASES = [
    ("naive", vector_add_naive, lambda dt: (vec(128, dt), vec(128, dt)), {}, "naive", {"n": 128}),
    ("tiled", vector_add_tiled, lambda dt: (vec(2560, dt), vec(2560, dt)), {"ROW_CHUNK": 64}, "tiled",
     {"n": 2560, "row_chunk": 64}),
    ("stream", vector_add_stream, lambda dt: (vec(25600, dt), vec(25600, dt)), {"FREE_DIM": 100}, "stream",
     {"n": 25600, "free_dim": 100}),
    ("direct_alloc", vector_add_direct_allocation, lambda dt: (vec(256000, dt), vec(256000, dt)), {}, "direct_alloc",
     {"n": 256000}),
    ("direct_alloc_bad", vector_add_direct_allocation_bad, lambda dt: (vec(256000, dt), vec(256000, dt)), {},
     "direct_alloc_bad", {"n": 256000}),
    ("load_store", vector_add_load_store, lambda dt: (vec(25600, dt), vec(25600, dt)), {}, "load_store",
     {"n": 25600}),
    ("transpose", matrix_transpose, lambda dt: (np.zeros((256, 384), NP[dt]),), {}, "transpose", {"n": 256, "m": 384}),
    # one group: the pipeline's prologue and epilogue, and an empty loop between them
    ("transpose_one_group", matrix_transpose, lambda dt: (np.zeros((128, 128), NP[dt]),), {}, "transpose",
     {"n": 128, "m": 128}),
    ("matmul", matmul_tiled, lambda dt: (np.zeros((256, 128), NP[dt]), np.zeros((256, 1024), NP[dt])), {}, "matmul",
     {"k": 256, "m": 128, "n": 1024}),
    ("matmul_blocked", matmul_blocked, lambda dt: (np.zeros((256, 256), NP[dt]), np.zeros((256, 1024), NP[dt])), {},
     "matmul_blocked", {"k": 256, "m": 256, "n": 1024}),
    ("matmul_blocked_one_block", matmul_blocked,
     lambda dt: (np.zeros((128, 128), NP[dt]), np.zeros((128, 512), NP[dt])), {}, "matmul_blocked",
     {"k": 128, "m": 128, "n": 512}),
    # a shorter last band (traced after the loop over the full ones) whose last row group is
    # shorter too (its loop traced by Python: min() of the index varies)
    ("conv_ragged", fused_conv2d_maxpool,
     lambda dt: (np.zeros((1, 128, 25, 130), NP[dt]), np.zeros((128, 128, 3, 3), NP[dt]), np.zeros(128, NP[dt])), {},
     "conv", {"batch": 1, "in_channels": 128, "out_channels": 128, "height": 25, "width": 130}),
    ("conv", fused_conv2d_maxpool,
     lambda dt: (np.zeros((2, 128, 12, 10), NP[dt]), np.zeros((128, 128, 3, 3), NP[dt]), np.zeros(128, NP[dt])), {},
     "conv", {"batch": 2, "in_channels": 128, "out_channels": 128, "height": 12, "width": 10}),
    ("conv_pool", fused_conv2d_maxpool,
     lambda dt: (np.zeros((1, 256, 18, 10), NP[dt]), np.zeros((128, 256, 3, 3), NP[dt]), np.zeros(128, NP[dt])),
     {"pool_size": 2}, "conv",
     {"batch": 1, "in_channels": 256, "out_channels": 128, "height": 18, "width": 10, "pool_size": 2}),
    # a pool size that divides neither output dimension (9 x 8 of a 11 x 10 image): the last row
    # and the last two columns are dropped
    ("conv_pool_floor", fused_conv2d_maxpool,
     lambda dt: (np.zeros((1, 128, 11, 10), NP[dt]), np.zeros((128, 128, 3, 3), NP[dt]), np.zeros(128, NP[dt])),
     {"pool_size": 3}, "conv",
     {"batch": 1, "in_channels": 128, "out_channels": 128, "height": 11, "width": 10, "pool_size": 3}),
]


@pytest.mark.parametrize("dt", ["fp32", "fp16"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_same_program_as_the_cpp_twin(case, dt):
    _, kernel, args, kwargs, cpp, params = case
    py = ncore.trace(kernel, *args(dt), **kwargs)
    cc = ncore.declared(cpp, dtype=dt, **params)
    assert py.instruction_count() == cc.instruction_count()
    assert py.code() == cc.code()


RTL_CASES = ["tiled", "stream", "direct_alloc", "transpose", "matmul", "conv_pool", "conv_pool_floor"]


@pytest.mark.parametrize("name", RTL_CASES)
def test_same_cycles_and_bits_on_the_rtl(name):
    _, kernel, args, kwargs, cpp, params = next(c for c in CASES if c[0] == name)
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(0, 1, size=a.shape).astype(np.float32) for a in args("fp32")]
    out = nki.baremetal(kernel)(*arrays, **kwargs)
    py = ncore.last_run()
    # The C++ twin's Program run on the same inputs through the same pipeline.
    import _ncore_native
    prog = ncore.declared(cpp, **params)
    names = [t[0] for t in prog.tensors() if t[1] == "input"]
    outs, _, res = _ncore_native.run_program(prog, "trn2", dict(zip(names, arrays)), "rtl", py["rtl_threads"], False,
                                             True)
    cc = res.stats
    assert py["cycles"] == cc["cycles"]
    (want,) = outs.values()
    np.testing.assert_array_equal(out.reshape(want.shape), want)
