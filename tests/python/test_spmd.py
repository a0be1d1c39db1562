"""SPMD launch grids (kernel[4, 2]): every instance runs on this model's one NeuronCore, in one
Program; nl.program_id tells the instances apart and nl.shared_hbm tensors are shared among them.
Against NumPy, on the golden model and on the RTL."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(5)


def add_tiles(a, b, c):
    # One [128, 256] tile per instance; the output is an argument the instances write into.
    ix = nl.program_id(0) * 128 + nl.arange(128)[:, None]
    iy = nl.program_id(1) * 256 + nl.arange(256)[None, :]
    nl.store(c[ix, iy], value=nl.load(a[ix, iy]) + nl.load(b[ix, iy]))


@nki.jit
def matmul_spmd(A, B):
    # The output is allocated by every instance and shared by all of them.
    M, K = A.shape
    _, N = B.shape
    out = nl.ndarray((M, N), dtype=A.dtype, buffer=nl.shared_hbm)
    r = nl.program_id(0) * 128
    c = nl.program_id(1) * 128
    ps = nl.matmul(nl.load(A[r:r + 128, 0:K]), nl.load(B[0:K, c:c + 128]))
    nl.store(out[r:r + 128, c:c + 128], value=nl.copy(ps, dtype=out.dtype))
    return out


def test_grid_of_tile_adds_into_an_output_argument_golden_and_rtl():
    a = rng.random((256, 768), dtype=np.float32)
    b = rng.random((256, 768), dtype=np.float32)
    c = np.zeros_like(a)
    nki.simulate_kernel(nki.jit(add_tiles)[2, 3], a, b, c)
    np.testing.assert_array_equal(c, a + b)
    c2 = np.zeros_like(a)
    nki.baremetal(add_tiles)[2, 3](a, b, c2)
    np.testing.assert_array_equal(c2, a + b)
    assert ncore.last_run()["backend"] == "rtl"


def test_shared_hbm_output_returned_by_every_instance():
    A = rng.random((256, 128), dtype=np.float32)
    B = rng.random((128, 256), dtype=np.float32)
    got = nki.simulate_kernel(matmul_spmd[2, 2], A, B)
    np.testing.assert_allclose(got, A.astype(np.float64) @ B, rtol=1e-5)
    # One output tensor in HBM, written by four instances: each instance's loads, transpose, matmul
    # and store four times; the identity matrix of the transposes is loaded once per Program.
    prog = ncore.trace(matmul_spmd[2, 2], A, B).opcode_counts()
    one = ncore.trace(matmul_spmd, A[:128], B[:, :128]).opcode_counts()
    assert prog["dma_copy"] == 4 * (one["dma_copy"] - 1) + 1
    for op in ("load_stationary", "multiply_moving", "tensor_copy"):
        assert prog[op] == 4 * one[op]


def test_grid_queries():
    seen = []

    @nki.jit
    def k(a):
        seen.append((nl.program_ndim(), nl.num_programs(), nl.num_programs(0), nl.num_programs(axes=(0, 1)),
                     nl.program_id(0), nl.program_id(1), nl.program_id(-1)))
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
        return out

    a = rng.random((128, 4), dtype=np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(k[2, 3], a), a)
    assert seen == [(2, 6, 2, 6, i, j, j) for i in range(2) for j in range(3)]
    seen.clear()

    @nki.jit
    def plain(a):
        seen.append((nl.program_ndim(), nl.num_programs(), nl.program_id(0)))
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=nl.load(a))
        return out

    nki.simulate_kernel(plain, a)
    assert seen == [(0, 1, 0)]


@pytest.mark.parametrize("grid", [0, (2, 0), (-1,), ("x",)])
def test_bad_grid(grid):
    with pytest.raises(ValueError, match="SPMD launch grid .*: expected positive integers"):
        matmul_spmd[grid]


def test_program_id_outside_the_grid():
    @nki.jit
    def k(a):
        nl.program_id(2)
        return a

    with pytest.raises(ValueError, match=r"program_id: axis 2 is outside the launch grid \(2, 2\) \(2 axes\)"):
        nki.simulate_kernel(k[2, 2], rng.random((128, 4), dtype=np.float32))


def test_instances_must_agree_on_shared_tensors():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 4 + nl.program_id(0)), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out[:, 0:4], value=nl.load(a))
        return out

    with pytest.raises(ValueError, match=r"SPMD instance \(1,\) allocates shared_hbm tensor number 1 as \(128, 5\)"):
        nki.simulate_kernel(k[2], rng.random((128, 4), dtype=np.float32))
