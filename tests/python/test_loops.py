"""Loops traced once: an nl.affine_range / sequential_range body runs in Python for its first
iteration only, with a symbolic index, and the tracer replays it for the others. Each kernel here
is traced with its loops so and with nl.static_range (unrolled by Python, one iteration at a time,
as every loop was traced before): the two Programs must be the same. The bodies count how often
Python ran them, which tells which way each loop was traced."""
import os

import numpy as np
import pytest

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl

import ncore

HERE = os.path.basename(__file__)


def same_program(kernel, *args, **kwargs):
    """Traces kernel with rng=nl.affine_range (and seq=nl.sequential_range) and with both
    nl.static_range; asserts the Programs are the same. Returns the Python body counts of each."""
    runs = {}
    progs = {}
    for mode in ("symbolic", "static"):
        ran = []
        rng = nl.affine_range if mode == "symbolic" else nl.static_range
        seq = nl.sequential_range if mode == "symbolic" else nl.static_range
        progs[mode] = ncore.trace(kernel, *args, rng=rng, seq=seq, ran=ran, **kwargs)
        runs[mode] = ran
    assert progs["symbolic"].code() == progs["static"].code()
    assert progs["symbolic"].instruction_count() > 0
    return runs["symbolic"], runs["static"]


def simulated(kernel, *args):
    """The kernel's outputs on the golden model, its loops traced once."""
    return nki.simulate_kernel(kernel, *args, rng=nl.affine_range, seq=nl.sequential_range, ran=[])


def check(kernel, a, python_iterations, unrolled_iterations, expected):
    """The same Program both ways, Python running the loop bodies so many times each way, and
    the outputs exactly `expected`."""
    sym, static = same_program(kernel, a)
    assert len(sym) == python_iterations and len(static) == unrolled_iterations
    np.testing.assert_array_equal(simulated(kernel, a), expected)


