"""neuronxcc.nki.language (nl) on the ncore model: dtypes, buffers, tensor creation, loop ranges and
index expressions, and the calls of NKI's language (nl.load, nl.store, the element-wise and
reduction calls, the activation functions, ...).

Each call is made from its declaration in the C++ call surface (kernels/nki/include/nki/calls.hpp,
see _calls.py), which checks the hardware's rules in NKI's words and traces the instructions; see
_core.py for how results and assignment work. What stays here is Python's side of the language:
two numbers computed as Python computes them, `psum + nl.matmul(...)` as an accumulation, the tile
nl.loop_reduce is assigned to.
"""
import ast
import builtins
import linecache
import math
import re
import sys

import numpy as np

import _ncore_native as _native

from . import _calls, _core, compiler
from ._base import caller
from ._core import Tensor, dtype as _dtype
from ._index import AffinePredicate, IndexExpr, arange, mgrid  # noqa: F401

# --- dtypes -------------------------------------------------------------------------------------
# nl.float32, nl.bfloat16, ..., nl.bool_: one for each dtype of kernels/nki's one table (the names
# the native module's dtypes() gives)
globals().update(_core._DTYPES)


# --- buffers ------------------------------------------------------------------------------------
class _Buffer:
    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return f"nl.{self.name}"


hbm = _Buffer("hbm")
shared_hbm = _Buffer("shared_hbm")
private_hbm = _Buffer("hbm")
sbuf = _Buffer("sbuf")
psum = _Buffer("psum")
_BUFFERS = {"hbm": hbm, "shared_hbm": shared_hbm, "sbuf": sbuf, "psum": psum}
_core.BUFFERS.update(_BUFFERS)


class par_dim:
    """Marks the partition dimension of a shape with block dimensions: (4, nl.par_dim(128), 512)."""

    def __init__(self, size):
        self.size = _core.integer(size, "the size of nl.par_dim")

    def __repr__(self):
        return f"par_dim({self.size})"

    def __int__(self):
        return self.size

    def __index__(self):
        return self.size


class tile_size:
    """The hardware's tile limits (NKI's nl.tile_size)."""
    pmax = 128
    psum_fmax = 2048 // 4
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    psum_min_fmax = 512
    total_available_sbuf_size = 24 * 1024 * 1024


def _shape_arg(shape):
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    par = [isinstance(d, par_dim) for d in shape]
    sizes = _core.dims([d.size if p else d for d, p in zip(shape, par)], "a dimension of the shape")
    return list(zip(sizes, par))


def _buffer_name(buffer):
    if buffer is None:
        return "sbuf"
    if isinstance(buffer, _Buffer):
        return buffer.name
    if isinstance(buffer, compiler._Alloc):
        return buffer
    raise TypeError(f"buffer must be nl.hbm, nl.shared_hbm, nl.sbuf, nl.psum or an ncc allocation, got {buffer!r}")


def _name(name):
    return "" if name is None else str(name)


_ASSIGNED = re.compile(r"\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s*[\w.]*\b(?:ndarray|zeros|full)\(")


def _hbm_name(name, loc):
    """An HBM tensor's name: the one given, else the variable the kernel's line assigns it to
    (`out = nl.ndarray(...)` is `out`), so that messages and listings say `out`, not
    `hbm_tensor1`; else "" (the tracer numbers it)."""
    if name:
        return str(name)
    m = _ASSIGNED.match(linecache.getline(loc.file, loc.line))
    return m.group(1) if m else ""


# --- tensor creation ------------------------------------------------------------------------------

def ndarray(shape, dtype, buffer=None, name="", **kwargs):
    """A new tensor (not initialised): in HBM, or a tile placed by the allocator (or by ncc's
    direct allocation)."""
    _core.require_trace("ndarray", kwargs.pop("_namespace", "neuronxcc"))  # nki.language's too
    _core.flush()
    loc = caller()
    b = _buffer_name(buffer)
    if not isinstance(b, str):
        return Tensor(_native.ndarray_alloc(_shape_arg(shape), _dtype(dtype).name, b.base_addr, b.base_partition,
                                            list(b.num_par_tiles), list(b.num_free_tiles), _name(name), loc))
    if b in ("hbm", "shared_hbm"):
        name = _hbm_name(name, loc)
    make = lambda: Tensor(_native.ndarray(_shape_arg(shape), _dtype(dtype).name, b, _name(name), loc))
    if b == "shared_hbm" and _core._state.grid:
        return _core.shared_hbm_tensor([n for n, _ in _shape_arg(shape)], _dtype(dtype), make)
    return make()


