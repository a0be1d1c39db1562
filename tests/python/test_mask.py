"""NKI's mask= parameter and partition broadcast, as the NKI tutorials use them: the rmsnorm and
layernorm tutorial kernels (a ragged last tile of rows loaded, computed and stored under
`mask=(i * 128 + i_p < n)`, a (1, d) parameter row broadcast onto 128 partitions), each against
NumPy; what a mask keeps (the rest of the destination untouched), the instructions a masked call
and a partition broadcast trace to, and the masks the model refuses."""
import math

import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(7)


def counts(kernel, *args):
    c = ncore.trace(kernel, *args).opcode_counts()
    return {k: v for k, v in c.items() if k != "sem_wait"}


# The rmsnorm tutorial's kernel, as written there.
@nki.jit
def nki_rmsnorm_kernel(a_tensor, g_tensor):
    out_tensor = nl.ndarray(a_tensor.shape, dtype=a_tensor.dtype, buffer=nl.shared_hbm)
    assert a_tensor.shape[1] == g_tensor.shape[0]
    ix = nl.arange(128)[:, None]
    iw = nl.arange(1)[:, None]
    iy = nl.arange(a_tensor.shape[1])[None, :]
    num_rows = a_tensor.shape[0]
    g_tile = nl.load(g_tensor.reshape((1, g_tensor.shape[0]))[iw, iy])
    for i in nl.affine_range(math.ceil(a_tensor.shape[0] / 128)):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy], mask=(i * 128 + ix < num_rows))
        in_square = nl.square(a_tile)
        square_sum = nl.sum(in_square, axis=[1])
        mean = square_sum / a_tensor.shape[1]
        rms_reciprocal = nl.rsqrt(mean)
        out_tile = nl.multiply(a_tile, rms_reciprocal)
        g_bcast = g_tile.broadcast_to((128, g_tensor.shape[0]))
        out_tile[...] = nl.multiply(out_tile, g_bcast, mask=(i * 128 + ix < num_rows))
        nl.store(out_tensor[i * 128 + ix, iy], value=out_tile, mask=(i * 128 + ix < num_rows))
    return out_tensor


def rmsnorm_ref(a, g):
    a64 = a.astype(np.float64)
    return a64 / np.sqrt((a64 * a64).mean(axis=1, keepdims=True)) * g


@pytest.mark.parametrize("rows", [250, 128, 300])
def test_rmsnorm_tutorial_with_a_ragged_last_tile(rows):
    a = rng.uniform(-1, 1, (rows, 384)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, 384).astype(np.float32)
    out = nki.simulate_kernel(nki_rmsnorm_kernel, a, g)
    assert out.shape == a.shape
    np.testing.assert_allclose(out, rmsnorm_ref(a, g), rtol=2e-6, atol=1e-6)


def test_rmsnorm_tutorial_on_the_rtl_in_check_mode():
    a = rng.uniform(-1, 1, (200, 256)).astype(np.float32)
    g = rng.uniform(0.5, 1.5, 256).astype(np.float32)
    want = nki.simulate_kernel(nki_rmsnorm_kernel, a, g)
    ncore.set_options(check=True)
    got = nki.baremetal(nki_rmsnorm_kernel)(a, g)
    np.testing.assert_array_equal(got, want)
    assert ncore.last_run()["checked_instructions"] > 0


