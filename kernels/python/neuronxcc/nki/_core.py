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
import operator
import os
import sys
import threading

import numpy as np

import _ncore_native as _native

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_NEURONXCC_DIR = os.path.dirname(_PKG_DIR)


# --- source locations ------------------------------------------------------------------------

_LOCS = {}       # (file, line) -> the native location passed to every call

# caller(): the native location (file, line) of the first frame outside the front end, the
# kernel's own line (in C++: every call a kernel makes asks for it).
caller = _native.caller


_NO_LOC = _native.Loc("", 0)

# The loop index of an nl.affine_range/sequential_range traced once, and arithmetic on it (see
# _native's loops: an integer-like value symbolic in the loop indices).
Sym = _native.Sym


def integer(x, what):
    """x where NKI needs an integer (a loop count, a slice bound, a dimension): an int, a bool or a
    NumPy integer (anything with __index__); a loop index expression becomes its value (see Sym).
    A float or a string is a TypeError, as Python's own range(7.8) raises: truncating it would
    silently drop part of the data. `what` names the argument in the message."""
    if type(x) is Sym:
        return int(x)
    try:
        return operator.index(x)
    except TypeError:
        raise TypeError(f"{caller()}: '{type(x).__name__}' object cannot be interpreted as an integer ({what}: "
                        f"{x!r})") from None


def as_int(x, what="an index"):
    """x as an index: a loop index expression stays symbolic, anything else must be an integer
    (see integer)."""
    return x if type(x) is Sym else integer(x, what)


_DIM_LIMIT = 2 ** 63  # the C++ side's int64 sizes


def dims(shape, what="a dimension of the shape"):
    """A shape's dimensions as ints (see integer), each within the C++ side's 64-bit sizes: a larger
    one is refused here, by name, rather than failing to convert on the way in."""
    out = [integer(d, what) for d in shape]
    for d in out:
        if not -_DIM_LIMIT <= d < _DIM_LIMIT:
            raise ValueError(f"{caller()}: {what} is {d}, beyond the model's 64-bit sizes (the shape {tuple(out)} "
                             f"cannot be allocated)")
    return out


def location(file, line):
    key = (file, line)
    loc = _LOCS.get(key)
    if loc is None:
        loc = _LOCS[key] = _native.Loc(file, line)
    return loc


_REL_CACHE = {}


def _relative(path):
    r = _REL_CACHE.get(path)
    if r is None:
        try:
            ap = os.path.abspath(path)
            cwd = os.getcwd()
            r = os.path.relpath(ap, cwd) if ap.startswith(cwd + os.sep) else path
        except (OSError, ValueError):
            r = path
        _REL_CACHE[path] = r
    return r


_native.set_frontend(_NEURONXCC_DIR, _relative)


# --- dtypes -----------------------------------------------------------------------------------

