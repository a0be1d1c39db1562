"""Today's NKI (`import nki`, NKI 0.3 to 0.7) on the model: destination-first ISA calls, loops and
`if` as Python runs them, nki.jit and nki.simulate, the rules of today's spelling, side by side
with neuronxcc.nki. Each kernel's result is compared with NumPy's."""
import os

import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl

import neuronxcc.nki as old_nki
import neuronxcc.nki.isa as old_nisa
import neuronxcc.nki.language as old_nl

import ncore

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def loaded(a):
    """An SBUF tile holding the HBM tensor a (one dma_copy)."""
    t = nl.ndarray(a.shape, a.dtype)
    nisa.dma_copy(t, a)
    return t


def stored(t):
    """A kernel output (shared_hbm) holding the tile t (one dma_copy)."""
    out = nl.ndarray(t.shape, t.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(out, t)
    return out


# --- the tutorials' tensor addition, both spellings of the ISA calls ---------------------------------------------

@nki.jit
def tensor_add_keywords(a_input, b_input):
    assert a_input.shape[0] <= nl.tile_size.pmax
    a_tile = nl.ndarray(dtype=a_input.dtype, shape=a_input.shape, buffer=nl.sbuf)
    nisa.dma_copy(dst=a_tile, src=a_input)
    b_tile = nl.ndarray(dtype=b_input.dtype, shape=b_input.shape, buffer=nl.sbuf)
    nisa.dma_copy(dst=b_tile, src=b_input)
    c_tile = nl.ndarray(dtype=a_input.dtype, shape=a_input.shape, buffer=nl.sbuf)
    nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
    c_output = nl.ndarray(dtype=a_input.dtype, shape=a_input.shape, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=c_output, src=c_tile)
    return c_output


@nki.jit
def tensor_add_positional(a_input, b_input):
    a_tile = nl.ndarray(a_input.shape, a_input.dtype)  # buffer defaults to nl.sbuf
    b_tile = nl.ndarray(b_input.shape, b_input.dtype)
    nisa.dma_copy(a_tile, a_input)
    nisa.dma_copy(b_tile, b_input)
    c_tile = nl.ndarray(a_input.shape, a_input.dtype)
    nisa.tensor_tensor(c_tile, a_tile, b_tile, nl.add)
    c_output = nl.ndarray(a_input.shape, a_input.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(c_output, c_tile)
    return c_output


@old_nki.jit
def tensor_add_old(a_input, b_input):
    a_tile = old_nl.load(a_input)
    b_tile = old_nl.load(b_input)
    c_tile = old_nisa.tensor_tensor(a_tile, b_tile, old_nl.add)
    c_output = old_nl.ndarray(a_input.shape, a_input.dtype, buffer=old_nl.shared_hbm)
    old_nl.store(c_output, c_tile)
    return c_output


def test_tensor_add_on_the_rtl_and_the_golden_model():
    a, b = rand(128, 512), rand(128, 512)
    np.testing.assert_array_equal(tensor_add_keywords(a, b), a + b)
    assert ncore.last_run()["backend"] == "rtl" and ncore.last_run()["cycles"] > 0
    np.testing.assert_array_equal(nki.simulate(tensor_add_positional)(a, b), a + b)
    assert ncore.last_run()["backend"] == "golden"


def test_both_spellings_and_both_namespaces_trace_the_same_program():
    a, b = rand(64, 256), rand(64, 256)
    p1 = ncore.trace(tensor_add_keywords, a, b)
    p2 = ncore.trace(tensor_add_positional, a, b)
    p3 = ncore.trace(tensor_add_old, a, b)
    assert p1.code() == p2.code() == p3.code()


def test_nki_simulator_runs_the_golden_model(monkeypatch):
    monkeypatch.setenv("NKI_SIMULATOR", "1")
    a, b = rand(16, 32), rand(16, 32)
    np.testing.assert_array_equal(tensor_add_keywords(a, b), a + b)
    assert ncore.last_run()["backend"] == "golden"


def test_the_platform_target_chooses_the_preset(monkeypatch):
    a, b = rand(16, 32), rand(16, 32)
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn1")
    nki.simulate(tensor_add_keywords)(a, b)
    assert ncore.last_run()["preset"] == "trn1"
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "gen3")
    nki.simulate(tensor_add_keywords)(a, b)
    assert ncore.last_run()["preset"] == "trn2"
    monkeypatch.setenv("NEURON_PLATFORM_TARGET_OVERRIDE", "trn3")
    with pytest.raises(ValueError, match="trn1 and trn2"):
        nki.simulate(tensor_add_keywords)(a, b)


def test_torch_tensors_in_torch_tensors_out():
    torch = pytest.importorskip("torch")
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    c = nki.simulate(tensor_add_keywords)(a, b)
    assert isinstance(c, torch.Tensor)
    assert torch.equal(c, a + b)


# --- Python semantics: loops and `if` run as Python ------------------------------------------------------------

@nki.jit
def counted(a, rng_name):
    rng = getattr(nl, rng_name)
    val = 0
    for _ in rng(8):
        val += 1
    flag = 0
    for i in range(3):
        if i == 0:
            flag = 1
        else:
            flag = 2
    t = nl.ndarray(a.shape, a.dtype)
    nisa.dma_copy(t, a)
    nisa.tensor_scalar(t, t, nl.multiply, float(val), op1=nl.add, operand1=float(flag))
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(out, t)
    return out


@pytest.mark.parametrize("rng_name", ["affine_range", "sequential_range", "static_range"])
def test_a_loop_body_runs_for_every_iteration(rng_name):
    a = np.ones((4, 8), np.float32)
    np.testing.assert_array_equal(nki.simulate(counted)(a, rng_name), a * 8 + 2)


@nki.jit
def tiled_add(a_input, b_input):
    M, N = a_input.shape
    c_output = nl.ndarray((M, N), a_input.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(1, M // 32, 2):  # the odd row blocks: a range with a start and a step
        for n in range(N // 64):
            a_tile = nl.ndarray((32, 64), a_input.dtype)
            b_tile = nl.ndarray((32, 64), b_input.dtype)
            nisa.dma_copy(dst=a_tile, src=a_input[m * 32:(m + 1) * 32, n * 64:(n + 1) * 64])
            nisa.dma_copy(dst=b_tile, src=b_input[m * 32:(m + 1) * 32, n * 64:(n + 1) * 64])
            c_tile = nl.ndarray((32, 64), a_input.dtype)
            nisa.tensor_tensor(dst=c_tile, data1=a_tile, data2=b_tile, op=nl.add)
            nisa.dma_copy(dst=c_output[m * 32:(m + 1) * 32, n * 64:(n + 1) * 64], src=c_tile)
    for m in nl.static_range(0, M // 32, 2):  # the even ones: zeros
        z = nl.zeros((32, N), a_input.dtype)
        nisa.dma_copy(dst=c_output[m * 32:(m + 1) * 32, :], src=z)
    return c_output


def test_tiled_loops_with_starts_and_steps():
    a, b = rand(128, 192), rand(128, 192)
    ref = a + b
    for m in (0, 2):
        ref[m * 32:(m + 1) * 32] = 0
    np.testing.assert_array_equal(nki.simulate(tiled_add)(a, b), ref)


@nki.jit
def tiles_kept_past_their_loop(x, rng_name):
    """Tiles loaded in a loop, kept in a list and used after it (today's NKI: a tile lives while the
    kernel refers to it), more of them than a loop's buffers rotate through."""
    n = x.shape[0] // 32
    tiles = []
    for i in getattr(nl, rng_name)(n):
        t = nl.ndarray((32, x.shape[1]), x.dtype)
        nisa.dma_copy(dst=t, src=x[i * 32:(i + 1) * 32, :])
        tiles.append(t)
    out = nl.ndarray(x.shape, x.dtype, buffer=nl.shared_hbm)
    for i in range(n):
        s = nl.ndarray((32, x.shape[1]), x.dtype)
        nisa.tensor_tensor(dst=s, data1=tiles[i], data2=tiles[n - 1 - i], op=nl.add)
        nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, :], src=s)
    return out


@pytest.mark.parametrize("rng_name", ["affine_range", "sequential_range", "static_range"])
def test_tiles_made_in_a_loop_live_while_referred_to(rng_name):
    x = rand(7 * 32, 16)
    want = x + x.reshape(7, 32, 16)[::-1].reshape(x.shape)
    np.testing.assert_array_equal(nki.simulate(tiles_kept_past_their_loop)(x, rng_name), want)


def test_tiles_made_in_a_loop_live_while_referred_to_on_the_rtl():
    ncore.set_options(check=True)
    try:
        x = rand(6 * 32, 8)
        want = x + x.reshape(6, 32, 8)[::-1].reshape(x.shape)
        np.testing.assert_array_equal(tiles_kept_past_their_loop(x, "affine_range"), want)
        assert ncore.last_run()["checked_instructions"] > 0
    finally:
        ncore.set_options(check=None)


# --- the high-level calls of nki.language --------------------------------------------------------------------------

@nki.jit
def getting_started(a_input, b_input):
    a_tile = nl.load(a_input)
    b_tile = nl.load(b_input)
    c_tile = nl.add(a_tile, b_tile)
    d_tile = nl.exp(nl.multiply(c_tile, 0.5))
    e_tile = c_tile * 2.0 - d_tile
    c_output = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    nl.store(c_output, value=e_tile)
    return c_output


def test_language_calls_make_new_tiles():
    a, b = rand(32, 64), rand(32, 64)
    out = nki.simulate(getting_started)(a, b)
    c = a + b
    np.testing.assert_allclose(out, c * 2 - np.exp(c * 0.5), rtol=2e-6, atol=1e-6)


def test_a_comparison_keeps_its_operands_dtype():
    a, b = rand(16, 32), rand(16, 32)

    @nki.jit
    def gt_only(a_input, b_input):
        out = nl.ndarray(a_input.shape, a_input.dtype, buffer=nl.shared_hbm)
        g = nl.greater(nl.load(a_input), nl.load(b_input))
        assert g.dtype == nl.float32
        nl.store(out, value=g)
        return out

    np.testing.assert_array_equal(nki.simulate(gt_only)(a, b), (a > b).astype(np.float32))


# --- matmul: the destination first, accumulate= ---------------------------------------------------------------------

@nki.jit
def matmul_tiled(lhsT, rhs, accumulate_mode):
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // 64):
        for n in nl.affine_range(N // 128):
            res_psum = nl.ndarray((64, 128), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // 32):
                lt = nl.ndarray((32, 64), dtype=lhsT.dtype, buffer=nl.sbuf)
                rt = nl.ndarray((32, 128), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=lt, src=lhsT[k * 32:(k + 1) * 32, m * 64:(m + 1) * 64])
                nisa.dma_copy(dst=rt, src=rhs[k * 32:(k + 1) * 32, n * 128:(n + 1) * 128])
                if accumulate_mode == "default":
                    nisa.nc_matmul(res_psum, lt, rt)
                else:
                    nisa.nc_matmul(dst=res_psum, stationary=lt, moving=rt, accumulate=(k > 0))
            res_sb = nl.ndarray(res_psum.shape, dtype=result.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res_sb, src=res_psum)
            nisa.dma_copy(dst=result[m * 64:(m + 1) * 64, n * 128:(n + 1) * 128], src=res_sb)
    return result


@pytest.mark.parametrize("mode", ["default", "explicit"])
def test_matmul_accumulates_after_the_first_write(mode):
    lhsT, rhs = rand(96, 128), rand(96, 256)
    out = nki.simulate(matmul_tiled)(lhsT, rhs, mode)
    np.testing.assert_allclose(out, lhsT.T @ rhs, rtol=1e-4, atol=1e-4)


def test_both_accumulate_spellings_trace_the_same_program():
    lhsT, rhs = rand(64, 64), rand(64, 128)
    assert ncore.trace(matmul_tiled, lhsT, rhs, "default").code() == \
        ncore.trace(matmul_tiled, lhsT, rhs, "explicit").code()


# --- iota, affine_select, memset, activation in today's arguments ---------------------------------------------------

@nki.jit
def iota_kernel(a, cm, offset):
    t = nl.ndarray((a.shape[0], 6), nl.int32)
    nisa.iota(t, [[3, 2], [1, 3]], offset=offset, channel_multiplier=cm)
    out = nl.ndarray((a.shape[0], 6), nl.int32, buffer=nl.shared_hbm)
    nisa.dma_copy(out, t)
    return out


def test_iota_pattern():
    out = nki.simulate(iota_kernel)(np.zeros((8, 1), np.float32), 10, 5)
    p = np.arange(8)[:, None]
    w = np.arange(2)[None, :, None]
    x = np.arange(3)[None, None, :]
    ref = (5 + p[:, :, None] * 10 + 3 * w + x).reshape(8, 6)
    np.testing.assert_array_equal(out, ref)


@nki.jit
def causal_mask(a_input):
    P, F = a_input.shape
    a = loaded(a_input)
    masked = nl.ndarray((P, F), a_input.dtype)
    # keep a[p, f] where p - f >= 0, else -9984
    nisa.affine_select(masked, [[-1, F]], 1, a, -9984.0, cmp_op=nl.greater_equal)
    return stored(masked)


def test_affine_select_causal_mask():
    a = rand(64, 64)
    ref = np.where(np.arange(64)[:, None] - np.arange(64)[None, :] >= 0, a, np.float32(-9984.0))
    np.testing.assert_array_equal(nki.simulate(causal_mask)(a), ref)


@nki.jit
def memset_kernel(a, value):
    t = nl.ndarray(a.shape, a.dtype)
    nisa.memset(t, value)
    return stored(t)


def test_memset_value_must_match_the_dtype():
    np.testing.assert_array_equal(nki.simulate(memset_kernel)(np.zeros((4, 8), np.int32), 7), np.full((4, 8), 7))
    np.testing.assert_array_equal(nki.simulate(memset_kernel)(np.zeros((4, 8), np.float32), 2.5),
                                  np.full((4, 8), 2.5, np.float32))
    with pytest.raises(Exception, match="does not match dst's dtype int32"):
        nki.simulate(memset_kernel)(np.zeros((4, 8), np.int32), 2.5)


@nki.jit
def activation_sum(a_input):
    P, F = a_input.shape
    a = loaded(a_input)
    e = nl.ndarray((P, F), nl.float32)
    s = nl.ndarray((P, 1), nl.float32)
    nisa.activation(e, nl.exp, a, scale=0.5, reduce_op=nl.add, reduce_res=s, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    out = nl.ndarray((P, 1), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(out, s)
    return out


def test_activation_with_reduce_res():
    a = rand(32, 48)
    np.testing.assert_allclose(nki.simulate(activation_sum)(a)[:, 0], np.exp(a * 0.5).sum(axis=1), rtol=1e-5)


# --- indexing and access patterns as today's NKI defines them -------------------------------------------------------

S = slice(None)
# an index -> the shape of the view, as today's NKI gives it (on chip: the (128, 64, 32) tile; in HBM:
# the (4, 16, 32) argument)
ON_CHIP = [((0,), (1, 64, 32)), ((0, 0, 10), (1, 1)), ((S, 0, 10), (128, 1)), ((S, 0), (128, 32)),
           ((slice(0, 64), S, 3), (64, 64)), ((-1, slice(2, 8, 2), 0), (1, 3))]
IN_HBM = [((0,), (16, 32)), ((0, 0), (32,)), ((1, 2, 3), (1,))]


@nki.jit
def view_shapes(h):
    t = nl.ndarray((128, 64, 32), nl.float32)
    view_shapes.seen = [t[key].shape for key, _ in ON_CHIP] + [h[key].shape for key, _ in IN_HBM]
    return stored(loaded(h[0]))


def test_integer_indices_keep_the_ranks_today_nki_gives():
    h = rand(4, 16, 32)
    np.testing.assert_array_equal(nki.simulate(view_shapes)(h), h[0])
    assert view_shapes.seen == [shape for _, shape in ON_CHIP + IN_HBM]


@nki.jit
def avg_pool(in_tensor, k):
    """The average pool tutorial's kernel, from its documented meaning: a 5-D access pattern of the
    (C, H, W) tile, summed over its two window axes, then scaled."""
    C, H, W = in_tensor.shape
    t = loaded(in_tensor)
    window = t.ap([[H * W, C], [k * W, H // k], [k, W // k], [W, k], [1, k]])
    s = nl.sum(window, axis=[3, 4])
    o = nl.ndarray(s.shape, s.dtype)
    nisa.tensor_scalar(dst=o, data=s, op0=nl.multiply, operand0=1.0 / (k * k))
    return stored(o)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_average_pool_through_an_access_pattern(dtype):
    C, H, W, k = 3, 6, 8, 2
    a = np.arange(C * H * W).astype(dtype).reshape(C, H, W)
    ref = a.astype(np.float32).reshape(C, H // k, k, W // k, k).mean(axis=(2, 4)).astype(dtype)
    np.testing.assert_array_equal(nki.simulate(avg_pool)(a, k), ref)


@nki.jit
def hbm_pattern(h):
    """Rows 1, 3, 5 of h (8, 16), columns 0, 2, ..., 14, through an access pattern of HBM."""
    t = nl.ndarray((3, 8), h.dtype)
    nisa.dma_copy(t, h.ap([[32, 3], [2, 8]], offset=16))
    return stored(t)


def test_an_access_pattern_of_an_hbm_tensor():
    h = rand(8, 16)
    np.testing.assert_array_equal(nki.simulate(hbm_pattern)(h), h[1::2, ::2][:3])


# name -> (the view of the (8, 4, 6) SBUF tile of x, its NumPy meaning)
VIEWS = {
    "permute": (lambda t: t.permute((0, 2, 1)), lambda x: x.transpose(0, 2, 1)),
    "broadcast": (lambda t: t[:, 1:2, :].broadcast(1, 3), lambda x: np.broadcast_to(x[:, 1:2, :], (8, 3, 6))),
    "expand_dim": (lambda t: t.expand_dim(2), lambda x: x[:, :, None, :]),
    "squeeze_dim": (lambda t: t[:, 2:3, :].squeeze_dim(1), lambda x: x[:, 2, :]),
    "reshape_dim": (lambda t: t.reshape_dim(2, (2, 3)), lambda x: x.reshape(8, 4, 2, 3)),
    "flatten_dims": (lambda t: t.flatten_dims(1, 2), lambda x: x.reshape(8, 24)),
    "slice": (lambda t: t.slice(2, 1, 6, 2), lambda x: x[:, :, 1:6:2]),
    "select": (lambda t: t.select(1, 3), lambda x: x[:, 3, :]),
    "rearrange": (lambda t: t.rearrange("p a (b c)", "p c a b", {"b": 2}),
                  lambda x: x.reshape(8, 4, 2, 3).transpose(0, 3, 1, 2)),
}


@nki.jit
def viewed(x, which):
    v = VIEWS[which][0](loaded(x))
    out = nl.ndarray(v.shape, v.dtype)
    nisa.tensor_copy(out, v)
    return stored(out)


@pytest.mark.parametrize("which", sorted(VIEWS))
def test_tensor_view_methods(which):
    x = rand(8, 4, 6)
    want = VIEWS[which][1](x)
    np.testing.assert_array_equal(nki.simulate(viewed)(x, which).reshape(want.shape), want)


def test_a_views_access_pattern_and_contiguity():
    @nki.jit
    def patterns(a):
        t = loaded(a)
        patterns.seen = (t.get_pattern(), t.is_contiguous(), t[:, :, 0:6:2].get_pattern(),
                         t[:, :, 0:6:2].is_contiguous(), t[2:4, 1, :].get_pattern(), t.permute((0, 2, 1)).is_contiguous())
        return stored(t)

    nki.simulate(patterns)(rand(8, 4, 6))
    assert patterns.seen == ([[24, 8], [6, 4], [1, 6]], True, [[24, 8], [6, 4], [2, 3]], False, [[24, 2], [1, 6]],
                             False)


# --- what production kernels rely on ---------------------------------------------------------------------------------

@nki.jit
def psum_by_address(x):
    """Two PSUM tensors placed at the same bank share it; a PSUM tile's access pattern steps over
    its own free size per partition; integer enum values; a bf16 transpose into a bf16 PSUM tile."""
    s = loaded(x)
    p = nl.ndarray(x.shape, nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
    nisa.tensor_scalar(dst=p, data=s, op0=nl.multiply, operand0=2.0)
    q = nl.ndarray(x.shape, nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
    assert q.get_pattern() == [[x.shape[1], x.shape[0]], [1, x.shape[1]]]
    o = nl.ndarray(x.shape, nl.float32)
    nisa.tensor_copy(dst=o, src=q.ap([[x.shape[1], x.shape[0]], [1, x.shape[1]]]), engine=nisa.engine.vector)
    out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(out, o, dge_mode=3, oob_mode=nisa.oob_mode.error)
    return out


def test_psum_tensors_placed_by_address_share_their_bank():
    x = rand(64, 16)
    np.testing.assert_array_equal(nki.simulate(psum_by_address)(x), x * 2)


@nki.jit
def transpose_in_dtype(x):
    t = nl.ndarray((x.shape[1], x.shape[0]), x.dtype, buffer=nl.psum)
    nisa.nc_transpose(t, loaded(x))
    s = nl.ndarray(t.shape, x.dtype)
    nisa.tensor_copy(s, t)
    return stored(s)


@pytest.mark.parametrize("dtype", [np.float16, np.float32])
def test_a_transpose_into_a_psum_tile_of_the_datas_dtype(dtype):
    x = rand(48, 96).astype(dtype)
    np.testing.assert_array_equal(nki.simulate(transpose_in_dtype)(x), x.T)


@nki.jit
def bits_of(x, as_dtype):
    t = loaded(x).view(as_dtype)
    o = nl.ndarray(t.shape, t.dtype)
    nisa.tensor_copy(o, t)
    return stored(o)


@pytest.mark.parametrize("as_dtype", [np.int32, np.uint16])
def test_a_tile_read_as_another_dtype(as_dtype):
    x = rand(16, 8)
    np.testing.assert_array_equal(nki.simulate(bits_of)(x, nl.int32 if as_dtype == np.int32 else nl.uint16),
                                  x.view(as_dtype))


def test_classes_are_data_classes_as_nki_makes_them():
    from dataclasses import dataclass

    @dataclass
    class Section(nl.NKIObject):
        idx = None
        offset = 0

    class Point(nl.NKIObject):
        x: int
        y: bool = False

        def __post_init__(self):
            self.seen = True

    @dataclass(frozen=True)
    class Config(nl.NKIObject):
        alus: int = 2

    s = Section(idx=3)
    assert (s.idx, s.offset) == (3, 0)
    assert Config().alus == 2 and Config(alus=4).alus == 4
    p = Point(1)
    assert (p.x, p.y, p.seen) == (1, False, True)
    assert Point().x is None and Point(y=True).y is True
    with pytest.raises(TypeError):
        Point(1, 2, 3)


def test_the_modules_production_kernels_import():
    from nki.isa.constants import dge_mode, oob_mode
    import nki.collectives
    assert dge_mode.none == 3 and oob_mode.skip == 1 and nisa.dge_mode is dge_mode
    assert isinstance(nl.bfloat16, nki.dtype)
    with pytest.raises(NotImplementedError, match="nki.collectives.all_reduce is not supported"):
        nki.collectives.all_reduce(None, None, None, None)


# --- NKI 0.7's tiled and blocked views -------------------------------------------------------------------------------

@nki.jit
def copy_by_tiles(src, tile_shape):
    """Each tile of src through the SBUF into the same tile of the result (a partial tile at each
    end: the grid clamps it), and the tiles' grid figures."""
    src_tiles = nl.tiles(src, tile_shape=tile_shape)
    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    dst_tiles = nl.tiles(dst, tile_shape=tile_shape)
    copy_by_tiles.seen = (src_tiles.shape, src_tiles[-1, -1].element_shape, src_tiles[-1, -1].is_remainder,
                          src_tiles[0, 0].is_remainder, src_tiles.index_step_elements)
    for i in range(src_tiles.shape[0]):
        for j in range(src_tiles.shape[1]):
            t = src_tiles[i, j]
            tile = nl.ndarray(t.element_shape, dtype=src.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=tile.data, src=t.data)
            nisa.dma_copy(dst=dst_tiles[i, j].data, src=tile)
    return dst


def test_a_tensor_copied_tile_by_tile():
    src = rand(200, 300)
    np.testing.assert_array_equal(nki.simulate(copy_by_tiles)(src, (64, 128)), src)
    assert copy_by_tiles.seen == ((4, 3), (8, 44), True, False, (64, 128))


@nki.jit
def scale_by_blocks(src):
    """Blocks of 2 x 2 tiles of 32 x 64 loaded whole, each of their tiles doubled, stored whole;
    storage for one block from nl.alloc_blocks."""
    src_blocks = nl.blocks(src, tile_shape=(32, 64), block_shape=(2, 2))
    dst = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    dst_blocks = nl.blocks(dst, tile_shape=(32, 64), block_shape=(2, 2))
    for i in range(src_blocks.shape[0]):
        for j in range(src_blocks.shape[1]):
            b = src_blocks[i, j]
            block = nl.alloc_blocks(tile_shape=(32, 64), block_shape=(2, 2), element_shape=b.element_shape,
                                    buffer=nl.sbuf, dtype=src.dtype)
            nisa.dma_copy(dst=block.data, src=b.data)
            in_tiles = nl.tiles(block)
            for ti in range(in_tiles.shape[0]):
                for tj in range(in_tiles.shape[1]):
                    t = in_tiles[ti, tj].data
                    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
            nisa.dma_copy(dst=dst_blocks[i, j].data, src=block.data)
    return dst


def test_a_tensor_scaled_block_by_block():
    src = rand(64, 256)
    np.testing.assert_array_equal(nki.simulate(scale_by_blocks)(src), src * 2)


# --- errors in today's words -------------------------------------------------------------------------------------------

def _string_buffer(a):
    nl.ndarray(a.shape, a.dtype, buffer="sbuf")


def _integer_enum(a):
    nisa.dma_copy(nl.ndarray(a.shape, a.dtype), a, dge_mode=7)


def _engine_as_integer(a):
    nisa.tensor_copy(nl.ndarray(a.shape, a.dtype), loaded(a), engine=1)


def _transpose_dtype(a):
    nisa.nc_transpose(nl.ndarray((a.shape[1], a.shape[0]), nl.bfloat16, buffer=nl.psum), loaded(a))


def _psum_address_off_bank(a):
    nl.ndarray(a.shape, nl.float32, buffer=nl.psum, address=(0, 1024))


def _matmul_into_sbuf(a):
    t = loaded(a)
    nisa.nc_matmul(nl.ndarray((a.shape[1], a.shape[1]), nl.float32), t, t)


def _add_into_hbm(a):
    t = loaded(a)
    nisa.tensor_tensor(nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm), t, t, nl.add)


def _old_namespace(a):
    old_nl.load(a)


def _gather(a):
    t = loaded(a)
    nisa.nc_n_gather(t, t, t)


def _bad_axes(a):
    nisa.dma_transpose(nl.ndarray(a.shape, a.dtype), a, axes=(0, 1))


def _partition_step(a):
    loaded(a).ap([[3, 4], [1, 4]])


def _pattern_past_the_end(a):
    loaded(a).ap([[4, 4], [1, 5]])


def _pattern_size(a):
    nisa.iota(nl.ndarray(a.shape, nl.int32), [[1, 3]])


# what a kernel does -> the error it gets, in today's words
REFUSED = {
    "string buffer": (_string_buffer, TypeError, "buffer='sbuf' is a string"),
    "integer enum": (_integer_enum, TypeError, "dge_mode=7: expected a member of dge_mode"),
    "engine as integer": (_engine_as_integer, TypeError, "engine=1: expected a member of engine"),
    "transpose dtype": (_transpose_dtype, Exception, "dst must have data's dtype"),
    "psum address": (_psum_address_off_bank, Exception, "starts at a 2048-byte bank boundary"),
    "matmul into sbuf": (_matmul_into_sbuf, Exception, "nisa.nc_matmul: dst must be a PSUM tile"),
    "compute into hbm": (_add_into_hbm, Exception, "nisa.tensor_tensor: dst must be an SBUF or PSUM tile"),
    "old namespace": (_old_namespace, RuntimeError, "neuronxcc.nki 'load' used inside an nki kernel"),
    "engine not modelled": (_gather, NotImplementedError, "nisa.nc_n_gather is not supported by this model yet"),
    "transpose axes": (_bad_axes, Exception, r"axes \(0, 1\) of a 2-D src"),
    "iota pattern size": (_pattern_size, Exception, "the pattern has 3 elements per partition, dst 4"),
    "partition step": (_partition_step, Exception, r"its first pair \[3, 4\] walks the partitions"),
    "pattern past the end": (_pattern_past_the_end, Exception, r"reaches elements \[0, 4\] of each partition's 4"),
}


@nki.jit
def refusing(a, which):
    REFUSED[which][0](a)
    return a


@pytest.mark.parametrize("which", sorted(REFUSED))
def test_refused_in_todays_words(which):
    _, exc, match = REFUSED[which]
    with pytest.raises(exc, match=match):
        nki.simulate(refusing)(np.zeros((4, 4), np.float32), which)


def test_outputs_are_shared_hbm_tensors():
    @nki.jit
    def private_output(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.hbm)
        nisa.dma_copy(out, a)
        return out

    with pytest.raises(ValueError, match=r"returns out\[4, 4\], allocated in nl.hbm: a kernel's outputs must be "
                                         "allocated with buffer=nl.shared_hbm"):
        nki.simulate(private_output)(np.zeros((4, 4), np.float32))


@nki.jit
def reshaping_copies(a):
    t = nl.ndarray((a.shape[0], 2, a.shape[1] // 2), a.dtype)
    nisa.dma_copy(t, a)  # the same elements in another shape
    u = nl.ndarray(a.shape, a.dtype)
    nisa.tensor_copy(u, t)  # the same partitions, the same elements in each
    return stored(u)


def test_copies_between_shapes_of_the_same_elements():
    a = rand(8, 16)
    np.testing.assert_array_equal(nki.simulate(reshaping_copies)(a), a)


def test_an_nki_call_inside_a_neuronxcc_kernel_is_refused():
    @old_nki.jit
    def mixes_back(a):
        t = old_nl.load(a)
        nisa.tensor_copy(t, t)
        return t

    with pytest.raises(RuntimeError, match="nki 'tensor_copy' used inside a neuronxcc.nki kernel"):
        old_nki.simulate_kernel(mixes_back, np.zeros((4, 4), np.float32))


def test_jit_options_as_today_nki_takes_them(monkeypatch):
    with pytest.raises(ValueError, match="platform_target is no longer supported"):
        nki.jit(tensor_add_keywords.func, platform_target="trn2")
    k = nki.jit(mode="jax")(tensor_add_keywords.func)  # mode= is accepted and ignored
    a, b = rand(8, 8), rand(8, 8)
    np.testing.assert_array_equal(nki.simulate(k)(a, b), a + b)
    with pytest.raises(ValueError, match="LNC=2"):
        tensor_add_keywords[2](a, b)
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "2")
    with pytest.raises(ValueError, match="LNC=2"):
        nki.jit(tensor_add_keywords.func)(a, b)


def test_loops_known_only_at_run_time_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="nl.fori_loop"):
        nl.fori_loop(0, 4, lambda i: None)


def test_every_call_of_today_is_declared_with_its_signature():
    import inspect
    sig = inspect.signature(nisa.nc_matmul)
    assert list(sig.parameters)[:3] == ["dst", "stationary", "moving"]
    assert sig.parameters["accumulate"].default is None
    assert sig.parameters["perf_mode"].default is nisa.matmul_perf_mode.none
    sig = inspect.signature(nisa.affine_select)
    assert list(sig.parameters) == ["dst", "pattern", "channel_multiplier", "on_true_tile", "on_false_value", "cmp_op",
                                    "offset", "name"]
    assert "mask" not in inspect.signature(nl.add).parameters
