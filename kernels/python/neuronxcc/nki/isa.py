"""neuronxcc.nki.isa (nisa) on the ncore model: the instructions of the NeuronCore's engines,
with NKI's signatures. Each traces one instruction through the C++ API (kernels/nki), which
checks the hardware's rules in NKI's words. An instruction with a result returns a pending tile
(see _core.py): `x[...] = nisa.tensor_copy(t)` writes into x, `psum += nisa.nc_matmul(a, b)`
accumulates into psum.
"""
from enum import IntEnum
import functools
import inspect

import numpy as np


from . import _core
from . import _mask
from ._mask import maskable, native as _native
from ._core import caller, operand as _operand

# Engines (the `engine` arguments are accepted; the model picks the engine NKI's lowering picks).
# Their ids are the ISA description's (firmware/isa/ncore_isa.json), which are NKI's: tensor 1,
# scalar 2, gpsimd 3, dma 4, vector 5.
_ENGINE_IDS = dict(_native.engine_ids())
unknown_engine = _ENGINE_IDS["none"]
tensor_engine = _ENGINE_IDS["pe"]
scalar_engine = _ENGINE_IDS["act"]
gpsimd_engine = _ENGINE_IDS["pool"]
dma_engine = _ENGINE_IDS["dma"]
vector_engine = _ENGINE_IDS["dve"]


class nc_version(IntEnum):
    """NeuronCore version."""
    gen2 = 2  # Trn1/Inf2
    gen3 = 3  # Trn2


def get_nc_version():
    from . import _run
    return nc_version.gen2 if _run.current_preset() == "trn1" else nc_version.gen3


# --- operators ------------------------------------------------------------------------------------

_NUMPY_ALU = {"add": "add", "subtract": "subtract", "multiply": "multiply", "maximum": "maximum",
              "minimum": "minimum", "max": "maximum", "min": "minimum", "amax": "maximum", "amin": "minimum",
              "sum": "add", "divide": "divide", "true_divide": "divide", "equal": "equal", "not_equal": "not_equal",
              "greater": "greater", "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal",
              "power": "power", "remainder": "mod", "mod": "mod", "fmod": "fmod", "logical_and": "logical_and",
              "logical_or": "logical_or", "logical_xor": "logical_xor", "logical_not": "logical_not",
              "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
              "invert": "invert", "bitwise_not": "invert", "left_shift": "left_shift", "right_shift": "right_shift"}
# The engines' ALU ops and the scalar engine's activation functions, as the ISA description lists
# them (firmware/isa/ncore_isa.json), and the NumPy ufuncs NKI accepts for the functions.
_ALU = tuple(_native.alu_names())
_ALU_NAMES = ", ".join(_ALU)
_ACT = tuple(_native.act_names())
_NUMPY_ACT = {"exp": "exp", "log": "log", "tanh": "tanh", "sqrt": "sqrt", "reciprocal": "reciprocal",
              "square": "square", "absolute": "abs", "abs": "abs", "negative": "negative", "sign": "sign",
              "copy": "copy", "identity": "copy", "sin": "sin", "cos": "cos", "tan": "tan", "arctan": "arctan",
              "ceil": "ceil", "floor": "floor", "trunc": "trunc"}


def alu_name(op, param="op"):
    """The model's name of an ALU operator given as nl.add, np.add, nl.max, ..."""
    if op is None:
        return "bypass"
    name = getattr(op, "_nki_alu", None)
    if name is None and isinstance(op, np.ufunc):
        name = _NUMPY_ALU.get(op.__name__)
    if name is None:
        name = _NUMPY_ALU.get(getattr(op, "__name__", None)) if callable(op) else None
    if name is None:
        loc = caller()
        raise ValueError(f"{loc}: {param}={getattr(op, '__name__', op)!r} is not an ALU operator this model "
                         f"has ({_ALU_NAMES})")
    return name


def act_name(op):
    """The model's name of an activation function given as nl.exp, np.exp, nl.copy, ..."""
    name = getattr(op, "_nki_act", None)
    if name is None and isinstance(op, np.ufunc):
        name = _NUMPY_ACT.get(op.__name__)
    if name is None and getattr(op, "__name__", None) in ("copy", "identity", "relu"):
        name = op.__name__
    if name == "identity":
        name = "copy"
    if name not in _ACT:
        loc = caller()
        label = getattr(op, "__name__", repr(op))
        label = f"nl.{label}" if hasattr(op, "_nki_act") else f"np.{label}" if isinstance(op, np.ufunc) else label
        raise ValueError(f"{loc}: {label} is not supported by this model as an activation function: its scalar "
                         f"engine has {', '.join('nl.' + a for a in _ACT)}")
    return name