class Dtype:
    """An NKI element type (nl.float32, nl.bfloat16, ...). Compares equal to its name, to the
    NumPy dtype of the same name, and to NumPy's scalar type (np.float32)."""

    _SIZES = {"float32": 4, "bfloat16": 2, "float16": 2, "tfloat32": 4, "float8_e4m3": 1, "float8_e5m2": 1,
              "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4, "bool_": 1}

    def __init__(self, name):
        self.name = name
        self.itemsize = self._SIZES.get(name, 0)

    def __eq__(self, other):
        try:
            return self.name == dtype_name(other)
        except (TypeError, ValueError):
            return NotImplemented

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return self.name

    __str__ = __repr__


_DTYPES = {n: Dtype(n) for n in Dtype._SIZES}


def dtype_name(d):
    """The NKI name of a dtype given as an nl dtype, a string, a NumPy dtype or type."""
    if isinstance(d, Dtype):
        return d.name
    if isinstance(d, str):
        name = d
    else:
        name = np.dtype(d).name
    aliases = {"float": "float32", "half": "float16", "bool": "bool_", "fp32": "float32", "fp16": "float16",
               "bf16": "bfloat16"}
    name = aliases.get(name, name)
    if name not in _DTYPES:
        raise TypeError(f"unknown dtype {d!r}")
    return name


def dtype(d):
    return _DTYPES[dtype_name(d)]


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
        self.mask = None      # the box of the mask= of the op being traced (_mask.Box), or None
        # An nl call is being traced: an engine instruction over more elements per partition than
        # one instruction takes is issued as several (the compiler's tiling; see _mask._boxes).
        self.split = False


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


def require_trace(api):
    if not _state.active:
        raise RuntimeError(f"'{api}' called outside of a kernel being traced: call the kernel through nki.jit, "
                           "nki.baremetal, nki.benchmark or nki.simulate_kernel")


def flush():
    """Emits every pending tile into a tile of its own (before any other instruction is traced)."""
    while _state.pending:
        _state.pending[0]._materialize()


def native(x):
    """The native tensor of a Tensor (emitting it if pending), or x itself (a number, None). Under a
    mask, an index view that runs past its tensor is cut to the mask's box (a _mask.Restricted)."""
    if isinstance(x, Tensor):
        if x._defer is not None and _state.mask is not None:
            from . import _mask
            return _mask.Restricted(x._defer)
        return x._native()
    return x


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


_IndexExpr = None
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
    _mask.box). clamp False: a slice past the dimension's end keeps its size (a view a mask keeps
    inside, see _mask)."""
    key = _expand_ellipsis(key, len(shape))
    if len(key) > len(shape):
        raise IndexError(f"too many indices for a tensor of {len(shape)} dimensions: {len(key)} given")
    key = key + (slice(None),) * (len(shape) - len(key))
    exprs = [k for k in key if isinstance(k, _IndexExpr) and k.ndim is not None]
    used = {}  # (grid rank, grid axis) -> size
    for k in exprs:
        for a in k.terms:
            ka, size = (k.ndim, a), k.sizes[a]
            if used.setdefault(ka, size) != size:
                raise IndexError(f"axis {a} of the index grid has two sizes, {used[ka]} and {size}")
    first = key[0] if isinstance(key[0], _IndexExpr) and key[0].ndim is not None else None
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
        if isinstance(k, _IndexExpr):
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
    global _IndexExpr
    if _IndexExpr is None:
        from .language import IndexExpr as _IndexExpr
    return any(isinstance(k, _IndexExpr) for k in (key if isinstance(key, tuple) else (key,)))


def _has_long_slice(key, shape):
    """Whether a slice of key runs past its dimension's end (nl.ds(i * 128, 128) of a last tile)."""
    ks = _expand_ellipsis(key if isinstance(key, tuple) else (key,), len(shape))
    return any(isinstance(k, slice) and k.stop is not None and (k.step or 1) > 0 and as_int(k.stop) > n
               for k, n in zip(ks, shape))


