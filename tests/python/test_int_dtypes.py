"""Integer and bool tiles: int8, uint8, int16, uint16, int32, uint32 and bool_ (a uint8 holding 0 or 1)
in HBM, SBUF and PSUM-free engine paths. The engines widen integers to fp32 exactly (32-bit values
beyond 2^24 to nearest even), compute in fp32 and round to an integer destination to the nearest,
ties to even, saturated to its range (NaN as 0); equal dtypes copy bits. Each test checks the golden
model against a NumPy reference written here; the RTL runs in check mode where a test says so."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(7)

INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]


def to_int(x, dt):
    """NumPy reference of the model's fp32 -> integer rounding: nearest, ties to even, saturated,
    NaN as 0 (computed in float64 from the float32 values)."""
    info = np.iinfo(dt)
    x = np.asarray(x, np.float32).astype(np.float64)
    r = np.rint(np.nan_to_num(x, nan=0.0, posinf=np.inf, neginf=-np.inf))
    return np.clip(r, info.min, info.max).astype(dt)


def on_rtl_checked(kernel, *args):
    """The kernel on the RTL in check mode (every instruction compared with the golden model)."""
    ncore.set_options(check=True)
    try:
        return nki.baremetal(kernel)(*args)
    finally:
        ncore.set_options(check=None)


@nki.jit
def transpose2d(in_tensor, shape2d):
    """The NKI transpose2d tutorial's kernel: an SBUF-to-SBUF copy whose access patterns transpose
    each partition's (f1, f2) matrix."""
    out_tensor = nl.ndarray(in_tensor.shape, dtype=in_tensor.dtype, buffer=nl.shared_hbm)
    sz_p, _ = in_tensor.shape
    in_tile = nl.load(in_tensor)
    sz_f1, sz_f2 = shape2d
    i_p0, i_f1, i_f2 = nl.mgrid[0:sz_p, 0:sz_f1, 0:sz_f2]
    out_tile = nl.ndarray(shape=(sz_p, sz_f2 * sz_f1), dtype=out_tensor.dtype)
    out_tile[i_p0, i_f2 * sz_f1 + i_f1] = nl.copy(in_tile[i_p0, i_f1 * sz_f2 + i_f2])
    nl.store(out_tensor, value=out_tile)
    return out_tensor


@pytest.mark.parametrize("dt", INT_TYPES)
def test_transpose2d_tutorial_every_integer_type(dt):
    info = np.iinfo(dt)
    p, x, y = 5, 3, 4
    a = rng.integers(info.min, info.max, size=(p, x * y), endpoint=True, dtype=dt)
    want = np.transpose(a.reshape(p, x, y), (0, 2, 1)).reshape(p, x * y)
    got = nki.simulate_kernel(transpose2d, a, (x, y))
    assert got.dtype == dt
    np.testing.assert_array_equal(got, want)


def test_transpose2d_tutorial_int8_on_the_rtl():
    p, x, y = 5, 3, 4
    a = np.arange(p * x * y, dtype=np.int8).reshape((p, x * y))
    got = on_rtl_checked(transpose2d, a, (x, y))
    np.testing.assert_array_equal(got, np.transpose(a.reshape(p, x, y), (0, 2, 1)).reshape(p, x * y))


@nki.jit
def cast_through(a, dtype):
    """Load a, convert it to dtype on the vector engine (nl.copy), store it; and the same through a
    DMA cast (nl.store of the float tile into a dtype tensor)."""
    t = nl.load(a)
    out_ve = nl.ndarray(a.shape, dtype=dtype, buffer=nl.shared_hbm)
    out_dma = nl.ndarray(a.shape, dtype=dtype, buffer=nl.shared_hbm)
    nl.store(out_ve, nl.copy(t, dtype=dtype))
    nl.store(out_dma, t)
    return out_ve, out_dma


@pytest.mark.parametrize("dt", INT_TYPES)
def test_float_to_integer_rounds_to_nearest_even_and_saturates(dt):
    info = np.iinfo(dt)
    span = float(info.max) - float(info.min)
    x = (rng.random((128, 64)) * span * 1.5 + float(info.min) - span * 0.25).astype(np.float32)
    x[0, :8] = [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, np.nan, -0.0]
    x[1, :4] = [np.inf, -np.inf, 1e30, -1e30]
    x[2, :] = np.float32(rng.integers(-300, 300, 64)) + np.float32(0.5)  # ties
    want = to_int(x, dt)
    ve, dma = nki.simulate_kernel(cast_through, x, dt)
    np.testing.assert_array_equal(ve, want)
    np.testing.assert_array_equal(dma, want)


