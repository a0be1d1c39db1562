"""neuronxcc.nki.language (nl) on the ncore model: dtypes, buffers, tensor creation, nl.load and
nl.store, the element-wise and reduction calls, loop ranges and index expressions.

Each call maps onto the C++ NKI API (kernels/nki), which checks the hardware's rules in NKI's
words and traces the instructions; see _core.py for how results and assignment work.
"""
import builtins
import linecache
import math
import re

import numpy as np


from . import _core
from ._mask import maskable, native as _native
from ._core import Tensor, caller, dtype as _dtype, operand as _operand

# --- dtypes -------------------------------------------------------------------------------------
float32 = _core._DTYPES["float32"]
bfloat16 = _core._DTYPES["bfloat16"]
float16 = _core._DTYPES["float16"]
tfloat32 = _core._DTYPES["tfloat32"]
float8_e4m3 = _core._DTYPES["float8_e4m3"]
float8_e5m2 = _core._DTYPES["float8_e5m2"]
int8 = _core._DTYPES["int8"]
uint8 = _core._DTYPES["uint8"]
int16 = _core._DTYPES["int16"]
uint16 = _core._DTYPES["uint16"]
int32 = _core._DTYPES["int32"]
uint32 = _core._DTYPES["uint32"]
bool_ = _core._DTYPES["bool_"]


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
    from . import compiler
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
    _core.require_trace("ndarray")
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
    _core.require_trace("zeros")
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
    _core.require_trace("full")
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


def load_transpose2d(src, dtype=None, mask=None, **kwargs):
    """The 2-D HBM view src [K, M] loaded transposed into a new SBUF tile [M, K] (one DMA transfer
    whose access pattern walks src by columns)."""
    _core.require_trace("load_transpose2d")
    _no_mask(mask, "load_transpose2d")
    loc = caller()
    s = _core.native(src)
    if s.ndim != 2:
        raise ValueError(f"{loc}: load_transpose2d takes a 2-D tensor, got {src}")
    return load(Tensor(s.permute([1, 0], loc)), dtype=dtype)


def empty_like(a, dtype=None, buffer=None, name="", **kwargs):
    return ndarray(a.shape, dtype or a.dtype, buffer=buffer or (sbuf if a._native().on_chip else hbm), name=name)


def zeros_like(a, dtype=None, buffer=None, name="", **kwargs):
    return zeros(a.shape, dtype or a.dtype, buffer=buffer or sbuf, name=name)


# --- moving data ---------------------------------------------------------------------------------

@maskable("load")
def load(src, dtype=None, mask=None, **kwargs):
    """A new SBUF tile holding the HBM view `src` (one DMA transfer)."""
    _core.require_trace("load")
    loc = caller()
    s = _core.native(src)
    dt = None if dtype is None else _dtype(dtype).name

    def emit(dst, acc):
        if dst is None:
            return _native.load(s, dt, loc)
        _native.dma_copy(dst, s, loc)
        return dst

    return _core.pending("load", emit, loc)


@maskable("store")
def store(dst, value, mask=None, **kwargs):
    """Writes `value` (an SBUF tile) to the HBM view `dst` (one DMA transfer)."""
    _core.require_trace("store")
    loc = caller()
    d = _core.native(dst)
    if isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{loc}: nl.store of a number: store a tile (for example one from nl.full)")
    v = _core.native(value)
    _core.flush()
    _native.store(d, v, loc)


@maskable("copy", nl=True)
def copy(x, dtype=None, mask=None, **kwargs):
    """A copy of an on-chip tile into a new SBUF tile (tensor_copy), cast to `dtype`."""
    from . import isa as nisa
    return nisa.tensor_copy(x, dtype=dtype)


def _no_mask(mask, api, *operands, skip=False):
    """mask= of a call that applies it whole (_mask.whole): True to issue it; a mask that keeps
    nothing gives False where the call can issue nothing (skip) and is refused elsewhere."""
    from . import _mask
    return _mask.whole(mask, api, operands, skip)


# --- element-wise and reduction calls ---------------------------------------------------------------