def _view(t, key, loc, axes=None):
    """The native view t[key] (axes: see _affine_index)."""
    items = _fast_index(key)
    if items is not None:
        return t.index(items, loc)
    ks = key if isinstance(key, tuple) else (key,)
    global _IndexExpr
    if _IndexExpr is None:
        from .language import IndexExpr as _IndexExpr
    if any(isinstance(k, _IndexExpr) for k in ks):
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

    __slots__ = ("_t", "_emit", "_loc", "_kind", "_mask", "_defer", "_axes", "__weakref__")
    # NumPy scalars on the left (np.float16(2) * t) hand the operation to the tile's reflected
    # operator instead of treating the tile as an array.
    __array_ufunc__ = None

    def __init__(self, t=None, emit=None, loc=None, kind=None, defer=None):
        self._t = t
        self._emit = emit  # pending: emit(dst_native_or_None, accumulate) -> native tensor
        self._loc = loc
        self._kind = kind  # what produced a pending tile ("nc_matmul", ...)
        self._defer = defer  # an index past the tensor's end: (base, offset, coeff, grid, error), see _mask
        self._axes = None  # a view's index axes where they are not the grid's: see _affine_index
        if emit is not None:
            self._mask = (_state.mask, _state.split)  # the mask (and nl call) the result was made under
            _state.pending.append(self)

    # -- pending results
    def _pending(self):
        return self._t is None and self._emit is not None

    def _materialize(self, dst=None, accumulate=None):
        if self in _state.pending:
            _state.pending.remove(self)
        emit, self._emit = self._emit, None
        outer = _state.mask, _state.split
        _state.mask, _state.split = self._mask
        try:
            self._t = emit(dst, accumulate)
        finally:
            _state.mask, _state.split = outer
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
        from . import language as nl
        return nl._BUFFERS[self._native().buffer]

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
        require_trace("assignment")
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

    # -- arithmetic (nl's element-wise calls)
    def _ew(self, op, other, reverse=False):
        from . import language as nl
        fn = getattr(nl, op)
        return fn(other, self) if reverse else fn(self, other)

    def __add__(self, o):
        return self._ew("add", o)

    def __radd__(self, o):
        return self._ew("add", o, True)

    def __sub__(self, o):
        return self._ew("subtract", o)

    def __rsub__(self, o):
        return self._ew("subtract", o, True)

    def __mul__(self, o):
        return self._ew("multiply", o)

    def __rmul__(self, o):
        return self._ew("multiply", o, True)

    def __truediv__(self, o):
        return self._ew("divide", o)

    def __and__(self, o):
        return self._ew("bitwise_and", o)

    def __rand__(self, o):
        return self._ew("bitwise_and", o, True)

    def __or__(self, o):
        return self._ew("bitwise_or", o)

    def __ror__(self, o):
        return self._ew("bitwise_or", o, True)

    def __xor__(self, o):
        return self._ew("bitwise_xor", o)

    def __rxor__(self, o):
        return self._ew("bitwise_xor", o, True)

    def __lshift__(self, o):
        return self._ew("left_shift", o)

    def __rshift__(self, o):
        return self._ew("right_shift", o)

    def __invert__(self):
        from . import language as nl
        return nl.invert(self)

    def __rtruediv__(self, o):
        return self._ew("divide", o, True)

    def __mod__(self, o):
        return self._ew("mod", o)

    def __rmod__(self, o):
        return self._ew("mod", o, True)

    def __pow__(self, o):
        return self._ew("power", o)

    def __rpow__(self, o):
        return self._ew("power", o, True)

    def __neg__(self):
        from . import language as nl
        return nl.negative(self)

    def __lt__(self, o):
        return self._ew("less", o)

    def __le__(self, o):
        return self._ew("less_equal", o)

    def __gt__(self, o):
        return self._ew("greater", o)

    def __ge__(self, o):
        return self._ew("greater_equal", o)

    def __iadd__(self, o):
        return self._inplace("add", o)

    def __isub__(self, o):
        return self._inplace("subtract", o)

    def __imul__(self, o):
        return self._inplace("multiply", o)

    def __itruediv__(self, o):
        return self._inplace("divide", o)

    def _inplace(self, op, o):
        require_trace(f"'{op}' in place")
        loc = caller()
        if op == "add" and isinstance(o, Tensor) and o._pending() and o._kind == "nc_matmul":
            # psum += nisa.nc_matmul(...): the multiply accumulates into this PSUM tile.
            emit_into(o, self._native(), None)
            return self
        flush()
        _native.elementwise(self._native(), op, self._native(), operand(o), None, loc)
        return self


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
            _native.tensor_copy(d, v, None, loc)
        else:
            _native.dma_copy(d, v, loc)
        return
    if isinstance(value, (int, float, np.integer, np.floating, Sym)):
        flush()
        d = dst._native()
        if not d.on_chip:
            raise ValueError(f"{loc}: assigning a number to the HBM tensor {d}: store a tile (nl.store)")
        _native.memset(d, float(value), loc)
        return
    raise TypeError(f"cannot assign {type(value).__name__} to an NKI tensor")


def emit_into(value, dst, acc):
    """Emits the pending `value` into the native view dst (older pending tiles first). A tensor
    engine result goes to PSUM: assigned to an SBUF view it lands in a PSUM tile of its own first,
    then a copy moves it (as NKI lowers it)."""
    while _state.pending and _state.pending[0] is not value:
        _state.pending[0]._materialize()
    if value._kind in ("nc_matmul", "nc_transpose") and dst.buffer != "psum":
        t = value._materialize()
        if dst.on_chip:
            _native.tensor_copy(dst, t, None, value._loc)
        else:  # PSUM to HBM: through the SBUF, as nl.store does
            _native.dma_copy(dst, _native.tensor_copy(None, t, dst.dtype, value._loc), value._loc)
        return
    if not dst.on_chip and value._kind not in ("load", "dma_copy"):
        # An engine result assigned to an HBM view: the engines write on chip, so it lands in an
        # SBUF tile of its own and a DMA stores it (hbm[...] = nl.copy(tile) is a store).
        _native.dma_copy(dst, value._materialize(), value._loc)
        return
    value._materialize(dst, acc)


def _expand_dims(x, axis, loc):
    shape = list(x.shape)
    axes = sorted(a + len(shape) + 1 if a < 0 else a for a in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    for a in axes:
        if a == 0:
            raise ValueError(f"{loc}: expand_dims before the partition dimension of {x}")
        shape.insert(a, 1)
    return Tensor(x._native().reshape(shape, loc))


def pending(kind, emit, loc):
    """A pending result of `kind`; emit(dst, accumulate) traces it (dst None: into a new tile)."""
    return Tensor(emit=emit, loc=loc, kind=kind)


def wrap(t):
    return None if t is None else Tensor(t)
