"""Every ISA call of today's NKI (destination first) gives the bits its neuronxcc.nki spelling gives
on the same inputs: one semantics, two spellings. The neuronxcc spellings are checked against
NumPy in test_compose.py, test_idioms.py and test_math.py; here each case also checks its result
against NumPy where the call's meaning is plain."""
import numpy as np
import pytest

import nki
import nki.isa as nisa
import nki.language as nl

import neuronxcc.nki as old_nki
import neuronxcc.nki.isa as old_nisa
import neuronxcc.nki.language as old_nl

RNG = np.random.default_rng(11)
P, F = 32, 64


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def positive(*shape):
    return (RNG.random(shape) + 0.5).astype(np.float32)


def tile(shape, dtype=nl.float32, buffer=nl.sbuf):
    return nl.ndarray(shape, dtype, buffer=buffer)


def to_sbuf(t):
    """A PSUM result copied to an SBUF tile (what a kernel stores)."""
    s = tile(t.shape, t.dtype)
    nisa.tensor_copy(s, t)
    return s


# name -> (inputs, today's body (SBUF tiles of the inputs) -> a tile, the older spelling's body,
#          NumPy's result or None)
CASES = {
    "tensor_copy": ((normal(P, F),),
                    lambda a: (nisa.tensor_copy(d := tile(a.shape), a), d)[1],
                    lambda a: old_nisa.tensor_copy(a),
                    lambda a: a),
    "tensor_copy_predicated": (
        (normal(P, F), normal(P, F), (RNG.random((P, F)) > 0.5).astype(np.uint8)),
        lambda a, b, p: (nisa.tensor_copy_predicated(b, a, p), b)[1],
        lambda a, b, p: (old_nisa.tensor_copy_predicated(dst=b, src=a, predicate=p), b)[1],
        lambda a, b, p: np.where(p != 0, a, b)),
    "nc_transpose": ((normal(P, F),),
                     lambda a: to_sbuf((nisa.nc_transpose(d := tile((F, P), buffer=nl.psum), a), d)[1]),
                     lambda a: old_nl.copy(old_nisa.nc_transpose(a)),
                     lambda a: a.T),
    "tensor_tensor": ((normal(P, F), normal(P, F)),
                      lambda a, b: (nisa.tensor_tensor(d := tile(a.shape), a, b, nl.subtract), d)[1],
                      lambda a, b: old_nisa.tensor_tensor(a, b, old_nl.subtract),
                      lambda a, b: a - b),
    "tensor_scalar": ((normal(P, F),),
                      lambda a: (nisa.tensor_scalar(d := tile(a.shape), a, nl.multiply, 2.0, op1=nl.add,
                                                    operand1=1.0), d)[1],
                      lambda a: old_nisa.tensor_scalar(a, old_nl.multiply, 2.0, op1=old_nl.add, operand1=1.0),
                      lambda a: a * 2 + 1),
    "tensor_reduce": ((normal(P, F),),
                      lambda a: (nisa.tensor_reduce(d := tile((P, 1)), nl.maximum, a, axis=1), d)[1],
                      lambda a: old_nisa.tensor_reduce(old_nl.maximum, a, axis=1, keepdims=True),
                      lambda a: a.max(axis=1, keepdims=True)),
    "activation": ((normal(P, F), normal(P, 1)),
                   lambda a, b: (nisa.activation(d := tile(a.shape), nl.exp, a, bias=b, scale=0.5), d)[1],
                   lambda a, b: old_nisa.activation(old_nl.exp, a, bias=b, scale=0.5),
                   None),
    "activation_reduce": ((normal(P, F),),
                          lambda a: (nisa.activation_reduce(tile(a.shape), nl.tanh, a, nl.add, r := tile((P, 1))),
                                     r)[1],
                          lambda a: (old_nisa.activation_reduce(old_nl.tanh, a, reduce_op=old_nl.add,
                                                                reduce_res=(r := old_nl.ndarray((P, 1), old_nl.float32))),
                                     r)[1],
                          None),
    "tensor_tensor_scan": ((positive(P, F), normal(P, F)),
                           lambda a, b: (nisa.tensor_tensor_scan(d := tile(a.shape), a, b, 0.5, nl.multiply, nl.add),
                                         d)[1],
                           lambda a, b: old_nisa.tensor_tensor_scan(a, b, 0.5, old_nl.multiply, old_nl.add),
                           None),
    "reciprocal": ((positive(P, F),),
                   lambda a: (nisa.reciprocal(d := tile(a.shape), a), d)[1],
                   lambda a: old_nisa.reciprocal(a),
                   None),
    "scalar_tensor_tensor": ((normal(P, F), normal(P, F)),
                             lambda a, b: (nisa.scalar_tensor_tensor(d := tile(a.shape), a, nl.multiply, 3.0, nl.add, b),
                                           d)[1],
                             lambda a, b: old_nisa.scalar_tensor_tensor(data=a, op0=old_nl.multiply, operand0=3.0,
                                                                        op1=old_nl.add, operand1=b),
                             lambda a, b: a * 3 + b),
    "tensor_scalar_reduce": ((normal(P, F),),
                             lambda a: (nisa.tensor_scalar_reduce(tile(a.shape), a, nl.multiply, 2.0, nl.add,
                                                                  reduce_res=(r := tile((P, 1)))), r)[1],
                             lambda a: (old_nisa.tensor_scalar_reduce(
                                 data=a, op0=old_nl.multiply, operand0=2.0, reduce_op=old_nl.add,
                                 reduce_res=(r := old_nl.ndarray((P, 1), old_nl.float32))), r)[1],
                             None),
    "bn_stats": ((normal(P, F),),
                 lambda a: (nisa.bn_stats(d := tile((P, 6)), a), d)[1],
                 lambda a: old_nisa.bn_stats(a),
                 None),
    "bn_aggr": ((normal(P, 12),),
                lambda a: (nisa.bn_aggr(d := tile((P, 2)), a), d)[1],
                lambda a: old_nisa.bn_aggr(a),
                None),
    "max8": ((normal(P, F),),
             lambda a: (nisa.max8(d := tile((P, 8)), a), d)[1],
             lambda a: old_nisa.max8(src=a),
             lambda a: -np.sort(-a, axis=1)[:, :8]),
    "nc_find_index8": ((normal(P, F),),
                       lambda a: (nisa.nc_find_index8(d := tile((P, 8)), a, a[:, 0:8]), d)[1],
                       lambda a: old_nisa.nc_find_index8(data=a, vals=a[:, 0:8]),
                       lambda a: np.tile(np.arange(8, dtype=np.float32), (P, 1))),
    "nc_match_replace8": ((normal(P, F),),
                          lambda a: (nisa.nc_match_replace8(d := tile(a.shape), a, a[:, 4:12], -7.0), d)[1],
                          lambda a: old_nisa.nc_match_replace8(data=a, vals=a[:, 4:12], imm=-7.0),
                          lambda a: np.concatenate([a[:, :4], np.full((P, 8), -7.0, np.float32), a[:, 12:]], axis=1)),
    "dma_transpose": ((normal(P, F),),
                      None,  # reads HBM: its kernels are below
                      None,
                      lambda a: a.T),
}


