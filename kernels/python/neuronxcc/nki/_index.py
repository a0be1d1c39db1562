"""NKI's index expressions: nl.arange and nl.mgrid, affine sums of them, and their comparisons
(the predicates of masks and of nisa.affine_select)."""
import builtins

import numpy as np

from . import _base

# --- index expressions: nl.arange, nl.mgrid --------------------------------------------------------

class IndexExpr:
    """An affine index over the axes of an index grid: start + sum of coeff[a] * i_a for i_a in
    range(size[a]). nl.arange(n)[:, None] is axis 0 of a 2-D grid and nl.arange(n)[None, :] axis 1;
    adding an int shifts it, multiplying by an int strides it, adding two expressions of one grid
    (2 * i + j) combines their axes."""

    def __init__(self, start, terms, sizes, ndim):
        self.start = start
        self.terms = terms    # axis -> coefficient (axis None: not yet placed on a grid)
        self.sizes = sizes    # axis -> range size
        self.ndim = ndim      # rank of the grid it is placed on (None: a 1-D nl.arange)

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if self.ndim is not None:
            raise IndexError("an index expression is placed on its axis once")
        axis = None
        for i, k in enumerate(key):
            if isinstance(k, builtins.slice) and k == builtins.slice(None):
                if axis is not None:
                    raise IndexError("nl.arange(n)[...] places the range on one axis: [:, None] or [None, :]")
                axis = i
            elif k is not None:
                raise IndexError("nl.arange(n)[...] takes ':' and None only, e.g. [:, None]")
        if axis is None:
            raise IndexError("nl.arange(n)[...] needs one ':'")
        return IndexExpr(self.start, {axis: self.terms[None]}, {axis: self.sizes[None]}, len(key))

    def __add__(self, k):
        if isinstance(k, IndexExpr):
            if self.ndim != k.ndim or self.ndim is None:
                raise ValueError("adding index expressions needs both placed on one grid (nl.arange(n)[:, None], "
                                 "nl.arange(m)[None, :] or nl.mgrid)")
            terms, sizes = dict(self.terms), dict(self.sizes)
            for a, c in k.terms.items():
                if a in sizes and sizes[a] != k.sizes[a]:
                    raise ValueError(f"axis {a} of the index grid has two sizes, {sizes[a]} and {k.sizes[a]}")
                terms[a] = terms.get(a, 0) + c
                sizes[a] = k.sizes[a]
            return IndexExpr(self.start + k.start, terms, sizes, self.ndim)
        return IndexExpr(self.start + _base.as_int(k, "an offset of an index expression"), self.terms, self.sizes,
                         self.ndim)

    __radd__ = __add__

    def __sub__(self, k):
        return self + (-k if isinstance(k, IndexExpr) else -_base.as_int(k, "an offset of an index expression"))

    def __rsub__(self, k):
        return (-self) + k

    def __neg__(self):
        return self * -1

    def __mul__(self, k):
        if isinstance(k, IndexExpr):
            raise ValueError("multiplying two index expressions is not affine")
        k = _base.integer(k, "a factor of an index expression")
        return IndexExpr(self.start * k, {a: c * k for a, c in self.terms.items()}, self.sizes, self.ndim)

    __rmul__ = __mul__

    def __bool__(self):
        raise ValueError("Control-flow depending on `nl.arange` or `nl.mgrid` is not supported. "
                         "(err_control_flow_condition_depending_on_arange)")

    # Comparisons make affine predicates: nisa.affine_select's pred (i_p - i_f >= 0) and the mask=
    # of any call (i * 128 + i_p < n), several joined with &.
    def _cmp(self, other, op):
        if not isinstance(other, (IndexExpr, int, np.integer)):
            return NotImplemented
        d = self - (other if isinstance(other, IndexExpr) else int(other))
        if d.ndim is None:
            raise ValueError("a predicate needs its index expressions placed on a grid (nl.arange(n)[:, None], "
                             "nl.arange(m)[None, :] or nl.mgrid)")
        return AffinePredicate([(d, op)])

    __lt__ = lambda self, o: self._cmp(o, "less")
    __le__ = lambda self, o: self._cmp(o, "less_equal")
    __gt__ = lambda self, o: self._cmp(o, "greater")
    __ge__ = lambda self, o: self._cmp(o, "greater_equal")
    __eq__ = lambda self, o: self._cmp(o, "equal")
    __ne__ = lambda self, o: self._cmp(o, "not_equal")
    __hash__ = object.__hash__

    def _native_affine(self):
        """(start, coefficient per grid axis, grid sizes) for the C++ API (a 1-D nl.arange: [n, 1])."""
        if self.ndim is None:
            return (self.start, [self.terms[None], 0], [self.sizes[None], 1])
        return (self.start, [self.terms.get(a, 0) for a in builtins.range(self.ndim)],
                [self.sizes.get(a, 1) for a in builtins.range(self.ndim)])


class AffinePredicate:
    """Comparisons of affine index expressions with 0, all of which must hold (combine with &)."""

    def __init__(self, terms):
        self.terms = terms

    def __and__(self, other):
        if not isinstance(other, AffinePredicate):
            return NotImplemented
        return AffinePredicate(self.terms + other.terms)

    def __bool__(self):
        raise ValueError("Control-flow depending on `nl.arange` or `nl.mgrid` is not supported. "
                         "(err_control_flow_condition_depending_on_arange)")


def arange(*args):
    """nl.arange(n) or nl.arange(start, stop[, step]): an index expression (place it on an axis
    with [:, None] or [None, :])."""
    r = builtins.range(*[_base.integer(a, "an argument of nl.arange") for a in args])
    return IndexExpr(r.start, {None: r.step}, {None: len(r)}, None)


class _Grid(tuple):
    """The index expressions of an nl.mgrid, one per axis: unpack them (i_p, i_f = nl.mgrid[...])
    or name them, .p the partition axis and .x, .y, .z the free axes in order."""

    def _axis(self, i, name):
        if i >= len(self):
            raise AttributeError(f"this index grid has {len(self)} axes: it has no .{name}")
        return self[i]

    p = property(lambda self: self._axis(0, "p"))
    x = property(lambda self: self._axis(1, "x"))
    y = property(lambda self: self._axis(2, "y"))
    z = property(lambda self: self._axis(3, "z"))


class _MGrid:
    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        ranges = []
        for k in key:
            if not isinstance(k, builtins.slice):
                raise IndexError("nl.mgrid takes slices: nl.mgrid[0:128, 0:512]")
            ranges.append(builtins.range(0 if k.start is None else k.start, k.stop, 1 if k.step is None else k.step))
        # Dense, as NumPy's mgrid: every component has the whole grid's shape (an iota of
        # 3 * g.y + g.z is a tile of all of g's axes).
        sizes = {i: len(r) for i, r in enumerate(ranges)}
        out = [IndexExpr(r.start, {i: r.step}, sizes, len(key)) for i, r in enumerate(ranges)]
        return _Grid(out) if len(out) > 1 else out[0]


mgrid = _MGrid()
