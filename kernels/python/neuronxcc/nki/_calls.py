"""The NKI calls as Python functions, made from the call surface's declarations (C++,
kernels/nki/include/nki/calls.hpp, through _ncore_native.calls()).

Each declaration gives the call's parameters as NKI names them (kind, default, keyword-only);
`functions(ns)` makes one Python function per call with exactly that signature. A call converts
its arguments to the plain forms the native module takes (by kind: a tile, a number or a (P, 1)
tile, an ALU op, an activation function, a dtype, an affine expression, a predicate, ...), turns
mask= into comparisons over the instruction's index axes, and returns a pending tile
(_core.pending) whose emission runs the call in C++ (_ncore_native.invoke), into the view it is
assigned to or into a new tile. Everything the call means (masks, tiling, broadcasts, dtypes,
where a result lands) is the C++ declaration's; this module only spells it in Python.

The destination-first spelling of NKI's newer releases is accepted by every call: dst= writes
into that view (as `t[...] = call(...)` does), and nc_matmul's accumulate= is NKI's.
"""
import ast
import enum
import linecache
import os

import numpy as np

import _ncore_native as _native

from . import _core
from ._base import Sym, caller, dtype_name, integer
from ._index import AffinePredicate, IndexExpr

DECLS = {(d["ns"], d["name"]): d for d in _native.calls()}

# --- operators and functions given as arguments ----------------------------------------------------

_NUMPY_ALU = {"add": "add", "subtract": "subtract", "multiply": "multiply", "maximum": "maximum",
              "minimum": "minimum", "max": "maximum", "min": "minimum", "amax": "maximum", "amin": "minimum",
              "sum": "add", "divide": "divide", "true_divide": "divide", "equal": "equal", "not_equal": "not_equal",
              "greater": "greater", "greater_equal": "greater_equal", "less": "less", "less_equal": "less_equal",
              "power": "power", "remainder": "mod", "mod": "mod", "fmod": "fmod", "logical_and": "logical_and",
              "logical_or": "logical_or", "logical_xor": "logical_xor", "logical_not": "logical_not",
              "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
              "invert": "invert", "bitwise_not": "invert", "left_shift": "left_shift", "right_shift": "right_shift"}
# The engines' ALU ops and the scalar engine's functions, as the ISA description lists them
# (firmware/isa/ncore_isa.json), and the NumPy ufuncs NKI accepts for the functions.
ALU = tuple(_native.alu_names())
ACT = tuple(_native.act_names())
_NUMPY_ACT = {"exp": "exp", "log": "log", "tanh": "tanh", "sqrt": "sqrt", "reciprocal": "reciprocal",
              "square": "square", "absolute": "abs", "abs": "abs", "negative": "negative", "sign": "sign",
              "copy": "copy", "identity": "copy", "sin": "sin", "cos": "cos", "tan": "tan", "arctan": "arctan",
              "ceil": "ceil", "floor": "floor", "trunc": "trunc"}


def alu_name(op, param="op"):
    """The model's name of an ALU operator given as nl.add, np.add, nl.max, ... (None: bypass)."""
    if op is None:
        return None
    name = getattr(op, "_nki_alu", None)
    if name is None and isinstance(op, np.ufunc):
        name = _NUMPY_ALU.get(op.__name__)
    if name is None and isinstance(op, str):
        name = _NUMPY_ALU.get(op, op if op in ALU else None)
    if name is None:
        name = _NUMPY_ALU.get(getattr(op, "__name__", None)) if callable(op) else None
    if name is None:
        raise ValueError(f"{caller()}: {param}={getattr(op, '__name__', op)!r} is not an ALU operator this model "
                         f"has ({', '.join(ALU)})")
    return name