def zeros(shape, dtype, buffer=None, name="", **kwargs):
    """A new on-chip tile filled with zeros (a memset on the vector engine)."""
    _core.require_trace("zeros", kwargs.pop("_namespace", "neuronxcc"))  # nki.language's too
    _core.flush()
    loc = caller()
    b = _buffer_name(buffer)
    if not isinstance(b, str):
        t = Tensor(_native.ndarray_alloc(_shape_arg(shape), _dtype(dtype).name, b.base_addr, b.base_partition,
                                         list(b.num_par_tiles), list(b.num_free_tiles), _name(name), loc))
        _native.fill(t._native(), 0.0, loc)
        return t
    return Tensor(_native.zeros(_shape_arg(shape), _dtype(dtype).name, b, _name(name), loc))


def full(shape, fill_value, dtype, buffer=None, name="", **kwargs):
    """A new on-chip tile filled with `fill_value`."""
    _core.require_trace("full", kwargs.pop("_namespace", "neuronxcc"))  # nki.language's too
    _core.flush()
    loc = caller()
    b = _buffer_name(buffer)
    if b in ("hbm", "shared_hbm"):
        raise ValueError(f"{loc}: Creating HBM tensor with init value is not supported. "
                         "(err_hbm_tensor_with_init_value_not_supported)")
    t = Tensor(_native.ndarray(_shape_arg(shape), _dtype(dtype).name, b, _name(name), loc))
    _native.fill(t._native(), float(fill_value), loc)
    return t


def ones(shape, dtype, buffer=None, name="", **kwargs):
    """A new on-chip tile filled with ones."""
    return full(shape, 1.0, dtype, buffer=buffer, name=name)


def broadcast_to(src, shape, **kwargs):
    """src read as `shape` (NumPy's broadcast rules): size-1 free dimensions repeated (a view), a
    tile of one partition copied onto shape[0] partitions (a new tile, on the tensor engine)."""
    return src.broadcast_to(shape)


def expand_dims(data, axis):
    """data with a size-1 dimension inserted at `axis` (a free dimension: axis >= 1)."""
    return _core._expand_dims(data, axis, caller())


def empty_like(a, dtype=None, buffer=None, name="", **kwargs):
    return ndarray(a.shape, dtype or a.dtype, buffer=buffer or (sbuf if a._native().on_chip else hbm), name=name)


def zeros_like(a, dtype=None, buffer=None, name="", **kwargs):
    return zeros(a.shape, dtype or a.dtype, buffer=buffer or sbuf, name=name)


# --- the calls, from their declarations ---------------------------------------------------------------

_CALLS = {n: _calls.function("language", n) for (ns, n) in _calls.DECLS if ns == "language"}
globals().update(_CALLS)


# --- Python's side of the element-wise calls --------------------------------------------------------

_PY_ALU = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
           "divide": lambda a, b: a / b, "maximum": builtins.max, "minimum": builtins.min,
           "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b, "greater": lambda a, b: a > b,
           "greater_equal": lambda a, b: a >= b, "less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b,
           "power": lambda a, b: a ** b, "mod": lambda a, b: a % b, "fmod": math.fmod,
           "logical_and": lambda a, b: bool(a) and bool(b), "logical_or": lambda a, b: bool(a) or bool(b),
           "logical_xor": lambda a, b: bool(a) != bool(b), "bitwise_and": lambda a, b: a & b,
           "bitwise_or": lambda a, b: a | b, "bitwise_xor": lambda a, b: a ^ b, "left_shift": lambda a, b: a << b,
           "right_shift": lambda a, b: a >> b}
_COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
                "logical_xor", "logical_not")


def _matmul_accumulation(x, y, loc):
    """psum + nc_matmul(...) (either order; nl.matmul too): assigned back to that PSUM tile,
    `psum[...] = psum + nl.matmul(a, b)` is the multiply accumulating into it, as NKI compiles it.
    Used otherwise, the product is copied out of PSUM (tensor_copy, fp32) and added on the vector
    engine, which cannot read two PSUM operands. None when the operands are not of that form."""
    for a, b in ((x, y), (y, x)):
        if not (isinstance(b, Tensor) and b._pending() and b._psum and isinstance(a, Tensor)
                and not a._pending() and a._defer is None):
            continue
        p = a._native()
        if p.buffer != "psum":
            return None
        _core._state.pending.remove(b)  # emitted by this result, where it lands

        def emit(dst, acc):
            if dst is not None and dst.same_view(p):
                b._materialize(dst, True)
                return dst
            product = _core.invoke("isa", "tensor_copy", None, [b._materialize(), None, "float32"], loc)
            return _core.invoke("language", "add", dst, [p, product, None, None], loc)

        return _core.pending("add", emit, loc)
    return None


