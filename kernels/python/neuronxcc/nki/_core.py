"""The Python side of the front end: tensors, source locations, the trace in progress and the
assignment semantics of NKI.

Every instruction is traced by the C++ library (_ncore_native), the same code the C++ kernels
call. This module only turns Python's spelling into those calls:

- A call that produces a tile (nl.load, nl.add, nisa.tensor_copy, nisa.nc_matmul, ...) returns a
  *pending* tile: the instruction is known but not yet emitted. `x[...] = nl.load(a)` then emits
  it with `x[...]` as its destination (no copy), `psum += nisa.nc_matmul(a, b)` accumulates into
  `psum`, and any other use of the tile (an operand, an attribute, a slice) emits it into a new
  tile of its own. Before the next instruction of any kind is traced, every pending tile is
  emitted into its own tile, so program order is the kernel's order.
- Source locations: each call records the kernel's own file and line (the first frame outside
  this package), for errors and for the listing and profile.
"""
import threading

import numpy as np

import _ncore_native as _native

from ._base import (_DTYPES, _NEURONXCC_DIR, _NO_LOC, Dtype, Sym, _relative, as_int, caller,  # noqa: F401
                    dims, dtype, dtype_name, integer, location)
from ._index import AffinePredicate, IndexExpr

# --- the trace in progress ------------------------------------------------------------------------

class _TraceState(threading.local):
    def __init__(self):
        self.active = False
        self.pending = []  # pending tiles, oldest first
        # The SPMD launch grid (kernel[2, 2]) and the instance being traced: every instance runs
        # on this one NeuronCore, in one Program, one after the other (see _run.trace).
        self.grid = ()
        self.pid = ()
        self.shared = []      # the shared_hbm tensors of the first instance, in allocation order
        self.shared_next = 0  # how many the instance being traced has allocated
        # The namespace of the kernel being traced: "neuronxcc" (neuronxcc.nki: loops traced once,
        # calls return tiles) or "nki" (today's NKI: destination-first calls, loops run as Python).
        self.dialect = "neuronxcc"
        self.private_hbm = set()  # today's NKI: the names of the nl.hbm / nl.private_hbm tensors


def shared_hbm_tensor(shape, dtype, make):
    """An nl.shared_hbm tensor: made by the first SPMD instance, and the same tensor (one per
    allocation, in order) for every later instance, as NKI shares it among the instances.
    Which one it is depends on Python state, so the loops around it are not replayed."""
    _native.loops_need_python()
    k = _state.shared_next
    _state.shared_next += 1
    if k == len(_state.shared):
        if any(_state.pid):
            raise ValueError(f"SPMD instance {_state.pid} allocates shared_hbm tensor number {k + 1}, which the "
                             f"first instance did not: every instance must allocate the same shared tensors")
        _state.shared.append(make())
        return _state.shared[k]
    t = _state.shared[k]
    if tuple(t.shape) != tuple(shape) or t.dtype != dtype:
        raise ValueError(f"SPMD instance {_state.pid} allocates shared_hbm tensor number {k + 1} as "
                         f"{tuple(shape)} {dtype}, the first instance as {tuple(t.shape)} {t.dtype}: the "
                         f"instances share it, so they must agree")
    return t


_state = _TraceState()


def in_trace():
    return _state.active


def require_trace(api, dialect="neuronxcc"):
    """Refuses a call outside a kernel being traced, and a neuronxcc.nki call inside a kernel of
    today's `nki` (NKI 0.4's error) or the reverse (dialect None: either namespace's)."""
    if not _state.active:
        if dialect == "nki":
            raise RuntimeError(f"'{api}' called outside of a kernel being traced: call the kernel through nki.jit "
                               "or nki.simulate")
        raise RuntimeError(f"'{api}' called outside of a kernel being traced: call the kernel through nki.jit, "
                           "nki.baremetal, nki.benchmark or nki.simulate_kernel")
    if dialect is not None and _state.dialect != dialect:
        if dialect == "neuronxcc":
            raise RuntimeError(f"{caller()}: neuronxcc.nki '{api}' used inside an nki kernel: the neuronxcc.nki "
                               "namespace cannot be used in kernels of the nki namespace (import nki.language as nl, "
                               "import nki.isa as nisa)")
        raise RuntimeError(f"{caller()}: nki '{api}' used inside a neuronxcc.nki kernel: call the kernel through "
                           "nki.jit of `import nki`, or use neuronxcc.nki's own call")


