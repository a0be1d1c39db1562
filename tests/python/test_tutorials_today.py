"""NKI's tutorial kernels in today's NKI (kernels/python/examples/today/tutorials.py): each against
NumPy on the golden model (nki.simulate), two on the RTL at tiny sizes, and the matrix
multiplication tutorial's kernels against their neuronxcc.nki twins
(kernels/python/examples/matmul_tutorial.py, which write into a result argument: here called from
a kernel that returns it):

- nki_matmul_tiled_: the same Program;
- nki_matmul_hoist_load_, nki_matmul_block_free_dimension_: the same instructions, synchronisation
  and access shapes, other on-chip addresses: today's tutorial keeps Python lists of tiles, each
  placed on its own (the neuronxcc twin one block tensor per strip, its lhsT strips as wide as a
  moving tile, as that release of the tutorial allocated them);
- nki_matmul_fully_optimized_: other instructions, as today's tutorial changed the kernel: a
  result row's TILES_IN_BLOCK_N tiles are one SBUF tile, zeroed by one memset and stored as it is
  (the neuronxcc twin zeroes each tile and gathers a row with a tensor_copy per tile).

Matmul operands are small whole numbers, so that every product and sum is exact in the dtype."""
import numpy as np
import pytest

import neuronxcc.nki as old_nki
import neuronxcc.nki.language as old_nl

import matmul_tutorial
import ncore
import nki
from today import tutorials as tt
from twin_cases import placement_free

RNG = np.random.default_rng(11)


def whole(*shape, lo=-4, hi=4, dtype=np.float32):
    return RNG.integers(lo, hi + 1, size=shape).astype(dtype)


def simulate(kernel, *args, **kwargs):
    out = nki.simulate(kernel)(*args, **kwargs)
    assert ncore.last_run()["backend"] == "golden"
    return out


# --- tensor addition, transpose2d, average pool ------------------------------------------------------------

def test_tensor_addition_quickstart_on_the_rtl_and_the_golden_model():
    a, b = RNG.standard_normal((128, 512)).astype(np.float32), RNG.standard_normal((128, 512)).astype(np.float32)
    np.testing.assert_array_equal(simulate(tt.nki_tensor_add_kernel, a, b), a + b)
    a, b = a[:32, :64], b[:32, :64]
    np.testing.assert_array_equal(tt.nki_tensor_add_kernel(a, b), a + b)
    assert ncore.last_run()["backend"] == "rtl" and ncore.last_run()["cycles"] > 0


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_tiled_tensor_addition(dtype):
    a, b = RNG.standard_normal((384, 1024)).astype(dtype), RNG.standard_normal((384, 1024)).astype(dtype)
    np.testing.assert_array_equal(simulate(tt.nki_tensor_add_kernel_, a, b), a + b)


def test_getting_started_high_level_traces_the_quickstarts_program():
    a, b = RNG.standard_normal((64, 256)).astype(np.float32), RNG.standard_normal((64, 256)).astype(np.float32)
    np.testing.assert_array_equal(simulate(tt.getting_started_kernel, a, b), a + b)
    # nl.load, nl.add and nl.store are the quickstart's dma_copy, tensor_tensor and dma_copy
    assert ncore.trace(tt.getting_started_kernel, a, b).code() == ncore.trace(tt.nki_tensor_add_kernel, a, b).code()


