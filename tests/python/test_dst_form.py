"""The destination-first spelling of the ISA calls that NKI's newer releases use
(nisa.tensor_copy(dst=t, src=s), nisa.nc_matmul(dst=psum, stationary=a, moving=b)): the instruction
writes into dst; nc_matmul's accumulate as NKI defines it (None: the first write to a PSUM location
overwrites, later ones add); activation with reduce_res; a keyword a call does not take is an
error, never dropped. Each against NumPy on the golden model; one kernel on the RTL in check mode."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(3)


@nki.jit
def attention_dst_form(q, k, v):
    """softmax(q.T @ k) @ v.T for (128, 128) q, k, v, every ISA call in the dst= form."""
    d, s = q.shape
    out = nl.ndarray((s, d), dtype=q.dtype, buffer=nl.shared_hbm)
    qs = nl.ndarray(q.shape, dtype=q.dtype, buffer=nl.sbuf)
    ks = nl.ndarray(k.shape, dtype=k.dtype, buffer=nl.sbuf)
    vs = nl.ndarray(v.shape, dtype=v.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=qs, src=q)
    nisa.dma_copy(dst=ks, src=k)
    nisa.dma_copy(dst=vs, src=v)
    scores_p = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=scores_p, stationary=qs, moving=ks)
    scores = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=scores, src=scores_p)
    mx = nl.ndarray((s, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=mx, op=nl.maximum, data=scores, axis=(1,))
    shifted = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=shifted, data=scores, op0=nl.subtract, operand0=mx)
    e = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.sbuf)
    total = nl.ndarray((s, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(dst=e, op=nl.exp, data=shifted, reduce_op=nl.add, reduce_res=total)
    inv = nl.ndarray((s, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.reciprocal(dst=inv, data=total)
    p = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=p, data=e, op0=nl.multiply, operand0=inv)
    pt_p = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=pt_p, data=p)
    pt = nl.ndarray((s, s), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=pt, src=pt_p)
    vt_p = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_transpose(dst=vt_p, data=vs)
    vt = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=vt, src=vt_p)
    o_p = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=o_p, stationary=pt, moving=vt)
    o = nl.ndarray((s, d), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=o, src=o_p)
    nisa.dma_copy(dst=out, src=o)
    return out


def attention_reference(q, k, v):
    s = q.astype(np.float64).T @ k
    s = np.exp(s - s.max(axis=1, keepdims=True))
    return (s / s.sum(axis=1, keepdims=True)) @ v.astype(np.float64).T


def test_attention_in_the_dst_form():
    q, k, v = (rng.random((128, 128), np.float32) for _ in range(3))
    got = nki.simulate_kernel(attention_dst_form, q, k, v)
    np.testing.assert_allclose(got, attention_reference(q, k, v), rtol=1e-5, atol=1e-6)


def test_attention_in_the_dst_form_on_the_rtl_equals_the_golden_model():
    q, k, v = (rng.random((128, 128), np.float32) for _ in range(3))
    ncore.set_options(check=True)
    try:
        got = nki.baremetal(attention_dst_form)(q, k, v)
    finally:
        ncore.set_options(check=None)
    np.testing.assert_array_equal(got, nki.simulate_kernel(attention_dst_form, q, k, v))


@nki.jit
def matmul_accumulate(a, b, mode):
    """sum over four K tiles of a[kt].T @ b[kt] into one PSUM tile with nc_matmul(dst=...): mode
    'auto' (accumulate=None on a fresh tile), 'true' (on a zeroed tile), 'false' (each overwrites:
    the last tile's product)."""
    out = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.shared_hbm)
    ps = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.psum)
    if mode == "true":
        nisa.memset(dst=ps, value=0.0)
    for kt in nl.affine_range(4):
        at = nl.load(a[kt])
        bt = nl.load(b[kt])
        if mode == "auto":
            nisa.nc_matmul(dst=ps, stationary=at, moving=bt)
        else:
            nisa.nc_matmul(dst=ps, stationary=at, moving=bt, accumulate=mode == "true")
    res = nl.ndarray((64, 96), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=ps)
    nl.store(out, res)
    return out


@pytest.mark.parametrize("mode", ["auto", "true", "false"])
def test_nc_matmul_accumulate(mode):
    a = (rng.integers(-4, 4, (4, 128, 64))).astype(np.float32)
    b = (rng.integers(-4, 4, (4, 128, 96))).astype(np.float32)
    got = nki.simulate_kernel(matmul_accumulate, a, b, mode)
    prods = np.einsum("tkm,tkn->tmn", a, b)  # small integers: exact
    want = prods[-1] if mode == "false" else prods.sum(axis=0)
    np.testing.assert_array_equal(got, want)


@nki.jit
def memset_and_copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=2.5)
    x = nl.load(a)
    nisa.tensor_tensor(dst=t, data1=t, data2=x, op=nl.multiply)
    nl.store(out, t)
    return out


def test_memset_and_tensor_tensor_in_the_dst_form():
    a = rng.standard_normal((128, 32)).astype(np.float32)
    np.testing.assert_array_equal(nki.simulate_kernel(memset_and_copy, a), a * np.float32(2.5))


def test_an_unknown_keyword_is_an_error_not_dropped():
    @nki.jit
    def k(a):
        t = nl.load(a)
        r = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=t, flavour=3)
        return a

    with pytest.raises(TypeError, match=r"nisa.tensor_copy\(\) got an unexpected keyword argument 'flavour'"):
        nki.simulate_kernel(k, np.zeros((8, 8), np.float32))
