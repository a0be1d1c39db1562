"""NKI's mask= parameter: a compile-time predicate over the index expressions of an instruction
(`mask=(i * 128 + i_p < n)`, several joined with `&`) that limits which elements it computes.

A mask that bounds each axis of the instruction's index grid to a range (every comparison involves
one axis) is a box: the instruction runs on the box only, each operand and the destination cut to
it along those axes (an operand of size 1 on an axis is broadcast and stays whole). A tile the
instruction creates keeps its full shape; only the box is written. An index expression that runs
past the end of its tensor (the last, partial tile of a loop) is accepted when the mask keeps the
instruction inside the tensor: the view is built when the mask is known, and an unmasked use
reports the original out-of-bounds error.

How it works: the op decorator (maskable) makes the mask's box current while the op runs, a
pending result keeps the box it was made under (see _core.Tensor), and the native calls below cut
their operands to the current box. A mask that is not a box (i_p < i_f) is refused with the
instruction that expresses it (nisa.affine_select).
"""
import functools

import _ncore_native as _real

from . import _core


class Pred:
    """A conjunction of comparisons `expr op 0` of index expressions: what `i_p < n` returns."""

    __slots__ = ("cons",)

    def __init__(self, cons):
        self.cons = cons  # [(IndexExpr, "<=" or ">=", int)]: expr <= k or expr >= k

    def __and__(self, other):
        if not isinstance(other, Pred):
            return NotImplemented
        return Pred(self.cons + other.cons)

    __rand__ = __and__

    def __or__(self, other):
        raise ValueError("a mask joined with '|' is not a box of the index grid: this model applies masks that are "
                         "a conjunction ('&') of bounds on the index axes")

    __ror__ = __or__

    def __invert__(self):
        raise ValueError("a negated mask ('~') is not a box of the index grid: write the opposite comparison")

    def __bool__(self):
        raise ValueError("Control-flow depending on `nl.arange` or `nl.mgrid` is not supported. "
                         "(err_control_flow_condition_depending_on_arange)")


def compare(expr, other, op):
    """expr <op> other (op one of <, <=, >, >=) as a Pred; other an int or an index expression."""
    e = expr - other
    if op == "<":
        return Pred([(e, "<=", -1)])
    if op == "<=":
        return Pred([(e, "<=", 0)])
    if op == ">":
        return Pred([(e, ">=", 1)])
    return Pred([(e, ">=", 0)])


def _floordiv(a, b):
    return a // b


