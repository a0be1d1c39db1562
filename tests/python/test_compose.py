"""The NKI calls the model lowers to sequences of its instructions (kernels/nki/src/compose.cpp):
nisa.iota, affine_select, tensor_copy_predicated, scalar_tensor_tensor, tensor_scalar_reduce,
tensor_tensor_scan, bn_stats, bn_aggr; nl.where, var, softmax, rms_norm, all, loop_reduce,
shared_constant, shared_identity_matrix. Each on a small kernel against NumPy (exactly where the
lowering rounds as NumPy's float32 arithmetic does, else within a stated bound of float64), the
instructions each traces to (the lowering pinned by opcode counts), its errors in NKI's words, and
one kernel using them all on the RTL in check mode."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(5)
F32_MIN = np.float32(-3.4028234663852886e38)


def sim(kernel, *args):
    return nki.simulate_kernel(kernel, *args)


def counts(kernel, *args):
    """Opcode counts of the kernel's Program, semaphore waits left out."""
    c = dict(ncore.trace(kernel, *args).opcode_counts())
    c.pop("sem_wait", None)
    return c


def normal(*shape):
    return rng.normal(size=shape).astype(np.float32)


def bf16(x):
    """float32 values rounded to bfloat16 (to nearest even), as float32."""
    bits = np.asarray(x, np.float32).view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).view(np.float32)


def out_like(a, dtype=None):
    return nl.ndarray(a.shape, dtype=dtype or a.dtype, buffer=nl.shared_hbm)


# --- iota --------------------------------------------------------------------------------------------