def _elementwise(op):
    call = _CALLS[op]

    def fn(x, y, dtype=call.__defaults__[0] if call.__defaults__ else None, mask=None, **kwargs):
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            _core.require_trace(op)
            return _PY_ALU[op](x, y)
        if op == "add" and mask is None and dtype is None:
            acc = _matmul_accumulation(x, y, caller())
            if acc is not None:
                return acc
        return call(x, y, dtype, mask, **kwargs)

    fn.__name__ = fn.__qualname__ = op
    fn.__doc__ = call.__doc__
    fn._nki_alu = op
    fn._nki_call = call._nki_call
    return fn


for _op in ("add", "subtract", "multiply", "divide", "maximum", "minimum", "equal", "not_equal", "greater",
            "greater_equal", "less", "less_equal", "power", "mod", "fmod", "logical_and", "logical_or", "logical_xor",
            "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    globals()[_op] = _elementwise(_op)


def invert(x, dtype=None, mask=None, **kwargs):
    """nl.invert(x): ~x, the bits of an integer tile inverted within its dtype (vector engine: the
    unary invert, one tensor_scalar)."""
    if not isinstance(x, Tensor):
        return ~x
    return _CALLS["invert"](x, dtype, mask, **kwargs)


invert._nki_alu = "invert"
bitwise_not = invert


def logical_not(x, dtype="bool_", mask=None, **kwargs):
    """nl.logical_not(x): 1 where x is zero, 0 elsewhere (NaN is nonzero), a bool_ tile by default
    (dtype=None: x's dtype): the vector engine's unary logical_not (one tensor_scalar)."""
    if not isinstance(x, Tensor):
        return not bool(x)
    return _CALLS["logical_not"](x, dtype, mask, **kwargs)


logical_not._nki_alu = "logical_not"

# Reductions are also op arguments (nisa.tensor_reduce(nl.max, ...)).
for _red, _alu in (("max", "maximum"), ("min", "minimum"), ("sum", "add"), ("prod", "multiply")):
    _CALLS[_red]._nki_alu = _alu


# --- activation functions (scalar engine) ---------------------------------------------------------------

_PY_ACT = {"exp": math.exp, "log": math.log, "tanh": math.tanh, "sqrt": math.sqrt, "square": lambda v: v * v,
           "abs": builtins.abs, "negative": lambda v: -v, "reciprocal": lambda v: 1.0 / v,
           "rsqrt": lambda v: 1.0 / math.sqrt(v), "sigmoid": lambda v: 1.0 / (1.0 + math.exp(-v)),
           "sign": lambda v: float((v > 0) - (v < 0)), "relu": lambda v: builtins.max(v, 0.0),
           "silu": lambda v: v / (1.0 + math.exp(-v)), "softplus": lambda v: math.log1p(math.exp(v)),
           "gelu": lambda v: 0.5 * v * math.erfc(-v / math.sqrt(2.0)), "erf": math.erf,
           "gelu_apprx_tanh": lambda v: 0.5 * v * (1.0 + math.tanh(math.sqrt(2.0 / math.pi) *
                                                                  (v + 0.044715 * v ** 3))),
           "sin": math.sin, "cos": math.cos, "tan": math.tan, "arctan": math.atan,
           "mish": lambda v: v * math.tanh(math.log1p(math.exp(v))),
           "gelu_dx": lambda v: 0.5 * math.erfc(-v / math.sqrt(2.0)) + v * math.exp(-0.5 * v * v) / math.sqrt(2 * math.pi),
           "gelu_apprx_sigmoid": lambda v: v / (1.0 + math.exp(-1.702 * v)),
           "silu_dx": lambda v: (1.0 + v / (1.0 + math.exp(v))) / (1.0 + math.exp(-v)),
           "erf_dx": lambda v: 2.0 / math.sqrt(math.pi) * math.exp(-v * v),
           "ceil": lambda v: float(math.ceil(v)), "floor": lambda v: float(math.floor(v)),
           "trunc": lambda v: float(math.trunc(v))}




def _activation(name):
    call = _CALLS[name]

    def fn(x, dtype=None, mask=None, **kwargs):
        if not isinstance(x, Tensor):
            if isinstance(x, (int, float, np.integer, np.floating)):
                return _PY_ACT[name](x)
            raise TypeError(f"nl.{name} takes a tile, got {type(x).__name__}")
        return call(x, dtype, mask, **kwargs)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = call.__doc__
    fn._nki_act = name
    fn._nki_call = call._nki_call
    return fn


# The activation functions the model's scalar engine has (firmware/isa/ncore_isa.json, act_func).
for _fn_name in _calls.ACT:
    if _fn_name != "copy":
        globals()[_fn_name] = _activation(_fn_name)
identity = copy
copy._nki_act = "copy"

_core.OPS["neuronxcc"].update({n: globals()[n] for n in ("add", "subtract", "multiply", "divide", "bitwise_and", "bitwise_or",
                                            "bitwise_xor", "left_shift", "right_shift", "mod", "power", "less",
                                            "less_equal", "greater", "greater_equal", "invert", "negative")})


def _unmodelled(name, kind):
    def fn(*args, **kwargs):
        raise ValueError(f"{caller()}: nl.{name} is not supported by this model ({kind})")

    fn.__name__ = name
    fn._nki_act = name
    return fn


for _n in ["atomic_rmw", "all_reduce", "dynamic_range"]:
    globals()[_n] = _unmodelled(_n, "an operation the model does not have")


# --- nl.loop_reduce: the tile its result is assigned to ------------------------------------------------

def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None, **kwargs):
    """dst = dst op x (tensor_tensor), dst the tile the result is assigned to: `b = nl.loop_reduce(a,
    op=np.add, loop_indices=[i])` reduces into the tile b names, `b[...] = nl.loop_reduce(...)` into
    that view."""
    target = _assigned_tile(caller())
    res = _CALLS["loop_reduce"](x, op, loop_indices, dtype=dtype, mask=mask, **kwargs)
    if isinstance(res, Tensor) and res._pending() and target is not None:
        emit = res._emit
        res._emit = lambda dst, acc: emit(dst if dst is not None else target, acc)
    return res


