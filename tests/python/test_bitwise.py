"""The bitvec ALU ops on integer tiles: nl.bitwise_and, bitwise_or, bitwise_xor, invert,
left_shift, right_shift (logical), the tile operators & | ^ ~ << >>, and the bitwise reductions.
They work on the elements' bits within the dtype (every operand and the result one integer dtype);
each is checked against NumPy on the golden model, and one kernel with all of them on the RTL in
check mode."""
import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

rng = np.random.default_rng(17)
INT_TYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32]
UNSIGNED = {np.int8: np.uint8, np.int16: np.uint16, np.int32: np.uint32}


def rand(dt, shape=(128, 40)):
    info = np.iinfo(dt)
    return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)


def logical_right(a, s):
    """a >> s with zeros shifted in, within a's width (NumPy's >> is arithmetic for signed types)."""
    u = UNSIGNED.get(a.dtype.type, a.dtype.type)
    bits = 8 * a.dtype.itemsize
    r = np.where(s >= bits, 0, a.view(u) >> np.minimum(s, bits - 1).astype(u)).astype(u)
    return r.view(a.dtype)


def left(a, s):
    bits = 8 * a.dtype.itemsize
    u = UNSIGNED.get(a.dtype.type, a.dtype.type)
    return np.where(s >= bits, 0, a.view(u) << np.minimum(s, bits - 1).astype(u)).astype(u).view(a.dtype)


@nki.jit
def bitwise_kernel(a, b, s):
    """and, or, xor of two tiles; invert; shifts by a tile of amounts and by 3; the operators."""
    ta, tb, ts = nl.load(a), nl.load(b), nl.load(s)
    outs = []
    for r in (nl.bitwise_and(ta, tb), nl.bitwise_or(ta, tb), nl.bitwise_xor(ta, tb), nl.invert(ta),
              nl.left_shift(ta, ts), nl.right_shift(ta, ts), nl.left_shift(ta, 3), nl.right_shift(ta, 3),
              (ta & tb) | (~tb ^ ta), ta << 1, ta >> 2):
        o = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


def bitwise_reference(a, b, s):
    three, one, two = (np.full(a.shape, k, a.dtype) for k in (3, 1, 2))
    return [a & b, a | b, a ^ b, ~a, left(a, s), logical_right(a, s), left(a, three), logical_right(a, three),
            (a & b) | (~b ^ a), left(a, one), logical_right(a, two)]


@pytest.mark.parametrize("dt", INT_TYPES)
def test_bitwise_ops_every_integer_type(dt):
    a, b = rand(dt), rand(dt)
    s = rng.integers(0, 40, size=a.shape).astype(dt)  # shift amounts, some past the width
    got = nki.simulate_kernel(bitwise_kernel, a, b, s)
    for k, (g, w) in enumerate(zip(got, bitwise_reference(a, b, s))):
        assert g.dtype == dt
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")


def test_bitwise_ops_on_the_rtl_in_check_mode():
    for dt in (np.int8, np.uint16, np.int32):
        a, b = rand(dt), rand(dt)
        s = rng.integers(0, 40, size=a.shape).astype(dt)
        ncore.set_options(check=True)
        try:
            got = nki.baremetal(bitwise_kernel)(a, b, s)
        finally:
            ncore.set_options(check=None)
        for g, w in zip(got, bitwise_reference(a, b, s)):
            np.testing.assert_array_equal(g, w)


@nki.jit
def reduce_bits(a):
    """bitwise_or, bitwise_and and bitwise_xor over the free axis (nisa.tensor_reduce)."""
    t = nl.load(a)
    outs = []
    for op in (nl.bitwise_or, nl.bitwise_and, nl.bitwise_xor):
        o = nl.ndarray((a.shape[0], 1), dtype=a.dtype, buffer=nl.shared_hbm)
        nl.store(o, nisa.tensor_reduce(op, t, axis=(1,), keepdims=True))
        outs.append(o)
    return tuple(outs)


@pytest.mark.parametrize("dt", [np.uint8, np.int16, np.uint32])
def test_bitwise_reductions(dt):
    a = rand(dt, (128, 33))
    got = nki.simulate_kernel(reduce_bits, a)
    for g, uf in zip(got, (np.bitwise_or, np.bitwise_and, np.bitwise_xor)):
        np.testing.assert_array_equal(g[:, 0], uf.reduce(a, axis=1))


@nki.jit
def masked_scalar(a):
    """tensor_scalar with two bitvec ops: (a & 0xF0) >> 4."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, nisa.tensor_scalar(nl.load(a), nl.bitwise_and, 0xF0, op1=nl.right_shift, operand1=4))
    return out


def test_tensor_scalar_with_two_bitvec_ops():
    a = rand(np.uint8)
    np.testing.assert_array_equal(nki.simulate_kernel(masked_scalar, a), (a & 0xF0) >> 4)


# A bitwise call the model refuses: the input's dtype, the call, and the message.
REFUSED = {
    "float_tiles": (np.float32, lambda t: nl.bitwise_and(t, t),
                    r"'bitwise_and' of 'tensor_tensor' is a bitwise operation on integers: its operands and result "
                    r"must have one integer dtype, but data1 is float32"),
    "bitvec_and_arithmetic": (np.int32, lambda t: nisa.tensor_scalar(t, nl.bitwise_and, 3, op1=nl.add, operand1=1),
                              r"cannot combine the bitwise operation 'bitwise_and' with the arithmetic operation 'add'"),
    "inexact_immediate": (np.int32, lambda t: nl.bitwise_and(t, 0x7FFFFFFF), r"the integer 2147483647 of nl.bitwise_and is not exact"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_refused_bitwise_calls(case):
    dt, body, match = REFUSED[case]

    @nki.jit
    def k(a):
        nl.store(a, body(nl.load(a)))
        return a

    with pytest.raises(ValueError, match=match):
        nki.simulate_kernel(k, np.zeros((8, 8), dt))