@nki.jit
def today(a, b=None, c=None, name=None):
    arrays = [x for x in (a, b, c) if x is not None]
    ins = []
    for a in arrays:
        t = tile(a.shape, a.dtype)
        nisa.dma_copy(t, a)
        ins.append(t)
    if name == "dma_transpose":
        r = tile((arrays[0].shape[1], arrays[0].shape[0]), arrays[0].dtype)
        nisa.dma_transpose(r, arrays[0])
    else:
        r = CASES[name][1](*ins)
    out = nl.ndarray(r.shape, r.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(out, r)
    return out


@old_nki.jit
def older(a, b=None, c=None, name=None):
    arrays = [x for x in (a, b, c) if x is not None]
    if name == "dma_transpose":
        r = old_nisa.dma_transpose(arrays[0])
    else:
        r = CASES[name][2](*[old_nl.load(a) for a in arrays])
    out = old_nl.ndarray(r.shape, r.dtype, buffer=old_nl.shared_hbm)
    old_nl.store(out, r)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_same_bits_in_both_spellings(name):
    arrays, _, _, ref = CASES[name]
    got = nki.simulate(today)(*arrays, name=name)
    want = old_nki.simulate_kernel(older, *arrays, name=name)
    np.testing.assert_array_equal(got, want)
    assert np.isfinite(got).all() and np.any(got != 0)
    if ref is not None:
        np.testing.assert_array_equal(got, ref(*arrays))