_PY_ALU = {"add": lambda a, b: a + b, "subtract": lambda a, b: a - b, "multiply": lambda a, b: a * b,
           "divide": lambda a, b: a / b, "maximum": builtins.max, "minimum": builtins.min,
           "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b, "greater": lambda a, b: a > b,
           "greater_equal": lambda a, b: a >= b, "less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b,
           "power": lambda a, b: a ** b, "mod": lambda a, b: a % b, "fmod": math.fmod,
           "logical_and": lambda a, b: bool(a) and bool(b), "logical_or": lambda a, b: bool(a) or bool(b),
           "logical_xor": lambda a, b: bool(a) != bool(b), "bitwise_and": lambda a, b: a & b,
           "bitwise_or": lambda a, b: a | b, "bitwise_xor": lambda a, b: a ^ b, "left_shift": lambda a, b: a << b,
           "right_shift": lambda a, b: a >> b}
# The bitvec ops: on integer tiles' bits (every operand and the result one integer dtype).
_BITVEC = ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert")
# The ops whose NKI default dtype is bool: a bool_ tile (uint8 0 or 1) unless a dtype is given;
# dtype=None gives the operands' dtype (1.0 / 0.0 in a float tile).
_BOOL_DEFAULT = "bool_"
_COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal", "logical_and", "logical_or",
                "logical_xor", "logical_not")


# NumPy scalar types the hardware has no dtype for, as NKI reads them.
_NP_SCALAR = {"float64": "float32", "int64": "int32", "uint64": "uint32", "bool": "uint8"}


def _scalar_dtype(v):
    """NKI's dtype of a scalar operand of an arithmetic call: a NumPy scalar's own (np.float16(2)
    is float16); a weakly typed Python scalar the widest the hardware has: bool uint8, int int32,
    float float32 (the programming guide's "Weakly Typed Scalar Type Inference")."""
    if isinstance(v, np.generic):
        name = v.dtype.name
        return _NP_SCALAR.get(name, name)
    if isinstance(v, bool):
        return "uint8"
    if isinstance(v, (int, _core.Sym)):
        return "int32"
    return "float32"


def _promoted(x, y):
    """The dtype NKI gives tile op scalar (either order): the tile's promoted with the scalar's
    (bfloat16 * 2.0 is float32, int8 + 2 is int32, float16 * 2 stays float16)."""
    t, v = (x, y) if isinstance(x, Tensor) else (y, x)
    if isinstance(v, Tensor):
        return None  # two tiles: the tracer promotes them
    return _native.promote(t.dtype.name, _scalar_dtype(v))


def _partition_broadcast(x, y, loc):
    """Two operands of an element-wise call, a tile of one partition against a tile of several
    copied onto as many partitions (NKI broadcasts the partition dimension too; it costs a
    tensor engine pass, see Tensor.broadcast_to)."""
    if isinstance(x, _native.Tensor) and isinstance(y, _native.Tensor):
        px, py = x.shape[0], y.shape[0]
        if px == 1 and py > 1:
            x = _core.broadcast_partitions(x, py, loc)
        elif py == 1 and px > 1:
            y = _core.broadcast_partitions(y, px, loc)
        x, y = _free_broadcast(x, y, loc)
    return x, y