def act_name(op):
    """The model's name of an activation function given as nl.exp, np.exp, nl.copy, ..."""
    name = getattr(op, "_nki_act", None)
    if name is None and isinstance(op, np.ufunc):
        name = _NUMPY_ACT.get(op.__name__)
    if name is None and getattr(op, "__name__", None) in ("copy", "identity", "relu"):
        name = op.__name__
    if name is None and isinstance(op, str):
        name = op
    if name == "identity":
        name = "copy"
    if name not in ACT:
        label = getattr(op, "__name__", repr(op))
        label = f"nl.{label}" if hasattr(op, "_nki_act") else f"np.{label}" if isinstance(op, np.ufunc) else label
        raise ValueError(f"{caller()}: {label} is not supported by this model as an activation function: its scalar "
                         f"engine has {', '.join('nl.' + a for a in ACT)}")
    return name


# NumPy scalar types the hardware has no dtype for, as NKI reads them.
_NP_SCALAR = {"float64": "float32", "int64": "int32", "uint64": "uint32", "bool": "uint8"}


def scalar_dtype(v):
    """NKI's dtype of a scalar operand of an arithmetic call: a NumPy scalar's own (np.float16(2)
    is float16); a weakly typed Python scalar the widest the hardware has: bool uint8, int int32,
    float float32 (the programming guide's "Weakly Typed Scalar Type Inference")."""
    if isinstance(v, np.generic):
        name = v.dtype.name
        return _NP_SCALAR.get(name, name)
    if isinstance(v, bool):
        return "uint8"
    if isinstance(v, (int, Sym)):
        return "int32"
    return "float32"


def is_scalar(v):
    return isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_, Sym))


# --- arguments in their plain forms (kernels/python/call_binding.cpp) --------------------------------

def _tile(v, d, p):
    if v is None:
        return None
    if isinstance(v, _core.Tensor):
        if v._defer is not None:
            base, offset, coeff, grid, err = v._defer
            return ("deferred", base, list(offset), [list(c) for c in coeff], list(grid), str(err))
        return v._native()
    if is_scalar(v):
        raise ValueError(f"{caller()}: {p['name']} of '{d['name']}' is a number: give a tile (for example one from "
                         "nl.full)")
    raise TypeError(f"{caller()}: {p['name']} of '{d['name']}' must be a tile, not {type(v).__name__}")


def _operand(v, d, p):
    if v is None:
        return None
    if isinstance(v, _core.Tensor):
        return v._native()
    if is_scalar(v):
        if isinstance(v, Sym):
            return (v, "int32")
        if isinstance(v, (bool, np.bool_)):
            return (float(v), scalar_dtype(v))
        if isinstance(v, (int, np.integer)):
            return (int(v), scalar_dtype(v))
        return (float(v), scalar_dtype(v))
    raise TypeError(f"{caller()}: {p['name']} of '{d['name']}' must be a tile or a number, not {type(v).__name__}")


def _dtype(v, d, p):
    return None if v is None else dtype_name(v)


def _affine(v, d, p):
    if v is None:
        return None
    if isinstance(v, (int, np.integer)):
        return (integer(v, p["name"]), [0, 0], [1, 1])
    if isinstance(v, Sym):
        return (v, [0, 0], [1, 1])
    if not isinstance(v, IndexExpr):
        raise ValueError(f"{caller()}: {p['name']} of '{d['name']}' must be an affine expression of nl.arange / "
                         f"nl.mgrid indices, got {type(v).__name__}")
    return v._native_affine()


def _predicate(v, d, p):
    if v is None:
        return None
    if isinstance(v, AffinePredicate):
        return [(e._native_affine(), op) for e, op in v.terms]
    return [(_affine(v, d, p), "greater")]  # a bare expression: true where it is > 0


def _axes(v, d, p):
    if v is None:
        return None
    return [integer(a, f"an axis of '{d['name']}'") for a in (v if isinstance(v, (tuple, list)) else (v,))]


def _shape(v, d, p):
    if v is None:
        return None
    if not isinstance(v, (tuple, list)):
        v = (v,)
    return _core.dims([getattr(x, "size", x) for x in v], f"a dimension of the shape of '{d['name']}'")


def _integer(v, d, p):
    if v is None or isinstance(v, Sym):
        return v
    return integer(v, f"{p['name']} of '{d['name']}'")