@pytest.mark.parametrize("dt", INT_TYPES)
def test_integer_to_float_is_exact_below_2_to_the_24(dt):
    info = np.iinfo(dt)
    lo, hi = max(info.min, -(1 << 24)), min(info.max, 1 << 24)
    a = rng.integers(lo, hi, size=(128, 48), endpoint=True, dtype=dt)
    a[0, :2] = [lo, hi]
    ve, dma = nki.simulate_kernel(cast_through, a, np.float32)
    np.testing.assert_array_equal(ve, a.astype(np.float32))
    np.testing.assert_array_equal(dma, a.astype(np.float32))


def test_int32_beyond_2_to_the_24_rounds_to_nearest_even_in_fp32():
    a = np.array([[(1 << 24) + 1, (1 << 24) + 3, -(1 << 24) - 1, 2 ** 31 - 1, -2 ** 31, 123456789]], np.int32)
    ve, dma = nki.simulate_kernel(cast_through, a, np.float32)
    want = a.astype(np.float32)  # NumPy's int -> float32 conversion rounds to nearest even
    np.testing.assert_array_equal(ve, want)
    np.testing.assert_array_equal(dma, want)


@nki.jit
def int_arith(a, b):
    """a + b, a * b, max(a, b) and a - b on int32 and int16 tiles, results in the operands' dtype."""
    ta, tb = nl.load(a), nl.load(b)
    outs = []
    for op in (nl.add, nl.multiply, nl.maximum, nl.subtract):
        o = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(o, op(ta, tb))
        outs.append(o)
    return tuple(outs)


@pytest.mark.parametrize("dt", [np.int16, np.int32, np.uint8])
def test_integer_arithmetic_in_fp32_rounded_and_saturated(dt):
    info = np.iinfo(dt)
    lim = min(int(info.max), 3000)
    a = rng.integers(max(info.min, -lim), lim, size=(128, 96), dtype=dt)
    b = rng.integers(max(info.min, -lim), lim, size=(128, 96), dtype=dt)
    got = nki.simulate_kernel(int_arith, a, b)
    f32 = lambda v: v.astype(np.float32)  # noqa: E731
    for g, op in zip(got, (np.add, np.multiply, np.maximum, np.subtract)):
        np.testing.assert_array_equal(g, to_int(op(f32(a), f32(b)), dt))


@nki.jit
def compare_kernel(a, b):
    """nl.greater's default dtype is bool: a bool_ tile, stored into a bool_ HBM tensor; the same
    comparison used as a 0/1 factor in float arithmetic; a logical_and of two comparisons."""
    ta, tb = nl.load(a), nl.load(b)
    gt = nl.greater(ta, tb)
    out_bool = nl.ndarray(a.shape, dtype=nl.bool_, buffer=nl.shared_hbm)
    nl.store(out_bool, gt)
    out_masked = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out_masked, nl.multiply(ta, gt))
    both = nl.ndarray(a.shape, dtype=nl.uint8, buffer=nl.shared_hbm)
    nl.store(both, nl.logical_and(gt, ta > 0.0, dtype=nl.uint8))
    return out_bool, out_masked, both


def test_comparisons_give_bool_tiles_by_default():
    a = rng.standard_normal((128, 40)).astype(np.float32)
    b = rng.standard_normal((128, 40)).astype(np.float32)
    got_bool, got_masked, got_both = nki.simulate_kernel(compare_kernel, a, b)
    assert got_bool.dtype == np.bool_
    np.testing.assert_array_equal(got_bool, a > b)
    np.testing.assert_array_equal(got_masked, a * (a > b).astype(np.float32))
    np.testing.assert_array_equal(got_both, ((a > b) & (a > 0)).astype(np.uint8))


def test_comparisons_on_the_rtl_in_check_mode():
    a = rng.standard_normal((128, 40)).astype(np.float32)
    b = rng.standard_normal((128, 40)).astype(np.float32)
    got_bool, _, got_both = on_rtl_checked(compare_kernel, a, b)
    np.testing.assert_array_equal(got_bool, a > b)
    np.testing.assert_array_equal(got_both, ((a > b) & (a > 0)).astype(np.uint8))


