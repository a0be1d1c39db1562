"""The twin kernels' cases, shared by test_twins.py (neuronxcc.nki, kernels/python/examples) and
test_twins_today.py (today's NKI, kernels/python/examples/today): each kernel, by its function
name in either namespace, with its arguments and its C++ twin in kernels/src; and the check that
a Python twin gives the same cycles and bits on the RTL as the C++ twin's Program."""
import re

import numpy as np

import _ncore_native

import ncore

NP = {"fp32": np.float32, "fp16": np.float16}


def vec(n, dt):
    return np.zeros(n, NP[dt])


# (case, the kernel's function name, its arguments, extra keyword arguments, C++ kernel name, its parameters)
CASES = [
    ("naive", "vector_add_naive", lambda dt: (vec(128, dt), vec(128, dt)), {}, "naive", {"n": 128}),
    ("tiled", "vector_add_tiled", lambda dt: (vec(2560, dt), vec(2560, dt)), {"ROW_CHUNK": 64}, "tiled",
     {"n": 2560, "row_chunk": 64}),
    ("stream", "vector_add_stream", lambda dt: (vec(25600, dt), vec(25600, dt)), {"FREE_DIM": 100}, "stream",
     {"n": 25600, "free_dim": 100}),
    ("direct_alloc", "vector_add_direct_allocation", lambda dt: (vec(256000, dt), vec(256000, dt)), {},
     "direct_alloc", {"n": 256000}),
    ("direct_alloc_bad", "vector_add_direct_allocation_bad", lambda dt: (vec(256000, dt), vec(256000, dt)), {},
     "direct_alloc_bad", {"n": 256000}),
    ("load_store", "vector_add_load_store", lambda dt: (vec(25600, dt), vec(25600, dt)), {}, "load_store",
     {"n": 25600}),
    ("transpose", "matrix_transpose", lambda dt: (np.zeros((256, 384), NP[dt]),), {}, "transpose",
     {"n": 256, "m": 384}),
    # one group: the pipeline's prologue and epilogue, and an empty loop between them
    ("transpose_one_group", "matrix_transpose", lambda dt: (np.zeros((128, 128), NP[dt]),), {}, "transpose",
     {"n": 128, "m": 128}),
    ("matmul", "matmul_tiled", lambda dt: (np.zeros((256, 128), NP[dt]), np.zeros((256, 1024), NP[dt])), {},
     "matmul", {"k": 256, "m": 128, "n": 1024}),
    ("matmul_blocked", "matmul_blocked", lambda dt: (np.zeros((256, 256), NP[dt]), np.zeros((256, 1024), NP[dt])),
     {}, "matmul_blocked", {"k": 256, "m": 256, "n": 1024}),
    ("matmul_blocked_one_block", "matmul_blocked",
     lambda dt: (np.zeros((128, 128), NP[dt]), np.zeros((128, 512), NP[dt])), {}, "matmul_blocked",
     {"k": 128, "m": 128, "n": 512}),
    # a shorter last band whose last row group is shorter too
    ("conv_ragged", "fused_conv2d_maxpool",
     lambda dt: (np.zeros((1, 128, 25, 130), NP[dt]), np.zeros((128, 128, 3, 3), NP[dt]), np.zeros(128, NP[dt])), {},
     "conv", {"batch": 1, "in_channels": 128, "out_channels": 128, "height": 25, "width": 130}),
    ("conv", "fused_conv2d_maxpool",
     lambda dt: (np.zeros((2, 128, 12, 10), NP[dt]), np.zeros((128, 128, 3, 3), NP[dt]), np.zeros(128, NP[dt])), {},
     "conv", {"batch": 2, "in_channels": 128, "out_channels": 128, "height": 12, "width": 10}),
    ("conv_pool", "fused_conv2d_maxpool",
     lambda dt: (np.zeros((1, 256, 18, 10), NP[dt]), np.zeros((128, 256, 3, 3), NP[dt]), np.zeros(128, NP[dt])),
     {"pool_size": 2}, "conv",
     {"batch": 1, "in_channels": 256, "out_channels": 128, "height": 18, "width": 10, "pool_size": 2}),
    # a pool size that divides neither output dimension (9 x 8 of a 11 x 10 image): the last row
    # and the last two columns are dropped
    ("conv_pool_floor", "fused_conv2d_maxpool",
     lambda dt: (np.zeros((1, 128, 11, 10), NP[dt]), np.zeros((128, 128, 3, 3), NP[dt]), np.zeros(128, NP[dt])),
     {"pool_size": 3}, "conv",
     {"batch": 1, "in_channels": 128, "out_channels": 128, "height": 11, "width": 10, "pool_size": 3}),
]
IDS = [c[0] for c in CASES]


def case_named(name):
    return next(c for c in CASES if c[0] == name)


def kernel_of(modules, function):
    """The kernel named function in the first of modules that has it."""
    return next(getattr(m, function) for m in modules if hasattr(m, function))


def programs(modules, case, dt):
    """The Programs of case's Python twin (found in modules) and of its C++ twin, in dtype dt, with
    the same instruction count."""
    _, function, args, kwargs, cpp, params = case
    py = ncore.trace(kernel_of(modules, function), *args(dt), **kwargs)
    cc = ncore.declared(cpp, dtype=dt, **params)
    assert py.instruction_count() == cc.instruction_count()
    return py, cc


def same_cycles_and_bits(run, name):
    """Runs case `name` (fp32, uniform inputs) through run(*arrays, **kwargs), the Python twin on
    the RTL, and the C++ twin's Program on the same inputs through the same pipeline: the same
    cycle count and the same output bits."""
    _, _, args, kwargs, cpp, params = case_named(name)
    rng = np.random.default_rng(3)
    arrays = [rng.uniform(0, 1, size=a.shape).astype(np.float32) for a in args("fp32")]
    out = run(*arrays, **kwargs)
    py = ncore.last_run()
    assert py["backend"] == "rtl"
    prog = ncore.declared(cpp, **params)
    names = [t[0] for t in prog.tensors() if t[1] == "input"]
    outs, _, res = _ncore_native.run_program(prog, "trn2", dict(zip(names, arrays)), "rtl", py["rtl_threads"], False,
                                             True)
    assert py["cycles"] == res.stats["cycles"]
    (want,) = outs.values()
    np.testing.assert_array_equal(np.asarray(out).reshape(want.shape), want)
    return py["cycles"]


def placement_free(prog, buffers=("psum",)):
    """The Program's listing (source lines and names left out) with the on-chip addresses in
    `buffers` ("sbuf", "psum") left out: the same instructions, synchronisation and access shapes,
    wherever the tiles are placed."""
    lines = [re.sub(r"\s*;.*$", "", line) for line in prog.listing().splitlines()]
    placed = re.compile(rf"({'|'.join(buffers)})\[(\d+:\d+)\]\+0x[0-9a-f]+")
    return [placed.sub(r"\1[\2]+?", line) for line in lines if line]
