"""Element-wise math on the engines: the scalar engine's activation functions (nl.exp, ...,
nisa.activation with nl and NumPy ops), the vector engine's divide and comparisons, nl.mean, and
softmax / layernorm / rmsnorm kernels written the way NKI's tutorials write them, each against
NumPy (float64) within the error bounds docs/hardware.md documents (Numerics). On the golden model
unless a test says otherwise; test_every_function_on_the_rtl_in_check_mode holds the RTL to it
bit for bit."""
import math

import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(11)


def sim(kernel, *args, **kwargs):
    return nki.simulate_kernel(kernel, *args, **kwargs)


def ulp_error(got, want, floor=0.0):
    """|got - want| in units in the last place of the float32 result (ulp of the exact value, or of
    `floor` where the exact value is smaller)."""
    got = np.asarray(got, np.float64)
    want = np.asarray(want, np.float64)
    e = np.floor(np.log2(np.maximum(np.abs(want), max(floor, 2.0 ** -126))))
    return np.abs(got - want) / 2.0 ** (np.maximum(e, -126) - 23)


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


# name -> (NumPy float64 reference, input range, bound in ulp). None for the bound: exact (the
# float32 result of NumPy's float32 arithmetic, bit for bit).
FUNCS = {
    "exp": (np.exp, (-80, 80), 1.0),
    "log": (np.log, (1e-30, 1e30), 1.0),
    "tanh": (np.tanh, (-6, 6), 2.0),
    "sigmoid": (sigmoid64, (-80, 80), 3.0),
    "softplus": (lambda x: np.log1p(np.exp(x)), (-60, 60), 3.0),
    "silu": (lambda x: x * sigmoid64(x), (-60, 60), 4.0),
    "gelu_apprx_tanh": (lambda x: x * sigmoid64(2 * math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)), (-2, 20), 7.0),
    "rsqrt": (lambda x: 1.0 / np.sqrt(x), (1e-30, 1e30), 1.5),
    "erf": (np.vectorize(math.erf), (-5, 5), 1.5),
    "gelu": (np.vectorize(lambda v: 0.5 * v * math.erfc(-v / math.sqrt(2.0))), (-14, 20), 6.0),
    "sqrt": (lambda x: np.sqrt(x.astype(np.float32)), (0, 1e30), None),
    "reciprocal": (lambda x: np.float32(1) / x.astype(np.float32), (-1e30, 1e30), None),
    "square": (lambda x: np.square(x.astype(np.float32)), (-1e15, 1e15), None),
    "abs": (lambda x: np.abs(x.astype(np.float32)), (-10, 10), None),
    "negative": (lambda x: np.negative(x.astype(np.float32)), (-10, 10), None),
    "sign": (lambda x: np.sign(x.astype(np.float32)), (-10, 10), None),
    "relu": (lambda x: np.maximum(x.astype(np.float32), np.float32(0)), (-10, 10), None),
    "sin": (np.sin, (-1e4, 1e4), 2.0),
    "cos": (np.cos, (-1e4, 1e4), 2.0),
    "tan": (np.tan, (-1e4, 1e4), 3.5),
    "arctan": (np.arctan, (-1e30, 1e30), 1.5),
    "mish": (lambda x: x * np.tanh(np.log1p(np.exp(x))), (-60, 60), 4.5),
    "gelu_apprx_sigmoid": (lambda x: x * sigmoid64(1.702 * x), (-2, 20), 5.0),
    "erf_dx": (lambda x: 2.0 / math.sqrt(math.pi) * np.exp(-x * x), (-10, 10), 4.0),
    "ceil": (lambda x: np.ceil(x.astype(np.float32)), (-100, 100), None),
    "floor": (lambda x: np.floor(x.astype(np.float32)), (-100, 100), None),
    "trunc": (lambda x: np.trunc(x.astype(np.float32)), (-100, 100), None),
}
# Derivatives with a zero where two terms cancel: there the error is counted in ulps of 1/16
# (docs/hardware.md, Numerics): name -> (reference, range, bound).
DERIVATIVES = {
    "silu_dx": (lambda x: sigmoid64(x) * (1.0 + x * sigmoid64(-x)), (-60, 60), 6.0),
    "gelu_dx": (np.vectorize(lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)) +
                             v * math.exp(-0.5 * v * v) / math.sqrt(2.0 * math.pi)), (-14, 20), 12.0),
}