def flush():
    """Emits every pending tile into a tile of its own (before any other instruction is traced)."""
    while _state.pending:
        _state.pending[0]._materialize()


def native(x):
    """The native tensor of a Tensor (emitting it if pending), or x itself (a number, None)."""
    if isinstance(x, Tensor):
        return x._native()
    return x


def invoke(ns, name, dst, args, loc, accumulate=None, mask=None):
    """Runs the call ns.name of the call surface (nki/calls.hpp) with arguments in its plain forms
    (kernels/python/call_binding.cpp), into the native view dst when given."""
    return _native.invoke(ns, name, dst, accumulate, mask, False, args, loc)


def operand(x):
    """A tensor_scalar/activation operand: None, a float, or a native tile."""
    if isinstance(x, Tensor):
        return x._native()
    if x is None:
        return None
    if isinstance(x, (bool, int, float, np.integer, np.floating, Sym)):
        return float(x)
    raise TypeError(f"expected a tile or a number, got {type(x).__name__}")


# --- tensors ----------------------------------------------------------------------------------------

def _fast_index(key):
    """The native index list of a key of plain ints and slices with non-negative bounds (the common
    case), or None for anything else."""
    if type(key) is not tuple:
        key = (key,)
    out = []
    for k in key:
        tk = type(k)
        if tk is int or tk is Sym:
            if k < 0:
                return None
            out.append(k)
        elif tk is slice:
            start, stop, step = k.start, k.stop, k.step
            if step is not None and step != 1:
                return None
            if start is None:
                if stop is None:
                    out.append(None)
                    continue
                start = 0
            if type(start) not in _INTS or start < 0 or (stop is not None and (type(stop) not in _INTS or stop < 0)):
                return None
            out.append((start, -1, 1) if stop is None else (start, max(0, stop - start), 1))
        else:
            return None
    return out


_INTS = (int, Sym)


def _expand_ellipsis(key, ndim):
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if n_ell:
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        fill = ndim - (len(key) - 1)
        if fill < 0:
            raise IndexError(f"too many indices for a tensor of {ndim} dimensions")
        key = key[:i] + (slice(None),) * fill + key[i + 1:]
    return key


def _norm_index(key, ndim):
    """Python indices (ints, slices, ...) as the native index list."""
    items = []
    for k in _expand_ellipsis(key, ndim):
        if isinstance(k, slice):
            items.append(_slice_item(k))
        elif isinstance(k, (int, np.integer, Sym)):
            items.append(as_int(k))
        elif k is None:
            raise IndexError("None (np.newaxis) is not an index of an NKI tensor")
        else:
            raise IndexError(f"an NKI tensor is indexed by ints, slices, '...' and nl.arange/nl.mgrid expressions, "
                             f"not {type(k).__name__}")
    return items