# The layernorm tutorial's first kernel (nl calls only), as written there.
@nki.jit
def nki_layernorm_kernel_v1(input_tensor, epsilon, gamma_vector, beta_vector):
    output_tensor = nl.ndarray(input_tensor.shape, dtype=input_tensor.dtype, buffer=nl.shared_hbm)
    assert input_tensor.shape[1] <= nl.tile_size.gemm_moving_fmax
    i_p_io = nl.arange(nl.tile_size.pmax)[:, None]
    i_f_io = nl.arange(input_tensor.shape[1])[None, :]
    i_p_param = nl.arange(1)[:, None]
    shift_scale_tensor = nl.ndarray((nl.tile_size.pmax, input_tensor.shape[1]), dtype=gamma_vector.dtype,
                                    buffer=nl.sbuf)
    gamma_sb = nl.load(gamma_vector.reshape((1, input_tensor.shape[1]))[i_p_param, i_f_io])
    beta_sb = nl.load(beta_vector.reshape((1, input_tensor.shape[1]))[i_p_param, i_f_io])
    for i in nl.affine_range(math.ceil(input_tensor.shape[0] / nl.tile_size.pmax)):
        mask = i * nl.tile_size.pmax + i_p_io < input_tensor.shape[0]
        input_sb = nl.load(input_tensor[i * nl.tile_size.pmax + i_p_io, i_f_io], mask=mask)
        mean = nl.mean(input_sb, axis=1, mask=mask)
        shifted_mean = nl.subtract(input_sb, mean, mask=mask)
        var = nl.mean(nl.square(shifted_mean, mask=mask), axis=1, mask=mask)
        rstd = nl.rsqrt(var + epsilon, mask=mask)
        shift_scale_tensor[...] = nl.multiply(shifted_mean, rstd, mask=mask)
        shift_scale_tensor[...] = nl.multiply(shift_scale_tensor, gamma_sb, mask=mask)
        output_sb = nl.add(shift_scale_tensor, beta_sb, mask=mask)
        nl.store(output_tensor[i * nl.tile_size.pmax + i_p_io, i_f_io], value=output_sb, mask=mask)
    return output_tensor


def test_layernorm_tutorial_with_partition_broadcast_operands():
    x = rng.uniform(-2, 2, (300, 200)).astype(np.float32)
    gamma = rng.uniform(0.5, 1.5, 200).astype(np.float32)
    beta = rng.uniform(-0.5, 0.5, 200).astype(np.float32)
    out = nki.simulate_kernel(nki_layernorm_kernel_v1, x, 1e-5, gamma, beta)
    x64 = x.astype(np.float64)
    mu = x64.mean(axis=1, keepdims=True)
    want = (x64 - mu) / np.sqrt(((x64 - mu) ** 2).mean(axis=1, keepdims=True) + 1e-5) * gamma + beta
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)


def test_mask_on_a_free_axis_leaves_the_rest_of_the_destination():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:128, 0:64]
        x = nl.load(a)
        y = nl.load(b)
        z = nl.zeros((128, 64), dtype=a.dtype)
        z[...] = nl.add(x, y, mask=(i_f < 40) & (i_f >= 8) & (i_p < 100))
        nl.store(out, z)
        return out

    a = rng.uniform(-1, 1, (128, 64)).astype(np.float32)
    b = rng.uniform(-1, 1, (128, 64)).astype(np.float32)
    want = np.zeros_like(a)
    want[:100, 8:40] = a[:100, 8:40] + b[:100, 8:40]
    np.testing.assert_array_equal(nki.simulate_kernel(k, a, b), want)


def _rows_from_100(masked):
    """A kernel that loads rows 100..227 of its (n, 8) input into a zeroed tile and stores it; masked:
    only the rows that exist."""
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        ip = nl.arange(128)[:, None]
        jf = nl.arange(8)[None, :]
        t = nl.zeros((128, 8), dtype=a.dtype)
        t[...] = nl.load(a[100 + ip, jf], mask=(100 + ip < a.shape[0]) if masked else None)
        nl.store(out, t)
        return out

    return k


def test_masked_load_reads_only_the_rows_inside_the_tensor():
    k = _rows_from_100(masked=True)  # rows 100..129 of 130: 30 exist
    a = rng.uniform(-1, 1, (130, 8)).astype(np.float32)
    want = np.zeros((128, 8), np.float32)
    want[:30] = a[100:]
    np.testing.assert_array_equal(nki.simulate_kernel(k, a), want)


def test_a_masked_call_is_one_instruction_and_an_empty_mask_none():
    def kernel(full):
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 16), dtype=a.dtype, buffer=nl.shared_hbm)
            ip = nl.arange(128)[:, None]
            x = nl.load(a)
            nl.store(out, nl.exp(x, mask=(ip < (64 if full else 0))))
            return out
        return k

    a = np.zeros((128, 16), np.float32)
    assert counts(kernel(True), a) == {"dma_copy": 2, "activation": 1}
    assert counts(kernel(False), a) == {"dma_copy": 2}