def _pattern(v, d, p):
    """An access pattern [[step, num], ...] as a list of integer pairs."""
    if v is None:
        return None
    what = f"{p['name']} of '{d['name']}'"
    if not isinstance(v, (list, tuple)) or not all(isinstance(x, (list, tuple)) and len(x) == 2 for x in v):
        raise ValueError(f"{caller()}: {what} must be a list of [step, num] pairs, got {v!r}")
    return [[integer(a, what), integer(b, what)] for a, b in v]


_CONVERT = {"tile": _tile, "operand": _operand, "pattern": _pattern, "any": lambda v, d, p: None, "alu_op": lambda v, d, p: alu_name(v, p["name"]),
            "act_func": lambda v, d, p: None if v is None else act_name(v), "dtype": _dtype,
            "flag": lambda v, d, p: None if v is None else bool(v),
            "number": lambda v, d, p: None if v is None else float(v), "integer": _integer, "axes": _axes,
            "affine": _affine, "predicate": _predicate, "shape": _shape}


# --- masks ---------------------------------------------------------------------------------------------

def view_axes(values):
    """The index axes of the operands' views where they are not their grids' (_core._affine_index):
    the mask's axes are placed as the operands' are."""
    axes = {}
    for x in values:
        got = getattr(x, "_axes", None) if isinstance(x, _core.Tensor) else None
        if got:
            axes.update(got)
    return axes


def mask_terms(mask, api, loc, axes=None):
    """mask= as the native form: None (no mask), False (keeps nothing), or a list of comparisons
    ({axis: coefficient}, {axis: size}, start, comparison) over the instruction's index axes."""
    if mask is None:
        return None
    if isinstance(mask, (bool, np.bool_)):
        return None if mask else False
    if not isinstance(mask, AffinePredicate):
        raise ValueError(f"{loc}: the mask of '{api}' must be a predicate on index expressions, such as "
                         f"(i_p < n) or (i * 128 + i_p < n) & (i_f < m), got {type(mask).__name__}")
    out = []
    for e, op in mask.terms:
        if axes and any((e.ndim, a) in axes for a in e.terms):
            at = lambda a, e=e: axes.get((e.ndim, a), a)  # noqa: E731
            coeff = {at(a): c for a, c in e.terms.items() if c != 0}
            sizes = {at(a): e.sizes[a] for a in e.terms}
        else:
            coeff = {(0 if a is None else a): c for a, c in e.terms.items() if c != 0}
            sizes = {(0 if a is None else a): n for a, n in e.sizes.items()}
        if isinstance(e.start, Sym):
            _decide(coeff, sizes, e.start, op)
        out.append((coeff, sizes, e.start, op))
    return out


_CMP = {"less": lambda v: v < 0, "less_equal": lambda v: v <= 0, "greater": lambda v: v > 0,
        "greater_equal": lambda v: v >= 0, "equal": lambda v: v == 0, "not_equal": lambda v: v != 0}


def _decide(coeff, sizes, start, op):
    """A comparison whose constant depends on a loop index traced once: where it keeps a different
    range in some iteration (the last, partial tile of a loop), the views of that iteration may run
    past their tensors' ends, and only Python can make them (deferred views, built box by box): the
    loop then falls back to Python after its first iteration. The comparisons below are decided
    from the loop's range (no fallback) when they hold alike in every iteration."""
    if len(coeff) != 1 or op not in _CMP:
        _native.loops_need_python()
        return
    (a, c), = coeff.items()
    for v in (start, start + c * (sizes[a] - 1)):  # the comparison at both ends of the axis
        bool(_CMP[op](v))


# --- the functions -------------------------------------------------------------------------------------

# Keywords of NKI's calls that change nothing this model computes: accepted and ignored. Any
# other keyword a call does not take is an error (never silently dropped).
IGNORED_KEYWORDS = frozenset({"name", "engine", "dge_mode", "oob_mode", "perf_mode", "tile_position", "tile_size",
                              "is_transpose", "is_stationary_onezero", "is_moving_onezero", "reduce_cmd",
                              "compute_dtype"})