def _affine_index(key, shape, axes=None, clamp=True):
    """A key with nl.arange/nl.mgrid expressions as (offset, coeff, grid) for the native affine view.
    The view's axes are the index axes the expressions use, as NKI shapes a tile from its
    indices: those of the partition index's grid in axis order (a size-1 axis of the partition
    index first), then those of the other grids (nl.mgrid calls of another rank) in order of use,
    each in axis order; then one per slice and per 1-D nl.arange. A grid axis no index uses is
    not a view axis (nl.mgrid[0:128, 0:n, 0:1]'s last component indexing a size-1 partition
    dimension loads a (1, n) tile). `axes`, a dict, receives {(grid rank, grid axis): view axis}
    where that differs from the grid axis (for the masks of the call the view is given to, see
    _calls.mask_terms). clamp False: a slice past the dimension's end keeps its size (a view a mask keeps
    inside, see _calls)."""
    key = _expand_ellipsis(key, len(shape))
    if len(key) > len(shape):
        raise IndexError(f"too many indices for a tensor of {len(shape)} dimensions: {len(key)} given")
    key = key + (slice(None),) * (len(shape) - len(key))
    exprs = [k for k in key if isinstance(k, IndexExpr) and k.ndim is not None]
    used = {}  # (grid rank, grid axis) -> size
    for k in exprs:
        for a in k.terms:
            ka, size = (k.ndim, a), k.sizes[a]
            if used.setdefault(ka, size) != size:
                raise IndexError(f"axis {a} of the index grid has two sizes, {used[ka]} and {size}")
    first = key[0] if isinstance(key[0], IndexExpr) and key[0].ndim is not None else None
    primary = first.ndim if first is not None else (exprs[0].ndim if exprs else None)
    # A size-1 axis the partition index uses leads (moving a size-1 axis reorders no element); the
    # other axes keep their grid's order, so nl.arange(m)[None, :] indexing the partitions still
    # makes a transposing view.
    view = [(primary, a) for a in sorted(first.terms) if first.sizes[a] == 1] if first is not None else []
    view += sorted(ka for ka in used if ka[0] == primary and ka not in view)
    for k in exprs:  # the other grids, in order of use
        view += sorted(ka for ka in used if ka[0] == k.ndim and ka not in view)
    used = {ka: used[ka] for ka in view}
    pos = {ka: i for i, ka in enumerate(used)}
    if axes is not None:
        axes.update({ka: i for ka, i in pos.items() if ka != (primary, i)})
    sizes = dict(enumerate(used.values()))
    naxes = len(sizes)
    terms = []
    for d, k in enumerate(key):
        if isinstance(k, IndexExpr):
            if k.ndim is None:  # a 1-D nl.arange: an axis of its own
                t = {naxes: k.terms[None]}
                sizes[naxes] = k.sizes[None]
                naxes += 1
            else:
                t = {pos[(k.ndim, a)]: c for a, c in k.terms.items()}
            terms.append((k.start, t))
        elif isinstance(k, slice):
            start, stop, step = k.indices(shape[d])
            if not clamp and k.stop is not None and as_int(k.stop) > shape[d] and start >= 0 and step > 0:
                stop = as_int(k.stop)
            n = max(0, (stop - start + step - 1) // step) if step > 0 else 0
            if n == 0:
                raise IndexError(f"empty slice {k} on dimension {d}")
            sizes[naxes] = n
            terms.append((start, {naxes: step}))
            naxes += 1
        elif isinstance(k, (int, np.integer, Sym)):
            i = as_int(k)
            terms.append((i + shape[d] if i < 0 else i, {}))
        else:
            raise IndexError(f"an NKI tensor is indexed by ints, slices, '...' and nl.arange/nl.mgrid expressions, "
                             f"not {type(k).__name__}")
    grid = [sizes.get(a, 1) for a in range(naxes)]
    offset = [t[0] for t in terms]
    coeff = [[t[1].get(a, 0) for a in range(naxes)] for t in terms]
    return offset, coeff, grid


def _slice_item(s):
    step = 1 if s.step is None else integer(s.step, "a slice step")
    if step <= 0:
        raise IndexError(f"slice step {step}: steps must be positive")
    if s.start is None and s.stop is None and step == 1:
        return None
    start = 0 if s.start is None else as_int(s.start, "a slice start")
    stop = None if s.stop is None else as_int(s.stop, "a slice stop")
    if start < 0 or (stop is not None and stop < 0):
        return _NegSlice(start, stop, step)
    if stop is None:
        return (start, -1, step)
    size = max(0, (stop - start + step - 1) // step)
    return (start, size, step)


class _NegSlice:
    """A slice with negative bounds, resolved against the dimension's size."""

    def __init__(self, start, stop, step):
        self.start, self.stop, self.step = start, stop, step


def _resolve_neg(items, shape):
    out = []
    for d, it in enumerate(items):
        if isinstance(it, _NegSlice):
            n = shape[d]
            start, stop, step = slice(it.start, it.stop, it.step).indices(n)
            size = max(0, (stop - start + step - 1) // step)
            out.append((start, size, step))
        else:
            out.append(it)
    return out


def _has_index_expr(key):
    return any(isinstance(k, IndexExpr) for k in (key if isinstance(key, tuple) else (key,)))


def _has_long_slice(key, shape):
    """Whether a slice of key runs past its dimension's end (nl.ds(i * 128, 128) of a last tile)."""
    ks = _expand_ellipsis(key if isinstance(key, tuple) else (key,), len(shape))
    return any(isinstance(k, slice) and k.stop is not None and (k.step or 1) > 0 and as_int(k.stop) > n
               for k, n in zip(ks, shape))


def _groups(pattern, what):
    """An einops pattern ("p (a b) c") as a list of groups of names."""
    out, cur = [], None
    for tok in pattern.replace("(", " ( ").replace(")", " ) ").split():
        if tok == "(":
            if cur is not None:
                raise ValueError(f"{caller()}: rearrange: nested parentheses in {what} {pattern!r}")
            cur = []
        elif tok == ")":
            if cur is None:
                raise ValueError(f"{caller()}: rearrange: unbalanced parentheses in {what} {pattern!r}")
            out.append(cur)
            cur = None
        elif cur is not None:
            cur.append(tok)
        else:
            out.append([tok])
    if cur is not None:
        raise ValueError(f"{caller()}: rearrange: unbalanced parentheses in {what} {pattern!r}")
    return out


def _rearrange(t, src_pattern, dst_pattern, sizes):
    src, dst = _groups(src_pattern, "src_pattern"), _groups(dst_pattern, "dst_pattern")
    shape = list(t.shape)
    if len(src) != len(shape):
        raise ValueError(f"{caller()}: rearrange: src_pattern {src_pattern!r} has {len(src)} dimensions, the tensor "
                         f"{len(shape)}")
    names = [n for g in src for n in g]
    if sorted(names) != sorted(n for g in dst for n in g) or len(set(names)) != len(names):
        raise ValueError(f"{caller()}: rearrange: {src_pattern!r} and {dst_pattern!r} must name the same dimensions, "
                         "each once")
    for g, n in zip(src, shape):
        unknown = [x for x in g if x not in sizes]
        known = 1
        for x in g:
            known *= sizes.get(x, 1)
        if len(unknown) > 1:
            raise ValueError(f"{caller()}: rearrange: group ({' '.join(g)}) needs fixed_sizes for all but one name")
        if unknown:
            if n % known:
                raise ValueError(f"{caller()}: rearrange: dimension {n} does not split by {known}")
            sizes[unknown[0]] = n // known
        elif known != n:
            raise ValueError(f"{caller()}: rearrange: group ({' '.join(g)}) is {known}, the dimension {n}")
    v = t._reshaped([sizes[n] for n in names]) if len(names) != len(shape) else t
    order = [names.index(n) for g in dst for n in g]
    if order != list(range(len(names))):
        v = v.permute(order)
    merged = []
    for g in dst:
        n = 1
        for x in g:
            n *= sizes[x]
        merged.append(n)
    return v._reshaped(merged) if len(merged) != len(names) else v


def _today_key(key, t):
    """Today's NKI's ranks of an indexed view: on chip an integer on the partition dimension keeps
    it (size 1), and an integer on a free dimension drops it unless the view would have fewer than
    2 dimensions (then the last one is kept, size 1); in HBM an integer drops its dimension, down to
    1 dimension. Integers become the size-1 slices that keep them."""
    key = list(_expand_ellipsis(key, t.ndim))
    ints = [d for d, k in enumerate(key) if isinstance(k, (int, np.integer, Sym)) and not isinstance(k, bool)]
    if not ints:
        return tuple(key)

    def keep(d):
        i = as_int(key[d])
        if type(i) is not Sym and i < 0:
            i += t.shape[d]
        key[d] = slice(i, i + 1)

    least = 1
    if t.on_chip:
        least = 2
        if ints[0] == 0:
            keep(0)
            ints = ints[1:]
    kept = t.ndim - len(ints)
    while ints and kept < least:
        keep(ints.pop())
        kept += 1
    return tuple(key)


def _view(t, key, loc, axes=None):
    """The native view t[key] (axes: see _affine_index)."""
    items = _fast_index(key)
    if items is not None:
        return t.index(items, loc)
    ks = key if isinstance(key, tuple) else (key,)
    if any(isinstance(k, IndexExpr) for k in ks):
        offset, coeff, grid = _affine_index(key, t.shape, axes)
        return t.affine(offset, coeff, grid, loc)
    return t.index(_resolve_neg(_norm_index(key, t.ndim), t.shape), loc)


def _with_axes(t, axes):
    if axes:
        t._axes = axes
    return t


class Tensor:
    """A tensor of a kernel being traced: an HBM tensor, an SBUF or PSUM tile, or a view of one.
    Shapes, dtypes, indexing, reshape and the arithmetic operators work as in NKI."""

    __slots__ = ("_t", "_emit", "_loc", "_kind", "_defer", "_axes", "_psum", "__weakref__")
    # NumPy scalars on the left (np.float16(2) * t) hand the operation to the tile's reflected
    # operator instead of treating the tile as an array.
    __array_ufunc__ = None

    def __init__(self, t=None, emit=None, loc=None, kind=None, defer=None, psum=False):
        self._t = t
        self._emit = emit  # pending: emit(dst_native_or_None, accumulate) -> native tensor
        self._loc = loc
        self._kind = kind  # what produced a pending tile ("nc_matmul", ...)
        self._defer = defer  # an index past the tensor's end: (base, offset, coeff, grid, error), see _calls
        self._axes = None  # a view's index axes where they are not the grid's: see _affine_index
        self._psum = psum  # a pending tensor-engine product: `psum += it` accumulates it
        if emit is not None:
            _state.pending.append(self)

    # -- pending results
    def _pending(self):
        return self._t is None and self._emit is not None

    def _materialize(self, dst=None, accumulate=None):
        if self in _state.pending:
            _state.pending.remove(self)
        emit, self._emit = self._emit, None
        self._t = emit(dst, accumulate)
        return self._t

    def _native(self):
        if self._t is None:
            if self._defer is not None:
                raise self._defer[4]
            if self._emit is None:
                raise RuntimeError("an empty tensor")
            # Older pending tiles go first: program order.
            while _state.pending and _state.pending[0] is not self:
                _state.pending[0]._materialize()
            self._materialize()
        return self._t

    # -- attributes
    @property
    def shape(self):
        if self._defer is not None:
            return tuple(self._defer[3])
        return tuple(self._native().shape)

    @property
    def dtype(self):
        if self._defer is not None:
            return _DTYPES[self._defer[0].dtype]
        return _DTYPES[self._native().dtype]

    @property
    def ndim(self):
        return self._native().ndim

    @property
    def buffer(self):
        return BUFFERS[self._native().buffer]

    @property
    def name(self):
        return self._native().name

    def __len__(self):
        return self.shape[0]

    def __repr__(self):
        if self._pending():
            return f"<pending {self._kind} result>"
        return f"{self.dtype} {self._native()}"

    __str__ = __repr__

    def __bool__(self):
        raise ValueError("Cannot evaluate truth value of a multi-element tensor/array "
                         "(err_ambiguous_tensor_truth_value): a kernel's control flow cannot depend on tensor values")

    def __iter__(self):
        raise TypeError("an NKI tensor is not iterable: index it (t[i]) or loop over nl.affine_range(n)")

    # -- indexing
    def __getitem__(self, key):
        # A view's location serves only its errors: found (a walk up the stack) only when there is one.
        t = self._t if self._t is not None else self._native()
        if _state.dialect == "nki":
            key = _today_key(key, t)
        axes = {}
        try:
            return _with_axes(Tensor(_view(t, key, _NO_LOC, axes)), axes)
        except ValueError:
            loc = caller()
            try:
                return _with_axes(Tensor(_view(t, key, loc)), axes)
            except ValueError as e:
                # An index expression or a slice past the tensor's end: a mask may keep the
                # instruction inside.
                if not _has_index_expr(key) and not _has_long_slice(key, t.shape):
                    raise
                offset, coeff, grid = _affine_index(key, t.shape, axes, clamp=False)
                return _with_axes(Tensor(defer=(t, offset, coeff, grid, e)), axes)

    def __setitem__(self, key, value):
        require_trace("assignment", None)
        loc = caller()
        axes = {}
        dst = _with_axes(Tensor(_view(self._native(), key, loc, axes)), axes)
        assign(dst, value, loc)

    def reshape(self, *shape, **kwargs):
        if "shape" in kwargs:
            shape = (kwargs.pop("shape"),)
        if kwargs:
            raise TypeError(f"reshape() got unexpected keyword arguments {sorted(kwargs)}")
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        loc = caller()
        return Tensor(self._native().reshape(dims(shape, "a dimension of reshape's shape"), loc))

    def broadcast_to(self, shape):
        """The tile read as `shape` (NumPy's broadcast rules): size-1 free dimensions repeated in a
        view; a tile of one partition copied onto `shape[0]` partitions (a new tile, see
        broadcast_partitions)."""
        loc = caller()
        t = self._native()
        shape = tuple(dims(shape, "a dimension of broadcast_to's shape"))
        have = tuple(t.shape)
        if len(have) > len(shape) and len(shape) >= 1 and all(h == 1 for h in have[len(shape):]):
            # Trailing size-1 dimensions dropped: the tile of an index grid with a size-1 last axis
            # (nl.mgrid[0:128, 0:n, 0:1], as the layernorm tutorial loads its parameters).
            t = t.reshape(list(have[:len(shape)]), loc)
            have = tuple(t.shape)
        if len(shape) != len(have):
            raise ValueError(f"{loc}: cannot broadcast {self} of shape {have} to {shape}: give the shape with as many "
                             "dimensions (size-1 free dimensions are repeated)")
        for d, (h, s) in enumerate(zip(have, shape)):
            if h != s and h != 1:
                raise ValueError(f"{loc}: cannot broadcast {self} of shape {have} to {shape}")
        if have[0] != shape[0]:
            t = broadcast_partitions(t, shape[0], loc)
        for d, (h, s) in enumerate(zip(have, shape)):
            if d > 0 and h != s:
                t = t.broadcast(d, s, loc)
        return Tensor(t)

    def expand_dims(self, axis):
        return _expand_dims(self, axis, caller())

    # -- today's NKI's view methods (NkiTensor): each is a view of the same storage
    def _dim(self, dim, what, free=True):
        """A dimension argument, checked (negative counts from the end); `free`: on chip, not the
        partition dimension."""
        n = len(self.shape)
        d = integer(dim, what)
        d = d + n if d < 0 else d
        if not 0 <= d < n:
            raise IndexError(f"{caller()}: {what} {dim} of a {n}-D tensor")
        if free and d == 0 and self._native().on_chip:
            raise ValueError(f"{caller()}: {what} {dim}: the partition dimension of an on-chip tensor stays as it is")
        return d

    def permute(self, dims):
        return Tensor(self._native().permute([integer(d, "a dimension of permute") for d in dims], caller()))

    def broadcast(self, dim, size):
        return Tensor(self._native().broadcast(self._dim(dim, "broadcast dimension"),
                                               integer(size, "the size of broadcast"), caller()))

    def expand_dim(self, dim):
        shape = list(self.shape)
        d = integer(dim, "expand_dim dimension")
        d = d + len(shape) + 1 if d < 0 else d
        if d == 0 and self._native().on_chip:
            raise ValueError(f"{caller()}: expand_dim before the partition dimension of an on-chip tensor")
        shape.insert(d, 1)
        return self._reshaped(shape)

    def squeeze_dim(self, dim):
        d = self._dim(dim, "squeeze_dim dimension")
        shape = list(self.shape)
        if shape[d] != 1:
            raise ValueError(f"{caller()}: squeeze_dim {dim}: the dimension has size {shape[d]}, not 1")
        del shape[d]
        return self._reshaped(shape)

    def reshape_dim(self, dim, shape):
        d = self._dim(dim, "reshape_dim dimension")
        new = list(self.shape)
        new[d:d + 1] = dims(shape, "a size of reshape_dim's shape")
        return self._reshaped(new)

    def flatten_dims(self, start_dim, end_dim):
        a = self._dim(start_dim, "flatten_dims start_dim")
        b = self._dim(end_dim, "flatten_dims end_dim")
        if b < a:
            raise ValueError(f"{caller()}: flatten_dims({start_dim}, {end_dim}): end_dim comes before start_dim")
        shape = list(self.shape)
        n = 1
        for x in shape[a:b + 1]:
            n *= x
        return self._reshaped(shape[:a] + [n] + shape[b + 1:])

    def _reshaped(self, shape):
        return Tensor(self._native().reshape(dims(shape), caller()))

    def slice(self, dim, start, end, step=1):
        d = self._dim(dim, "slice dimension", free=False)
        key = [slice(None)] * len(self.shape)
        key[d] = slice(start, end, step)
        return self[tuple(key)]

    def select(self, dim, index):
        d = self._dim(dim, "select dimension", free=False)
        key = [slice(None)] * len(self.shape)
        key[d] = index
        return self[tuple(key)]

    @property
    def data(self):
        """The tensor itself (as a grid's .data is its selection: either is an instruction's operand)."""
        return self

    def get_pattern(self):
        """The view as an access pattern: [[step, num], ...] in elements (on chip the partition
        dimension first, its step the elements of one partition)."""
        p = self._native().pattern()
        if p is None:
            raise ValueError(f"{caller()}: {self} has block dimensions: it has no one access pattern")
        return [list(x) for x in p[0]]

    def is_contiguous(self):
        """Whether the view's elements lie one after the other (on chip: within each partition)."""
        pat = self.get_pattern()
        start = 1 if self._native().on_chip else 0
        want = 1
        for step, num in reversed(pat[start:]):
            if num != 1 and step != want:
                return False
            want *= num
        return True

    def is_indirect(self):
        return False

    def rearrange(self, src_pattern, dst_pattern, fixed_sizes=None):
        """einops-style: t.rearrange("p (a b) c", "p c a b", {"a": 2}): the groups split, the names
        permuted, the groups merged, as views."""
        return _rearrange(self, src_pattern, dst_pattern, dict(fixed_sizes or {}))

    def view(self, dtype):
        """The same bytes read as `dtype` (the last dimension rescaled: (P, 8) float32 as bfloat16 is
        (P, 16))."""
        return Tensor(self._native().bitcast(dtype_name(dtype), caller()))

    def vector_select(self, dim, vector_offset):
        raise NotImplementedError(f"{caller()}: vector_select (an index known only when the kernel runs) is not "
                                  "supported by this model yet")

    indirect = vector_select

    def ap(self, pattern, offset=None, scalar_offset=None, vector_offset=None, indirect_dim=0, dtype=None):
        """NKI's access pattern (today's NKI): a view of this tensor's storage read flat, in
        elements, one dimension of `num` elements `step` apart per [step, num] pair, outermost
        first (on chip the first pair walks the partitions); offset: the flat start (None: this
        view's own)."""
        loc = caller()
        if scalar_offset is not None or vector_offset is not None:
            raise NotImplementedError(f"{loc}: tensor.ap with scalar_offset or vector_offset (an address known only "
                                      "when the kernel runs) is not supported by this model yet")
        base = self if dtype is None else self.view(dtype)  # steps and offset count the new dtype's elements
        if not isinstance(pattern, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2
                                                              for p in pattern):
            raise ValueError(f"{loc}: tensor.ap: pattern must be a list of [step, num] pairs, got {pattern!r}")
        pat = [[integer(a, "a step of the pattern"), integer(b, "a num of the pattern")] for a, b in pattern]
        off = None if offset is None else integer(offset, "the offset of tensor.ap")
        return Tensor(base._native().ap(pat, off, loc))

    # -- arithmetic (nl's element-wise calls, which nki.language registers in OPS; the binary
    # operators are set after the class, from one table)
    def _ew(self, op, other, reverse=False):
        fn = OPS[_state.dialect][op]
        return fn(other, self) if reverse else fn(self, other)

    def __invert__(self):
        return OPS[_state.dialect]["invert"](self)

    def __neg__(self):
        return OPS[_state.dialect]["negative"](self)

    def _inplace(self, op, o):
        require_trace(f"'{op}' in place", None)
        if op == "add" and isinstance(o, Tensor) and o._pending() and o._psum:
            # psum += nisa.nc_matmul(...): the multiply accumulates into this PSUM tile.
            emit_into(o, self._native(), None)
            return self
        # x op= y is x[...] = x op y: the instruction writes into x.
        emit_into(OPS[_state.dialect][op](self, o), self._native(), False)
        return self


def _operator(op, reverse=False):
    return lambda self, o: self._ew(op, o, reverse)


def _inplace_operator(op):
    return lambda self, o: self._inplace(op, o)


# x + y and y + x, ... (and x < y, ...; x += y, ...): nl's element-wise calls
for _name, _op in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide"),
                   ("and", "bitwise_and"), ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("mod", "mod"),
                   ("pow", "power")]:
    setattr(Tensor, f"__{_name}__", _operator(_op))
    setattr(Tensor, f"__r{_name}__", _operator(_op, True))
for _name, _op in [("lshift", "left_shift"), ("rshift", "right_shift"), ("lt", "less"), ("le", "less_equal"),
                   ("gt", "greater"), ("ge", "greater_equal")]:
    setattr(Tensor, f"__{_name}__", _operator(_op))
for _name, _op in [("add", "add"), ("sub", "subtract"), ("mul", "multiply"), ("truediv", "divide")]:
    setattr(Tensor, f"__i{_name}__", _inplace_operator(_op))


def broadcast_partitions(t, partitions, loc):
    """The native one-partition tile t on `partitions` partitions: a new SBUF tile, lowered on the
    tensor engine (nki::nl::broadcast_partitions), after the pending tiles before it."""
    flush()
    return _native.broadcast_partitions(t, partitions, loc)


def assign(dst, value, loc):
    """dst[...] = value: a pending result is emitted into dst; a tile or a number is copied."""
    if isinstance(value, Tensor):
        if value._pending():
            emit_into(value, dst._native(), False)
            return
        v = value._native()
        d = dst._native()
        if v.same_view(d):
            return  # x[i] += y already wrote x[i]
        flush()
        if d.on_chip and v.on_chip:
            invoke("isa", "tensor_copy", d, [v], loc)
        else:
            invoke("isa", "dma_copy", None, [v, d], loc)
        return
    if isinstance(value, (int, float, np.integer, np.floating, Sym)):
        flush()
        d = dst._native()
        if not d.on_chip:
            raise ValueError(f"{loc}: assigning a number to the HBM tensor {d}: store a tile (nl.store)")
        invoke("isa", "memset", d, [list(d.shape), float(value), d.dtype], loc)
        return
    raise TypeError(f"cannot assign {type(value).__name__} to an NKI tensor")


def emit_into(value, dst, acc):
    """Emits the pending `value` into the native view dst (older pending tiles first). Where a
    result the engine cannot write lands first (a tensor-engine result assigned outside PSUM, an
    engine result assigned to HBM) is the call surface's rule (nki::calls::invoke)."""
    while _state.pending and _state.pending[0] is not value:
        _state.pending[0]._materialize()
    value._materialize(dst, acc)


def _expand_dims(x, axis, loc):
    shape = list(x.shape)
    axes = sorted(a + len(shape) + 1 if a < 0 else a for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    for a in axes:
        if a == 0:
            raise ValueError(f"{loc}: expand_dims before the partition dimension of {x}")
        shape.insert(a, 1)
    return Tensor(x._native().reshape(shape, loc))


def pending(kind, emit, loc, psum=False):
    """A pending result of `kind`; emit(dst, accumulate) traces it (dst None: into a new tile).
    psum: a tensor-engine product (`psum += it` accumulates it)."""
    return Tensor(emit=emit, loc=loc, kind=kind, psum=psum)


# The nl element-wise calls behind the tiles' operators (+, -, *, ..., ~, unary -) and the views'
# buffers (nl.sbuf, ...), registered by nki.language when it is imported.
OPS = {"neuronxcc": {}, "nki": {}}  # by namespace (each registers its own)
BUFFERS = {}


def wrap(t):
    return None if t is None else Tensor(t)
