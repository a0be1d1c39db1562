"""NKI's mask= parameter: a compile-time predicate over the index expressions of an instruction
(`mask=(i * 128 + i_p < n)`, several joined with `&`) that limits which elements it computes.

The elements a mask keeps are a union of boxes of the instruction's index grid (Mask.boxes): a
comparison of one axis bounds that axis; a comparison of two axes bounds one of them by the value
of the other, a free axis the instruction keeps, so runs of that axis with the same bounds are one
box each. The instruction is issued once per box, each operand and the destination cut to it (an
operand of size 1 on an axis is broadcast and stays whole). A tile the instruction creates keeps
its full shape; only the boxes are written. An index expression that runs past the end of its
tensor (the last, partial tile of a loop; a padded window) is accepted when the mask keeps the
instruction inside the tensor: the view is built box by box, and an unmasked use reports the
original out-of-bounds error.

How it works: the op decorator (maskable) makes the mask current while the op runs, a pending
result keeps the mask it was made under (see _core.Tensor), and the native calls below cut their
operands to each box. A mask of three axes in one comparison is refused with the instruction that
expresses it (nisa.affine_select).
"""
import functools

import numpy as np

import _ncore_native as _real

from . import _core


def _floordiv(a, b):
    return a // b


def _ceildiv(a, b):
    return -((-a) // b)


class Box:
    """One box of index ranges: axis -> (lo, hi) of an axis of `sizes[axis]` elements."""

    __slots__ = ("bounds", "sizes", "empty")

    def __init__(self, bounds, sizes):
        self.bounds = bounds
        self.sizes = sizes
        self.empty = any(lo >= hi for lo, hi in bounds.values())


def _bound(lo, hi, c, op, rhs):
    """[lo, hi) narrowed by c * i <= rhs (op "<=") or c * i >= rhs (op ">=")."""
    if (op == "<=") == (c > 0):
        return lo, min(hi, _floordiv(rhs, c) + 1)
    return max(lo, _ceildiv(rhs, c)), hi


class Mask:
    """The index set a mask keeps, as boxes. Comparisons of one axis bound it (one box); a
    comparison of two axes (2 * i_h + i_k >= 1) bounds one of them differently for the values of the
    other, which is enumerated: the mask is then the union of the boxes over runs of that axis with
    the same bounds (one instruction each), so the enumerated axis must be one the instruction keeps
    (not one it reduces)."""

    __slots__ = ("api", "loc", "sizes", "bounds", "pairs", "_cache")

    def __init__(self, api, loc, sizes, bounds, pairs):
        self.api, self.loc, self.sizes, self.bounds, self.pairs = api, loc, sizes, bounds, pairs
        self._cache = {}

    def boxes(self, reduced=frozenset()):
        key = frozenset(reduced)
        if key not in self._cache:
            self._cache[key] = [b for b in self._split(key) if not b.empty]
        return self._cache[key]

    def _split(self, reduced):
        full = lambda a: self.bounds.get(a, (0, self.sizes[a]))
        if not self.pairs:
            return [Box(dict(self.bounds), self.sizes)]
        by_axis = {}  # enumerated axis -> [(its coefficient, the other axis, its coefficient, op, rhs)]
        for terms, op, rhs in self.pairs:
            (a, ca), (b, cb) = terms.items()
            choices = [x for x in (a, b) if x not in reduced]
            if not choices:
                raise ValueError(f"{self.loc}: the mask of '{self.api}' compares two axes the instruction reduces: "
                                 "this model applies masks whose axes it can split into boxes")
            # a free axis if it can: a run of partitions must start where the engines allow
            e = min(choices, key=lambda x: (x == 0, self.sizes[x]))
            by_axis.setdefault(e, []).append((ca, b, cb, op, rhs) if e == a else (cb, a, ca, op, rhs))
        if any(r in by_axis for cons in by_axis.values() for _, r, _, _, _ in cons):
            raise ValueError(f"{self.loc}: the mask of '{self.api}' relates more than two index axes in a chain: this "
                             "model applies masks that bound each axis by at most one other (use nisa.affine_select)")
        # For each enumerated axis: runs of its values with the same bounds on the other axes.
        runs = []
        for e, cons in by_axis.items():
            lo_e, hi_e = full(e)
            axis_runs = []
            for v in range(lo_e, hi_e):
                bounds = {}
                for ce, r, cr, op, rhs in cons:
                    bounds[r] = _bound(*bounds.get(r, full(r)), cr, op, rhs - ce * v)
                key = tuple(sorted(bounds.items()))
                if axis_runs and axis_runs[-1][2] == key and axis_runs[-1][1] == v:
                    axis_runs[-1][1] = v + 1
                else:
                    axis_runs.append([v, v + 1, key])
            runs.append((e, axis_runs))
        boxes = [dict(self.bounds)]
        for e, axis_runs in runs:
            nxt = []
            for b in boxes:
                for v0, v1, key in axis_runs:
                    nb = dict(b)
                    nb[e] = (v0, v1)
                    for r, (lo, hi) in key:
                        plo, phi = nb.get(r, full(r))
                        nb[r] = (max(plo, lo), min(phi, hi))
                    nxt.append(nb)
            boxes = nxt
        return [Box(b, self.sizes) for b in boxes]


# An affine predicate's comparisons of an index expression d with 0, as bounds d <= k or d >= k.
_AS_BOUNDS = {"less": [("<=", -1)], "less_equal": [("<=", 0)], "greater": [(">=", 1)],
              "greater_equal": [(">=", 0)], "equal": [("<=", 0), (">=", 0)]}


def _constraints(pred, api, loc):
    for d, op in pred.terms:
        if op not in _AS_BOUNDS:
            raise ValueError(f"{loc}: the mask of '{api}' uses '!=': this model applies masks of <, <=, >, >= and ==")
        for bop, k in _AS_BOUNDS[op]:
            yield d, bop, k


def box(mask, api, loc, axes=None):
    """The Mask of a mask= argument (an nl.AffinePredicate, or a bool), or an error in NKI's terms.
    axes: {(grid rank, grid axis): instruction axis} where the operands' views place a grid axis
    elsewhere than its number (_core._affine_index)."""
    if isinstance(mask, bool):
        return None if mask else Mask(api, loc, {0: 0}, {0: (0, 0)}, [])
    from .language import AffinePredicate
    if not isinstance(mask, AffinePredicate):
        raise ValueError(f"{loc}: the mask of '{api}' must be a predicate on index expressions, such as "
                         f"(i_p < n) or (i * 128 + i_p < n) & (i_f < m), got {type(mask).__name__}")
    bounds, sizes, pairs = {}, {}, []
    for e, op, k in _constraints(mask, api, loc):
        if axes and any((e.ndim, a) in axes for a in e.terms):
            at = lambda a: axes.get((e.ndim, a), a)
            terms = {at(a): c for a, c in e.terms.items() if c != 0}
            for a in e.terms:
                sizes[at(a)] = e.sizes[a]
        else:
            terms = {(0 if a is None else a): c for a, c in e.terms.items() if c != 0}
            for a, n in e.sizes.items():
                sizes.setdefault(0 if a is None else a, n)
        rhs = k - e.start
        if not terms:  # a comparison of constants: all or nothing
            if not (0 <= rhs if op == "<=" else 0 >= rhs):
                return Mask(api, loc, {0: 0}, {0: (0, 0)}, [])
            continue
        if len(terms) > 2:
            raise ValueError(f"{loc}: the mask of '{api}' compares an expression of {len(terms)} index axes: this model "
                             "applies masks of one or two axes per comparison (use nisa.affine_select for others)")
        if len(terms) == 2:
            pairs.append((terms, op, rhs))
            continue
        (a, c), = terms.items()
        bounds[a] = _bound(*bounds.get(a, (0, sizes[a])), c, op, rhs)
    return Mask(api, loc, sizes, bounds, pairs)


class Restricted:
    """A deferred index view (_core.Tensor._defer) under a mask: built box by box (_cut), its full
    shape the one the index describes."""

    __slots__ = ("d", "full", "dtype")

    def __init__(self, d):
        self.d = d
        self.full = tuple(d[3])
        self.dtype = d[0].dtype

    @property
    def shape(self):
        return self.full


def _cut_deferred(d, b):
    base, offset, coeff, grid, err = d
    offset, grid = list(offset), list(grid)
    for a, (lo, hi) in b.bounds.items():
        if a < len(grid) and grid[a] == b.sizes[a]:
            for dim in range(len(offset)):
                offset[dim] += coeff[dim][a] * lo
            grid[a] = max(0, hi - lo)
    return base.affine(offset, coeff, grid, _core.caller())


def _cut(x, b):
    """x (a native tensor, a Restricted view, a number or None) cut to the box b."""
    if isinstance(x, Restricted):
        return _cut_deferred(x.d, b)
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
        if (lo, hi) == (0, shape[a]):
            continue
        items[a] = (lo, hi - lo, 1)
        cut = True
    return x.index(items, _core.caller()) if cut else x


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _shape(x):
    return x.full if isinstance(x, Restricted) else tuple(x.shape)


# --- the native calls, cut to the current box ---------------------------------------------------------

# Elements per partition one engine instruction takes (the ISA's size; the tracer refuses more).
MAX_FREE = 65536


def _extent(b, shape, a):
    lo, hi = b.bounds.get(a, (0, shape[a]))
    return hi - lo


def _fit(b, shape, reduced, out):
    """b, or b split along its outermost kept free axes into boxes of at most MAX_FREE elements per
    partition (a box whose reduced axes alone hold more stays whole: the instruction refuses it)."""
    ext = [_extent(b, shape, a) for a in range(len(shape))]
    if _numel(ext[1:]) <= MAX_FREE:
        out.append(b)
        return
    for a in range(1, len(shape)):
        if a in reduced or ext[a] <= 1:
            continue
        step = max(1, MAX_FREE // _numel(ext[a + 1:]))
        lo, hi = b.bounds.get(a, (0, shape[a]))
        sizes = dict(b.sizes)
        sizes[a] = shape[a]
        for s in range(lo, hi, step):
            bounds = dict(b.bounds)
            bounds[a] = (s, min(hi, s + step))
            _fit(Box(bounds, sizes), shape, reduced, out)
        return
    out.append(b)


def _boxes(m, shape, reduced=frozenset()):
    """The boxes an engine instruction over the index grid `shape` is issued for: the mask's (the
    whole grid without one), and within an nl call each cut to at most MAX_FREE elements per
    partition, as NKI's compiler tiles a high-level call (an nisa call is one instruction)."""
    boxes = m.boxes(reduced) if m is not None else [Box({}, {})]
    if not _core._state.split:
        return boxes
    out = []
    for b in boxes:
        _fit(b, shape, reduced, out)
    return out


def _masked(fn, splits=False):
    real = getattr(_real, fn.__name__)

    @functools.wraps(real)
    def call(*args):
        st = _core._state
        if st.mask is None and not (splits and st.split and fn.oversize(*args)):
            return real(*args)  # no mask, so no deferred index view among the arguments
        return fn(real, st.mask, *args)

    return call


def _splits(grid):
    """A native engine call that an nl call issues as several instructions when it is over
    MAX_FREE elements per partition; grid(*args) gives its index grid and reduced axes."""

    def deco(fn):
        def oversize(*args):
            shape, reduced = grid(*args)
            return len(_boxes(None, shape, reduced)) > 1

        fn.oversize = oversize
        return _masked(fn, splits=True)

    return deco


@_masked
def load(real, m, src, dtype, loc):
    dst = _real.ndarray([(n, False) for n in _shape(src)], dtype or src.dtype, "sbuf", "", loc)
    for b in m.boxes():
        _real.dma_copy(_cut(dst, b), _cut(src, b), loc)
    return dst


@_masked
def store(real, m, dst, value, loc):
    for b in m.boxes():
        real(_cut(dst, b), _cut(value, b), loc)


@_masked
def dma_copy(real, m, dst, src, loc):
    for b in m.boxes():
        real(_cut(dst, b), _cut(src, b), loc)


def _result(dst, like, dtype, loc):
    """dst, or the new tile an instruction on `like` makes: laid out as like (a tile), or, for an
    index view past its tensor's end, a new SBUF tile of its shape."""
    if dst is not None:
        return dst
    if isinstance(like, Restricted):
        return _real.ndarray([(n, False) for n in like.full], dtype or like.dtype, "sbuf", "", loc)
    return _real.result_tile(like, dtype or like.dtype, loc)


def _tiles(*xs):
    return [t for t in xs if isinstance(t, (_real.Tensor, Restricted))]


def _largest(*xs):
    return max(_tiles(*xs), key=lambda t: _numel(_shape(t)), default=None)


@_splits(lambda dst, op, x, y, dtype, loc: (_shape(_largest(x, y)) if _tiles(x, y) else (1,), ()))
def elementwise(real, m, dst, op, x, y, dtype, loc):
    like = _largest(x, y)
    if dst is None and dtype is None and len(_tiles(x, y)) == 2:
        dtype = _real.promote(x.dtype, y.dtype)
    dst = _result(dst, like, dtype, loc)
    for b in _boxes(m, _shape(like)):
        real(_cut(dst, b), op, _cut(x, b), _cut(y, b), None, loc)
    return dst


@_splits(lambda dst, d1, d2, op, dtype, loc: (_shape(d1), ()))
def tensor_tensor(real, m, dst, d1, d2, op, dtype, loc):
    dst = _result(dst, d1, dtype or _real.promote(d1.dtype, d2.dtype), loc)
    for b in _boxes(m, _shape(d1)):
        real(_cut(dst, b), _cut(d1, b), _cut(d2, b), op, None, loc)
    return dst


@_splits(lambda dst, data, *rest: (_shape(data), ()))
def tensor_scalar(real, m, dst, data, op0, operand0, reverse0, op1, operand1, reverse1, dtype, loc):
    dst = _result(dst, data, dtype, loc)
    for b in _boxes(m, _shape(data)):
        real(_cut(dst, b), _cut(data, b), op0, _cut(operand0, b), reverse0, op1, _cut(operand1, b), reverse1, None,
             loc)
    return dst


@_splits(lambda dst, src, dtype, loc: (_shape(src), ()))
def tensor_copy(real, m, dst, src, dtype, loc):
    dst = _result(dst, src, dtype, loc)
    for b in _boxes(m, _shape(src)):
        real(_cut(dst, b), _cut(src, b), None, loc)
    return dst


@_splits(lambda dst, value, loc: (_shape(dst), ()))
def memset(real, m, dst, value, loc):
    for b in _boxes(m, _shape(dst)):
        real(_cut(dst, b), value, loc)


@_splits(lambda dst, value, loc: (_shape(dst), ()))
def fill(real, m, dst, value, loc):
    for b in _boxes(m, _shape(dst)):
        real(_cut(dst, b), value, loc)


@_splits(lambda dst, op, data, *rest: (_shape(data), ()))
def activation(real, m, dst, op, data, bias, scale, dtype, loc):
    dst = _result(dst, data, dtype, loc)
    for b in _boxes(m, _shape(data)):
        real(_cut(dst, b), op, _cut(data, b), _cut(bias, b), _cut(scale, b), None, loc)
    return dst


@_masked
def activation_reduce(real, m, dst, op, data, reduce_op, reduce_res, bias, scale, dtype, loc):
    dst = _result(dst, data, dtype, loc)
    for b in m.boxes():
        real(_cut(dst, b), op, _cut(data, b), reduce_op, _cut(reduce_res, b), _cut(bias, b), _cut(scale, b), None,
             loc)
    return dst


def _reduced(data, axes):
    nd = len(_shape(data))
    return frozenset(a % nd for a in axes)


@_splits(lambda dst, op, data, axes, *rest: (_shape(data), _reduced(data, axes)))
def tensor_reduce(real, m, dst, op, data, axes, dtype, keepdims, loc):
    shape = _shape(data)
    nd = len(shape)
    red = _reduced(data, axes)
    if dst is None and isinstance(data, Restricted):
        kept = [1 if d in red else n for d, n in enumerate(shape) if keepdims or d not in red]
        dst = _real.ndarray([(n, False) for n in kept], dtype or data.dtype, "sbuf", "", loc)
    elif dst is None:
        # the result's layout: data with the reduced axes taken at 0 (or kept as size 1)
        like = data.index([(0, 1, 1) if (d in red and keepdims) else 0 if d in red else None for d in range(nd)], loc)
        dst = _real.result_tile(like, dtype or like.dtype, loc)
    for b in _boxes(m, shape, red):
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
def nc_matmul(real, m, dst, stationary, moving, accumulate, loc):
    raise ValueError(f"{loc}: the mask parameter of 'nc_matmul' is not supported by this model: index the "
                     "stationary and moving tiles with the range you want")


def _one_box(m, api, loc, why=""):
    """The mask's boxes for a call that applies one box at most (none: the mask keeps nothing)."""
    bs = m.boxes()
    if len(bs) > 1:
        raise ValueError(f"{loc}: the mask of '{api}' keeps more than one box: this model applies masks that keep "
                         f"one range per axis here{why}")
    return bs


@_masked
def nc_transpose(real, m, dst, data, loc):
    # The mask's axes are the data's; the result's are swapped.
    if dst is None:
        shape = _shape(data)
        dst = _real.ndarray([(shape[1], False), (shape[0], False)], "float32", "psum", "", loc)
    for b in _one_box(m, "nc_transpose", loc):
        real(_cut(dst, Box(_swap(b.bounds), _swap(b.sizes))), _cut(data, b), loc)
    return dst


@_masked
def bn_stats(real, m, dst, data, dtype, loc):
    bs = _one_box(m, "bn_stats", loc)
    if not bs:
        return dst if dst is not None else _real.ndarray([(_shape(data)[0], False), (6, False)],
                                                         dtype or "float32", "sbuf", "", loc)
    return real(dst, _cut(data, bs[0]), dtype, loc)


@_masked
def tensor_tensor_scan(real, m, dst, data0, data1, initial, op0, op1, reverse0, reverse1, dtype, loc):
    dst = _result(dst, data0, dtype, loc)
    for b in _one_box(m, "tensor_tensor_scan", loc, " (a scan runs along its whole free range)"):
        real(_cut(dst, b), _cut(data0, b), _cut(data1, b), _cut(initial, b), op0, op1, reverse0, reverse1, None, loc)
    return dst


def _swap(d):
    """Axes 0 and 1 of a {axis: value} map exchanged (a transposed instruction's)."""
    return {(1 - a if a in (0, 1) else a): v for a, v in d.items()}


def transposed(m):
    """The mask m of a 2-D instruction with its two axes swapped (None stays None)."""
    if m is None:
        return None
    return Mask(m.api, m.loc, _swap(m.sizes), _swap(m.bounds), [(_swap(t), op, rhs) for t, op, rhs in m.pairs])


class _Native:
    """_ncore_native with the calls above cut to the current mask's box."""

    def __getattr__(self, name):
        return getattr(_real, name)


native = _Native()
for _fn in (load, store, dma_copy, elementwise, tensor_tensor, tensor_scalar, tensor_copy, memset, fill, activation,
            activation_reduce, tensor_reduce, nc_matmul, nc_transpose, bn_stats, tensor_tensor_scan):
    setattr(native, _fn.__name__, _fn)


def whole(mask, api, operands=(), skip=True):
    """mask= of a call that applies a mask as all or nothing: True when the call runs (no mask, a
    true bool such as `m == 0` of a loop index, or a predicate that keeps every element of its
    index grid); False when the mask keeps nothing and the call can issue nothing (skip), else
    refused; a mask that keeps part of the grid is refused."""
    if mask is None or (isinstance(mask, (bool, np.bool_)) and mask):
        return True
    loc = _core.caller()
    if isinstance(mask, (bool, np.bool_)):
        bs, sizes = [], {}
    else:
        m = box(mask, api, loc, _view_axes(operands, {}))
        bs, sizes = m.boxes(), m.sizes
    if not bs:
        if skip:
            return False
        raise ValueError(f"{loc}: the mask parameter of '{api}' keeps nothing: this model applies it to this call "
                         "only when it keeps all of it; leave the call out instead")
    if len(bs) == 1 and all(bs[0].bounds[a] == (0, sizes[a]) for a in bs[0].bounds):
        return True
    raise ValueError(f"{loc}: the mask parameter of '{api}' keeps part of the instruction: this model applies "
                     "it only when it keeps all of it or nothing; index the tensors with the range you want instead")


def _view_axes(args, kwargs):
    """The index axes of the operands' views where they are not their grids' (_core._affine_index):
    the mask's axes are placed as the operands' are."""
    axes = {}
    for x in list(args) + list(kwargs.values()):
        got = getattr(x, "_axes", None) if isinstance(x, _core.Tensor) else None
        if got:
            axes.update(got)
    return axes


def maskable(api, nl=False):
    """Decorates an op that takes mask=: while it runs, the mask's box is current (an op called
    without a mask inside another keeps the outer one). nl: a high-level call, whose engine
    instructions are split to the size one instruction takes (_boxes)."""

    def deco(fn):
        @functools.wraps(fn)
        def op(*args, **kwargs):
            mask = kwargs.pop("mask", None)
            st = _core._state
            if mask is None and (not nl or st.split):
                return fn(*args, **kwargs)
            outer = st.mask, st.split
            if mask is not None:
                st.mask = box(mask, api, _core.caller(), _view_axes(args, kwargs))
            st.split = st.split or nl
            try:
                return fn(*args, **kwargs)
            finally:
                st.mask, st.split = outer

        return op

    return deco