def _default(text):
    if text == "":
        return _REQUIRED
    if text in ("None", "True", "False"):
        return ast.literal_eval(text)
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text  # a name: a dtype ("bool_", "float32")


_REQUIRED = object()


class NkiInstruction:
    """What an instruction of today's NKI returns: a handle (the model orders instructions by the
    data they share, so depends_on adds nothing and returns the handle)."""

    __slots__ = ("name", "loc")

    def __init__(self, name, loc):
        self.name, self.loc = name, loc

    def depends_on(self, *others):
        return self

    def __repr__(self):
        return f"<NkiInstruction {self.name} at {self.loc}>"


class Call:
    """One declaration, as a callable with NKI's parameters."""

    def __init__(self, d, today=False):
        self.d = d
        self.ns, self.name = d["ns"], d["name"]
        self.today = today  # today's spelling (import nki): d["today"]'s parameters, dst among them
        self.dialect = "nki" if today else "neuronxcc"
        self.params = d["today"] if today else d["params"]
        self.names = [p["name"] for p in self.params]
        self.mask_at = self.names.index("mask") if "mask" in self.names else -1
        self.convert = [_CONVERT[p["kind"]] for p in self.params]
        self.result = d["result"]
        self.psum = d["psum_result"]
        self.label = f"{'nisa' if self.ns == 'isa' else 'nl'}.{self.name}"

    def __call__(self, values, kwargs, dst=None, acc=False):
        d = self.d
        _core.require_trace(self.name, self.dialect)
        loc = caller()
        mask = mask_terms(values[self.mask_at], self.name, loc, view_axes(values)) if self.mask_at >= 0 else None
        args = [None if i == self.mask_at else self.convert[i](v, d, self.params[i]) for i, v in enumerate(values)]
        ns, name = self.ns, self.name
        if self.today:
            if "dst" in self.names or not self.result:  # an instruction: into its destination, now
                _core.flush()
                _native.invoke(ns, name, None, None, None, False, args, loc, True)
                return NkiInstruction(name, loc)
            return _core.pending(name, lambda into, accumulate: _native.invoke(ns, name, into, accumulate, None, False,
                                                                               args, loc, True), loc, psum=self.psum)
        if not self.result:
            _core.flush()
            _native.invoke(ns, name, None, None, mask, False, args, loc)
            return None
        res = _core.pending(name, lambda into, accumulate: _native.invoke(ns, name, into, accumulate, mask, False,
                                                                          args, loc), loc, psum=self.psum)
        if dst is None:
            return res
        if not isinstance(dst, _core.Tensor):
            raise TypeError(f"{loc}: dst of {self.label} must be a tile or tensor, not {type(dst).__name__}")
        _core.emit_into(res, dst._native(), acc)
        return dst


def _check_keywords(call, kwargs, extra=()):
    for k in kwargs:
        if k not in IGNORED_KEYWORDS and k not in ("dst", "accumulate") and k not in extra:
            raise TypeError(f"{caller()}: {call.label}() got an unexpected keyword argument '{k}'")


def function(ns, name, pre=None, extra=()):
    """The Python function of the declaration ns.name, with NKI's signature (its parameters, then
    **kwargs for dst=, accumulate= and the keywords this model ignores). pre(call, values, kwargs),
    when given, runs the call when keywords are given (a spelling's routing: activation with
    reduce_res=), which may include the keywords `extra`."""
    d = DECLS[(ns, name)]
    call = Call(d)
    glob = {"_call": call, "_check": _check_keywords, "_pre": pre, "_extra": frozenset(extra)}
    parts, seen_kw = [], False
    for i, p in enumerate(call.params):
        if p["keyword_only"] and not seen_kw:
            parts.append("*")
            seen_kw = True
        default = _default(p["default"])
        if default is _REQUIRED:
            if seen_kw:
                parts.append(p["name"])
            else:
                parts.append(p["name"])
        else:
            glob[f"_d{i}"] = default
            parts.append(f"{p['name']}=_d{i}")
    names = ", ".join(call.names)
    # nc_matmul's accumulate is NKI's: None (the default) overwrites the first time a PSUM location
    # is written and adds after that; every other call assigned to dst overwrites it.
    acc_default = "None" if name in ("nc_matmul", "matmul") else "False"
    body = (f"    if kwargs:\n"
            f"        _check(_call, kwargs, _extra)\n"
            f"        if _pre is not None:\n"
            f"            return _pre(_call, [{names}], kwargs)\n"
            f"        return _call([{names}], kwargs, kwargs.get('dst'), kwargs.get('accumulate', {acc_default}))\n"
            f"    return _call([{names}], None)\n")
    src = f"def {name}({', '.join(parts)}, **kwargs):\n{body}"
    return _compiled(src, glob, call, f"neuronxcc.nki.{'isa' if ns == 'isa' else 'language'}")


