"""The front end's foundations: source locations, integers where NKI needs them, dtypes. The
other modules of the package stand on it; it imports only the native module."""
import operator
import os

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


# The front end's own code: both NKI namespaces' packages (neuronxcc.nki and nki), beside each other.
FRONTEND_DIRS = [_NEURONXCC_DIR + os.sep, os.path.join(os.path.dirname(_NEURONXCC_DIR), "nki") + os.sep]
_native.set_frontend(FRONTEND_DIRS, _relative)


# --- dtypes -----------------------------------------------------------------------------------

class Dtype:
    """An NKI element type (nl.float32, nl.bfloat16, ...). Compares equal to its name, to the
    NumPy dtype of the same name, and to NumPy's scalar type (np.float32)."""

    _SIZES = {name: size for name, size, _ in _native.dtypes()}  # the C++ dtype table's

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