def _dt(dtype):
    return None if dtype is None else _core.dtype(dtype).name


def _no_mask(mask, api, *operands):
    """mask= of a call that applies it whole (_mask.whole): True to issue the call, False (a mask
    that keeps nothing, such as `m == 0` of a loop index past its first iteration) to issue no
    instruction."""
    return _mask.whole(mask, api, operands)


def _producer(kind, fn, run=True):
    """A pending result of `kind` whose emit(dst, acc) calls fn(dst). run False (a mask that keeps
    nothing): assigned or accumulated into a tile it issues nothing and leaves the tile as it is;
    a result used as a new tile is still computed (NKI leaves its values undefined)."""
    loc = caller()
    if not run:
        return _core.pending(kind, lambda dst, acc: dst if dst is not None else fn(None), loc)
    return _core.pending(kind, lambda dst, acc: fn(dst), loc)


# --- data movement ---------------------------------------------------------------------------------

@maskable("dma_copy")
def dma_copy(src=None, dst=None, **kwargs):
    """Copies src to dst with the DMA engines (HBM or SBUF on either side); casts when the dtypes
    differ."""
    _core.require_trace("dma_copy")
    if src is None or dst is None:
        raise TypeError("dma_copy needs src and dst")
    loc = caller()
    s, d = _core.native(src), _core.native(dst)
    _core.flush()
    _native.dma_copy(d, s, loc)


# --- vector engine -----------------------------------------------------------------------------------

@maskable("tensor_tensor")
def tensor_tensor(data1, data2, op, *, dtype=None, mask=None, **kwargs):
    """data1 <op> data2, element-wise (vector engine)."""
    _core.require_trace("tensor_tensor")
    loc = caller()
    a, b, o, dt = _core.native(data1), _core.native(data2), alu_name(op), _dt(dtype)
    if _per_partition(a) != _per_partition(b):
        # A (P, 1) operand against a tile: broadcast along the free axes, as tensor_scalar.
        return _producer("tensor_tensor", lambda dst: _native.elementwise(dst, o, a, b, dt, loc))
    return _producer("tensor_tensor", lambda dst: _native.tensor_tensor(dst, a, b, o, dt, loc))


def _per_partition(t):
    n = 1
    for s in t.shape[1:]:
        n *= s
    return n == 1


@maskable("tensor_scalar")
def tensor_scalar(data, op0, operand0, reverse0=False, op1=None, operand1=None, reverse1=False, *, dtype=None,
                  mask=None, engine=0, **kwargs):
    """(data <op0> operand0) <op1> operand1 with scalars or (P, 1) tiles (vector engine)."""
    _core.require_trace("tensor_scalar")
    loc = caller()
    d = _core.native(data)
    o0, o1 = alu_name(op0, "op0"), alu_name(op1, "op1")
    x0, x1 = _operand(operand0), _operand(operand1)
    dt = _dt(dtype)
    return _producer("tensor_scalar", lambda dst: _native.tensor_scalar(dst, d, o0, x0, bool(reverse0), o1, x1,
                                                                        bool(reverse1), dt, loc))


@maskable("tensor_copy")
def tensor_copy(src, *, mask=None, dtype=None, engine=0, **kwargs):
    """A copy of an SBUF or PSUM tile, cast to `dtype` (vector engine)."""
    _core.require_trace("tensor_copy")
    loc = caller()
    s, dt = _core.native(src), _dt(dtype)
    return _producer("tensor_copy", lambda dst: _native.tensor_copy(dst, s, dt, loc))


@maskable("memset")
def memset(shape, value, dtype, *, mask=None, engine=0, **kwargs):
    """A new SBUF tile of `shape` filled with `value` (vector engine)."""
    from . import language as nl
    _core.require_trace("memset")
    loc = caller()
    shp, dt, v = nl._shape_arg(shape), _core.dtype(dtype).name, float(value)

    def emit(dst, acc):
        if dst is None:
            dst = _native.ndarray(shp, dt, "sbuf", "", loc)
        _native.memset(dst, v, loc)
        return dst

    return _core.pending("memset", emit, loc)


