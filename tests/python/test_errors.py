"""Kernels that break a rule raise what NKI raises (ValueError, in NKI's words), pointing at the
kernel's own file and line; nothing from C++ escapes as a crash."""
import inspect
import os

import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

HERE = os.path.basename(__file__)


def line_of(fn, text):
    src, start = inspect.getsourcelines(fn)
    for i, l in enumerate(src):
        if text in l:
            return start + i
    raise AssertionError(text)


def raises(kernel, *args, match):
    with pytest.raises(ValueError, match=match) as e:
        nki.simulate_kernel(kernel, *args)
    return str(e.value)


def test_partitions_over_128_from_the_handouts_row_chunk_256():
    from kernels import vector_add_tiled
    a = np.zeros(25600, np.float32)
    msg = raises(vector_add_tiled.func, a, a, 256, match="number of partitions 256 exceed architecture limitation of 128.")
    src = vector_add_tiled.func
    assert f"kernels.py:{line_of(src, 'a_tile = nl.ndarray((ROW_CHUNK, 1)')}:" in msg


def test_error_points_at_the_kernels_line():
    @nki.jit
    def k(a):
        t = nl.ndarray((200, 4), dtype=a.dtype, buffer=nl.sbuf)
        return t

    msg = raises(k, np.zeros((4, 4), np.float32), match="number of partitions 200 exceed")
    assert f"{HERE}:{line_of(k.func, 'nl.ndarray((200, 4)')}:" in msg


def test_matmul_limits_in_nkis_words():
    @nki.jit
    def k(l, r):
        ps = nisa.nc_matmul(nl.load(l), nl.load(r))
        out = nl.ndarray((128, 1024), dtype=nl.float32, buffer=nl.shared_hbm)
        nl.store(out, value=nl.copy(ps))
        return out

    with pytest.raises(ValueError, match="512"):
        nki.simulate_kernel(k, np.zeros((128, 128), np.float32), np.zeros((128, 1024), np.float32))


def test_dma_from_psum_refused():
    @nki.jit
    def k(a):
        p = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.psum)
        out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(src=p, dst=out)
        return out

    raises(k, np.zeros((128, 64), np.float32), match="Expected operand 'src' of 'dma_copy' to be in address space")


def test_out_of_bounds_index():
    @nki.jit
    def k(a):
        t = nl.load(a[0:200])
        return a

    msg = raises(k, np.zeros((128, 4), np.float32), match="Out-of-bound access")
    assert f"{HERE}:{line_of(k, 'a[0:200]')}:" in msg


def test_unmodelled_activation_is_named():
    @nki.jit
    def k(a):
        return nisa.activation(np.cbrt, nl.load(a))

    raises(k, np.zeros((128, 4), np.float32), match="np.cbrt is not supported by this model")


def test_unmodelled_alu_op_is_named():
    @nki.jit
    def k(a):
        return nisa.tensor_scalar(nl.load(a), np.hypot, 2.0)

    raises(k, np.zeros((128, 4), np.float32), match="'hypot' is not an ALU operator this model has")


def test_reduce_with_a_comparison_is_refused():
    @nki.jit
    def k(a):
        return nisa.tensor_reduce(nl.equal, nl.load(a), axis=1)

    raises(k, np.zeros((128, 4), np.float32), match="tensor_reduce")


def test_truth_value_of_a_tile():
    @nki.jit
    def k(a):
        if nl.load(a):
            pass
        return a

    raises(k, np.zeros((128, 4), np.float32), match="truth value")


def test_float64_inputs_refused_clearly():
    @nki.jit
    def k(a):
        return a

    with pytest.raises(ValueError, match="float64"):
        nki.simulate_kernel(k, np.zeros(4))


def test_api_outside_a_kernel():
    with pytest.raises(RuntimeError, match="outside of a kernel"):
        nl.ndarray((128, 4), dtype=nl.float32, buffer=nl.sbuf)


def test_assert_in_kernel_propagates():
    from kernels import vector_add_stream
    a = np.zeros(1000, np.float32)
    with pytest.raises(AssertionError, match="not a multiple"):
        nki.simulate_kernel(vector_add_stream, a, a)
