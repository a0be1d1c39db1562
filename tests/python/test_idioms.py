"""Forms that kernels written for the chip use (the CS149 conv2d and kernels files): affine index
expressions, reductions over any free axes, free-axis broadcast, transposes with a dtype, tiles made
in plain Python loops, block dimensions in nl.zeros, outputs never written. Each against NumPy on the
golden model (whose results are the RTL's bit for bit)."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(11)


def rand(*shape, dtype=np.float32):
    return rng.uniform(-2, 2, size=shape).astype(dtype)


def sim(kernel, *args):
    return nki.simulate_kernel(kernel, *args)


def test_index_from_a_sum_of_aranges_pairs_columns():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 7), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        ip = nl.arange(128)[:, None, None]
        i = nl.arange(7)[None, :, None]
        j = nl.arange(2)[None, None, :]
        nl.store(out, nl.max(x[ip, 2 * i + j], axis=[2]))
        return out

    a = rand(128, 14)
    np.testing.assert_array_equal(sim(k, a), a.reshape(128, 7, 2).max(axis=2))


def test_affine_index_with_offset_and_two_pooled_axes():
    # 2x2 max pooling of a [128, 6, 8] tile through x[p, 2*i + di, 2*j + dj] with an offset of one row
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 2, 4), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        ip = nl.arange(128)[:, None, None, None, None]
        i = nl.arange(2)[None, :, None, None, None]
        di = nl.arange(2)[None, None, :, None, None]
        j = nl.arange(4)[None, None, None, :, None]
        dj = nl.arange(2)[None, None, None, None, :]
        nl.store(out, nl.max(x[ip, 1 + 2 * i + di, 2 * j + dj], axis=[2, 4]))
        return out

    a = rand(128, 6, 8)
    want = a[:, 1:5, :].reshape(128, 2, 2, 4, 2).max(axis=(2, 4))
    np.testing.assert_array_equal(sim(k, a), want)


@pytest.mark.parametrize("axis,keep", [(1, False), ((1, 3), False), (2, True)])
def test_tensor_reduce_over_axes_that_are_not_trailing(axis, keep):
    @nki.jit
    def k(a):
        x = nl.load(a)
        r = nisa.tensor_reduce(nl.max, x, axis=axis, keepdims=keep)
        out = nl.ndarray(r.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    a = rand(128, 2, 3, 4)
    np.testing.assert_array_equal(sim(k, a), a.max(axis=axis, keepdims=keep))


def test_tensor_reduce_over_a_size_one_axis_is_a_copy():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 14), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.ndarray((128, 14, 1), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=x, src=a.reshape((128, 14, 1)))
        nisa.dma_copy(dst=out, src=nisa.tensor_reduce(nl.max, x, axis=[2]))
        return out

    a = rand(128, 14)
    np.testing.assert_array_equal(sim(k, a), a)


def test_tensor_tensor_broadcasts_a_one_column_operand():
    @nki.jit
    def k(a, bias):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_tensor(nl.load(a), nl.load(bias), op=nl.add))
        return out

    a, bias = rand(128, 14), rand(128, 1)
    np.testing.assert_array_equal(sim(k, a, bias), a + bias)


def test_broadcast_to_ones_expand_dims_and_reshape_keyword():
    @nki.jit
    def k(a, bias):
        out = nl.ndarray((128, 14), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a.reshape(shape=(128, 14)))
        b = nl.broadcast_to(nl.load(bias), shape=(128, 14))
        c = nl.load(bias).broadcast_to((128, 14))
        y = nl.add(nl.multiply(x, nl.ones((128, 14), dtype=a.dtype)), b)
        nl.store(out, nl.subtract(y, c))
        return out

    a, bias = rand(128, 2, 7), rand(128, 1)
    want = (a.reshape(128, 14) * np.float32(1) + bias) - bias
    np.testing.assert_array_equal(sim(k, a, bias), want)


def test_load_transpose2d_and_nc_transpose_with_dtype():
    @nki.jit
    def k(a):
        out = nl.ndarray((2, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out[0], nl.load_transpose2d(a))
        x = nl.load(a)
        t = nisa.nc_transpose(x, dtype=nl.float32)
        nl.store(out[1], nl.copy(t))
        return out

    a = rand(64, 128)
    got = sim(k, a)
    np.testing.assert_array_equal(got[0], a.T)
    np.testing.assert_array_equal(got[1], a.T)


@pytest.mark.parametrize("shape, axes, from_sbuf", [
    ((64, 96), (1, 0), False),
    ((4, 8, 16), (2, 1, 0), False),
    ((2, 3, 4, 5), (3, 1, 2, 0), False),
    ((32, 48), (1, 0), True),
    ((6, 5, 7), (2, 1, 0), True),
])
def test_dma_transpose_axis_orders(shape, axes, from_sbuf):
    @nki.jit
    def k(a):
        out = nl.ndarray(tuple(shape[i] for i in axes), dtype=nl.bfloat16, buffer=nl.shared_hbm)
        src = nl.load(a) if from_sbuf else a
        nl.store(out, nisa.dma_transpose(src, dtype=nl.bfloat16))
        return out

    a = (np.arange(np.prod(shape)) % 251).astype(np.float32).reshape(shape)  # exact in bfloat16
    np.testing.assert_array_equal(sim(k, a).astype(np.float32), np.transpose(a, axes))


def test_dma_transpose_refuses_five_axes():
    @nki.jit
    def k(a):
        out = nl.ndarray((2, 2, 2, 2, 2), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.dma_transpose(a))
        return out

    with pytest.raises(Exception, match="to have 2, 3 or 4 dimensions, but got 5"):
        sim(k, rand(2, 2, 2, 2, 2))


def test_dma_transpose_into_psum_refused_by_name():
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.ndarray((64, 32), dtype=a.dtype, buffer=nl.psum)
        t[...] = nisa.dma_transpose(a)
        nl.store(out, t)
        return out

    with pytest.raises(Exception, match="operand 'dst' of 'dma_transpose' to be in address space 'hbm' or 'sbuf'"):
        sim(k, rand(32, 64))


def test_tensor_engine_result_named_then_assigned_to_sbuf():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        y = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.sbuf)
        t = nisa.nc_transpose(x)
        y[...] = t
        nl.store(out, y)
        return out

    a = rand(128, 128)
    np.testing.assert_array_equal(sim(k, a), a.T)


def test_tiles_made_in_plain_python_loops_are_released():
    # 10 PSUM results (8 banks) and 400 SBUF tiles of 2 KiB per partition (24 MiB SBUF) only fit if
    # each is released when its last view is gone.
    @nki.jit
    def k(a, b):
        out = nl.ndarray((10, 128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
        out2 = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        for i in range(10):
            nl.store(out[i], nl.copy(nisa.nc_transpose(x), dtype=a.dtype))
        for i in range(400):
            y = nl.ndarray((128, 512), dtype=b.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=y, src=b)
            z = nisa.tensor_copy(y)
        nl.store(out2, z)
        return out, out2

    a, b = rand(128, 128), rand(128, 512)
    got, got2 = sim(k, a, b)
    np.testing.assert_array_equal(got, np.broadcast_to(a.T, (10, 128, 128)))
    np.testing.assert_array_equal(got2, b)


def test_zeros_with_a_block_dimension():
    @nki.jit
    def k(a):
        out = nl.ndarray((2, 128, 16), dtype=a.dtype, buffer=nl.shared_hbm)
        z = nl.zeros((2, nl.par_dim(128), 16), dtype=a.dtype, buffer=nl.sbuf)
        for i in nl.affine_range(2):
            nisa.dma_copy(dst=out[i], src=z[i])
        return out

    a = rand(2, 128, 16) + 5
    np.testing.assert_array_equal(sim(k, a), np.zeros((2, 128, 16), np.float32))


def test_an_output_never_written_is_an_error():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 14), dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(14 // 512):  # no iterations
            nl.store(out, nl.load(a))
        return out

    with pytest.raises(ValueError, match="never written"):
        sim(k, rand(128, 14))


def test_mgrid_named_axes_and_sbuf_accumulation_of_psum_tiles():
    # The tutorial's blocked matmul forms: grid.p / grid.x index expressions with offsets, a 5-D
    # SBUF tile of zeros with the partition axis inside, `sbuf[...] += psum[...]`.
    @nki.jit
    def k(lhsT, rhs):
        K, M = lhsT.shape
        _, N = rhs.shape
        out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
        i_l = nl.mgrid[0:128, 0:M]
        i_r = nl.mgrid[0:128, 0:N]
        i_o = nl.mgrid[0:M, 0:N]
        acc = nl.zeros((1, 1, 1, nl.par_dim(M), N), dtype=lhsT.dtype, buffer=nl.sbuf)
        for kt in nl.affine_range(K // 128):
            lt = nl.load(lhsT[kt * 128 + i_l.p, i_l.x])
            rt = nl.load(rhs[kt * 128 + i_r.p, i_r.x])
            ps = nl.zeros((M, N), nl.float32, buffer=nl.psum)
            ps[...] += nisa.nc_matmul(lt[i_l.p, i_l.x], rt[i_r.p, i_r.x])
            acc[0, 0, 0, i_o.p, i_o.x] += ps[i_o.p, i_o.x]
        nl.store(out[i_o.p, i_o.x], value=nl.copy(acc[0, 0, 0, i_o.p, i_o.x]))
        return out

    lhsT, rhs = rand(256, 64), rand(256, 96)
    # Each 128-row block's product in fp32, then the two blocks added in fp32.
    parts = [lhsT[i:i + 128].T.astype(np.float64) @ rhs[i:i + 128] for i in (0, 128)]
    got = sim(k, lhsT, rhs)
    np.testing.assert_allclose(got, parts[0] + parts[1], rtol=1e-5, atol=1e-4)
    grid = nl.mgrid[0:4, 0:5, 0:6]
    with pytest.raises(AttributeError, match="has 3 axes: it has no .z"):
        grid.z


def test_engine_result_assigned_to_an_hbm_view_is_stored():
    # out[...] = nl.copy(tile): the copy lands on chip, a DMA stores it; a tensor engine result
    # assigned to HBM goes through the SBUF too.
    @nki.jit
    def k(a):
        out = nl.ndarray((2, 128, 64), dtype=a.dtype, buffer=nl.hbm)
        x = nl.load(a)
        out[0] = nl.copy(x, dtype=a.dtype)
        out[1, 0:64, :] = nisa.nc_transpose(x[0:64, :])
        return out

    a = rand(128, 64)
    got = sim(k, a)
    np.testing.assert_array_equal(got[0], a)
    np.testing.assert_array_equal(got[1, 0:64, :], a[0:64, :].T)
    c = ncore.trace(k, a).opcode_counts()
    assert c["dma_copy"] == 4 and c["tensor_copy"] == 2  # the load, two stores, the transpose's identity


def test_a_kernel_calls_another_jit_kernel_inline():
    @nki.jit
    def transpose_tile(t):
        return nl.copy(nisa.nc_transpose(t), dtype=t.dtype)

    @nki.jit
    def k(a):
        out = nl.ndarray((128, 128), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, transpose_tile(nl.load(a)))
        return out

    a = rand(128, 128)
    np.testing.assert_array_equal(sim(k, a), a.T)


def test_size_one_free_axes_broadcast_as_numpy():
    """The select-and-scatter sample's nl.equal(max_val, windows): a (128, 8, 1, 1) tile against a
    (128, 8, 3, 3) one, the size-1 axes repeated; and (128, 1, 4) + (128, 3, 4)."""
    w = rng.integers(0, 3, size=(128, 8, 3, 3)).astype(np.float32)
    a = rand(128, 1, 4)
    b = rand(128, 3, 4)

    @nki.jit
    def k(w, a, b):
        t = nl.load(w)
        m = nl.max(t, axis=[2, 3], keepdims=True)
        eq = nl.equal(m, t, dtype=nl.int8)
        out1 = nl.ndarray(w.shape, dtype=nl.int8, buffer=nl.shared_hbm)
        nl.store(out1, eq)
        out2 = nl.ndarray(b.shape, dtype=b.dtype, buffer=nl.shared_hbm)
        nl.store(out2, nl.add(nl.load(a), nl.load(b)))
        return out1, out2

    eq, s = sim(k, w, a, b)
    np.testing.assert_array_equal(eq, (w == w.max(axis=(2, 3), keepdims=True)).astype(np.int8))
    np.testing.assert_array_equal(s, a + b)

    @nki.jit
    def bad(a, b):
        nl.add(nl.load(a), nl.load(b))

    with pytest.raises(ValueError, match=r"cannot be broadcast together \(dimension 1: 2 and 3\)"):
        ncore.trace(bad, rand(128, 2, 4), b)


def test_mgrid_components_have_the_whole_grid_shape():
    """nl.mgrid is dense, as NumPy's: an iota of 3 * g.y + g.z spans all four axes of g."""
    @nki.jit
    def k():
        g = nl.mgrid[0:128, 0:8, 0:3, 0:3]
        t = nisa.iota(3 * g.y + g.z, dtype=nl.int32)
        assert t.shape == (128, 8, 3, 3), t.shape
        out = nl.ndarray((128, 8, 3, 3), dtype=nl.int32, buffer=nl.shared_hbm)
        nl.store(out, t)
        return out

    want = np.broadcast_to((3 * np.arange(3)[:, None] + np.arange(3)[None, :]), (128, 8, 3, 3))
    np.testing.assert_array_equal(sim(k), want)


def test_finfo_and_iinfo():
    """nl.finfo and nl.iinfo give NumPy's limits, bfloat16's too (the vision samples fill padding
    with nl.finfo(dtype).min)."""
    assert nl.finfo(nl.float32).max == np.finfo(np.float32).max
    assert nl.finfo(np.float16).min == np.finfo(np.float16).min
    bf = nl.finfo(nl.bfloat16)
    assert (bf.bits, bf.max, bf.min, bf.eps) == (16, 3.3895313892515355e38, -3.3895313892515355e38, 2.0 ** -7)
    assert nl.iinfo(nl.int8).min == -128 and nl.iinfo(nl.uint16).max == 65535
    with pytest.raises(ValueError, match="not a floating-point dtype"):
        nl.finfo(nl.int8)
    with pytest.raises(ValueError, match="not an integer dtype"):
        nl.iinfo(nl.float32)
