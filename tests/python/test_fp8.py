"""The 8-bit floats float8_e4m3 and float8_e5m2 (and tfloat32 at the end), in both namespaces: casts on the engines and by DMA,
matmuls with fp8 operands, NKI's dtype promotion, fp8 results widened to float32 on the host, and
the NeuronCore-v4 types refused by name. The reference quantizer is written here, by value: every
finite value of the format listed from its definition, the nearest taken, ties to the even code,
past the largest finite plus half a step to infinity."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl

import neuronxcc.nki as old_nki
import neuronxcc.nki.isa as old_nisa
import neuronxcc.nki.language as old_nl

import ncore

RNG = np.random.default_rng(8)

# (exponent bits, mantissa bits) of NKI's IEEE-like 8-bit floats
FORMATS = {"float8_e4m3": (4, 3), "float8_e5m2": (5, 2)}


def finite_values(name):
    """The non-negative finite values of a format, by code (code c has value values[c])."""
    ew, mw = FORMATS[name]
    bias = 2 ** (ew - 1) - 1
    vals = []
    for code in range(((2 ** ew - 1) << mw)):  # below the top exponent
        e, m = code >> mw, code & (2 ** mw - 1)
        vals.append(m * 2.0 ** (1 - bias - mw) if e == 0 else (1 + m / 2 ** mw) * 2.0 ** (e - bias))
    return np.array(vals)


def quantize(x, name):
    """float32 values rounded to the format (returned as float64 values; inf past the range)."""
    vals = finite_values(name)
    top, step = vals[-1], vals[-1] - vals[-2]
    x = np.asarray(x, np.float32).astype(np.float64)
    out = np.empty_like(x)
    for i, v in np.ndenumerate(x):
        if np.isnan(v):
            out[i] = np.nan
            continue
        a = abs(v)
        if a >= top + step / 2:
            q = np.inf
        else:
            d = np.abs(vals - a)
            best = np.flatnonzero(d == d.min())
            q = vals[best[0] if len(best) == 1 else best[best % 2 == 0][0]]
        out[i] = -q if np.signbit(v) else q
    return out


def samples(shape):
    """Values across the format's range: normals, subnormals, ties, overflow, zeros of both signs."""
    x = (RNG.standard_normal(shape) * 2.0 ** RNG.integers(-18, 17, shape)).astype(np.float32)
    flat = x.reshape(-1)
    specials = [0.0, -0.0, 1.0625, 1.1875, 247.9, 248.0, -1e6, 61439.0, 61440.0, 2.0 ** -10, 1.5 * 2.0 ** -10,
                2.0 ** -17, 3 * 2.0 ** -18, np.inf, -np.inf]
    flat[:len(specials)] = specials
    return x


def same(got, want):
    """Equal values, infinities and signed zeros alike (NaN nowhere here)."""
    got = np.asarray(got, np.float64)
    return got.shape == want.shape and np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


# --- today's nki -----------------------------------------------------------------------------------

@nki.jit
def cast_round_trip(x, fp8):
    """x cast to fp8 on the vector engine, back to float32 by the scalar engine, and also stored as
    an fp8 result directly (the DMA's cast on the way out is none: equal dtypes)."""
    t = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(t, x)
    q = nl.ndarray(x.shape, fp8, buffer=nl.sbuf)
    nisa.tensor_copy(q, t)
    w = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    nisa.activation(w, nl.copy, q)
    wide = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(wide, w)
    raw = nl.ndarray(x.shape, fp8, buffer=nl.shared_hbm)
    nisa.dma_copy(raw, q)
    return wide, raw


@nki.jit
def dma_cast(x, fp8):
    """float32 in HBM to an fp8 HBM result by one DMA (the DMA engine's cast)."""
    out = nl.ndarray(x.shape, fp8, buffer=nl.shared_hbm)
    nisa.dma_copy(out, x)
    return out