def inputs(lo, hi, shape=(128, 64)):
    """Values over [lo, hi]: log-uniform magnitudes for wide positive ranges, uniform otherwise."""
    if lo > 0 and hi / lo > 1e6:
        x = np.exp(rng.uniform(np.log(lo), np.log(hi), size=shape))
    elif lo >= 0 and hi > 1e6:
        x = np.exp(rng.uniform(np.log(1e-30), np.log(hi), size=shape))
    elif hi > 1e6:
        x = np.exp(rng.uniform(np.log(1e-30), np.log(hi), size=shape)) * rng.choice([-1, 1], size=shape)
    else:
        x = rng.uniform(lo, hi, size=shape)
    return x.astype(np.float32)


def unary_kernel(name):
    fn = getattr(nl, name)

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(out, value=fn(nl.load(a)))
        return out

    return k


@pytest.mark.parametrize("name", sorted(FUNCS))
def test_nl_function_against_numpy(name):
    ref, (lo, hi), bound = FUNCS[name]
    x = inputs(lo, hi)
    got = sim(unary_kernel(name), x)
    want = ref(x.astype(np.float64))
    if bound is None:
        np.testing.assert_array_equal(got, want.astype(np.float32))
    else:
        err = ulp_error(got, want)
        assert err.max() <= bound, f"nl.{name}: {err.max():.2f} ulp at x = {x.flat[err.argmax()]!r}"


@pytest.mark.parametrize("name", sorted(DERIVATIVES))
def test_derivatives_against_numpy(name):
    ref, (lo, hi), bound = DERIVATIVES[name]
    x = inputs(lo, hi)
    x[0, :3] = [-1.2785, -0.7518, 0.0]  # near the zeros of silu_dx and gelu_dx
    got = sim(unary_kernel(name), x)
    want = ref(x.astype(np.float64))
    err = ulp_error(got, want, 1 / 16)
    assert err.max() <= bound, f"nl.{name}: {err.max():.2f} ulp at x = {x.flat[err.argmax()]!r}"


def test_trigonometric_reduction_over_the_fp32_range():
    """sin and cos of arguments up to 1e38: the reduction is exact, so the bound holds everywhere."""
    x = inputs(-1e38, 1e38)
    got = sim(unary_kernel("sin"), x)
    assert ulp_error(got, np.sin(x.astype(np.float64))).max() <= 2.0
    got = sim(unary_kernel("cos"), x)
    assert ulp_error(got, np.cos(x.astype(np.float64))).max() <= 2.0


def test_each_function_is_one_activation_with_its_code():
    """nl.<f>(x) traces to one activation instruction of the scalar engine with func=<f>."""
    for name in sorted(FUNCS) + sorted(DERIVATIVES):
        listing = ncore.trace(unary_kernel(name), np.zeros((128, 4), np.float32)).listing()
        acts = [ln for ln in listing.splitlines() if " activation " in ln]
        assert len(acts) == 1 and f"func={name} " in acts[0], (name, acts)


def test_every_function_on_the_rtl_in_check_mode():
    """One activation per function on the RTL, each instruction compared with the golden model
    as it completes (check mode), the outputs equal to simulate_kernel's bit for bit."""
    names = sorted(FUNCS) + sorted(DERIVATIVES)

    @nki.jit
    def k(a):
        out = nl.ndarray((len(names), 128, 32), dtype=a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        for j, n in enumerate(names):
            nl.store(out[j], value=getattr(nl, n)(t))
        return out

    # special values among ordinary ones: NaN, infinities, zeros, subnormals, overflow edges
    x = rng.uniform(-100, 100, size=(128, 32)).astype(np.float32)
    x[0, :12] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-45, 88.72, 89.5, -103.5, -104.5, 1e38]
    ncore.set_options(check=True)
    got = nki.baremetal(k)(x)
    ncore.set_options(check=None)
    want = sim(k, x)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    exp = names.index("exp")
    assert np.isnan(got[exp, 0, 0]) and got[exp, 0, 1] == np.inf and got[exp, 0, 2] == 0.0
    assert got[exp, 0, 8] == np.inf and got[exp, 0, 10] == 0.0


