"""Assignment and accumulation as NKI defines them, counted in the traced Program: a producing
instruction assigned to a view writes into it (no copy), `psum += nc_matmul` accumulates, a tile
assigned to a tile is one copy."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

A = np.zeros((128, 64), np.float32)
rng = np.random.default_rng(3)


def counts(kernel, *args):
    c = ncore.trace(kernel, *args).opcode_counts()
    return {k: v for k, v in c.items() if k != "sem_wait"}


def test_load_assigned_to_a_view_is_one_dma():
    @nki.jit
    def k(a):
        t = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
        t[:, 0:64] = nl.load(a)
        t[:, 64:128] = nl.load(a)
        out = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    assert counts(k, A) == {"dma_copy": 3}


def test_result_assigned_to_a_view_is_one_instruction():
    @nki.jit
    def k(a):
        x = nl.load(a)
        t = nl.ndarray((128, 3, 64), dtype=a.dtype, buffer=nl.sbuf)
        t[:, 1, :] = nisa.tensor_copy(x)
        t[:, 2, :] = nl.add(x, x)
        t[:, 0, :] = nisa.tensor_scalar(x, nl.multiply, 2.0)
        out = nl.ndarray((128, 3, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=t)
        return out

    assert counts(k, A) == {"dma_copy": 2, "tensor_copy": 1, "tensor_tensor": 1, "tensor_scalar": 1}


def test_tile_assigned_to_a_tile_is_one_copy():
    @nki.jit
    def k(a):
        x = nl.load(a)
        y = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        y[...] = x
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=y)
        return out

    assert counts(k, A) == {"dma_copy": 2, "tensor_copy": 1}


def test_psum_accumulation_one_multiply_each():
    @nki.jit
    def k(l, r):
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for kt in nl.affine_range(4):
            ps += nisa.nc_matmul(nl.load(l[kt * 128:(kt + 1) * 128]), nl.load(r[kt * 128:(kt + 1) * 128]))
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(ps))
        return out

    l, r = np.ones((512, 128), np.float32), np.ones((512, 512), np.float32)
    c = counts(k, l, r)
    assert c["multiply_moving"] == 4 and c["tensor_copy"] == 1
    # and the sum is the sum of the four products (the first overwrites, the others add)
    got = nki.simulate_kernel(k, l, r)
    assert np.all(got == 512.0)


def test_indexed_accumulation_writes_the_view():
    @nki.jit
    def k(l, r):
        ps = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
        for j in nl.affine_range(2):
            for kt in nl.affine_range(2):
                ps[j] += nisa.nc_matmul(nl.load(l[kt * 128:(kt + 1) * 128]), nl.load(r[kt * 128:(kt + 1) * 128]))
        out = nl.ndarray((2, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        for j in nl.affine_range(2):
            nl.store(out[j], value=nl.copy(ps[j]))
        return out

    l, r = np.ones((256, 128), np.float32), np.full((256, 512), 2.0, np.float32)
    assert counts(k, l, r)["multiply_moving"] == 4
    assert np.all(nki.simulate_kernel(k, l, r) == 512.0)


def test_psum_plus_matmul_assigned_back_accumulates():
    # res[...] = res + nl.matmul(...): the multiply adds into the PSUM tile (the vector engine
    # cannot add two PSUM tiles); the same sum used elsewhere copies the product out first.
    @nki.jit
    def k(l, r):
        res = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
        for kt in nl.sequential_range(3):
            res[...] = res + nl.matmul(nl.load(l[kt * 128:(kt + 1) * 128]), nl.load(r[kt * 128:(kt + 1) * 128]),
                                       transpose_x=True)
        other = nl.matmul(nl.load(l[0:128]), nl.load(r[0:128]), transpose_x=True) + res
        out = nl.ndarray((2, 128, 256), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out[0], value=nl.copy(res))
        nl.store(out[1], value=other)
        return out

    l = rng.uniform(-1, 1, (384, 128)).astype(np.float32)
    r = rng.uniform(-1, 1, (384, 256)).astype(np.float32)
    c = counts(k, l, r)
    assert c["multiply_moving"] == 4 and c["tensor_tensor"] == 1 and c["tensor_copy"] == 2
    got = nki.simulate_kernel(k, l, r)
    want = l.astype(np.float64).T @ r
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(got[1], want + l[0:128].astype(np.float64).T @ r[0:128], rtol=1e-5, atol=1e-4)


def test_assigned_matmul_overwrites_each_iteration():
    @nki.jit
    def k(l, r):
        ps = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
        for i in nl.sequential_range(3):
            ps[...] = nisa.nc_matmul(nl.load(l), nl.load(r))
        out = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(ps))
        return out

    l, r = np.ones((128, 128), np.float32), np.ones((128, 512), np.float32)
    assert np.all(nki.simulate_kernel(k, l, r) == 128.0)


def test_inplace_elementwise_writes_the_tile():
    @nki.jit
    def k(a):
        x = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.sbuf)
        x[...] = nl.load(a)
        x += x
        x *= 3.0
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=x)
        return out

    assert counts(k, A) == {"dma_copy": 2, "tensor_tensor": 1, "tensor_scalar": 1}
    a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
    np.testing.assert_array_equal(nki.simulate_kernel(k, a), a * 6)


def test_program_order_is_kept_for_unused_results():
    @nki.jit
    def k(a):
        x = nl.load(a)
        y = nl.add(x, 1.0)   # used after the store below: still traced before it
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=x)
        nl.store(out, value=y)
        return out

    a = np.ones((128, 64), np.float32)
    assert np.all(nki.simulate_kernel(k, a) == 2.0)


def test_psum_rings_give_back_buffers_when_banks_run_out():
    # Two PSUM tiles per outer iteration and one per inner iteration: the loops' rings would take
    # 4 + 4 + 4 of the 8 banks; the outer ones give buffers back instead of failing.
    @nki.jit
    def k(a):
        out = nl.ndarray((4, 128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        for i in nl.affine_range(4):
            t1 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            t1[...] = nisa.nc_transpose(x)
            t2 = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
            t2[...] = nisa.nc_transpose(x)
            acc = nl.zeros((128, 128), dtype=a.dtype)
            for j in nl.affine_range(4):
                ps = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.psum)
                ps[...] = nisa.nc_matmul(x, x)
                acc[...] = nl.add(acc, ps)
            nl.store(out[i], value=nl.add(nl.add(nl.copy(t1), t2), acc))
        return out

    a = rng.uniform(-1, 1, (128, 128)).astype(np.float32)
    got = nki.simulate_kernel(k, a)
    want = 2 * a.T.astype(np.float64) + 4 * (a.T.astype(np.float64) @ a)
    for i in range(4):
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-4)