@nki.jit
def nested_matmul(lhsT, rhs, rng=None, seq=None, ran=None):
    """result[M, N] = lhsT.T @ rhs: row and column tiles in affine loops, the contraction in a
    sequential loop accumulating in one PSUM tile; double buffers picked with % and //."""
    K, M = lhsT.shape
    _, N = rhs.shape
    result = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    out_bufs = nl.ndarray((2, nl.par_dim(128), 256), dtype=lhsT.dtype, buffer=nl.sbuf)
    NT = N // 256
    for m in rng(M // 128):
        for n in rng(NT):
            ran.append("mn")
            ps = nl.zeros((128, 256), nl.float32, buffer=nl.psum)
            for k in seq(K // 128):
                ran.append("k")
                a = nl.load(lhsT[k * 128:(k + 1) * 128, m * 128:(m + 1) * 128])
                b = nl.ndarray((128, 256), dtype=rhs.dtype, buffer=nl.sbuf)
                b[...] = nl.load(rhs[k * 128:(k + 1) * 128, n * 256:(n + 1) * 256])
                ps += nisa.nc_matmul(a, b)
            t = (m * NT + n) % 2
            o = out_bufs[t]
            o[...] = nisa.tensor_copy(ps)
            q = (m * NT + n) // NT  # == m
            nl.store(result[q * 128:(q + 1) * 128, n * 256:(n + 1) * 256], value=o)
    return result


def test_nested_loops_trace_once_to_the_unrolled_program():
    rng = np.random.default_rng(1)
    lhsT = rng.random((384, 256), dtype=np.float32)
    rhs = rng.random((384, 512), dtype=np.float32)
    sym, static = same_program(nested_matmul, lhsT, rhs)
    assert sym.count("mn") == 1 and sym.count("k") == 1  # each body once
    assert static.count("mn") == 4 and static.count("k") == 12
    # And the replayed Program computes the product (golden model, against NumPy in float64).
    out = simulated(nested_matmul, lhsT, rhs)
    ref = lhsT.astype(np.float64).T @ rhs.astype(np.float64)
    np.testing.assert_allclose(out, ref, rtol=1e-5)


@nki.jit
def strided(a, rng=None, seq=None, ran=None):
    """Index arithmetic: affine sums, // and % by constants, nl.ds, nl.arange with an offset, a
    comparison that holds in every iteration, a mod_alloc tensor indexed by the loop index."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    buf = nl.ndarray((4, nl.par_dim(P), 64), dtype=a.dtype, buffer=nki.compiler.sbuf.mod_alloc(
        base_addr=0, num_free_tiles=(4,)))
    ip = nl.arange(P)[:, None]
    jf = nl.arange(32)[None, :]
    for i in rng(F // 64):
        ran.append("i")
        assert i >= 0 and i < F // 64  # holds in every iteration: no fallback
        h, lo = i // 2, i % 2
        buf[i % 4] = nl.load(a[:, nl.ds((2 * h + lo) * 64, 64)])
        x = nl.ndarray((P, 64), dtype=a.dtype, buffer=nl.sbuf)
        x[:, 0:32] = nisa.tensor_scalar(buf[i % 4][:, 32:64], nl.multiply, 2.0)
        x[ip, jf + 32] = nisa.tensor_copy(buf[i % 4][ip, jf])
        nl.store(out[:, i * 64:i * 64 + 64], value=x)
    return out


def test_index_arithmetic_traces_once():
    a = np.arange(128 * 512, dtype=np.float32).reshape(128, 512)
    ref = np.concatenate([np.concatenate([2 * a[:, c + 32:c + 64], a[:, c:c + 32]], axis=1)
                          for c in range(0, 512, 64)], axis=1)
    check(strided, a, 1, 8, ref)


@nki.jit
def branchy(a, rng=None, seq=None, ran=None):
    """A body with Python control flow on its index and min() of it: traced by Python for every
    iteration (as before), the first one symbolically."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in rng(2):
        for i in rng((F + 99) // 100):
            ran.append(i)
            w = min(100, F - i * 100)  # the last chunk is shorter
            t = nl.load(a[:, i * 100:i * 100 + w])
            if i == 0:
                t = nl.add(t, 1.0)
            nl.store(out[:, i * 100:i * 100 + w], value=t)
    return out


def test_control_flow_on_the_index_falls_back_to_python():
    a = np.ones((128, 350), np.float32)
    sym, static = same_program(branchy, a)
    assert len(static) == 8
    # The inner loop in Python (its first iteration symbolic), the outer replays it.
    assert isinstance(sym[0], nl._core.Sym) and sym[1:] == [1, 2, 3]
    out = simulated(branchy, a)
    ref = a.copy()
    ref[:, :100] += 1
    np.testing.assert_array_equal(out, ref)


@nki.jit
def early_break(a, rng=None, seq=None, ran=None):
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in rng(F // 64):
        ran.append(i)
        nl.store(out[:, i * 64:(i + 1) * 64], value=nl.load(a[:, i * 64:(i + 1) * 64]))
        break
    return out


def test_break_in_the_traced_iteration_ends_the_loop():
    sym, static = same_program(early_break, np.ones((128, 256), np.float32))
    assert len(sym) == len(static) == 1


@nki.jit
def overrun(a, rng=None, seq=None, ran=None):
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in rng(F // 64 + 1):
        ran.append(i)
        t = nl.load(a[:, i * 64:(i + 1) * 64])  # the last iteration reads past a
        nl.store(out[:, i * 64:(i + 1) * 64], value=t)
    return out


def test_an_error_in_a_replayed_iteration_points_at_its_line():
    a = np.ones((128, 256), np.float32)
    line = next(n for n, text in enumerate(open(__file__), 1) if "the last iteration reads past a" in text)
    messages = {}
    for rng in (nl.affine_range, nl.static_range):
        ran = []
        with pytest.raises(ValueError) as e:
            ncore.trace(overrun, a, rng=rng, seq=rng, ran=ran)
        messages[rng] = str(e.value)
        assert len(ran) == (1 if rng is nl.affine_range else 5)
    assert messages[nl.affine_range] == messages[nl.static_range]
    assert f"{HERE}:{line}:" in messages[nl.affine_range]


def test_loop_index_arithmetic():
    seen = {}

    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(6):
            seen["i"] = i
            seen["affine"] = 3 * i + 2 - i  # 2 i + 2
            seen["sub"] = (i + 1) * 4 - 4 * i  # no longer depends on i
            seen["div"] = (4 * i + 2) // 2  # 2 i + 1, exactly
            seen["mod"] = (4 * i + 3) % 2  # 1
            seen["always"] = (i < 6, i >= 0, i // 8 == 0, (i % 3) < 3, i != -1)
            for j in nl.affine_range(3):
                seen["nested"] = (i * 3 + j < 18, i + j <= 7)
            nl.store(out[:, i * 16:(i + 1) * 16], value=nl.load(a[:, i * 16:(i + 1) * 16]))
        return out

    ncore.trace(k, np.ones((128, 96), np.float32))
    assert isinstance(seen["i"], nl._core.Sym) and isinstance(seen["affine"], nl._core.Sym)
    # After the loop, as after a Python loop, the index has its last iteration's value.
    assert int(seen["i"]) == 5 and int(seen["affine"]) == 12
    assert seen["sub"] == 4 and type(seen["sub"]) is int
    assert type(seen["mod"]) is int and seen["mod"] == 1
    assert isinstance(seen["div"], nl._core.Sym)
    assert seen["always"] == (True, True, True, True, True)
    assert seen["nested"] == (True, True)


@nki.jit
def same_line_twice(a, rng=None, seq=None, ran=None):
    """A line allocating twice in one iteration: which ring the second tile takes depends on when
    Python drops the first, so the loop falls back to Python after its first iteration."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in rng(F // 128):
        ran.append(i)
        for h in range(2):
            t = nl.load(a[:, i * 128 + h * 64:i * 128 + h * 64 + 64])
            nl.store(out[:, i * 128 + h * 64:i * 128 + h * 64 + 64], value=nl.add(t, t))
    return out


def test_allocations_that_depend_on_lifetimes_fall_back_to_python():
    sym, static = same_program(same_line_twice, np.ones((128, 512), np.float32))
    assert len(sym) == len(static) == 4


def test_a_loop_left_by_an_error_does_not_disturb_the_next_trace():
    @nki.jit
    def bad(a):
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        for i in nl.affine_range(2):
            for j in nl.affine_range(2):
                nl.store(out[:, j * 64:(j + 1) * 64], value=nl.load(a[:, j * 64:(j + 1) * 64]))
                raise KeyError("stop")
        return out

    kept = []
    for _ in range(2):
        with pytest.raises(KeyError) as e:
            ncore.trace(bad, np.ones((128, 128), np.float32))
        kept.append(e)  # the traceback keeps the loops' iterators (and their C++ loops) alive
    a = np.ones((128, 384), np.float32)
    same_program(nested_matmul, np.ones((256, 128), np.float32), np.ones((256, 512), np.float32))
    same_program(strided, np.ones((128, 512), np.float32))
    kept.clear()  # now their loops exit, long after their trace
    same_program(branchy, a)


@nki.jit
def view_accumulate(lhsT, rhs, rng=None, seq=None, ran=None):
    """ps[j] += nc_matmul(...): the view assigned back to itself is the same view in every
    iteration (made the same way), so no copy and no fallback."""
    ps = nl.ndarray((2, nl.par_dim(128), 512), dtype=nl.float32, buffer=nl.psum)
    for j in rng(2):
        for kt in seq(2):
            ran.append(kt)
            ps[j] += nisa.nc_matmul(nl.load(lhsT[kt * 128:(kt + 1) * 128]), nl.load(rhs[kt * 128:(kt + 1) * 128]))
    out = nl.ndarray((2, 128, 512), dtype=nl.float32, buffer=nl.shared_hbm)
    for j in rng(2):
        nl.store(out[j], value=nl.copy(ps[j]))
    return out


def test_a_view_accumulated_into_is_traced_once():
    rng = np.random.default_rng(2)
    lhsT, rhs = rng.random((256, 128), dtype=np.float32), rng.random((256, 512), dtype=np.float32)
    sym, static = same_program(view_accumulate, lhsT, rhs)
    assert len(sym) == 1 and len(static) == 4
    out = simulated(view_accumulate, lhsT, rhs)
    ref = lhsT.astype(np.float64).T @ rhs.astype(np.float64)
    np.testing.assert_allclose(out, np.stack([ref, ref]), rtol=1e-5)


@nki.jit
def spmd_scratch(a, rng=None, seq=None, ran=None):
    """nl.shared_hbm scratch allocated in a loop of an SPMD kernel: which tensor each allocation
    is (the first instance's, in order) is Python state, so Python traces every iteration."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in rng(F // 64):
        ran.append(i)
        s = nl.ndarray((P, 64), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=s, src=a[:, i * 64:(i + 1) * 64])
        nisa.dma_copy(dst=out[:, i * 64:(i + 1) * 64], src=s)
    return out


def test_shared_scratch_in_a_loop_of_an_spmd_kernel():
    sym, static = same_program(spmd_scratch[2], np.ones((128, 256), np.float32))
    assert len(sym) == len(static) == 8


@nki.jit
def outer_branch(a, rng=None, seq=None, ran=None):
    """An outer loop that falls back to Python (a branch on its index) around an inner loop that
    is still traced once in each of the outer loop's iterations."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in rng(3):
        row = a[:, i * 128:(i + 1) * 128]
        if i == 1:
            nl.store(out[:, i * 128:i * 128 + 64], value=nl.multiply(nl.load(row[:, 0:64]), 3.0))
        for j in rng(2):
            ran.append(j)
            t = nl.load(row[:, j * 64:(j + 1) * 64])
            nl.store(out[:, i * 128 + j * 64:i * 128 + (j + 1) * 64], value=nl.add(t, t))
    return out


def test_inner_loops_are_traced_once_inside_an_outer_loop_traced_by_python():
    a = np.arange(128 * 384, dtype=np.float32).reshape(128, 384)
    check(outer_branch, a, 3, 6, 2 * a)  # the second store of columns 128..191 wins


@nki.jit
def masked_causal_rows(a, rng=None, seq=None, ran=None):
    """Composite calls and masks in a loop traced once: a causal mask (affine_select on the tile's
    global rows and columns), a softmax, and a store of the rows inside the tensor only."""
    R, C = a.shape
    out = nl.ndarray((R, C), dtype=a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(C)[None, :]
    for t in rng((R + 127) // 128):
        ran.append("t")
        x = nl.load(a[t * 128 + i_p, i_f], mask=(t * 128 + i_p < R))
        y = nisa.affine_select(pred=(t * 128 + i_p - i_f >= 0), on_true_tile=x, on_false_value=-1e4)
        nl.store(out[t * 128 + i_p, i_f], value=nl.softmax(y, axis=1), mask=(t * 128 + i_p < R))
    return out


@pytest.mark.parametrize("rows,python_iterations", [(384, 1), (300, 3)])
def test_composite_calls_and_masks_in_a_loop_traced_once(rows, python_iterations):
    # 384 rows: the mask keeps every row of every tile, the same box each iteration (traced once).
    # 300 rows: the last tile's box is smaller, a value that varies: the loop runs in Python.
    a = np.random.default_rng(5).uniform(-1, 1, (rows, 64)).astype(np.float32)
    sym, static = same_program(masked_causal_rows, a)
    assert len(sym) == python_iterations and len(static) == 3
    x = np.where(np.arange(rows)[:, None] >= np.arange(64)[None, :], a.astype(np.float64), -1e4)
    want = np.exp(x - x.max(axis=1, keepdims=True))
    want /= want.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(simulated(masked_causal_rows, a), want, rtol=1e-5, atol=1e-7)


@nki.jit
def strided_columns(a, rng=None, seq=None, ran=None):
    """Copies the 64-column blocks 1, 3, 5 of `a` (a range with a start and a step); the block
    index is asked for as a Python int, so a loop traced once falls back to Python after its
    first iteration."""
    P, F = a.shape
    out = nl.ndarray((P, F), dtype=a.dtype, buffer=nl.shared_hbm)
    zero = nl.zeros((P, F), dtype=a.dtype, buffer=nl.sbuf)
    nl.store(out, value=zero)
    for i in rng(1, F // 64, 2):
        ran.append(int(i))
        nl.store(out[:, i * 64:(i + 1) * 64], value=nl.load(a[:, i * 64:(i + 1) * 64]))
    return out


def test_a_range_with_a_start_and_a_step_yields_its_values():
    a = np.arange(128 * 384, dtype=np.float32).reshape(128, 384)
    sym, static = same_program(strided_columns, a)
    assert sym == static == [1, 3, 5]
    ref = np.zeros_like(a)
    for i in (1, 3, 5):
        ref[:, i * 64:(i + 1) * 64] = a[:, i * 64:(i + 1) * 64]
    np.testing.assert_array_equal(simulated(strided_columns, a), ref)