def _compiled(src, glob, call, module):
    """The function `src` defines, compiled as a file of the front end's folder, so that the
    kernel's location (caller()) is the first frame outside it; its source registered with
    linecache, so that tracebacks show it."""
    name = call.name
    filename = os.path.join(os.path.dirname(__file__), f"<generated nki call {module}.{name}>")
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    exec(compile(src, filename, "exec"), glob)
    fn = glob[name]
    fn.__doc__ = call.d["doc"]
    fn.__module__ = module
    fn._nki_call = call
    return fn


def refused(label, why):
    """A function that refuses the documented call `label` (nl.fori_loop, nisa.nc_n_gather, ...),
    which this model does not run yet, by name."""
    def fn(*args, **kwargs):
        raise NotImplementedError(f"{caller()}: {label} is not supported by this model yet ({why})")

    fn.__name__ = label.split(".")[-1]
    return fn


def _enum_of(call, param, value, kind):
    """An enum argument given otherwise than as a member: an integer enum's value (kernels pass
    dge_mode=3), else a TypeError."""
    if issubclass(kind, enum.IntEnum) and isinstance(value, int) and not isinstance(value, bool):
        try:
            return kind(value)
        except ValueError:
            pass
    raise TypeError(f"{caller()}: {call}: {param}={value!r}: expected a member of {kind.__name__} "
                    f"({', '.join(f'{kind.__name__}.{m.name}' for m in kind)})")


def today_function(ns, name, env, module):
    """The Python function of the declaration ns.name in today's spelling (`import nki`): exactly
    its parameters (d["today"]: destination first for an instruction, no mask=), defaults as NKI
    writes them, evaluated in `env` (the module's names: engine.unknown, nl.add, ...); a keyword
    it does not take is Python's own TypeError. `module` names it (nki.isa, nki.language)."""
    d = DECLS[(ns, name)]
    call = Call(d, today=True)
    glob = {"_call": call}
    parts, seen_kw = [], False
    for i, p in enumerate(call.params):
        if p["keyword_only"] and not seen_kw:
            parts.append("*")
            seen_kw = True
        if p["default"] == "":
            parts.append(p["name"])
            continue
        try:
            default = ast.literal_eval(p["default"])
        except (ValueError, SyntaxError):
            default = eval(p["default"], dict(env))  # a name of the module: engine.unknown, nl.add
        glob[f"_d{i}"] = default
        parts.append(f"{p['name']}=_d{i}")
    # An enum parameter takes its enum's members (NKI 0.3 on refuses a raw integer, nisa.dge_mode.hwdge not 2).
    checks = ""
    for i, p in enumerate(call.params):
        default = glob.get(f"_d{i}")
        if isinstance(default, enum.Enum):
            glob[f"_t{i}"] = type(default)
            checks += (f"    if not isinstance({p['name']}, _t{i}):\n"
                       f"        {p['name']} = _enum_of({name!r}, {p['name']!r}, {p['name']}, _t{i})\n")
    glob["_enum_of"] = _enum_of
    src = f"def {name}({', '.join(parts)}):\n{checks}    return _call([{', '.join(call.names)}], None)\n"
    return _compiled(src, glob, call, module)