def _assigned_tile(loc):
    """The tile the kernel's statement at `loc` assigns to by name (`b = ...`), or None."""
    f = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_core._NEURONXCC_DIR):
        f = f.f_back
    if f is None:
        return None
    try:
        tree = ast.parse(linecache.getline(f.f_code.co_filename, f.f_lineno).strip())
    except SyntaxError:
        return None
    stmt = tree.body[0] if tree.body else None
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
        return None
    t = f.f_locals.get(stmt.targets[0].id, f.f_globals.get(stmt.targets[0].id))
    return t._native() if isinstance(t, Tensor) else None



# --- constants ----------------------------------------------------------------------------------------

def shared_constant(constant, dtype=None, **kwargs):
    """A constant HBM tensor holding `constant` (a NumPy array), stored in the Program and copied
    into HBM before the kernel runs; dtype defaults to the array's (float32 or float16)."""
    _core.require_trace("shared_constant", kwargs.pop("_namespace", "neuronxcc"))  # nki.language's too
    _core.flush()
    loc = caller()
    a = np.asarray(constant)
    if dtype is None:
        if a.dtype not in (np.float32, np.float16):
            raise ValueError(f"{loc}: nl.shared_constant of a {a.dtype} array: give dtype= (this model's tensors are "
                             "float32, bfloat16 or float16)")
        dtype = a.dtype
    return Tensor(_native.shared_constant(a.astype(np.float32), _dtype(dtype).name, loc))


def shared_identity_matrix(n, dtype=uint8, **kwargs):
    """The [n, n] identity as a constant HBM tensor (the default dtype uint8 is not modelled: give
    float32, bfloat16 or float16)."""
    _core.require_trace("shared_identity_matrix", kwargs.pop("_namespace", "neuronxcc"))  # nki.language's too
    _core.flush()
    loc = caller()
    return Tensor(_native.shared_identity_matrix(_core.integer(n, "the size of nl.shared_identity_matrix"),
                                                 _dtype(dtype).name, loc))


class _FloatLimits:
    def __init__(self, name, lowest):
        self.name = name
        self.min = lowest

    def __repr__(self):
        return f"nl.{self.name}"


fp32 = _FloatLimits("fp32", -3.4028234663852886e38)   # 0xff7fffff
bfp16 = _FloatLimits("bfp16", -3.3895313892515355e38)  # 0xff7f


class _Bfloat16Info:
    """NumPy's finfo fields for bfloat16 (1S,8E,7M), which NumPy does not know."""
    bits = 16
    dtype = bfloat16
    eps = 2.0 ** -7
    epsneg = 2.0 ** -8
    max = 3.3895313892515355e38   # 0x7f7f
    min = -max
    tiny = smallest_normal = 2.0 ** -126
    smallest_subnormal = 2.0 ** -133
    precision = 2
    resolution = 0.01

    def __repr__(self):
        return f"finfo(resolution={self.resolution}, min={self.min:e}, max={self.max:e}, dtype=bfloat16)"