def test_an_index_past_the_end_without_a_mask_is_still_an_error():
    with pytest.raises(ValueError, match="test_mask.py"):
        nki.simulate_kernel(_rows_from_100(masked=False), np.zeros((130, 8), np.float32))


def test_a_mask_relating_two_axes_runs_box_by_box():
    # The strict upper triangle (i_p < i_f): one instruction per run of rows with the same bound.
    @nki.jit
    def k(a):
        out = nl.ndarray((64, 96), dtype=a.dtype, buffer=nl.shared_hbm)
        i_p, i_f = nl.mgrid[0:64, 0:96]
        z = nl.zeros((64, 96), dtype=a.dtype)
        z[...] = nl.exp(nl.load(a), mask=(i_p < i_f))
        nl.store(out, z)
        return out

    a = rng.uniform(-1, 1, (64, 96)).astype(np.float32)
    want = np.where(np.arange(64)[:, None] < np.arange(96)[None, :], np.exp(a.astype(np.float64)), 0.0)
    np.testing.assert_allclose(nki.simulate_kernel(k, a), want, rtol=2e-7, atol=0)
    # columns 1..63 one each (column 0 keeps no row), 64..95 keep every row: one box
    assert counts(k, a)["activation"] == 64


def test_max_pool_with_padding_masks_the_windows_at_the_edges():
    # A strided max pool whose windows start one element before the image: the mask drops the
    # window elements outside it, a bound on the window axis that depends on the output axis
    # (_maxpool below).
    import torch
    a = rng.standard_normal((32, 15, 14)).astype(np.float32)
    for size, stride, pad in [(4, 2, 1), (3, 2, 1), (3, 1, 1)]:
        want = torch.nn.functional.max_pool2d(torch.from_numpy(a)[None], size, stride, pad)[0].numpy()
        np.testing.assert_array_equal(nki.simulate_kernel(_maxpool(*a.shape, size, stride, pad), a), want)


def test_masks_the_model_cannot_split_are_refused_in_nki_terms():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.shared_hbm)
        ip = nl.arange(128)[:, None, None]
        i = nl.arange(4)[None, :, None]
        j = nl.arange(4)[None, None, :]
        x = nl.load(a.reshape((128, 4, 4)))
        nl.store(out, nl.sum(x[ip, i, j], axis=[2], mask=(ip + i + j < 100)))
        return out

    with pytest.raises(ValueError, match=r"test_mask.py:\d+: the mask of 'sum' compares an expression of 3 index "
                                         r"axes.*nisa.affine_select"):
        nki.simulate_kernel(k, np.zeros((128, 16), np.float32))

    with pytest.raises(ValueError, match="err_control_flow_condition_depending_on_arange"):
        if nl.arange(4)[:, None] < 2:
            pass