@pytest.mark.parametrize("dtype,p,f1,f2", [(np.float32, 128, 6, 5), (np.float16, 16, 4, 8), (np.int8, 8, 3, 4)])
def test_transpose2d(dtype, p, f1, f2):
    x = whole(p, f1 * f2, lo=-100, hi=100, dtype=dtype)
    ref = x.reshape(p, f1, f2).transpose(0, 2, 1).reshape(p, f2 * f1)
    np.testing.assert_array_equal(simulate(tt.tensor_transpose2D_kernel_, x, (f1, f2)), ref)
    assert ncore.trace(tt.tensor_transpose2D_kernel_, x, (f1, f2)).opcode_counts()["tensor_copy"] == f1 * f2


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("c,h,w,k", [(128, 8, 8, 2), (16, 9, 12, 3), (5, 7, 9, 2)])
def test_average_pool(dtype, c, h, w, k):
    x = whole(c, h, w, lo=0, hi=63, dtype=dtype)
    windows = x.astype(np.float32)[:, :h // k * k, :w // k * k].reshape(c, h // k, k, w // k, k)
    ref = (windows.sum(axis=(2, 4)) / (k * k)).astype(dtype)
    np.testing.assert_array_equal(simulate(tt.tensor_avgpool_kernel, x, k), ref)


# --- matrix multiplication ---------------------------------------------------------------------------------

def product(lhsT, rhs):
    return (lhsT.astype(np.float64).T @ rhs.astype(np.float64)).astype(lhsT.dtype)


def test_matmul_basic_on_the_rtl_and_the_golden_model():
    lhsT, rhs = whole(128, 64), whole(128, 512)
    np.testing.assert_array_equal(simulate(tt.nki_matmul_basic_, lhsT, rhs), product(lhsT, rhs))
    np.testing.assert_array_equal(tt.nki_matmul_basic_(lhsT, rhs), product(lhsT, rhs))
    assert ncore.last_run()["backend"] == "rtl" and ncore.last_run()["cycles"] > 0


FULL_BLOCKS = [dict(TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=2, TILES_IN_BLOCK_K=2),
               dict(TILES_IN_BLOCK_M=2, TILES_IN_BLOCK_N=1, TILES_IN_BLOCK_K=1), {}]
MATMULS = [  # kernel, K, M, N, blocks
    ("nki_matmul_tiled_", 384, 256, 1024, {}),
    ("nki_matmul_hoist_load_", 256, 384, 1024, {}),
    ("nki_matmul_block_free_dimension_", 384, 512, 2048, {}),
    ("nki_matmul_fully_optimized_", 512, 256, 1024, FULL_BLOCKS[0]),
    ("nki_matmul_fully_optimized_", 384, 512, 512, FULL_BLOCKS[1]),
    ("nki_matmul_fully_optimized_", 1024, 2048, 1024, FULL_BLOCKS[2]),  # the tutorial's 16 / 2 / 8
]


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name,k,m,n,blocks", MATMULS)
def test_matmul_against_numpy(name, k, m, n, blocks, dtype):
    # float16: operands -1, 0, 1, so that every partial sum (at most K) is exact in float16 too
    lo, hi = (-4, 4) if dtype == np.float32 else (-1, 1)
    lhsT, rhs = whole(k, m, lo=lo, hi=hi, dtype=dtype), whole(k, n, lo=lo, hi=hi, dtype=dtype)
    np.testing.assert_array_equal(simulate(getattr(tt, name), lhsT, rhs, **blocks), product(lhsT, rhs))


@old_nki.jit
def neuronxcc_twin(lhsT, rhs, name, blocks):
    """The neuronxcc.nki kernel of matmul_tutorial.py, returning the result it writes into."""
    result = old_nl.ndarray((lhsT.shape[1], rhs.shape[1]), dtype=lhsT.dtype, buffer=old_nl.shared_hbm)
    getattr(matmul_tutorial, name)(lhsT, rhs, result, **blocks)
    return result


def traced(name, k, m, n, blocks, dtype):
    lhsT, rhs = np.zeros((k, m), dtype), np.zeros((k, n), dtype)
    return ncore.trace(getattr(tt, name), lhsT, rhs, **blocks), ncore.trace(neuronxcc_twin, lhsT, rhs, name, blocks)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("k,m,n", [(384, 256, 1024), (128, 128, 512)])
def test_tiled_traces_its_neuronxcc_twins_program(k, m, n, dtype):
    """The same Program: the last tiles of a loop stay referred to by its body's variables after it
    (Python keeps them), but a tile lives until its last use, so they do not keep their bytes."""
    today, twin = traced("nki_matmul_tiled_", k, m, n, {}, dtype)
    assert today.code() == twin.code()


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("name,k,m,n", [("nki_matmul_hoist_load_", 256, 384, 1024),
                                        ("nki_matmul_block_free_dimension_", 384, 512, 2048)])
def test_lists_of_tiles_trace_their_neuronxcc_twins_program_placed_elsewhere(name, k, m, n, dtype):
    today, twin = traced(name, k, m, n, {}, dtype)
    assert today.code() != twin.code()
    assert placement_free(today, ("sbuf", "psum")) == placement_free(twin, ("sbuf", "psum"))


@pytest.mark.parametrize("k,m,n,blocks", [(512, 256, 1024, FULL_BLOCKS[0]), (1024, 2048, 1024, FULL_BLOCKS[2])])
def test_fully_optimized_instruction_mix(k, m, n, blocks):
    bm, bn, bk = (blocks.get(f"TILES_IN_BLOCK_{d}", default) for d, default in (("M", 16), ("N", 2), ("K", 8)))
    today, twin = traced("nki_matmul_fully_optimized_", k, m, n, blocks, np.float32)
    rows, k_blocks, n_blocks, mults = m // 128, k // (128 * bk), n // (512 * bn), (m // 128) * (n // 512) * (k // 128)
    c = today.opcode_counts()
    # per column block: a memset per result row (its bn tiles), per K block bk rhs loads, then per
    # row block bk lhsT loads, and per result tile one add of its PSUM sum; one store per row
    assert (c["memset"], c["tensor_tensor"], c.get("tensor_copy", 0)) == (n_blocks * rows, mults // bk, 0)
    assert c["dma_copy"] == n_blocks * (k_blocks * (bk + (m // (128 * bm)) * bk) + rows)
    assert (c["load_stationary"], c["multiply_moving"]) == (mults, mults)
    # the neuronxcc twin: a memset per result tile, and a tensor_copy per tile into the stored row
    t = twin.opcode_counts()
    assert (t["memset"], t["tensor_copy"], t["tensor_tensor"], t["dma_copy"]) == \
        (n_blocks * rows * bn, n_blocks * rows * bn, c["tensor_tensor"], c["dma_copy"])