def _ceildiv(a, b):
    return -((-a) // b)


class Box:
    """The index ranges a mask keeps: axis -> (lo, hi) of an axis of `size` elements."""

    __slots__ = ("bounds", "sizes", "empty")

    def __init__(self, bounds, sizes):
        self.bounds = bounds
        self.sizes = sizes
        self.empty = any(lo >= hi for lo, hi in bounds.values())


def box(mask, api, loc):
    """The Box of a mask (a Pred), or an error in NKI's terms."""
    if isinstance(mask, bool):
        return None if mask else Box({0: (0, 0)}, {0: 0})
    if not isinstance(mask, Pred):
        raise ValueError(f"{loc}: the mask of '{api}' must be a predicate on index expressions, such as "
                         f"(i_p < n) or (i * 128 + i_p < n) & (i_f < m), got {type(mask).__name__}")
    bounds, sizes = {}, {}
    for e, op, k in mask.cons:
        terms = {(0 if a is None else a): c for a, c in e.terms.items() if c != 0}
        esizes = {(0 if a is None else a): n for a, n in e.sizes.items()}
        rhs = k - e.start
        if not terms:  # a comparison of constants: all or nothing
            holds = 0 <= rhs if op == "<=" else 0 >= rhs
            if not holds:
                return Box({0: (0, 0)}, {0: 0})
            continue
        if len(terms) > 1:
            raise ValueError(f"{loc}: the mask of '{api}' compares an expression of several index axes: this model "
                             "applies masks that bound each axis to a range (use nisa.affine_select for others)")
        (a, c), = terms.items()
        n = esizes[a]
        lo, hi = bounds.get(a, (0, n))
        sizes[a] = n
        # c * i <= rhs or c * i >= rhs, for an integer i in [0, n)
        if (op == "<=") == (c > 0):
            hi = min(hi, _floordiv(rhs, c) + 1)
        else:
            lo = max(lo, _ceildiv(rhs, c))
        bounds[a] = (lo, hi)
    return Box(bounds, sizes)


class Restricted:
    """A deferred index view (_core.Tensor._defer) cut to the current box: the native view and the
    full shape the index describes."""

    __slots__ = ("t", "full")

    def __init__(self, t, full):
        self.t = t
        self.full = full


def deferred_view(d, b):
    """The view (base, offset, coeff, grid, error) of a deferred index, cut to the box b."""
    base, offset, coeff, grid, err = d
    offset, grid = list(offset), list(grid)
    for a, (lo, hi) in b.bounds.items():
        if a < len(grid) and grid[a] == b.sizes[a]:
            for dim in range(len(offset)):
                offset[dim] += coeff[dim][a] * lo
            grid[a] = max(0, hi - lo)
    if b.empty:
        return None
    return Restricted(base.affine(offset, coeff, grid, _core.caller()), tuple(d[3]))


def _cut(x, b):
    """x (a native tensor, a Restricted view, a number or None) cut to the box b."""
    if isinstance(x, Restricted):
        return x.t
    if not isinstance(x, _real.Tensor):
        return x
    shape = x.shape
    items = [None] * len(shape)
    cut = False
    for a, (lo, hi) in b.bounds.items():
        if a >= len(shape) or shape[a] == 1:
            continue
        if shape[a] != b.sizes[a]:
            raise ValueError(f"{_core.caller()}: the mask bounds axis {a} of the index grid ({b.sizes[a]} elements) "
                             f"but operand {x} has {shape[a]} on that axis")
        items[a] = (lo, hi - lo, 1)
        cut = True
    return x.index(items, _core.caller()) if cut else x


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _full(x):
    return x.t if isinstance(x, Restricted) else x


def _shape(x):
    return x.full if isinstance(x, Restricted) else tuple(x.shape)


# --- the native calls, cut to the current box ---------------------------------------------------------

def _masked(fn):
    real = getattr(_real, fn.__name__)

    @functools.wraps(real)
    def call(*args):
        b = _core._state.mask
        if b is None:
            return real(*[_full(a) for a in args])
        return fn(real, b, *args)

    return call


@_masked
def load(real, b, src, dtype, loc):
    dst = _real.ndarray([(n, False) for n in _shape(src)], dtype or _full(src).dtype, "sbuf", "", loc)
    if not b.empty:
        _real.dma_copy(_cut(dst, b), _cut(src, b), loc)
    return dst


@_masked
def store(real, b, dst, value, loc):
    if not b.empty:
        real(_cut(dst, b), _cut(value, b), loc)


@_masked
def dma_copy(real, b, dst, src, loc):
    if not b.empty:
        real(_cut(dst, b), _cut(src, b), loc)


def _result(dst, like, dtype, loc):
    if dst is not None:
        return dst
    return _real.result_tile(like, dtype or like.dtype, loc)


@_masked
def elementwise(real, b, dst, op, x, y, dtype, loc):
    tiles = [t for t in (x, y) if isinstance(t, _real.Tensor)]
    like = max(tiles, key=lambda t: _numel(t.shape))
    dst = _result(dst, like, dtype, loc)
    if not b.empty:
        real(_cut(dst, b), op, _cut(x, b), _cut(y, b), None, loc)
    return dst


@_masked
def tensor_tensor(real, b, dst, d1, d2, op, dtype, loc):
    dst = _result(dst, d1, dtype, loc)
    if not b.empty:
        real(_cut(dst, b), _cut(d1, b), _cut(d2, b), op, None, loc)
    return dst


@_masked
def tensor_scalar(real, b, dst, data, op0, operand0, reverse0, op1, operand1, reverse1, dtype, loc):
    dst = _result(dst, data, dtype, loc)
    if not b.empty:
        real(_cut(dst, b), _cut(data, b), op0, _cut(operand0, b), reverse0, op1, _cut(operand1, b), reverse1, None,
             loc)
    return dst


@_masked
def tensor_copy(real, b, dst, src, dtype, loc):
    dst = _result(dst, src, dtype, loc)
    if not b.empty:
        real(_cut(dst, b), _cut(src, b), None, loc)
    return dst


@_masked
def memset(real, b, dst, value, loc):
    if not b.empty:
        real(_cut(dst, b), value, loc)


@_masked
def fill(real, b, dst, value, loc):
    if not b.empty:
        real(_cut(dst, b), value, loc)


@_masked
def activation(real, b, dst, op, data, bias, scale, dtype, loc):
    dst = _result(dst, data, dtype, loc)
    if not b.empty:
        real(_cut(dst, b), op, _cut(data, b), _cut(bias, b), _cut(scale, b), None, loc)
    return dst


@_masked
def activation_reduce(real, b, dst, op, data, reduce_op, reduce_res, bias, scale, dtype, loc):
    dst = _result(dst, data, dtype, loc)
    if not b.empty:
        real(_cut(dst, b), op, _cut(data, b), reduce_op, _cut(reduce_res, b), _cut(bias, b), _cut(scale, b), None,
             loc)
    return dst


@_masked
def tensor_reduce(real, b, dst, op, data, axes, dtype, keepdims, loc):
    shape = _shape(data)
    nd = len(shape)
    red = {a % nd for a in axes}
    if dst is None:
        # the result's layout: data with the reduced axes taken at 0 (or kept as size 1)
        like = _full(data).index([(0, 1, 1) if (d in red and keepdims) else 0 if d in red else None
                                  for d in range(nd)], loc)
        dst = _real.result_tile(like, dtype or like.dtype, loc)
    if not b.empty:
        # The mask's axes are the data's: a bounded reduced axis sums fewer elements, a bounded
        # kept axis cuts the result too (at its place in the result).
        kept, sizes = {}, {}
        for a, bound in b.bounds.items():
            if a not in red:
                at = a if keepdims else a - sum(1 for r in red if r < a)
                kept[at], sizes[at] = bound, b.sizes[a]
        real(_cut(dst, Box(kept, sizes)), op, _cut(data, b), axes, None, keepdims, loc)
    return dst


@_masked
def nc_matmul(real, b, dst, stationary, moving, accumulate, loc):
    raise ValueError(f"{loc}: the mask parameter of 'nc_matmul' is not supported by this model: index the "
                     "stationary and moving tiles with the range you want")


@_masked
def nc_transpose(real, b, dst, data, loc):
    raise ValueError(f"{loc}: the mask parameter of 'nc_transpose' is not supported by this model: index the "
                     "tile with the range you want")


class _Native:
    """_ncore_native with the calls above cut to the current mask's box."""

    def __getattr__(self, name):
        return getattr(_real, name)


native = _Native()
for _fn in (load, store, dma_copy, elementwise, tensor_tensor, tensor_scalar, tensor_copy, memset, fill, activation,
            activation_reduce, tensor_reduce, nc_matmul, nc_transpose):
    setattr(native, _fn.__name__, _fn)


def maskable(api):
    """Decorates an op that takes mask=: while it runs, the mask's box is current (an op called
    without a mask inside another keeps the outer one)."""

    def deco(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            mask = kwargs.pop("mask", None)
            if mask is None:
                return fn(*args, **kwargs)
            st = _core._state
            outer = st.mask
            st.mask = box(mask, api, _core.caller())
            try:
                return fn(*args, **kwargs)
            finally:
                st.mask = outer

        return op

    return deco