@pytest.mark.parametrize("fmt", list(FORMATS))
@pytest.mark.parametrize("on", ["golden", "rtl"])
def test_casts_on_engines_and_dma(fmt, on):
    x = samples((16, 40))
    want = quantize(x, fmt)
    fp8 = getattr(nl, fmt)
    run = nki.simulate(cast_round_trip) if on == "golden" else cast_round_trip
    wide, raw = run(x, fp8)
    assert wide.dtype == np.float32 and raw.dtype == np.float32  # NumPy has no fp8: widened, exactly
    assert same(wide, want) and same(raw, want)
    got = (nki.simulate(dma_cast) if on == "golden" else dma_cast)(x, fp8)
    assert same(got, want)


@nki.jit
def fp8_matmul(a_t, b, fa, fb):
    """a_t.T @ b with both operands cast to fp8 on chip (a_t [K, M], b [K, N])."""
    k, m = a_t.shape
    _, n = b.shape
    sa = nl.ndarray((k, m), nl.float32, buffer=nl.sbuf)
    sb = nl.ndarray((k, n), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(sa, a_t)
    nisa.dma_copy(sb, b)
    qa = nl.ndarray((k, m), fa, buffer=nl.sbuf)
    qb = nl.ndarray((k, n), fb, buffer=nl.sbuf)
    nisa.tensor_copy(qa, sa)
    nisa.tensor_copy(qb, sb)
    acc = nl.ndarray((m, n), nl.float32, buffer=nl.psum)
    nisa.nc_matmul(acc, qa, qb)
    res = nl.ndarray((m, n), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(res, acc)
    out = nl.ndarray((m, n), nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(out, res)
    return out


@pytest.mark.parametrize("fa,fb", [("float8_e4m3", "float8_e4m3"), ("float8_e5m2", "float8_e4m3"),
                                   ("float8_e5m2", "float8_e5m2")])
def test_matmul_fp8_operands_on_rtl_checked(fa, fb):
    k, m, n = 64, 48, 96
    a_t = (RNG.standard_normal((k, m)) * 4).astype(np.float32)
    b = (RNG.standard_normal((k, n)) * 4).astype(np.float32)
    ncore.set_options(check=True)
    try:
        got = fp8_matmul(a_t, b, getattr(nl, fa), getattr(nl, fb))
    finally:
        ncore.set_options(check=None)
    # the products of two fp8 values are exact in fp32; the sum over K is fp32 with one rounding per
    # step: within K float32 ulps of the sum of magnitudes
    qa, qb = quantize(a_t, fa), quantize(b, fb)
    want = qa.T @ qb
    bound = k * np.finfo(np.float32).eps * (np.abs(qa).T @ np.abs(qb))
    assert np.all(np.abs(got - want) <= bound)
    # not the unquantized product: the operands really were rounded to fp8
    assert not np.allclose(got, a_t.T.astype(np.float64) @ b, rtol=1e-4)


def test_promotion_of_fp8_tiles():
    @nki.jit
    def promote(x):
        t = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(t, x)
        a = nl.ndarray(x.shape, nl.float8_e4m3, buffer=nl.sbuf)
        b = nl.ndarray(x.shape, nl.float8_e5m2, buffer=nl.sbuf)
        h = nl.ndarray(x.shape, nl.float16, buffer=nl.sbuf)
        nisa.tensor_copy(a, t)
        nisa.tensor_copy(b, t)
        nisa.tensor_copy(h, t)
        assert nl.add(a, b).dtype == nl.bfloat16  # NKI's new widened type
        assert nl.add(a, h).dtype == nl.float16
        assert nl.multiply(b, t).dtype == nl.float32
        s = nl.add(a, b)
        out = nl.ndarray(x.shape, nl.float32, buffer=nl.shared_hbm)
        w = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(w, s)
        nisa.dma_copy(out, w)
        return out

    x = samples((8, 16))
    x[np.abs(x) > 200] = 3.0  # finite in both formats
    got = nki.simulate(promote)(x)
    q = quantize(x, "float8_e4m3").astype(np.float32) + quantize(x, "float8_e5m2").astype(np.float32)
    import torch  # the bfloat16 rounding of the float32 sum, by torch (round to nearest even)
    want = torch.from_numpy(q).to(torch.bfloat16).float().numpy()
    assert same(got, want.astype(np.float64))


@pytest.mark.parametrize("name", ["float8_e4m3fn", "float8_e8m0fnu", "float8_e5m2_x4"])
def test_neuroncore_v4_types_refused_by_name(name):
    @nki.jit
    def use(x):
        t = nl.ndarray(x.shape, getattr(nl, name), buffer=nl.sbuf)
        return t

    with pytest.raises(ValueError, match=f"{name} is not a dtype this model's engines have .*NeuronCore-v4"):
        nki.simulate(use)(np.zeros((4, 4), np.float32))


# --- neuronxcc.nki: the same casts and a matmul, in the older spelling --------------------------------

@old_nki.jit
def old_cast_and_matmul(x, fp8):
    t = old_nl.load(x)
    q = old_nl.copy(t, dtype=fp8)
    wide = old_nl.ndarray(x.shape, dtype=old_nl.float32, buffer=old_nl.shared_hbm)
    old_nl.store(wide, old_nl.copy(q, dtype=old_nl.float32))
    prod = old_nl.ndarray((x.shape[1], x.shape[1]), dtype=old_nl.float32, buffer=old_nl.shared_hbm)
    old_nl.store(prod, old_nl.copy(old_nisa.nc_matmul(q, q), dtype=old_nl.float32))
    return wide, prod


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_neuronxcc_namespace(fmt):
    x = samples((32, 24))
    x[~np.isfinite(quantize(x, fmt))] = 1.5  # a finite product
    wide, prod = old_nki.simulate_kernel(old_cast_and_matmul, x, getattr(old_nl, fmt))
    q = quantize(x, fmt)
    assert same(wide, q)
    bound = x.shape[0] * np.finfo(np.float32).eps * (np.abs(q).T @ np.abs(q))
    assert np.all(np.abs(prod - q.T @ q) <= bound)


# --- tfloat32: float32's exponent, 10 mantissa bits, in a 32-bit word ---------------------------------

def to_tf32(x):
    """float32 values rounded to 10 mantissa bits, nearest even (by value, in float64)."""
    x = np.asarray(x, np.float32).astype(np.float64)
    m, e = np.frexp(x)
    q = np.maximum(e - 11, -136)
    r = np.ldexp(np.rint(np.ldexp(x, -q)), q)
    top = (2 - 2.0 ** -10) * 2.0 ** 127
    return np.where(np.abs(r) > top, np.copysign(np.inf, x), r)


def test_tfloat32_casts_and_matmul_on_rtl_checked():
    k, m, n = 32, 16, 64
    a_t = RNG.standard_normal((k, m)).astype(np.float32)
    b = RNG.standard_normal((k, n)).astype(np.float32)
    ncore.set_options(check=True)
    try:
        got = fp8_matmul(a_t, b, nl.tfloat32, nl.float32)  # tfloat32 pairs with float32
        wide, raw = cast_round_trip(a_t, nl.tfloat32)
    finally:
        ncore.set_options(check=None)
    assert same(wide, to_tf32(a_t)) and same(raw, to_tf32(a_t))  # a tfloat32 result is float32 bits
    qa = to_tf32(a_t)
    want = qa.T @ b.astype(np.float64)
    bound = k * np.finfo(np.float32).eps * (np.abs(qa).T @ np.abs(b).astype(np.float64))
    assert np.all(np.abs(got - want) <= bound)
    assert not np.allclose(got, a_t.T.astype(np.float64) @ b, rtol=1e-6)  # rounded to tfloat32 first


def test_tfloat32_pairs_only_with_float32():
    with pytest.raises(Exception, match="float32 and tfloat32 pair only with float32 or tfloat32"):
        nki.simulate(fp8_matmul)(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32), nl.tfloat32, nl.bfloat16)
