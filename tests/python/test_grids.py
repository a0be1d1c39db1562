"""Index grids and whole-instruction masks as the NKI tutorials use them: a tile's axes are the grid
axes its indices use (the partition index's first), index expressions of two nl.mgrid calls in one
subscript, a mask placed on the axes the operands' views give them, masks on bn_stats,
tensor_tensor_scan and nc_transpose, all-or-nothing masks (`mask=m == 0` of a loop index) on the
calls that take no partial mask, and nl.ds slices past a tensor's end under a mask. Each against
NumPy on the golden model (the RTL's bits)."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(5)


def rand(*shape):
    return rng.uniform(-2, 2, size=shape).astype(np.float32)


def sim(kernel, *args):
    return nki.simulate_kernel(kernel, *args)


def test_a_size_one_grid_axis_as_the_partition_index_loads_one_row():
    # The layernorm tutorial: i_p_param, the last axis of mgrid[0:128, 0:C, 0:1], indexes the
    # one row of gamma.reshape((1, C)): a (1, C) tile, broadcast to (128, C).
    shapes = {}

    @nki.jit
    def k(x, g):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        C = x.shape[1]
        i_p, i_f, i_p1 = nl.mgrid[0:128, 0:C, 0:1]
        gt = nl.load(g.reshape((1, C))[i_p1, i_f])
        shapes["gamma"] = tuple(gt.shape)
        xt = nl.load(x[i_p, i_f])
        nl.store(out[i_p, i_f], value=xt * gt.broadcast_to((128, C)))
        return out

    x, g = rand(128, 96), rand(96)
    np.testing.assert_array_equal(sim(k, x, g), x * g)
    assert shapes["gamma"] == (1, 96)


def test_index_expressions_of_two_grids_and_a_mask_on_the_second():
    # layernorm v2: input_sb[i_p, j * 512 + i_f_bn] with i_p from a 3-axis grid and i_f_bn from
    # mgrid[0:512, 0:6]; bn_stats under mask=(j * 512 + i_f_bn < C) on the last, partial chunk;
    # stats[i_p, j * 6 + i_f_stats] = bn_stats(...).
    @nki.jit
    def k(x):
        C = x.shape[1]
        out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        i_p, i_f, _ = nl.mgrid[0:128, 0:C, 0:1]
        xt = nl.load(x[i_p, i_f])
        i_f_bn, i_f_stats = nl.mgrid[0:512, 0:6]
        n = (C + 511) // 512
        stats = nl.ndarray((128, 6 * n), dtype=np.float32)
        for j in nl.affine_range(n):
            stats[i_p, j * 6 + i_f_stats] = nisa.bn_stats(xt[i_p, j * 512 + i_f_bn],
                                                           mask=(j * 512 + i_f_bn < C), dtype=np.float32)
        mv = nisa.bn_aggr(stats[i_p, nl.arange(6 * n)[None, :]])
        nl.store(out, mv)
        return out

    x = rand(128, 700)
    got = sim(k, x)
    np.testing.assert_allclose(got[:, 0], x.astype(np.float64).mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[:, 1], x.astype(np.float64).var(1), rtol=1e-4, atol=1e-6)


def test_a_ragged_scan_under_a_mask_of_rows_and_columns():
    # A cumulative sum over rows of 300 in tiles of 128 x 128 (the contributed cumsum kernel).
    @nki.jit
    def k(x):
        R, C = x.shape
        y = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        pi, fi = nl.mgrid[0:128, 0:128]
        ones = nl.ones((128, 128), dtype=nl.float32)
        for i in nl.affine_range((R + 127) // 128):
            init = nl.zeros((128, 1), dtype=nl.float32)
            for j in nl.sequential_range((C + 127) // 128):
                m = (i * 128 + pi < R) & (j * 128 + fi < C)
                d = nl.load(x[i * 128 + pi, j * 128 + fi], mask=m)
                r = nisa.tensor_tensor_scan(data0=ones, data1=d, initial=init, op0=np.multiply, op1=np.add,
                                            dtype=nl.float32, mask=m)
                nl.store(y[i * 128 + pi, j * 128 + fi], r, mask=m)
                init[:, :] = nl.copy(r[:, 127], mask=j + 1 < (C + 127) // 128)
        return y

    x = rand(200, 300)
    np.testing.assert_allclose(sim(k, x), np.cumsum(x.astype(np.float64), axis=1), rtol=1e-4, atol=1e-4)


def test_a_partial_mask_on_nc_transpose_cuts_its_input_and_its_transposed_result():
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        i, j = nl.arange(128)[:, None], nl.arange(64)[None, :]
        t = nl.load(a)
        r = nl.zeros((64, 128), dtype=nl.float32, buffer=nl.sbuf)
        p, q = nl.arange(64)[:, None], nl.arange(128)[None, :]
        r[p, q] = nisa.nc_transpose(t[i, j], mask=(i < 100) & (j < 50), dtype=nl.float32)
        nl.store(out, r)
        return out

    a = rand(128, 64)
    want = np.zeros((64, 128), np.float32)
    want[:50, :100] = a[:100, :50].T
    np.testing.assert_array_equal(sim(k, a), want)


def test_a_mask_of_a_loop_index_that_keeps_nothing_issues_nothing():
    # lora_fwd: `psum += nc_matmul(..., mask=m == 0)` multiplies in the first iteration only, and
    # loop_reduce and dropout take the same mask.
    @nki.jit
    def k(a, b):
        out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        acc = nl.zeros((64, 64), dtype=nl.float32, buffer=nl.sbuf)
        for m in nl.affine_range(3):
            ta, tb = nl.load(a), nl.load(b)
            tb2 = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            tb2[...] = nl.dropout(tb, 0.0, mask=m == 0)
            ps = nl.zeros((64, 64), dtype=nl.float32, buffer=nl.psum)
            ps += nisa.nc_matmul(ta, tb2, mask=m == 0)
            acc[...] = nl.loop_reduce(ps, op=np.add, loop_indices=[m], mask=m == 0)
        nl.store(out, acc)
        return out

    a, b = rand(128, 64), rand(128, 64)
    got = sim(k, a, b)
    np.testing.assert_allclose(got, a.T.astype(np.float64) @ b, rtol=1e-5, atol=1e-4)
    c = ncore.trace(k, a, b).opcode_counts()
    assert c["multiply_moving"] == 1


def _matmul_under(rows):
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        i = nl.arange(128)[:, None]
        t = nl.load(a)
        ps = nl.zeros((64, 64), dtype=nl.float32, buffer=nl.psum)
        ps += nisa.nc_matmul(t, t, mask=(i < rows))
        nl.store(out, nl.copy(ps))
        return out

    return k


def test_a_mask_that_keeps_every_element_is_accepted_and_a_partial_one_refused_by_name():
    a = rand(128, 64)
    np.testing.assert_allclose(sim(_matmul_under(128), a), a.T.astype(np.float64) @ a, rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError, match=r"test_grids.py:\d+: the mask parameter of 'nc_matmul' keeps part"):
        sim(_matmul_under(100), a)


def test_an_nl_ds_slice_past_the_end_is_kept_inside_by_its_mask():
    # The last, partial tile of rows loaded with nl.ds(i * 128, 128) and a mask on the rows.
    @nki.jit
    def k(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        R = x.shape[0]
        ip = nl.mgrid[0:128, 0:1][0]
        for i in nl.affine_range((R + 127) // 128):
            t = nl.load(x[nl.ds(i * 128, 128), :], mask=(i * 128 + ip < R))
            nl.store(out[nl.ds(i * 128, 128), :], value=t, mask=(i * 128 + ip < R))
        return out

    x = rand(200, 16)
    np.testing.assert_array_equal(sim(k, x), x)

    @nki.jit
    def unmasked(x):
        out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
        t = nl.load(x[nl.ds(128, 128), :])
        nl.store(out[0:72, :], value=t[0:72, :])
        return out

    with pytest.raises(ValueError, match="Out-of-bound access for tensor"):
        sim(unmasked, x)


def test_view_axes_keep_the_grid_order_and_unused_axes_drop():
    # nl.arange(m)[None, :] indexing the partitions of an HBM tensor still makes a transposing
    # load (the grid's order, not the subscript's); an nl.mgrid axis no index uses is no axis of
    # the view ([0, g.x] is one row, [g.p, 0] one column).
    @nki.jit
    def k(y):
        t_out = nl.ndarray((64, 128), dtype=y.dtype, buffer=nl.shared_hbm)
        row = nl.ndarray((1, 64), dtype=y.dtype, buffer=nl.shared_hbm)
        col = nl.ndarray((128, 1), dtype=y.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.arange(64)[:, None], nl.arange(128)[None, :]
        nl.store(t_out, nl.load(y[i_f, i_p]))
        g = nl.mgrid[0:128, 0:64]
        nl.store(row, nl.load(y[0, g.x]))
        t = nl.load(y)
        nl.store(col, nl.copy(t[g.p, 5]))
        return t_out, row, col

    y = rand(128, 64)
    t_out, row, col = sim(k, y)
    np.testing.assert_array_equal(t_out, y.T)
    np.testing.assert_array_equal(row, y[0:1, :])
    np.testing.assert_array_equal(col, y[:, 5:6])