@pytest.mark.parametrize("width", [96, 1100])
def test_partition_broadcast_is_exact_and_runs_on_the_tensor_engine(width):
    @nki.jit
    def k(g):
        out = nl.ndarray((128, width), dtype=g.dtype, buffer=nl.shared_hbm)
        row = nl.load(g.reshape((1, width)))
        nl.store(out, row.broadcast_to((128, width)))
        return out

    g = rng.standard_normal(width).astype(np.float32)
    g[0] = np.inf
    g[1] = np.nan
    out = nki.simulate_kernel(k, g)
    np.testing.assert_array_equal(out, np.broadcast_to(g, (128, width)))
    chunks = -(-width // 512)
    c = counts(k, g)
    assert c["memset"] == 1 and c["multiply_moving"] == chunks and c["tensor_copy"] == chunks


def test_element_wise_call_broadcasts_a_one_partition_operand():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        y = nl.load(b)  # (1, 32)
        nl.store(out, nl.subtract(y, x))
        return out

    a = rng.uniform(-1, 1, (128, 32)).astype(np.float32)
    b = rng.uniform(-1, 1, (1, 32)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(k, a, b), b - a)


# --- an nl call over more than one instruction's elements ------------------------------------------------

def _maxpool(c, h, w, k, stride, pad):
    """2-D max pooling written as the contributed MaxPool2D sample writes it: one nl.max over a
    five-axis window view of the whole image, the padding cut away by a four-comparison mask."""
    hout, wout = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1

    @nki.jit
    def kernel(x):
        out = nl.ndarray((c, hout, wout), dtype=x.dtype, buffer=nl.shared_hbm)
        i0 = nl.arange(c)[:, None, None, None, None]
        i1 = nl.arange(hout)[None, :, None, None, None]
        i2 = nl.arange(wout)[None, None, :, None, None]
        i3 = nl.arange(k)[None, None, None, :, None]
        i4 = nl.arange(k)[None, None, None, None, :]
        t = nl.load(x)
        r = nl.max(t[i0, stride * i1 - pad + i3, stride * i2 - pad + i4], axis=[3, 4],
                   mask=(stride * i1 - pad + i3 >= 0) & (stride * i2 - pad + i4 >= 0) &
                        (stride * i1 - pad + i3 < h) & (stride * i2 - pad + i4 < w))
        nl.store(out, value=r)
        return out

    return kernel


def _maxpool_ref(x, k, stride, pad):
    c, h, w = x.shape
    xp = np.full((c, h + 2 * pad, w + 2 * pad), -np.inf)
    xp[:, pad:pad + h, pad:pad + w] = x
    hout, wout = (h + 2 * pad - k) // stride + 1, (w + 2 * pad - k) // stride + 1
    win = np.lib.stride_tricks.sliding_window_view(xp, (k, k), axis=(1, 2))[:, ::stride, ::stride][:, :hout, :wout]
    return win.max(axis=(3, 4)).astype(x.dtype)


@pytest.mark.parametrize("k, stride, pad", [(4, 2, 1), (4, 1, 2)])
def test_nl_call_over_64k_elements_is_split(k, stride, pad):
    """nl.max over a window view of 110 x 110 x 4 x 4 (or 221 x 221 x 4 x 4) elements per partition,
    more than one instruction takes (64K): issued as several tensor_reduce instructions along the
    output rows, as NKI's compiler tiles a high-level call; the result is PyTorch's max_pool2d."""
    x = rng.integers(-100, 100, size=(64, 224, 224)).astype(np.int8)
    kern = _maxpool(64, 224, 224, k, stride, pad)
    np.testing.assert_array_equal(nki.simulate_kernel(kern, x), _maxpool_ref(x, k, stride, pad))
    prog = ncore.trace(kern, x)
    reduces = prog.opcode_counts()["tensor_reduce"]
    assert reduces > 9  # the 9 boxes of the padding mask, the big one cut to 64K elements each
    rows = (224 + 2 * pad - k) // stride + 1
    assert reduces >= math.ceil(rows * rows * k * k / 65536)


def test_nl_elementwise_over_64k_elements_is_split_and_nisa_is_refused():
    """nl.add of two (128, 70000) uint8 tiles is two instructions; nisa.tensor_tensor of the same
    tiles is one instruction, which is over the limit and refused in NKI's words."""
    import neuronxcc.nki.isa as nisa
    a = rng.integers(0, 100, size=(128, 70000)).astype(np.uint8)

    @nki.jit
    def nl_add(a):
        t = nl.load(a)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.add(t, t, dtype=a.dtype))
        return out

    @nki.jit
    def nisa_add(a):
        t = nl.load(a)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.tensor_tensor(t, t, nl.add))
        return out

    assert counts(nl_add, a)["tensor_tensor"] == 2
    np.testing.assert_array_equal(nki.simulate_kernel(nl_add, a), 2 * a)
    with pytest.raises(ValueError, match="is 70000 elements per partition, exceeding the architecture limitation "
                                         "of 65536"):
        ncore.trace(nisa_add, a)