@nki.jit
def bool_io(m, x):
    """A bool argument (uint8 0/1 in HBM) selects x: x * m."""
    tm, tx = nl.load(m), nl.load(x)
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, nl.multiply(tx, tm))
    return out


def test_bool_arguments():
    m = rng.random((64, 32)) > 0.5
    x = rng.standard_normal((64, 32)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(bool_io, m, x), np.where(m, x, np.float32(0)) + np.float32(0))


@nki.jit
def iota_kernel():
    """nisa.iota into int32 tiles: 2 * i_p + 3 * i_f, and its sum over the free axis."""
    out = nl.ndarray((128, 64), dtype=nl.int32, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(64)[None, :]
    nl.store(out, nisa.iota(2 * i_p + 3 * i_f, dtype=nl.int32))
    return out


def test_iota_int32():
    got = nki.simulate_kernel(iota_kernel)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, 2 * np.arange(128)[:, None] + 3 * np.arange(64)[None, :])


@nki.jit
def identity_kernel():
    """nl.shared_identity_matrix's default dtype, uint8, loaded and stored."""
    out = nl.ndarray((128, 128), dtype=nl.uint8, buffer=nl.shared_hbm)
    nl.store(out, nl.load(nl.shared_identity_matrix(128)))
    return out


def test_shared_identity_matrix_default_uint8():
    got = nki.simulate_kernel(identity_kernel)
    assert got.dtype == np.uint8
    np.testing.assert_array_equal(got, np.eye(128, dtype=np.uint8))


@nki.jit
def reduce_int(a):
    """Row sums and maxima of an int32 tile, in int32."""
    t = nl.load(a)
    s = nl.ndarray((a.shape[0], 1), dtype=nl.int32, buffer=nl.shared_hbm)
    m = nl.ndarray((a.shape[0], 1), dtype=nl.int32, buffer=nl.shared_hbm)
    nl.store(s, nl.sum(t, axis=1, keepdims=True))
    nl.store(m, nl.max(t, axis=1, keepdims=True))
    return s, m


def test_integer_reductions():
    a = rng.integers(-1000, 1000, size=(128, 200), dtype=np.int32)
    s, m = nki.simulate_kernel(reduce_int, a)
    np.testing.assert_array_equal(s[:, 0], a.sum(axis=1))  # |sums| < 2^24: exact in fp32
    np.testing.assert_array_equal(m[:, 0], a.max(axis=1))


def test_integer_kernels_on_the_rtl_in_check_mode():
    a = rng.integers(-3000, 3000, size=(128, 96), dtype=np.int16)
    b = rng.integers(-3000, 3000, size=(128, 96), dtype=np.int16)
    got = on_rtl_checked(int_arith, a, b)
    for g, op in zip(got, (np.add, np.multiply, np.maximum, np.subtract)):
        np.testing.assert_array_equal(g, to_int(op(a.astype(np.float32), b.astype(np.float32)), np.int16))
    x = (rng.random((128, 64)) * 600 - 300).astype(np.float32)
    ve, dma = on_rtl_checked(cast_through, x, np.int8)
    np.testing.assert_array_equal(ve, to_int(x, np.int8))
    np.testing.assert_array_equal(dma, to_int(x, np.int8))


@nki.jit
def int_matmul(a, b):
    ta, tb = nl.load(a), nl.load(b)
    out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nisa.nc_matmul(ta, tb))
    return out


def test_tensor_engine_refuses_integer_operands():
    a = np.ones((128, 16), np.int8)
    with pytest.raises(Exception, match=r"operand 'stationary' of 'nc_matmul' is int8: the tensor engine multiplies "
                                        r"float32, tfloat32, bfloat16, float16, float8_e4m3 or float8_e5m2"):
        nki.simulate_kernel(int_matmul, a, a)


def test_int64_arguments_are_refused_with_a_hint():
    @nki.jit
    def k(a):
        return a

    with pytest.raises(ValueError, match=r"numpy array of int64.*astype\(np\.int32\)"):
        nki.simulate_kernel(k, np.arange(8).reshape(2, 4))



@pytest.mark.parametrize("da, db, want", [
    (np.int32, np.float16, "float16"), (np.uint16, np.float32, "float32"), (np.float16, "bfloat16", "float32"),
    (np.int16, np.int32, "int32"), (np.uint8, np.uint16, "uint16"), (np.uint16, np.int32, "int32"),
    (np.int8, np.uint8, "int16"), (np.int8, np.uint16, "int32"), (np.int32, np.uint32, "float32"),
    (np.float32, "bfloat16", "float32")])