def finfo(dtype):
    """The limits of a float dtype (nl or NumPy), as np.finfo gives them (bfloat16 too)."""
    name = _core.dtype_name(dtype)
    if name == "bfloat16":
        return _Bfloat16Info()
    if name in ("float32", "float16"):
        return np.finfo(name)
    raise ValueError(f"nl.finfo of {name}: not a floating-point dtype (nl.iinfo gives an integer's limits)")


def iinfo(dtype):
    """The limits of an integer dtype (nl or NumPy), as np.iinfo gives them (bool_ as uint8)."""
    name = _core.dtype_name(dtype)
    name = "uint8" if name == "bool_" else name
    if name in ("int8", "uint8", "int16", "uint16", "int32", "uint32"):
        return np.iinfo(name)
    raise ValueError(f"nl.iinfo of {name}: not an integer dtype (nl.finfo gives a float's limits)")



def device_print(prefix, x, **kwargs):
    """Accepted and ignored: tensor values exist only when the Program runs (compare outputs instead)."""
    return None


# --- loops --------------------------------------------------------------------------------------------

class _Range:
    def __init__(self, args, sequential, api):
        self.r = builtins.range(*[_core.integer(a, f"an argument of nl.{api}") for a in args])
        self.sequential = sequential
        self.api = api
        self.loc = caller()

    def __len__(self):
        return len(self.r)

    def __iter__(self):
        if not _core.in_trace():  # outside a kernel: a plain range
            yield from self.r
            return
        _core.flush()
        loop = _native.Range(len(self.r), self.sequential, self.loc)
        try:
            if self.api != "static_range" and len(self.r):
                # Traced once with a symbolic index, the other iterations replayed by the tracer;
                # unless the body needed a concrete index that varies (then Python goes on).
                i = loop.begin_symbolic(self.r.start, self.r.step)
                try:
                    yield i
                except GeneratorExit:  # a break: the iteration's pending results still belong to it
                    _core.flush()
                    raise
                _core.flush()  # the iteration's pending results belong to it
                if loop.finish_symbolic():
                    return
            else:
                loop.enter()
            while True:
                k = loop.next()  # the iteration's number: its value is the range's k-th
                if k is None:
                    return
                try:
                    yield self.r[k]
                except GeneratorExit:
                    _core.flush()
                    raise
                _core.flush()
        finally:
            loop.exit()


def affine_range(*args, **kwargs):
    """A loop whose iterations do not depend on each other: tiles allocated in it rotate over
    several buffers so that iterations overlap."""
    return _Range(args, False, "affine_range")


def sequential_range(*args, **kwargs):
    """A loop with a dependency carried from one iteration to the next."""
    return _Range(args, True, "sequential_range")


def static_range(*args, **kwargs):
    """A loop unrolled at trace time."""
    return _Range(args, True, "static_range")


def ds(start, size):
    """A slice of `size` elements from `start`: t[nl.ds(i * 128, 128)]."""
    start = _core.as_int(start, "the start of nl.ds")
    return builtins.slice(start, start + _core.integer(size, "the size of nl.ds"))



def _grid_axis(axis, api):
    """The axis of the launch grid, checked; None for a kernel launched without a grid (where
    every axis has one instance)."""
    grid = _core._state.grid
    if not isinstance(axis, int):
        raise ValueError(f"{api}: axis {axis!r} is not an integer")
    if not grid:
        return None
    n = len(grid)
    if not -n <= axis < n:
        raise ValueError(f"{api}: axis {axis} is outside the launch grid {tuple(grid)} ({n} {'axes' if n > 1 else 'axis'})")
    return axis % n


def program_ndim():
    """Number of axes of the SPMD launch grid (0 without one)."""
    _core.require_trace("program_ndim")
    return len(_core._state.grid)


def num_programs(axes=None):
    """Number of SPMD instances along the given axis (or axes; None: all of them)."""
    _core.require_trace("num_programs")
    grid = _core._state.grid
    if axes is None:
        axes = builtins.range(len(grid))
    elif isinstance(axes, int):
        axes = (axes,)
    n = 1
    for a in axes:
        i = _grid_axis(a, "num_programs")
        n *= 1 if i is None else grid[i]
    return n


def program_id(axis):
    """Index of the SPMD instance being traced along the given axis of the launch grid (0 without
    a grid)."""
    _core.require_trace("program_id")
    a = _grid_axis(axis, "program_id")
    return 0 if a is None else _core._state.pid[a]


def spmd_dim(*args, **kwargs):
    raise ValueError("SPMD launch grids are not supported by this model (one NeuronCore)")