@maskable("tensor_reduce")
def tensor_reduce(op, data, axis, *, mask=None, dtype=None, negate=False, keepdims=False, **kwargs):
    """op (add, multiply, maximum, minimum) over the trailing free axes of data (vector engine)."""
    _core.require_trace("tensor_reduce")
    loc = caller()
    d, o, dt = _core.native(data), alu_name(op), _dt(dtype)
    axes = [_core.integer(a, "an axis of tensor_reduce") for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
    if negate:
        # -(reduction): the reduction in float32, then a multiply by -1 (exact) into dtype
        r = _core.pending("tensor_reduce",
                          lambda dst, acc: _native.tensor_reduce(dst, o, d, axes, "float32", bool(keepdims), loc), loc)
        return tensor_scalar(r, np.multiply, -1.0, dtype=dtype if dtype is not None else data.dtype)
    return _producer("tensor_reduce", lambda dst: _native.tensor_reduce(dst, o, d, axes, dt, bool(keepdims), loc))


# --- scalar engine -----------------------------------------------------------------------------------

@maskable("activation")
def activation(op, data, *, bias=None, scale=1.0, mask=None, dtype=None, **kwargs):
    """op(data * scale + bias) (scalar engine): scale a number or an fp32 (P, 1) tile, bias a (P, 1) tile."""
    _core.require_trace("activation")
    loc = caller()
    d, o, dt = _core.native(data), act_name(op), _dt(dtype)
    b, s = _operand(bias), _operand(scale)
    return _producer("activation", lambda dst: _native.activation(dst, o, d, b, s, dt, loc))


@maskable("activation_reduce")
def activation_reduce(op, data, *, reduce_op, reduce_res, bias=None, scale=1.0, mask=None, dtype=None, **kwargs):
    """activation, and the add-reduce of its results along the free axis into reduce_res (P, 1)."""
    _core.require_trace("activation_reduce")
    loc = caller()
    d, o, dt = _core.native(data), act_name(op), _dt(dtype)
    r, ro = _core.native(reduce_res), alu_name(reduce_op, "reduce_op")
    b, s = _operand(bias), _operand(scale)
    return _producer("activation_reduce",
                     lambda dst: _native.activation_reduce(dst, o, d, ro, r, b, s, dt, loc))


# --- tensor engine -----------------------------------------------------------------------------------

def nc_matmul(stationary, moving, *, is_stationary_onezero=False, is_moving_onezero=False, is_transpose=False,
              mask=None, **kwargs):
    """stationary.T @ moving on the tensor engine into a PSUM tile (float32). `psum += nc_matmul(...)`
    accumulates; assigned to a PSUM tile it overwrites it."""
    _core.require_trace("nc_matmul")
    run = _no_mask(mask, "nc_matmul", stationary, moving)
    loc = caller()
    s, m = _core.native(stationary), _core.native(moving)

    def emit(dst, acc):
        # acc: False when assigned (x[...] = nc_matmul(...) overwrites), None when accumulated
        # (psum += nc_matmul(...): the first into a fresh tile overwrites, the next ones add).
        if not run and dst is not None:
            return dst  # a mask that keeps nothing: no multiply
        return _native.nc_matmul(dst, s, m, acc, loc)

    return _core.pending("nc_matmul", emit, loc)


@maskable("nc_transpose")
def nc_transpose(data, *, mask=None, dtype=None, engine=0, **kwargs):
    """data [P <= 128, F <= 128] transposed on the tensor engine into a PSUM tile [F, P] (float32);
    dtype: then copied to the SBUF in that dtype. engine=vector_engine (a 32x32 transpose on the
    vector engine) also runs on the tensor engine here: the same values, the tensor engine's timing."""
    _core.require_trace("nc_transpose")
    loc = caller()
    d = _core.native(data)
    t = _producer("nc_transpose", lambda dst: _native.nc_transpose(dst, d, loc))
    if dtype is not None:
        # NKI inserts a cast: the PSUM result copied to the SBUF in `dtype` (under a mask, the
        # transposed box of it).
        st = _core._state
        outer = st.mask
        st.mask = _mask.transposed(outer)
        try:
            return tensor_copy(t, dtype=dtype)
        finally:
            st.mask = outer
    return t


# --- calls lowered to instruction sequences (kernels/nki/src/compose.cpp; README, "Composite calls") --

def _affine(expr, api, param):
    """An nl.arange / nl.mgrid expression (or an int) as the native (start, coefficients, grid)."""
    from . import language as nl
    if isinstance(expr, (int, np.integer)):
        return (_core.integer(expr, param), [0, 0], [1, 1])
    if not isinstance(expr, nl.IndexExpr):
        loc = caller()
        raise ValueError(f"{loc}: {param} of '{api}' must be an affine expression of nl.arange / nl.mgrid indices, "
                         f"got {type(expr).__name__}")
    return expr._native_affine()


def _predicate(pred):
    """An affine predicate (i_p - i_f >= 0, combined with &) or expression (true where > 0) as the
    native list of ((start, coefficients, grid), comparison)."""
    from . import language as nl
    if isinstance(pred, nl.AffinePredicate):
        return [(e._native_affine(), op) for e, op in pred.terms]
    return [(_affine(pred, "affine_select", "pred"), "greater")]


def iota(expr, dtype, *, mask=None, **kwargs):
    """The values of an affine expression of nl.arange indices (int32 arithmetic) as a new SBUF tile
    of `dtype`, shaped like the expression's grid: a constant HBM tensor of the values and one
    dma_copy."""
    _core.require_trace("iota")
    run = _no_mask(mask, "iota")
    loc = caller()
    e, dt = _affine(expr, "iota", "expr"), _core.dtype(dtype).name
    return _producer("iota", lambda dst: _native.iota(dst, e, dt, loc), run)


def affine_select(pred, on_true_tile, on_false_value, *, mask=None, dtype=None, **kwargs):
    """on_true_tile where the affine predicate holds, on_false_value (float32) elsewhere: a constant
    tile of bounds loaded by one dma_copy, then a maximum and a minimum (vector engine)."""
    _core.require_trace("affine_select")
    run = _no_mask(mask, "affine_select", on_true_tile)
    loc = caller()
    p, t, v, dt = _predicate(pred), _core.native(on_true_tile), float(on_false_value), _dt(dtype)
    return _producer("affine_select", lambda dst: _native.affine_select(dst, p, t, v, dt, loc), run)


def tensor_copy_predicated(dst=None, src=None, predicate=None, reverse_pred=False, *, mask=None, dtype=None,
                           **kwargs):
    """dst = src where predicate is non-zero (reverse_pred: where it is zero), dst unchanged
    elsewhere; src a tile of dst's shape and dtype, a (P, 1) tile or a number (vector engine)."""
    _core.require_trace("tensor_copy_predicated")
    run = _no_mask(mask, "tensor_copy_predicated", dst, src)
    loc = caller()
    if dst is None or src is None or predicate is None:
        raise TypeError("tensor_copy_predicated needs src, dst and predicate")
    if not run:
        return
    d, s, p = _core.native(dst), _operand(src), _core.native(predicate)
    _core.flush()
    _native.tensor_copy_predicated(d, s, p, bool(reverse_pred), loc)


def scalar_tensor_tensor(*, data, op0, operand0, op1, operand1, reverse0=False, reverse1=False, dtype=None, mask=None,
                         **kwargs):
    """(data op0 operand0) op1 operand1: operand0 a number or a (P, 1) tile, operand1 a tile of
    data's shape (tensor_scalar, then tensor_tensor)."""
    _core.require_trace("scalar_tensor_tensor")
    run = _no_mask(mask, "scalar_tensor_tensor", data)
    loc = caller()
    d, o0, o1 = _core.native(data), alu_name(op0, "op0"), alu_name(op1, "op1")
    x0, x1, dt = _operand(operand0), _core.native(operand1), _dt(dtype)
    return _producer("scalar_tensor_tensor", lambda dst: _native.scalar_tensor_tensor(
        dst, d, o0, x0, o1, x1, bool(reverse0), bool(reverse1), dt, loc), run)


def tensor_scalar_reduce(*, data, op0, operand0, reduce_op, reduce_res, reverse0=False, dtype=None, mask=None,
                         **kwargs):
    """data op0 operand0, and its reduce_op (add, multiply, maximum, minimum) over every free axis
    written into reduce_res, a (P, 1) tile (tensor_scalar, then tensor_reduce)."""
    _core.require_trace("tensor_scalar_reduce")
    run = _no_mask(mask, "tensor_scalar_reduce", data)
    loc = caller()
    d, o0, x0 = _core.native(data), alu_name(op0, "op0"), _operand(operand0)
    ro, r, dt = alu_name(reduce_op, "reduce_op"), _core.native(reduce_res), _dt(dtype)
    return _producer("tensor_scalar_reduce", lambda dst: _native.tensor_scalar_reduce(
        dst, d, o0, x0, ro, r, bool(reverse0), dt, loc), run)


@maskable("tensor_tensor_scan")
def tensor_tensor_scan(data0, data1, initial, op0, op1, reverse0=False, reverse1=False, *, dtype=None, mask=None,
                       **kwargs):
    """The scan r[:, i] = (data0[:, i] op0 r[:, i-1]) op1 data1[:, i] from r[:, -1] = initial (a
    number or a (P, 1) tile), carried in float32: one tensor_scalar per column (vector engine)."""
    _core.require_trace("tensor_tensor_scan")
    loc = caller()
    d0, d1, init = _core.native(data0), _core.native(data1), _operand(initial)
    o0, o1, dt = alu_name(op0, "op0"), alu_name(op1, "op1"), _dt(dtype)
    return _producer("tensor_tensor_scan", lambda dst: _native.tensor_tensor_scan(
        dst, d0, d1, init, o0, o1, bool(reverse0), bool(reverse1), dt, loc))


@maskable("bn_stats")
def bn_stats(data, *, mask=None, dtype=None, **kwargs):
    """(count, mean, count * variance) of the even-indexed and of the odd-indexed elements of each
    partition (at most 512): a (P, 6) tile (vector and scalar engines)."""
    _core.require_trace("bn_stats")
    loc = caller()
    d, dt = _core.native(data), _dt(dtype)
    return _producer("bn_stats", lambda dst: _native.bn_stats(dst, d, dt, loc))


def bn_aggr(data, *, mask=None, dtype=None, **kwargs):
    """The mean and variance, a (P, 2) tile, of the elements the bn_stats triples in data describe."""
    _core.require_trace("bn_aggr")
    run = _no_mask(mask, "bn_aggr", data)
    loc = caller()
    d, dt = _core.native(data), _dt(dtype)
    return _producer("bn_aggr", lambda dst: _native.bn_aggr(dst, d, dt, loc), run)


def max8(*, src, mask=None, dtype=None, **kwargs):
    """The 8 largest values of each partition of src (8 to 16384 elements), in descending order: a
    (P, 8) tile (vector engine: per value a maximum, then its first position set to -inf)."""
    _core.require_trace("max8")
    run = _no_mask(mask, "max8", src)
    loc = caller()
    s, dt = _core.native(src), _dt(dtype)
    return _producer("max8", lambda dst: _native.max8(dst, s, dt, loc), run)


def nc_find_index8(*, data, vals, mask=None, dtype=None, **kwargs):
    """The position of the first occurrence in each partition of data of each of vals' 8 values: a
    (P, 8) tile of float32 indices (NKI's uint32 and uint16 are not modelled)."""
    _core.require_trace("nc_find_index8")
    run = _no_mask(mask, "nc_find_index8", data)
    loc = caller()
    d, v, dt = _core.native(data), _core.native(vals), _dt(dtype)
    return _producer("nc_find_index8", lambda dst: _native.nc_find_index8(dst, d, v, dt, loc), run)


def nc_match_replace8(*, data, vals, imm, dst_idx=None, mask=None, dtype=None, **kwargs):
    """data with the first occurrence of each of vals' 8 values replaced by imm; their positions
    into dst_idx (P, 8) when given (float32 indices)."""
    _core.require_trace("nc_match_replace8")
    run = _no_mask(mask, "nc_match_replace8", data)
    loc = caller()
    d, v, i, dt = _core.native(data), _core.native(vals), _core.native(dst_idx), _dt(dtype)
    return _producer("nc_match_replace8",
                     lambda dst: _native.nc_match_replace8(dst, d, v, float(imm), i, dt, loc), run)


def dropout(data, prob, *, mask=None, dtype=None, **kwargs):
    """data with each element replaced by 0 with probability prob (a number or a (P, 1) tile), not
    rescaled: the kernel's next random numbers (see nl.rand) compared with prob, then a select."""
    _core.require_trace("dropout")
    run = _no_mask(mask, "dropout", data)
    loc = caller()
    d, p, dt = _core.native(data), _operand(prob), _dt(dtype)
    return _producer("dropout", lambda dst: _native.dropout(dst, d, p, dt, loc), run)


# --- not modelled --------------------------------------------------------------------------------------

def _unmodelled(name):
    def fn(*args, **kwargs):
        loc = caller()
        raise ValueError(f"{loc}: nisa.{name} is not supported by this model (its engines run dma_copy, "
                         "tensor_tensor, tensor_scalar, tensor_copy, memset, tensor_reduce, activation, "
                         "activation_reduce, nc_matmul and nc_transpose, and the calls lowered to them: iota, "
                         "affine_select, tensor_copy_predicated, scalar_tensor_tensor, tensor_scalar_reduce, "
                         "tensor_tensor_scan, bn_stats, bn_aggr, max8, nc_find_index8, nc_match_replace8, dropout)")

    fn.__name__ = name
    return fn


def reciprocal(data, *, dtype=None, mask=None, **kwargs):
    """1 / data, element-wise, correctly rounded (vector engine: tensor_scalar divide, reversed)."""
    return tensor_scalar(data, np.divide, 1.0, reverse0=True, dtype=dtype, mask=mask)


for _n in ["local_gather", "dma_transpose", "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst",
           "tensor_partition_reduce", "range_select", "select_reduce", "sequence_bounds", "builtin_custom_op",
           "exponential"]:
    globals()[_n] = _unmodelled(_n)


class _Enum:
    def __init__(self, **kw):
        self.__dict__.update(kw)


class constants:
    """nki.isa.constants: the engine, out-of-bounds and descriptor-generation enums."""
    engine = _Enum(unknown=unknown_engine, tensor=tensor_engine, vector=vector_engine, scalar=scalar_engine,
                   gpsimd=gpsimd_engine, dma=dma_engine)
    oob_mode = _Enum(error=0, skip=1)
    dge_mode = _Enum(unknown=0, none=1, swdge=2, hwdge=3)


engine = constants.engine  # nisa.engine.vector, as NKI's newer releases spell it


# --- the dst= form -----------------------------------------------------------------------------------

# Keywords of NKI's ISA calls that change nothing this model computes: accepted and ignored.
# Any other keyword a call does not take is an error (never silently dropped).
_IGNORED_KEYWORDS = {"name", "engine", "dge_mode", "oob_mode", "perf_mode", "tile_position", "tile_size",
                     "is_transpose", "is_stationary_onezero", "is_moving_onezero", "reduce_cmd"}


def _dst_form(fn):
    """NKI's newer spelling of an ISA call, the destination first (nisa.tensor_copy(dst=t, src=s)):
    the instruction writes into dst as `t[...] = nisa.tensor_copy(s)` does. nc_matmul's accumulate
    is NKI's: True adds to dst, False overwrites it, None (the default) overwrites the first time a
    PSUM location is written and adds after that. activation with reduce_res is activation_reduce.
    A keyword the call does not take raises TypeError."""
    params = inspect.signature(fn).parameters
    taken = {n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD}
    name = fn.__name__

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if not kwargs:
            return fn(*args)  # positional only: nothing to check or route
        dst = kwargs.pop("dst", None)
        acc = kwargs.pop("accumulate", None) if name == "nc_matmul" else False
        target = fn
        if name == "activation" and "reduce_res" in kwargs:
            target = activation_reduce
            kwargs.setdefault("reduce_op", "add")
        elif name == "memset" and dst is not None:
            kwargs.setdefault("shape", dst.shape)
            kwargs.setdefault("dtype", dst.dtype)
        allowed = taken | ({"reduce_op", "reduce_res"} if target is activation_reduce else set())
        unknown = sorted(k for k in kwargs if k not in allowed and k not in _IGNORED_KEYWORDS)
        if unknown:
            raise TypeError(f"{caller()}: nisa.{name}() got an unexpected keyword argument '{unknown[0]}'")
        for k in _IGNORED_KEYWORDS & set(kwargs) - taken:
            kwargs.pop(k)
        res = target(*args, **kwargs)
        if dst is None:
            return res
        if not isinstance(dst, _core.Tensor):
            raise TypeError(f"{caller()}: dst of nisa.{name} must be a tile or tensor, not {type(dst).__name__}")
        if isinstance(res, _core.Tensor) and res._pending():
            _core.emit_into(res, dst._native(), acc)
        else:
            _core.assign(dst, res, caller())
        return dst

    return call


for _n in ["tensor_tensor", "tensor_scalar", "tensor_copy", "memset", "tensor_reduce", "activation",
           "activation_reduce", "nc_matmul", "nc_transpose", "iota", "affine_select", "scalar_tensor_tensor",
           "tensor_scalar_reduce", "tensor_tensor_scan", "bn_stats", "bn_aggr", "max8", "nc_find_index8",
           "dropout", "reciprocal"]:
    globals()[_n] = _dst_form(globals()[_n])


def __getattr__(name):
    # nisa.sbuf.mod_alloc (the direct-allocation spelling of the Trainium1 handout)
    if name in ("sbuf", "psum"):
        from . import compiler
        return getattr(compiler, name)
    raise AttributeError(f"module 'neuronxcc.nki.isa' has no attribute '{name}'")