def test_type_promotion_of_two_tiles(da, db, want):
    """NKI's type promotion table (the programming guide's examples)."""
    a = np.ones((4, 8), da)
    b = np.full((4, 8), 2, np.float32 if db == "bfloat16" else db)

    @nki.jit
    def k(a, b):
        tb = nl.load(b)
        if db == "bfloat16":
            tb = nl.copy(tb, dtype=nl.bfloat16)
        r = nl.add(nl.load(a), tb)
        assert r.dtype == want, r.dtype
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    np.testing.assert_array_equal(nki.simulate_kernel(k, a, b), np.full((4, 8), 3, np.float32))


def _bf16(x):
    """float32 values rounded to bfloat16 (nearest, ties to even) and widened back."""
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x7FFF + ((b >> 16) & 1)) >> 16 << 16
    return b.astype(np.uint32).view(np.float32)


@pytest.mark.parametrize("tile, scalar, want", [
    ("bfloat16", 1.0, "float32"), ("float16", 1.5, "float32"), ("float16", 2, "float16"),
    ("float32", 2, "float32"), ("int8", 2, "int32"), ("uint8", True, "uint8"), ("int16", 0.5, "float32"),
    ("int8", np.int8(2), "int8"), ("float16", np.float16(2), "float16"), ("bfloat16", np.float32(2), "float32"),
    ("uint8", np.uint8(3), "uint8"), ("int16", np.int64(3), "int32")])
def test_weakly_typed_scalars(tile, scalar, want):
    """A Python scalar in an arithmetic call is typed as the widest the hardware has (bool uint8, int
    int32, float float32) and promoted with the tile, in either order and through the operators; a
    NumPy scalar keeps its own dtype (the programming guide's weakly typed scalar rule)."""
    a = np.arange(32, dtype=np.float32).reshape(4, 8)

    @nki.jit
    def k(a):
        t = nl.copy(nl.load(a), dtype=tile)
        results = [nl.add(t, scalar), nl.multiply(scalar, t), t + scalar, scalar * t, nl.maximum(t, scalar)]
        for r in results:
            assert r.dtype == want, (r.dtype, want)
        assert nl.add(t, scalar, dtype=nl.bfloat16).dtype == "bfloat16"
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, results[0])
        return out

    np.testing.assert_array_equal(nki.simulate_kernel(k, a), a + np.float32(scalar))


def test_weak_float_scalar_keeps_float32_precision():
    """bfloat16 * 1.0078125 is a float32 tile in NKI: the product is not rounded to bfloat16 before the
    store (rounded, 3 * 1.0078125 = 3.0234375 would come back as 3.03125)."""
    a = np.full((4, 8), 3.0, np.float32)

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, nl.multiply(nl.load(a, dtype=nl.bfloat16), 1.0078125))
        return out

    got = nki.simulate_kernel(k, a)
    np.testing.assert_array_equal(got, np.full((4, 8), 3.0234375, np.float32))
    assert not np.array_equal(got, _bf16(got))


def test_per_partition_tile_promotes_like_a_tile():
    """A (P, 1) float32 operand against a bfloat16 tile gives float32, as two tiles do."""
    a = np.full((4, 8), 3.0, np.float32)
    s = np.full((4, 1), 1.0078125, np.float32)

    @nki.jit
    def k(a, s):
        r = nl.multiply(nl.load(a, dtype=nl.bfloat16), nl.load(s))
        assert r.dtype == "float32", r.dtype
        out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    np.testing.assert_array_equal(nki.simulate_kernel(k, a, s), np.full((4, 8), 3.0234375, np.float32))


def test_bitvec_scalar_keeps_the_tile_dtype():
    """A shift's scalar does not widen the tile: bitvec ops keep one integer dtype."""
    a = np.arange(32, dtype=np.int8).reshape(4, 8)

    @nki.jit
    def k(a):
        r = nl.left_shift(nl.load(a), 2)
        assert r.dtype == "int8", r.dtype
        out = nl.ndarray(a.shape, dtype=nl.int8, buffer=nl.shared_hbm)
        nl.store(out, r)
        return out

    np.testing.assert_array_equal(nki.simulate_kernel(k, a), (a.astype(np.int32) << 2).astype(np.int8))