def test_activation_with_numpy_ops_scale_bias_and_dtype():
    @nki.jit
    def k(a, b):
        out = nl.ndarray((3, 128, 48), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        bias = nl.load(b)  # (128, 1)
        nl.store(out[0], value=nisa.activation(op=np.exp, data=t, bias=bias, scale=0.5))
        nl.store(out[1], value=nisa.activation(np.tanh, t, scale=2.0))
        nl.store(out[2], value=nisa.activation(nl.sigmoid, t, bias=bias, dtype=nl.bfloat16))
        return out

    a = rng.uniform(-4, 4, size=(128, 48)).astype(np.float32)
    b = rng.uniform(-1, 1, size=(128, 1)).astype(np.float32)
    got = sim(k, a, b)
    z = a * np.float32(0.5) + b  # the product and the sum each rounded in float32
    assert ulp_error(got[0], np.exp(z.astype(np.float64))).max() <= 1.0
    assert ulp_error(got[1], np.tanh((a * np.float32(2)).astype(np.float64))).max() <= 2.0
    # bf16 output: within half a bf16 ulp (2^15 float32 ulps) plus the function's 3 ulp
    assert ulp_error(got[2], sigmoid64((a + b).astype(np.float64))).max() <= 2 ** 15 + 3


def test_activation_reduce_sums_the_function():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        red = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        r = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
        e = nisa.activation_reduce(op=nl.exp, data=t, reduce_op=np.add, reduce_res=r)
        nl.store(out, value=e)
        nl.store(red, value=r)
        return out, red

    a = rng.uniform(-3, 3, size=(128, 64)).astype(np.float32)
    e, r = sim(k, a)
    # the add-reduce sums the float32 results in order, one rounding per step
    want = np.zeros(128, np.float32)
    for j in range(64):
        want = want + e[:, j]
    np.testing.assert_array_equal(r[:, 0], want)
    assert ulp_error(e, np.exp(a.astype(np.float64))).max() <= 1.0


def binary_ops_kernel(*ops):
    """A kernel of two inputs of one shape that stores op(x, y) of each of `ops` as one plane of its
    float32 output, in order."""
    @nki.jit
    def k(a, b):
        out = nl.ndarray((len(ops), *a.shape), dtype=nl.float32, buffer=nl.shared_hbm)
        x, y = nl.load(a), nl.load(b)
        for j, op in enumerate(ops):
            nl.store(out[j], value=op(x, y))
        return out

    return k


def test_divide_and_comparisons_against_numpy():
    k = binary_ops_kernel(nl.divide, lambda x, y: x / y, nl.equal, nl.not_equal, nl.greater,
                          lambda x, y: nl.greater_equal(x, 0.5), nl.less, lambda x, y: x <= y,
                          lambda x, y: 2.0 / x)

    a = rng.uniform(-2, 2, size=(128, 40)).astype(np.float32)
    b = rng.uniform(-2, 2, size=(128, 40)).astype(np.float32)
    b[:, :8] = a[:, :8]  # equal pairs
    a[0, 8:12] = [np.nan, 0.0, -0.0, np.inf]
    b[0, 8:12] = [1.0, -0.0, 0.0, np.inf]
    got = sim(k, a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(got[0], a / b)
        np.testing.assert_array_equal(got[1], a / b)
        for j, want in enumerate([a == b, a != b, a > b, a >= np.float32(0.5), a < b, a <= b], start=2):
            np.testing.assert_array_equal(got[j], want.astype(np.float32))
        np.testing.assert_array_equal(got[8], np.float32(2) / a)


def test_power_mod_fmod_and_logical_ops_against_numpy():
    k = binary_ops_kernel(nl.power, lambda x, y: x ** 2.0, lambda x, y: 2.0 ** y, nl.mod, lambda x, y: x % 3.0,
                          lambda x, y: 7.5 % y, nl.fmod, lambda x, y: nisa.tensor_scalar(x, np.fmod, -2.5),
                          nl.logical_and, nl.logical_or, nl.logical_xor, lambda x, y: nl.logical_not(x),
                          lambda x, y: nisa.tensor_tensor(x, y, op=np.power),
                          lambda x, y: nisa.tensor_tensor(x, y, op=np.remainder))

    a = rng.uniform(-8, 8, size=(128, 48)).astype(np.float32)
    b = rng.uniform(-4, 4, size=(128, 48)).astype(np.float32)
    b[:, :8] = np.round(b[:, :8])  # integer exponents of negative bases, zero divisors
    a[:, 8:12] = 0.0
    a[0, 12:20] = [np.nan, np.inf, -np.inf, -0.0, 1.0, -1.0, 1e-45, 3e38]
    b[0, 12:20] = [0.0, -1.0, 3.0, -3.0, np.nan, np.inf, 0.5, 2.0]
    got = sim(k, a, b)
    with np.errstate(all="ignore"):
        # power: NumPy's float32 pow (the C library's) for the special values, and within 0.51 ulp of
        # float64 pow elsewhere (ours: 0.5 + 2^-20)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        for j, want, exact in [(0, np.power(a, b), np.power(a64, b64)), (12, np.power(a, b), np.power(a64, b64)),
                               (1, np.power(a, np.float32(2)), a64 ** 2),
                               (2, np.power(np.float32(2), b), np.power(2.0, b64))]:
            nan = np.isnan(want)
            np.testing.assert_array_equal(np.isnan(got[j]), nan)
            fin = np.isfinite(want)
            np.testing.assert_array_equal(got[j][~fin & ~nan], want[~fin & ~nan])
            np.testing.assert_array_equal(np.signbit(got[j][~nan]), np.signbit(want[~nan]))
            assert ulp_error(got[j][fin], exact[fin]).max() <= 0.51
        # mod, fmod: exact (fmod) and NumPy's float32 mod bit for bit
        for j, want in [(3, np.mod(a, b)), (4, np.mod(a, np.float32(3))), (5, np.mod(np.float32(7.5), b)),
                        (6, np.fmod(a, b)), (7, np.fmod(a, np.float32(-2.5))), (13, np.mod(a, b))]:
            np.testing.assert_array_equal(got[j].view(np.uint32), np.where(np.isnan(want), np.float32(np.nan),
                                                                         want).astype(np.float32).view(np.uint32))
        for j, want in [(8, np.logical_and(a, b)), (9, np.logical_or(a, b)), (10, np.logical_xor(a, b)),
                        (11, np.logical_not(a))]:
            np.testing.assert_array_equal(got[j], want.astype(np.float32))


def test_alu_ops_trace_to_their_codes():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(out, value=nl.power(x, 3.0) + nl.mod(x, 2.0) + nl.fmod(x, 2.0) + nl.logical_and(x, 1.0) +
                 nl.logical_or(x, 0.0) + nl.logical_xor(x, 1.0) + nl.logical_not(x))
        return out

    listing = ncore.trace(k, np.zeros((128, 4), np.float32)).listing()
    for op in ["power(3)", "mod(2)", "fmod(2)", "logical_and(1)", "logical_or(0)", "logical_xor(1)", "logical_not(0)"]:
        assert f" tensor_scalar " in listing and f"op0={op} " in listing, op


def test_tensor_scalar_divide_and_numpy_ufuncs():
    @nki.jit
    def k(a, s):
        out = nl.ndarray((3, 128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        x, v = nl.load(a), nl.load(s)
        nl.store(out[0], value=nisa.tensor_scalar(x, op0=nl.divide, operand0=v, op1=np.add, operand1=1.0))
        nl.store(out[1], value=nisa.tensor_scalar(x, np.divide, 3.0, reverse0=True))
        nl.store(out[2], value=nisa.tensor_tensor(x, x, op=np.greater_equal))
        return out

    a = rng.uniform(-2, 2, size=(128, 16)).astype(np.float32)
    s = rng.uniform(0.5, 2, size=(128, 1)).astype(np.float32)
    got = sim(k, a, s)
    np.testing.assert_array_equal(got[0], a / s + np.float32(1))
    np.testing.assert_array_equal(got[1], np.float32(3) / a)
    np.testing.assert_array_equal(got[2], np.ones_like(a))


def test_nisa_reciprocal_and_unary_minus():
    @nki.jit
    def k(a):
        out = nl.ndarray((2, 128, 16), dtype=nl.float32, buffer=nl.shared_hbm)
        x = nl.load(a)
        nl.store(out[0], value=nisa.reciprocal(x))
        nl.store(out[1], value=-x)
        return out

    a = rng.uniform(-2, 2, size=(128, 16)).astype(np.float32)
    got = sim(k, a)
    np.testing.assert_array_equal(got[0], np.float32(1) / a)
    np.testing.assert_array_equal(got[1], -a)


def test_functions_of_numbers_are_python_math():
    """Inside a kernel, nl calls on plain numbers compute in Python (a kernel's constants)."""
    seen = []

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        seen.extend([nl.exp(0.0), nl.sqrt(4.0), nl.divide(1.0, 4.0), nl.greater(2, 1), nl.rsqrt(4.0)])
        nl.store(out, value=nl.multiply(nl.load(a), nl.sqrt(4.0)))
        return out

    a = rng.uniform(-2, 2, size=(128, 8)).astype(np.float32)
    np.testing.assert_array_equal(sim(k, a), a * np.float32(2))
    assert seen == [1.0, 2.0, 0.25, True, 0.5]


def test_mean_over_free_axes():
    @nki.jit
    def k(a):
        out = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.shared_hbm)
        out2 = nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)  # (128, 4, 24)
        nl.store(out, value=nl.mean(t, axis=(1, 2), keepdims=True))
        nl.store(out2, value=nl.mean(t, axis=2))
        return out, out2

    a = rng.uniform(-2, 2, size=(128, 4, 24)).astype(np.float32)
    m1, m2 = sim(k, a)
    # the float32 sum in order, times float32(1/n)
    s = np.zeros(128, np.float32)
    for v in a.reshape(128, -1).T:
        s = s + v
    np.testing.assert_array_equal(m1[:, 0], s * (np.float32(1) / np.float32(96)))
    np.testing.assert_allclose(m2, a.astype(np.float64).mean(axis=2), rtol=1e-5, atol=1e-6)


# --- kernels written as the NKI tutorials write them ------------------------------------------------

def softmax_kernel(x):
    """Row softmax of x [N, D], 128 rows at a time: max-reduce along the free axis, subtract it
    (a (P, 1) broadcast), exp, sum-reduce, reciprocal, multiply."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(x.shape[0] // 128):
        t = nl.load(x[i * 128:(i + 1) * 128, :])
        row_max = nl.max(t, axis=1, keepdims=True)
        e = nl.exp(nl.subtract(t, row_max))
        total = nl.sum(e, axis=1, keepdims=True)
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.multiply(e, nl.reciprocal(total)))
    return out


def softmax_isa_kernel(x):
    """The same with the scalar engine's fused form: -max from tensor_reduce(negate=True), exp(x - max)
    with it as activation's bias, its sum from activation_reduce."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    neg_max = nisa.tensor_reduce(np.max, t, axis=(1,), keepdims=True, negate=True)
    total = nl.ndarray((x.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    e = nisa.activation_reduce(op=np.exp, data=t, bias=neg_max, reduce_op=np.add, reduce_res=total)
    nl.store(out, value=nisa.tensor_scalar(e, np.divide, total))
    return out


def softmax_ref(x):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def check_softmax(got, x):
    """Each element within (|x - max| + n + 8) 2^-24 relative of the exact softmax, n the row
    length: the float32 difference x - max is rounded once (a relative 2^-24, which exp turns
    into an absolute |x - max| 2^-24 of its argument), exp adds 1 ulp, the row sum's n roundings
    at most n 2^-24, the reciprocal and the product an ulp each."""
    ref = softmax_ref(x)
    d = np.abs(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    bound = ref * (d + x.shape[1] + 8) * 2.0 ** -24
    assert np.all(np.abs(got - ref) <= bound), np.max(np.abs(got - ref) / bound)


def test_softmax_tutorial_style_on_the_rtl():
    x = rng.normal(0, 3, size=(256, 512)).astype(np.float32)
    ncore.set_options(check=True)
    got = nki.baremetal(softmax_kernel)(x)
    check_softmax(got, x)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-5)


def test_softmax_with_activation_reduce():
    x = rng.normal(0, 3, size=(128, 300)).astype(np.float32)
    got = sim(softmax_isa_kernel, x)
    check_softmax(got, x)


def rmsnorm_kernel(a_tensor, g_tensor, out_tensor):
    """out = a / sqrt(mean(a^2)) * g, rows in tiles of 128 (g given per row: [N, D])."""
    ix = nl.arange(128)[:, None]
    iy = nl.arange(a_tensor.shape[1])[None, :]
    for i in nl.affine_range(math.ceil(a_tensor.shape[0] / 128)):
        a_tile = nl.load(a_tensor[i * 128 + ix, iy])
        g_tile = nl.load(g_tensor[i * 128 + ix, iy])
        in_square = nl.square(a_tile)
        square_sum = nl.sum(in_square, axis=[1])
        mean = square_sum / a_tensor.shape[1]
        rms_reciprocal = nl.rsqrt(mean)
        out_tile = nl.multiply(a_tile, rms_reciprocal)
        out_tile[...] = nl.multiply(out_tile, g_tile)
        nl.store(out_tensor[i * 128 + ix, iy], value=out_tile)


def test_rmsnorm_tutorial_style():
    a = rng.uniform(-1, 1, size=(256, 512)).astype(np.float32)
    g = rng.uniform(0, 1, size=(256, 512)).astype(np.float32)
    out = np.zeros_like(a)
    nki.simulate_kernel(rmsnorm_kernel, a, g, out)
    a64 = a.astype(np.float64)
    want = a64 / np.sqrt(np.mean(a64 * a64, axis=1, keepdims=True)) * g
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-30)


def layernorm_kernel(input_tensor, epsilon, output_tensor):
    """LayerNorm without the affine part: mean and var = mean(x^2) - mean(x)^2 with nl.mean,
    (x - mean) * rsqrt(var + eps)."""
    i_p = nl.arange(nl.tile_size.pmax)[:, None]
    i_f = nl.arange(input_tensor.shape[1])[None, :]
    for i in nl.affine_range(math.ceil(input_tensor.shape[0] / nl.tile_size.pmax)):
        input_sb = nl.load(input_tensor[i * nl.tile_size.pmax + i_p, i_f])
        mean = nl.mean(input_sb, axis=1)
        var = nl.mean(nl.square(input_sb), axis=1) - mean * mean
        shift_scale_tensor = (input_sb - mean) * nl.rsqrt(var + epsilon)
        nl.store(output_tensor[i * nl.tile_size.pmax + i_p, i_f], value=shift_scale_tensor)


def test_layernorm_tutorial_style_on_the_rtl():
    x = rng.uniform(0, 1, size=(128, 384)).astype(np.float32)
    out = np.zeros_like(x)
    ncore.set_options(check=True)
    nki.baremetal(layernorm_kernel)(x, 1e-5, out)
    x64 = x.astype(np.float64)
    m = x64.mean(axis=1, keepdims=True)
    want = (x64 - m) / np.sqrt(x64.var(axis=1, keepdims=True) + 1e-5)
    # var = E[x^2] - E[x]^2 cancels: its float32 error (a few ulp of E[x^2] ~ 0.33) is ~1e-7
    # absolute against var ~ 1/12, so rsqrt's relative error is ~1e-6; out is O(1).
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