@nki.jit
def iota_kernel(a):
    out = nl.ndarray((2, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    nl.store(out[0], nisa.iota(i_f * 8 + i_p - 300, dtype=nl.float32))
    t = nl.ndarray((128, 64), dtype=nl.bfloat16)
    t[...] = nisa.iota(3 * i_p - i_f, nl.bfloat16)
    nl.store(out[1], t)
    return out


def test_iota_values_and_dtype():
    got = sim(iota_kernel, np.zeros((1, 1), np.float32))
    p, f = np.mgrid[0:128, 0:64]
    np.testing.assert_array_equal(got[0], (f * 8 + p - 300).astype(np.float32))
    # 3p - f up to 381: bf16 keeps 8 significant bits, so the larger values round (to nearest even)
    want = (3 * p - f).astype(np.float32)
    rounded = bf16(want)
    np.testing.assert_array_equal(got[1], rounded)
    assert not np.array_equal(rounded, want)  # the rounding happened


def test_iota_is_a_constant_and_one_dma():
    prog = ncore.trace(iota_kernel, np.zeros((1, 1), np.float32))
    c = dict(prog.opcode_counts())
    c.pop("sem_wait", None)
    assert c == {"dma_copy": 4}  # two iota loads, two stores
    roles = [t[1] for t in prog.tensors()]
    assert roles.count("constant") == 2


def test_iota_constant_shared_by_loop_iterations():
    @nki.jit
    def k(a):
        out = nl.ndarray((4, 128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        for i in nl.affine_range(4):
            nl.store(out[i], nisa.iota(nl.arange(128)[:, None] + nl.arange(8)[None, :] * 0, dtype=nl.float32))
        return out

    got = sim(k, np.zeros((1, 1), np.float32))
    np.testing.assert_array_equal(got, np.broadcast_to(np.arange(128, dtype=np.float32)[:, None], (4, 128, 8)))
    assert [t[1] for t in ncore.trace(k, np.zeros((1, 1), np.float32)).tensors()].count("constant") == 1


# --- affine_select -----------------------------------------------------------------------------------

def causal(a, fill):
    p, f = np.mgrid[0:a.shape[0], 0:a.shape[1]]
    return np.where(p - f >= 0, a, np.float32(fill))


@pytest.mark.parametrize("fill", [F32_MIN, -np.inf, -9984.0])
def test_affine_select_causal_mask(fill):
    @nki.jit
    def k(a):
        out = out_like(a)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(128)[None, :]
        t = nl.load(a)
        nl.store(out, nisa.affine_select(pred=(i_p - i_f >= 0), on_true_tile=t, on_false_value=fill))
        return out

    a = normal(128, 128)
    a[5, :4] = [np.inf, -np.inf, -0.0, 0.0]   # kept: infinities and signed zeros come through exactly
    a[2, 100] = np.nan                        # masked out
    got = sim(k, a)
    want = causal(a, fill)
    want[2, 100] = np.float32(fill)
    np.testing.assert_array_equal(got.view(np.uint32)[~np.isnan(a)], want.view(np.uint32)[~np.isnan(a)])
    assert got[2, 100] != got[2, 100]  # the documented exception: a NaN not selected still gives NaN
    assert counts(k, a) == {"dma_copy": 3, "tensor_tensor": 2}


def test_affine_select_conjunction_bare_expression_and_dtype():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.shared_hbm)
        ix, iy = nl.mgrid[0:64, 0:96]
        t = nl.load(a)
        band = (iy - ix >= -2) & (iy - ix <= 2)
        s = nisa.affine_select(band, t, -1.0)
        out2 = nisa.affine_select(iy - 2 * ix, s, 7.0, dtype=nl.bfloat16)  # true where iy - 2 ix > 0
        nl.store(out, out2)
        return out

    a = normal(64, 96)
    got = sim(k, a)
    p, f = np.mgrid[0:64, 0:96]
    s = np.where((f - p >= -2) & (f - p <= 2), a, np.float32(-1.0))
    want = np.where(f - 2 * p > 0, s, np.float32(7.0))
    np.testing.assert_array_equal(got, bf16(want))


# --- nl.where and tensor_copy_predicated ---------------------------------------------------------------

def test_where_tile_and_scalar():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((2, 128, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        x, y = nl.load(a), nl.load(b)
        cond = nl.greater(x, y)
        nl.store(out[0], nl.where(cond, x, y))
        nl.store(out[1], nl.where(cond, x, -5.0))
        return out

    a, b = normal(128, 32), normal(128, 32)
    a[0, :3] = [np.inf, -np.inf, -0.0]
    b[0, :3] = [0.0, 1.0, -1.0]
    got = sim(k, a, b)
    np.testing.assert_array_equal(got[0].view(np.uint32), np.where(a > b, a, b).view(np.uint32))
    np.testing.assert_array_equal(got[1].view(np.uint32), np.where(a > b, a, np.float32(-5.0)).view(np.uint32))


def test_where_instructions_and_per_partition_operand():
    @nki.jit
    def k(c, a, v):
        out = out_like(a)
        nl.store(out, nl.where(nl.load(c), nl.load(a), nl.load(v)))
        return out

    c = rng.choice([0.0, 1.0, 2.5, np.nan], size=(128, 16)).astype(np.float32)
    a, v = normal(128, 16), normal(128, 1)
    got = sim(k, c, a, v)
    # non-zero (and NaN) is true, as NumPy's bool()
    np.testing.assert_array_equal(got, np.where(c.astype(bool), a, v))
    # truth (tensor_scalar), x's side (tensor_scalar + tensor_tensor), y's side (one tensor_scalar
    # with the (P, 1) tile as its operand), the maximum (tensor_tensor)
    assert counts(k, c, a, v) == {"dma_copy": 4, "tensor_scalar": 3, "tensor_tensor": 2}


def test_tensor_copy_predicated():
    @nki.jit
    def k(d, s, p):
        out = nl.ndarray((3, 128, 24), dtype=d.dtype, buffer=nl.shared_hbm)
        dst, src, pred = nl.load(d), nl.load(s), nl.load(p)
        nisa.tensor_copy_predicated(src=src, dst=dst, predicate=pred)
        nl.store(out[0], dst)
        dst2 = nl.load(d)
        nisa.tensor_copy_predicated(dst2, src, pred, reverse_pred=True)
        nl.store(out[1], dst2)
        dst3 = nl.load(d)
        nisa.tensor_copy_predicated(src=2.5, dst=dst3, predicate=pred)
        nl.store(out[2], dst3)
        return out

    d, s = normal(128, 24), normal(128, 24)
    p = rng.integers(0, 2, size=(128, 24)).astype(np.float32)
    got = sim(k, d, s, p)
    np.testing.assert_array_equal(got[0], np.where(p != 0, s, d))
    np.testing.assert_array_equal(got[1], np.where(p == 0, s, d))
    np.testing.assert_array_equal(got[2], np.where(p != 0, np.float32(2.5), d))


# --- scalar_tensor_tensor, tensor_scalar_reduce ---------------------------------------------------------

def test_scalar_tensor_tensor():
    @nki.jit
    def k(a, b, v):
        out = nl.ndarray((2, 128, 40), dtype=a.dtype, buffer=nl.shared_hbm)
        x, y, s = nl.load(a), nl.load(b), nl.load(v)
        nl.store(out[0], nisa.scalar_tensor_tensor(data=x, op0=nl.subtract, operand0=s, op1=nl.multiply, operand1=y))
        nl.store(out[1], nisa.scalar_tensor_tensor(data=x, op0=np.subtract, operand0=3.0, reverse0=True,
                                                   op1=np.divide, operand1=y, reverse1=True))
        return out

    a, b, v = normal(128, 40), normal(128, 40), normal(128, 1)
    got = sim(k, a, b, v)
    np.testing.assert_array_equal(got[0], (a - v) * b)
    np.testing.assert_array_equal(got[1], b / (np.float32(3.0) - a))
    c = counts(k, a, b, v)
    assert c["tensor_scalar"] == 2 and c["tensor_tensor"] == 2


def sequential(op, x):
    """op folded along axis 1 from the first element, in float32, one rounding per step."""
    acc = x[:, 0].copy()
    for j in range(1, x.shape[1]):
        acc = op(acc, x[:, j])
    return acc[:, None]


def test_tensor_scalar_reduce():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        red = nl.ndarray((2, 128, 1), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        s = nl.ndarray((128, 1), dtype=nl.float32)
        m = nl.ndarray((128, 1), dtype=nl.float32)
        y = nisa.tensor_scalar_reduce(data=x, op0=np.multiply, operand0=1.5, reduce_op=np.add, reduce_res=s)
        nisa.tensor_scalar_reduce(data=x, op0=nl.add, operand0=-0.25, reduce_op=nl.max, reduce_res=m)
        nl.store(out, y)
        nl.store(red[0], s)
        nl.store(red[1], m)
        return out, red

    a = normal(128, 32)
    y, red = sim(k, a)
    np.testing.assert_array_equal(y, a * np.float32(1.5))
    np.testing.assert_array_equal(red[0], sequential(np.add, a * np.float32(1.5)))
    np.testing.assert_array_equal(red[1], (a + np.float32(-0.25)).max(axis=1, keepdims=True))
    assert counts(k, a) == {"dma_copy": 4, "tensor_scalar": 2, "tensor_reduce": 2}


# --- tensor_tensor_scan -----------------------------------------------------------------------------------

def scan(d0, d1, init, op0, op1):
    r = np.empty_like(d0)
    prev = np.broadcast_to(np.float32(init) if np.isscalar(init) else init[:, 0], d0[:, 0].shape)
    for i in range(d0.shape[1]):
        prev = op1(op0(d0[:, i], prev), d1[:, i])
        r[:, i] = prev
    return r


def test_tensor_tensor_scan_with_sequential_range():
    """The NKI documentation's example: a scan tiled over the free axis, the last column of each
    tile the initial value of the next (nl.sequential_range)."""
    @nki.jit
    def k(a, b):
        out = out_like(a)
        init = nl.zeros((128, 1), dtype=nl.float32)
        for i in nl.sequential_range(a.shape[1] // 16):
            x = nl.load(a[:, nl.ds(i * 16, 16)])
            y = nl.load(b[:, nl.ds(i * 16, 16)])
            r = nisa.tensor_tensor_scan(x, y, initial=init, op0=nl.multiply, op1=nl.add)
            nl.store(out[:, nl.ds(i * 16, 16)], r)
            init[:, :] = r[:, 15]
        return out

    a = rng.uniform(0.5, 1.0, size=(128, 48)).astype(np.float32)
    b = normal(128, 48)
    got = sim(k, a, b)
    np.testing.assert_array_equal(got, scan(a, b, np.zeros((128, 1), np.float32), np.multiply, np.add))
    # one tensor_scalar per column, plus the copy of each tile's last column
    c = counts(k, a, b)
    assert c["tensor_scalar"] == 48 and c["tensor_copy"] == 3


def test_tensor_tensor_scan_reversed_operands_and_dtype():
    @nki.jit
    def k(a, b):
        out = out_like(a, nl.bfloat16)
        r = nisa.tensor_tensor_scan(nl.load(a), nl.load(b), 2.0, np.subtract, np.maximum, reverse0=True,
                                    dtype=nl.bfloat16)
        nl.store(out, r)
        return out

    a, b = normal(128, 20), normal(128, 20)
    got = sim(k, a, b)
    want = scan(a, b, 2.0, lambda d, prev: prev - d, np.maximum)  # carried in float32
    np.testing.assert_array_equal(got, bf16(want))
    assert counts(k, a, b) == {"dma_copy": 3, "tensor_scalar": 20, "tensor_copy": 1}


# --- bn_stats, bn_aggr, nl.var ------------------------------------------------------------------------------

@nki.jit
def bn_stats_kernel(a):
    out = nl.ndarray((128, 6), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nisa.bn_stats(nl.load(a)))
    return out


def test_bn_stats_fields():
    k = bn_stats_kernel
    a = (normal(128, 37) * 3 + 1).astype(np.float32)
    got = sim(k, a).astype(np.float64)
    for h, half in enumerate((a[:, 0::2], a[:, 1::2])):
        x = half.astype(np.float64)
        np.testing.assert_array_equal(got[:, 3 * h], x.shape[1])
        np.testing.assert_allclose(got[:, 3 * h + 1], x.mean(axis=1), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got[:, 3 * h + 2], ((x - x.mean(axis=1, keepdims=True)) ** 2).sum(axis=1),
                                   rtol=1e-5)
    # per half: memset, tensor_reduce, two tensor_scalar, one activation (square, add-reduce)
    assert counts(k, a) == {"dma_copy": 2, "memset": 2, "tensor_reduce": 2, "tensor_scalar": 4, "activation": 2}


def test_layernorm_statistics_as_the_tutorial_computes_them():
    """bn_stats on each 512-element chunk into one stats tile, bn_aggr over it (NKI's layernorm
    tutorial), against NumPy's float64 mean and variance."""
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 2), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        n = a.shape[1] // 512
        stats = nl.ndarray((128, 6 * n), dtype=nl.float32)
        for i in nl.affine_range(n):
            stats[:, nl.ds(i * 6, 6)] = nisa.bn_stats(x[:, nl.ds(i * 512, 512)])
        nl.store(out, nisa.bn_aggr(stats))
        return out

    a = (normal(128, 1024) * 2 + 5).astype(np.float32)
    got = sim(k, a).astype(np.float64)
    x = a.astype(np.float64)
    np.testing.assert_allclose(got[:, 0], x.mean(axis=1), rtol=2e-6)
    np.testing.assert_allclose(got[:, 1], x.var(axis=1), rtol=2e-5)
    c = counts(k, a)
    assert c["tensor_reduce"] == 4 + 3 and c["activation"] == 4


@pytest.mark.parametrize("shape,axis", [((128, 200), 1), ((96, 6, 20), 2), ((64, 4, 5, 6), (2, 3))])
def test_var(shape, axis):
    @nki.jit
    def k(a):
        r = nl.var(nl.load(a), axis=axis)
        out = nl.ndarray(r.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    a = (normal(*shape) * 4 + 3).astype(np.float32)
    got = sim(k, a)
    np.testing.assert_allclose(got, a.astype(np.float64).var(axis=axis).reshape(got.shape), rtol=1e-5)
    # mean: tensor_reduce, divide; deviations: subtract (a (P, 1) mean is tensor_scalar's operand,
    # any other is read broadcast by tensor_tensor); squares, sum, divide
    c = counts(k, a)
    whole = len(shape) == 2
    assert (c["tensor_reduce"], c["tensor_scalar"], c["tensor_tensor"]) == ((2, 3, 1) if whole else (2, 2, 2))


# --- nl.softmax, nl.rms_norm, nl.all -------------------------------------------------------------------------

@pytest.mark.parametrize("shape,axis", [((128, 300), 1), ((32, 8, 50), 2)])
def test_softmax(shape, axis):
    @nki.jit
    def k(a):
        out = out_like(a)
        nl.store(out, nl.softmax(nl.load(a), axis=axis))
        return out

    a = (normal(*shape) * 5).astype(np.float32)
    got = sim(k, a).astype(np.float64)
    x = a.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    want = e / e.sum(axis=axis, keepdims=True)
    n = shape[-1]
    # the rounding of x - max amplified by exp, the row sum's n roundings, exp's 1 ulp, the divide
    bound = (np.abs(x - x.max(axis=axis, keepdims=True)) + n + 8) * 2.0 ** -24
    assert (np.abs(got - want) / want <= bound).all()
    c = counts(k, a)
    assert c["tensor_reduce"] == 2 and c["activation"] == 1


def test_rms_norm():
    @nki.jit
    def k(a, w):
        out = out_like(a)
        nl.store(out, nl.rms_norm(nl.load(a), nl.load(w), axis=1, n=a.shape[1], epsilon=1e-5))
        return out

    a, w = normal(128, 256), normal(128, 256)
    got = sim(k, a, w).astype(np.float64)
    x = a.astype(np.float64)
    want = x / np.sqrt((x * x).sum(axis=1, keepdims=True) / 256 + 1e-5) * w
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert counts(k, a, w) == {"dma_copy": 3, "activation": 2, "tensor_reduce": 1, "tensor_scalar": 2,
                               "tensor_tensor": 1}


def test_all():
    @nki.jit
    def k(a):
        r = nl.all(nl.load(a), axis=1)
        out = nl.ndarray(r.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    a = rng.choice([0.0, 1.0, -2.0, np.nan], p=[0.02, 0.5, 0.4, 0.08], size=(128, 12)).astype(np.float32)
    a[3] = 1.0
    got = sim(k, a)
    np.testing.assert_array_equal(got[:, 0], np.all(a, axis=1).astype(np.float32))
    assert counts(k, a) == {"dma_copy": 2, "tensor_scalar": 1, "tensor_reduce": 1}


# --- nl.loop_reduce ------------------------------------------------------------------------------------------

def test_loop_reduce():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        b = nl.zeros((128, 64), dtype=nl.float32)
        m = nl.full((128, 64), -np.inf, dtype=nl.float32)
        for i in nl.affine_range(4):
            t = nl.load(a[:, nl.ds(i * 64, 64)])
            b = nl.loop_reduce(t, op=np.add, loop_indices=[i], dtype=nl.float32)
            m[...] = nl.loop_reduce(t, op=nl.maximum, loop_indices=[i])
        nl.store(out, nl.add(b, m))
        return out

    a = normal(128, 256)
    got = sim(k, a)
    chunks = a.reshape(128, 4, 64)
    s = np.zeros((128, 64), np.float32)
    for i in range(4):
        s = s + chunks[:, i]
    np.testing.assert_array_equal(got, s + chunks.max(axis=1))
    assert counts(k, a)["tensor_tensor"] == 4 + 4 + 1


# --- shared constants -----------------------------------------------------------------------------------------

def test_shared_constant_and_identity():
    table = normal(128, 16)

    @nki.jit
    def k(a):
        out = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        out_t = nl.ndarray((16, 128), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(out, nl.add(x, nl.load(nl.shared_constant(table))))
        ident = nl.load(nl.shared_identity_matrix(128, dtype=nl.float32))
        nl.store(out_t, nl.copy(nisa.nc_matmul(x, ident)))  # x.T @ I: the transpose
        return out, out_t

    a = normal(128, 16)
    got, got_t = sim(k, a)
    np.testing.assert_array_equal(got, a + table)
    np.testing.assert_array_equal(got_t, a.T)
    prog = ncore.trace(k, a)
    assert [t[1] for t in prog.tensors()].count("constant") == 2


def test_constants_travel_in_the_program_image(tmp_path):
    """The constants are part of the Program: its saved image carries them."""
    @nki.jit
    def k(a):
        out = out_like(a)
        nl.store(out, nisa.affine_select(nl.arange(128)[:, None] - nl.arange(8)[None, :] >= 0, nl.load(a), -1.0))
        return out

    a = normal(128, 8)
    prog = ncore.trace(k, a)
    prog.save(str(tmp_path / "p.ncimg"))
    data = (tmp_path / "p.ncimg").read_bytes()
    holds = np.arange(128)[:, None] >= np.arange(8)[None, :]
    bounds = np.concatenate([np.where(holds, -np.inf, -1.0), np.where(holds, np.inf, -1.0)], axis=1)
    assert bounds.astype(np.float32).tobytes() in data  # the constant's bytes are in the image


# --- max8, nc_find_index8, nc_match_replace8 ---------------------------------------------------------------

def positions(a, vals, reverse=False):
    """The first not yet taken position of each value in each row, visiting vals' columns in order
    (reverse: last to first)."""
    out = np.zeros(vals.shape, np.float32)
    for p in range(a.shape[0]):
        taken = set()
        for c in (reversed(range(vals.shape[1])) if reverse else range(vals.shape[1])):
            j = next(j for j in range(a.shape[1]) if a[p, j] == vals[p, c] and j not in taken)
            taken.add(j)
            out[p, c] = j
    return out


def top8_input():
    """Rows with repeated values (integers), negatives and infinities among them."""
    a = rng.integers(-30, 30, size=(128, 300)).astype(np.float32)
    a[0, :10] = np.inf
    a[1, :] = -np.inf
    a[1, 7] = 2.0
    return a


def test_max8():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 8), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nisa.max8(src=nl.load(a)))
        return out

    a = top8_input()
    np.testing.assert_array_equal(sim(k, a), -np.sort(-a, axis=1)[:, :8])
    # the index tile (one dma_copy); per value a max, and (7 times) its position found and set to -inf
    assert counts(k, a) == {"dma_copy": 3, "tensor_reduce": 15, "tensor_scalar": 21, "tensor_tensor": 14}


@pytest.mark.parametrize("call", ["affine_select", "where", "max8", "nc_find_index8"])
def test_large_operands_fit(call):
    """The float32 temporaries (written in place) leave room in the trn2 SBUF for operands of 12288
    float32 elements per partition, with the kernel's own input and result tiles."""
    body = {"affine_select": lambda x: nisa.affine_select(nl.arange(128)[:, None] - nl.arange(12288)[None, :] >= 0,
                                                          x, 0.0),
            "where": lambda x: nl.where(x, x, 1.0),
            "max8": lambda x: nisa.max8(src=x),
            "nc_find_index8": lambda x: nisa.nc_find_index8(data=x, vals=x[:, 0:8])}[call]

    @nki.jit
    def k(a):
        r = body(nl.load(a))
        out = nl.ndarray(r.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    assert ncore.trace(k, np.zeros((128, 12288), np.float32)).instruction_count() > 0


def test_nc_find_index8_and_match_replace8():
    @nki.jit
    def k(a, v):
        idx = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        rep = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        ridx = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        x, vals = nl.load(a), nl.load(v)
        nl.store(idx, nisa.nc_find_index8(data=x, vals=vals))
        di = nl.ndarray((128, 8), dtype=nl.float32)
        nl.store(rep, nisa.nc_match_replace8(data=x, vals=vals, imm=-1000.0, dst_idx=di))
        nl.store(ridx, di)
        return idx, rep, ridx

    a = top8_input()
    v = -np.sort(-a, axis=1)[:, :8]   # present in every row, with repeats
    v[5] = a[5, [3, 3, 9, 0, 3, 250, 299, 1]]
    idx, rep, ridx = sim(k, a, v)
    np.testing.assert_array_equal(idx, positions(a, v))
    # replace8 pairs repeated values with positions from the last column back (NKI's tie-break)
    back = positions(a, v, reverse=True)
    np.testing.assert_array_equal(ridx, back)
    want = a.copy()
    np.put_along_axis(want, back.astype(np.int64), np.float32(-1000.0), axis=1)
    np.testing.assert_array_equal(rep, want)


def test_find_index8_instructions():
    @nki.jit
    def k(a, v):
        idx = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(idx, nisa.nc_find_index8(data=nl.load(a), vals=nl.load(v)))
        return idx

    a = top8_input()
    # per value: the search (tensor_scalar, tensor_tensor, tensor_reduce min) and the position taken
    # (tensor_scalar, tensor_tensor); then the taken positions (tensor_tensor)
    assert counts(k, a, a[:, :8].copy()) == {"dma_copy": 4, "tensor_scalar": 16, "tensor_tensor": 17,
                                             "tensor_reduce": 8}


def test_gather_flattened():
    @nki.jit
    def k(a, i):
        out = nl.ndarray(i.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, nl.gather_flattened(nl.load(a), nl.load(i)))
        return out

    a = normal(128, 4, 8)
    a[0, 0, :3] = [np.inf, -np.inf, -0.0]
    i = rng.integers(0, 32, size=(128, 2, 3)).astype(np.float32)
    i[0, 0] = [0, 1, 2]
    got = sim(k, a, i)
    want = np.take_along_axis(a.reshape(128, -1), i.reshape(128, -1).astype(np.int64), axis=-1).reshape(i.shape)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    # the index tile; per index: compare (two tensor_scalar), tensor_tensor min, tensor_reduce max
    assert counts(k, a, i) == {"dma_copy": 4, "tensor_scalar": 12, "tensor_tensor": 6, "tensor_reduce": 6}


# --- nl.rand, nl.random_seed, nisa.dropout ------------------------------------------------------------------

def splitmix64(seed, n, bits):
    """n values k 2^-bits from the splitmix64 stream started at seed (the model's generator)."""
    m = (1 << 64) - 1
    out, state = [], seed & m
    for _ in range(n):
        state = (state + 0x9E3779B97F4A7C15) & m
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & m
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & m
        z ^= z >> 31
        out.append((z >> (64 - bits)) / 2.0 ** bits)
    return np.array(out, np.float64)


def test_rand_and_random_seed():
    @nki.jit
    def k(a):
        out = nl.ndarray((4, 128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out[0], nl.rand((128, 32)))
        nl.random_seed(7)
        nl.store(out[1], nl.rand((128, 32)))
        nl.store(out[2], nl.rand((128, 32), dtype=nl.bfloat16))
        nl.random_seed(7)
        nl.store(out[3], nl.rand((128, 32)))
        return out

    got = sim(k, np.zeros((1, 1), np.float32))
    n = 128 * 32
    np.testing.assert_array_equal(got[0].ravel(), splitmix64(0, n, 24))
    np.testing.assert_array_equal(got[1].ravel(), splitmix64(7, n, 24))
    np.testing.assert_array_equal(got[2].ravel(), splitmix64(7, 2 * n, 8)[n:])  # the stream goes on
    np.testing.assert_array_equal(got[3], got[1])                                # the same seed, the same values
    assert got.min() >= 0.0 and got.max() < 1.0 and abs(got[0].mean() - 0.5) < 0.02
    assert counts(k, np.zeros((1, 1), np.float32)) == {"dma_copy": 8}


def test_dropout():
    @nki.jit
    def k(a, p):
        out = nl.ndarray((2, 128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.random_seed(3)
        nl.store(out[0], nisa.dropout(x, 0.3))
        nl.store(out[1], nl.dropout(x, nl.load(p)))
        return out

    a = normal(128, 64)
    a[0, :2] = [np.inf, -np.inf]
    p = rng.uniform(0, 1, size=(128, 1)).astype(np.float32)
    got = sim(k, a, p)
    u = splitmix64(3, 2 * 128 * 64, 24).reshape(2, 128, 64)
    np.testing.assert_array_equal(got[0], np.where(u[0] >= 0.3, a, np.float32(0)))
    np.testing.assert_array_equal(got[1], np.where(u[1] >= p, a, np.float32(0)))
    # the random tile (one dma_copy), the compare, then the select
    c = counts(k, a, p)
    assert c["tensor_scalar"] == 2 * 4 and c["tensor_tensor"] == 2 * 2


# --- errors ------------------------------------------------------------------------------------------------

def raises(kernel, *args, match):
    with pytest.raises(ValueError, match=match) as e:
        sim(kernel, *args)
    assert "test_compose.py:" in str(e.value)


def grid(p, f):
    """i_p - i_f over a [p, f] grid."""
    i_p, i_f = nl.mgrid[0:p, 0:f]
    return i_p - i_f


# (input shape, what the kernel does with the loaded tile x, the error)
ERRORS = {
    "bn_stats_fmax": ((128, 600), lambda x: nisa.bn_stats(x),
                      r"free size of operand 'data' of 'bn_stats' \(.*\) is 600 elements per partition, exceeding the "
                      r"architecture limitation of 512 \(nl.tile_size.bn_stats_fmax\)"),
    "predicate_shape": ((128, 32), lambda x: nisa.affine_select(grid(128, 64) >= 0, x, 0.0),
                        r"pred of 'affine_select' is an expression over a grid of shape \[128, 64\], which does not "
                        r"match the tile shape \[128, 32\]"),
    "copy_dtypes": ((128, 8), lambda x: nisa.tensor_copy_predicated(src=nisa.tensor_copy(x, dtype=nl.bfloat16), dst=x,
                                                                    predicate=x),
                    r"src .* and dst .* of 'tensor_copy_predicated' must share the same data type"),
    "reduce_subtract": ((128, 8), lambda x: nisa.tensor_scalar_reduce(
        data=x, op0=nl.add, operand0=1.0, reduce_op=nl.subtract, reduce_res=nl.ndarray((128, 1), dtype=nl.float32)),
                        r"reduce_op 'subtract' of 'tensor_scalar_reduce' is not supported"),
    "scan_3d": ((128, 4, 4), lambda x: nisa.tensor_tensor_scan(x, x, 0.0, nl.add, nl.add),
                r"'tensor_tensor_scan' takes 2-D tiles"),
    "iota_range": ((128, 8), lambda x: nisa.iota(nl.arange(128)[:, None] * 40000000 + nl.arange(8)[None, :],
                                                 dtype=nl.float32), r"outside int32"),
    "aggr_triples": ((128, 7), lambda x: nisa.bn_aggr(x), r"not a multiple of 3"),
    "loop_reduce_unassigned": ((128, 8), lambda x: nl.add(nl.loop_reduce(x, op=np.add, loop_indices=[0]), x),
                               r"must be assigned to the tile it reduces into"),
    "max8_elements": ((128, 6), lambda x: nisa.max8(src=x),
                      r"operand 'src' of 'max8' \(.*\) has 6 elements per partition: it must have between 8 and "
                      r"16384"),
    "stt_shape": ((128, 8), lambda x: nisa.scalar_tensor_tensor(data=x, op0=nl.add, operand0=1.0, op1=nl.add,
                                                                operand1=x[:, 0:4]),
                  r"operand1 \(.*\[128, 4\]\) of 'scalar_tensor_tensor' must have the partitions and elements per "
                  r"partition of data \(.*\[128, 8\]\)"),
    "where_shape": ((128, 8), lambda x: nl.where(x, x, x[:, 0:3]),
                    r"operand 'y' of 'where' \(.*\[128, 3\]\) must be a tile of the shape of condition"),
    "atomic_rmw": ((1, 1), lambda x: nl.atomic_rmw(x, 1.0, np.add), r"nl.atomic_rmw is not supported by this model"),
    "rand_int": ((1, 1), lambda x: nl.rand((128, 8), dtype=nl.int32),
                 r"dtype int32 of 'rand' is not supported by this model"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_errors_in_nki_words(case):
    shape, body, match = ERRORS[case]

    @nki.jit
    def k(a):
        body(nl.load(a))
        return a

    raises(k, normal(*shape), match=match)


# --- on the RTL ------------------------------------------------------------------------------------------------

def test_every_call_on_the_rtl_in_check_mode():
    """Each lowering in one kernel, on the RTL in check mode (every instruction compared with the
    golden model as it completes), the outputs equal to simulate_kernel's bit for bit."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray((13, 128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        x, y = nl.load(a), nl.load(b)
        i_p = nl.arange(128)[:, None]
        i_f = nl.arange(64)[None, :]
        nl.store(out[0], nisa.iota(i_p * 64 + i_f, dtype=nl.float32))
        nl.store(out[1], nisa.affine_select(i_p - i_f >= 0, x, nl.fp32.min))
        nl.store(out[2], nl.where(nl.less(x, y), x, y))
        nl.store(out[3], nisa.scalar_tensor_tensor(data=x, op0=nl.multiply, operand0=0.5, op1=nl.add, operand1=y))
        s = nl.ndarray((128, 1), dtype=nl.float32)
        nl.store(out[4], nisa.tensor_scalar_reduce(data=x, op0=nl.subtract, operand0=1.0, reduce_op=nl.add,
                                                   reduce_res=s))
        nl.store(out[5], nisa.tensor_tensor_scan(x, y, s, nl.maximum, nl.add))
        nl.store(out[6], nl.softmax(x, axis=1))
        nl.store(out[7], nl.rms_norm(x, y, axis=1, n=64))
        st = nl.ndarray((128, 8), dtype=nl.float32)
        st[:, 0:2] = nisa.bn_aggr(nisa.bn_stats(x))
        st[:, 2:3] = nl.var(x, axis=1)
        st[:, 3:4] = nl.all(x, axis=1)
        st[:, 4:8] = nisa.iota(nl.arange(4)[None, :] + i_p * 0, dtype=nl.float32)
        nl.store(out[8, :, 0:8], st)
        nl.store(out[8, :, 8:64], nl.zeros((128, 56), dtype=nl.float32))
        top = nl.ndarray((128, 64), dtype=nl.float32)
        top[:, 0:8] = nisa.max8(src=x)
        top[:, 8:16] = nisa.nc_find_index8(data=x, vals=top[:, 0:8])
        top[:, 16:64] = nisa.nc_match_replace8(data=x[:, 0:48], vals=top[:, 0:8], imm=0.0)
        nl.store(out[9], top)
        g = nl.ndarray((128, 64), dtype=nl.float32)
        g[...] = nl.zeros((128, 64), dtype=nl.float32)
        g[:, 0:8] = nl.gather_flattened(x, nisa.iota(i_p * 0 + 63 - 9 * nl.arange(8)[None, :], dtype=nl.float32))
        nl.store(out[10], g)
        nl.store(out[11], nisa.dropout(x, 0.5))
        nl.store(out[12], nl.rand((128, 64)))
        return out

    a, b = normal(128, 64), normal(128, 64)
    ncore.set_options(check=True, threads=1)
    got = nki.baremetal(k)(a, b)
    assert ncore.last_run()["checked_instructions"] > 0
    ncore.set_options(check=None)
    want = sim(k, a, b)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    np.testing.assert_array_equal(got[0], np.arange(128 * 64, dtype=np.float32).reshape(128, 64))
    np.testing.assert_array_equal(got[2], np.minimum(a, b))
    np.testing.assert_array_equal(got[9, :, 0:8], -np.sort(-a, axis=1)[:, :8])
    np.testing.assert_array_equal(got[10, :, 0:8], a[:, 63 - 9 * np.arange(8)])
    u = splitmix64(0, 2 * 128 * 64, 24).reshape(2, 128, 64)
    np.testing.assert_array_equal(got[11], np.where(u[0] >= 0.5, a, np.float32(0)))
    np.testing.assert_array_equal(got[12], u[1])