def _free_broadcast(x, y, loc):
    """Two tiles of as many dimensions whose free sizes differ where one of them is 1 ((128, 8, 1, 1)
    against (128, 8, 3, 3)), NumPy's broadcast: the size-1 dimensions read repeatedly (a view of
    stride 0). An operand of one element per partition is left to tensor_scalar."""
    sx, sy = tuple(x.shape), tuple(y.shape)
    if len(sx) != len(sy) or sx == sy or _numel(sx[1:]) == 1 or _numel(sy[1:]) == 1:
        return x, y
    for d in range(1, len(sx)):
        if sx[d] != sy[d] and 1 not in (sx[d], sy[d]):
            raise ValueError(f"{loc}: operands of shapes {sx} and {sy} cannot be broadcast together (dimension {d}: "
                             f"{sx[d]} and {sy[d]})")
    for d in range(1, len(sx)):
        if sx[d] == 1 and sy[d] > 1:
            x = x.broadcast(d, sy[d], loc)
        elif sy[d] == 1 and sx[d] > 1:
            y = y.broadcast(d, sx[d], loc)
    return x, y


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _matmul_accumulation(x, y, loc):
    """psum + nc_matmul(...) (either order; nl.matmul too): assigned back to that PSUM tile,
    `psum[...] = psum + nl.matmul(a, b)` is the multiply accumulating into it, as NKI compiles it.
    Used otherwise, the product is copied out of PSUM (tensor_copy, fp32) and added on the vector
    engine, which cannot read two PSUM operands. None when the operands are not of that form."""
    for a, b in ((x, y), (y, x)):
        if not (isinstance(b, Tensor) and b._pending() and b._kind == "nc_matmul" and isinstance(a, Tensor)
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
            product = _native.tensor_copy(None, b._materialize(), "float32", loc)
            return _native.elementwise(dst, "add", p, product, None, loc)

        return _core.pending("add", emit, loc)
    return None


def _ew(op):
    @maskable(op, nl=True)
    def fn(x, y, dtype=_BOOL_DEFAULT if op in _COMPARISONS else None, **kwargs):
        _core.require_trace(op)
        loc = caller()
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            return _PY_ALU[op](x, y)
        if op == "add" and dtype is None and _core._state.mask is None:
            acc = _matmul_accumulation(x, y, loc)
            if acc is not None:
                return acc
        if op in _BITVEC:
            for v in (x, y):
                if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and float(np.float32(v)) != v:
                    raise ValueError(f"{loc}: the integer {v} of nl.{op} is not exact in the model's float32 "
                                     "immediates (up to 2^24, or a few bits wide): give it as a (P, 1) tile")
        if dtype is None and op not in _BITVEC and op != "logical_not":
            dt = _promoted(x, y)
        else:
            dt = None if dtype is None else _dtype(dtype).name
        xo, yo = _partition_broadcast(_operand(x), _operand(y), loc)

        def emit(dst, acc):
            return _native.elementwise(dst, op, xo, yo, dt, loc)

        return _core.pending(op, emit, loc)

    fn.__name__ = op
    fn.__qualname__ = op
    fn._nki_alu = op
    fn.__doc__ = f"nl.{op}(x, y): element-wise on the vector engine (tile and tile, tile and scalar, " \
                 "tile and (P, 1) tile)."
    if op in _COMPARISONS:
        fn.__doc__ += " 1 where it holds, 0 where not: a bool_ tile by default, else in the given dtype " \
                      "(dtype=None: the operands' dtype)."
    return fn


add = _ew("add")
subtract = _ew("subtract")
multiply = _ew("multiply")
divide = _ew("divide")
maximum = _ew("maximum")
minimum = _ew("minimum")
equal = _ew("equal")
not_equal = _ew("not_equal")
greater = _ew("greater")
greater_equal = _ew("greater_equal")
less = _ew("less")
less_equal = _ew("less_equal")
power = _ew("power")
mod = _ew("mod")
fmod = _ew("fmod")
logical_and = _ew("logical_and")
logical_or = _ew("logical_or")
logical_xor = _ew("logical_xor")
_logical_not2 = _ew("logical_not")
bitwise_and = _ew("bitwise_and")
bitwise_or = _ew("bitwise_or")
bitwise_xor = _ew("bitwise_xor")
left_shift = _ew("left_shift")
right_shift = _ew("right_shift")
_invert2 = _ew("invert")


def invert(x, dtype=None, mask=None, **kwargs):
    """nl.invert(x): ~x, the bits of an integer tile inverted within its dtype (vector engine: the
    unary invert, one tensor_scalar)."""
    if not isinstance(x, Tensor):
        return ~x
    return _invert2(x, 0, dtype=dtype, mask=mask)


invert._nki_alu = "invert"
bitwise_not = invert


def logical_not(x, dtype=_BOOL_DEFAULT, mask=None, **kwargs):
    """nl.logical_not(x): 1 where x is zero, 0 elsewhere (NaN is nonzero), a bool_ tile by default (dtype=None:
    x's dtype): the vector engine's unary logical_not (one tensor_scalar)."""
    if not isinstance(x, Tensor):
        return not bool(x)
    return _logical_not2(x, 0.0, dtype=dtype, mask=mask)


logical_not._nki_alu = "logical_not"


def _reduction(op, alu):
    @maskable(op, nl=True)
    def fn(x, axis, dtype=None, keepdims=False, **kwargs):
        from . import isa as nisa
        return nisa.tensor_reduce(fn, x, axis, dtype=dtype, keepdims=keepdims)

    fn.__name__ = op
    fn._nki_alu = alu
    fn.__doc__ = f"nl.{op}(x, axis): a reduction over free axes (tensor_reduce on the vector engine); also an op argument."
    return fn


max = _reduction("max", "maximum")
min = _reduction("min", "minimum")
sum = _reduction("sum", "add")
prod = _reduction("prod", "multiply")


@maskable("mean", nl=True)
def mean(x, axis, dtype=None, mask=None, keepdims=False, **kwargs):
    """nl.mean(x, axis): the sum over the free axes (tensor_reduce add, in float32) times 1/n in
    float32 (tensor_scalar multiply), n the number of elements summed; in `dtype` (default x's)."""
    from . import isa as nisa
    _core.require_trace("mean")
    loc = caller()
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    shape = x.shape
    n = 1
    for a in axes:
        a = _core.integer(a, "an axis of nl.mean")
        if a < 1 or a >= len(shape):
            raise ValueError(f"{loc}: nl.mean over axis {a} of a tile of shape {tuple(shape)}: the axes must be free "
                             "axes (1 to the tile's last)")
        n *= int(shape[a])
    total = nisa.tensor_reduce(np.add, x, axis, dtype=float32, keepdims=keepdims)
    return nisa.tensor_scalar(total, np.multiply, float(np.float32(1.0) / np.float32(n)),
                              dtype=x.dtype if dtype is None else dtype)


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


def _act(name):
    @maskable(name, nl=True)
    def fn(x, dtype=None, **kwargs):
        from . import isa as nisa
        if not isinstance(x, Tensor):
            if isinstance(x, (int, float, np.integer, np.floating)):
                return _PY_ACT[name](x)
            raise TypeError(f"nl.{name} takes a tile, got {type(x).__name__}")
        return nisa.activation(fn, x, dtype=dtype)

    fn.__name__ = name
    fn.__qualname__ = name
    fn._nki_act = name
    fn.__doc__ = f"nl.{name}(x): element-wise on the scalar engine (one activation instruction); also the op " \
                 "argument of nisa.activation."
    return fn


# The activation functions the model's scalar engine has (firmware/isa/ncore_isa.json, act_func).
relu = _act("relu")
exp = _act("exp")
log = _act("log")
tanh = _act("tanh")
sigmoid = _act("sigmoid")
sqrt = _act("sqrt")
rsqrt = _act("rsqrt")
reciprocal = _act("reciprocal")
square = _act("square")
abs = _act("abs")
negative = _act("negative")
sign = _act("sign")
gelu_apprx_tanh = _act("gelu_apprx_tanh")
silu = _act("silu")
softplus = _act("softplus")
gelu = _act("gelu")
erf = _act("erf")
sin = _act("sin")
cos = _act("cos")
tan = _act("tan")
arctan = _act("arctan")
mish = _act("mish")
gelu_dx = _act("gelu_dx")
gelu_apprx_sigmoid = _act("gelu_apprx_sigmoid")
silu_dx = _act("silu_dx")
erf_dx = _act("erf_dx")
ceil = _act("ceil")
floor = _act("floor")
trunc = _act("trunc")
identity = copy
copy._nki_act = "copy"


def _unmodelled(name, kind):
    def fn(*args, **kwargs):
        loc = caller()
        raise ValueError(f"{loc}: nl.{name} is not supported by this model ({kind})")

    fn.__name__ = name
    fn._nki_act = name
    return fn


for _n in ["atomic_rmw", "all_reduce", "dynamic_range"]:
    globals()[_n] = _unmodelled(_n, "an operation the model does not have")


# --- calls lowered to instruction sequences (kernels/nki/src/compose.cpp; README, "Composite calls") --

def _axes(axis):
    return [_core.integer(a, "an axis") for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]


def _out_dtype(dtype):
    return None if dtype is None else _dtype(dtype).name


def where(condition, x, y, *, dtype=None, mask=None, **kwargs):
    """x where condition is non-zero (NaN counts as true), y elsewhere; x and y tiles of condition's
    shape, (P, 1) tiles or numbers (vector engine: two tensor_scalar and a maximum of minimums)."""
    _core.require_trace("where")
    _no_mask(mask, "where")
    loc = caller()
    c, xo, yo = _core.native(condition), _operand(x), _operand(y)
    like = next((t for t in (x, y) if isinstance(t, Tensor) and t._native().shape == c.shape), condition)
    dt = _out_dtype(dtype) or like.dtype.name

    def emit(dst, acc):
        if dst is None:
            dst = _native.ndarray([(n, False) for n in c.shape], dt, "sbuf", "where_result", loc)
        _native.where(dst, c, xo, yo, loc)
        return dst

    return _core.pending("where", emit, loc)


def _reduction_call(name, native_fn, default_dtype=None):
    def fn(x, axis, *, dtype=default_dtype, mask=None, **kwargs):
        _core.require_trace(name)
        _no_mask(mask, name)
        loc = caller()
        xn, ax = _core.native(x), _axes(axis)
        dt = _out_dtype(dtype)
        return _core.pending(name, lambda dst, acc: native_fn(dst, xn, ax, dt, loc), loc)

    fn.__name__ = name
    return fn


var = _reduction_call("var", _native.var)
var.__doc__ = "nl.var(x, axis): the population variance over free axes (NumPy's ddof=0), on the vector engine."
all = _reduction_call("all", _native.all, default_dtype=_BOOL_DEFAULT)
all.__doc__ = "nl.all(x, axis): 1 where every element over the free axes is non-zero, 0 where not (a bool_ tile " \
              "unless a dtype is given)."
_softmax = _reduction_call("softmax", _native.softmax)


def softmax(x, axis, *, dtype=None, compute_dtype=None, mask=None, **kwargs):
    """exp(x - max) / sum over the free axes: max, subtract, exp, sum, divide (in float32)."""
    return _softmax(x, axis, dtype=dtype, mask=mask)


def rms_norm(x, w, axis, n, epsilon=1e-06, *, dtype=None, compute_dtype=None, mask=None, **kwargs):
    """x / sqrt(sum(x^2 over axis) / n + epsilon) * w (w a tile of x's shape, a (P, 1) tile or a
    number): square, sum, divide and add, sqrt, divide, multiply (in float32)."""
    _core.require_trace("rms_norm")
    _no_mask(mask, "rms_norm")
    loc = caller()
    xn, wo, ax, dt = _core.native(x), _operand(w), _axes(axis), _out_dtype(dtype)
    return _core.pending("rms_norm", lambda dst, acc: _native.rms_norm(dst, xn, wo, ax, int(n), float(epsilon), dt,
                                                                       loc), loc)


def loop_reduce(x, op, loop_indices, *, dtype=None, mask=None, **kwargs):
    """dst = dst op x (tensor_tensor), dst the tile the result is assigned to: `b = nl.loop_reduce(a,
    op=np.add, loop_indices=[i])` reduces into the tile b names, `b[...] = nl.loop_reduce(...)` into
    that view."""
    from . import isa as nisa
    _core.require_trace("loop_reduce")
    run = _no_mask(mask, "loop_reduce", x, skip=True)
    loc = caller()
    xn, o = _core.native(x), nisa.alu_name(op)
    target = _assigned_tile(loc)

    def emit(dst, acc):
        dst = dst if dst is not None else target
        if dst is None:
            raise ValueError(f"{loc}: the result of nl.loop_reduce must be assigned to the tile it reduces into "
                             "(b = nl.loop_reduce(a, op, loop_indices) with b a tile, or b[...] = ...)")
        if run:
            _native.loop_reduce(dst, xn, o, loc)
        return dst

    return _core.pending("loop_reduce", emit, loc)


def _assigned_tile(loc):
    """The tile the kernel's statement at `loc` assigns to by name (`b = ...`), or None."""
    import ast
    import linecache
    import sys
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


def gather_flattened(data, indices, *, mask=None, dtype=None, **kwargs):
    """out[p, j] = data[p, indices[p, j]] over the flattened free axes (indices: a float tile of whole
    numbers, this model having no uint32): per index column a compare with a constant index tile, a
    minimum and a max-reduction (vector engine)."""
    _core.require_trace("gather_flattened")
    _no_mask(mask, "gather_flattened")
    loc = caller()
    d, i, dt = _core.native(data), _core.native(indices), _out_dtype(dtype)
    return _core.pending("gather_flattened", lambda dst, acc: _native.gather_flattened(dst, d, i, dt, loc), loc)


def rand(shape, dtype=float32, **kwargs):
    """A new SBUF tile of uniform values in [0, 1): the kernel's next random numbers (a splitmix64
    stream nl.random_seed starts), fixed when the kernel is traced, as a constant loaded by one
    dma_copy (the C++ API's nl::rand says more)."""
    _core.require_trace("rand")
    _core.flush()
    loc = caller()
    return Tensor(_native.rand([n for n, _ in _shape_arg(shape)], _dtype(dtype).name, loc))


def random_seed(seed, *, mask=None, **kwargs):
    """Starts the kernel's random numbers (nl.rand, dropout) from `seed`: the same seed, the same
    sequence."""
    _core.require_trace("random_seed")
    _no_mask(mask, "random_seed")
    _core.flush()
    _native.random_seed(_core.integer(seed, "the seed of nl.random_seed"), caller())


def dropout(x, rate, *, dtype=None, mask=None, **kwargs):
    """x with each element replaced by 0 with probability rate (nisa.dropout)."""
    from . import isa as nisa
    return nisa.dropout(x, rate, dtype=dtype, mask=mask)


def shared_constant(constant, dtype=None, **kwargs):
    """A constant HBM tensor holding `constant` (a NumPy array), stored in the Program and copied
    into HBM before the kernel runs; dtype defaults to the array's (float32 or float16)."""
    _core.require_trace("shared_constant")
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
    _core.require_trace("shared_identity_matrix")
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


def transpose(x, dtype=None, mask=None, **kwargs):
    """x [P <= 128, F <= 128] transposed on the tensor engine (a PSUM tile [F, P]), as NKI lowers it."""
    from . import isa as nisa
    _no_mask(mask, "transpose")
    return nisa.nc_transpose(x)


def matmul(x, y, transpose_x=False, mask=None, **kwargs):
    """x @ y on the tensor engine into a new PSUM tile (float32): x [M, K] and y [K, N] in the SBUF
    (transpose_x=True: x given as [K, M]). Without transpose_x, x is first transposed on the tensor
    engine (nc_transpose into PSUM, copied back to the SBUF in x's dtype), as NKI lowers it."""
    from . import isa as nisa
    _no_mask(mask, "matmul")
    if not transpose_x:
        x = nisa.tensor_copy(nisa.nc_transpose(x), dtype=x.dtype)
    return nisa.nc_matmul(x, y)


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
                v = loop.next()
                if v is None:
                    return
                try:
                    yield v
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
        return IndexExpr(self.start + _core.as_int(k, "an offset of an index expression"), self.terms, self.sizes,
                         self.ndim)

    __radd__ = __add__

    def __sub__(self, k):
        return self + (-k if isinstance(k, IndexExpr) else -_core.as_int(k, "an offset of an index expression"))

    def __rsub__(self, k):
        return (-self) + k

    def __neg__(self):
        return self * -1

    def __mul__(self, k):
        if isinstance(k, IndexExpr):
            raise ValueError("multiplying two index expressions is not affine")
        k = _core.integer(k, "a factor of an index expression")
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
    r = builtins.range(*[_core.integer(a, "an argument of nl.arange") for a in args])
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
