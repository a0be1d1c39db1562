"""nki.language (nl), today's NKI, on the ncore model: dtypes, buffers, tensor creation, loops as
Python runs them, and the calls that make a new tile (nl.load, nl.add, nl.exp, ..., nl.matmul).

The calls are made from the C++ call surface's declarations in today's spelling
(kernels/nki/include/nki/calls.hpp, Decl::today): no mask=, dtype=None the operands' dtype. The
tensors, buffers and dtypes are the ones neuronxcc.nki traces with; only the spelling differs.
"""
import builtins
import contextlib
import enum

import numpy as np

import _ncore_native as _native

from neuronxcc.nki import _calls, _core
from neuronxcc.nki import language as _old
from neuronxcc.nki._base import caller
from neuronxcc.nki._core import Tensor

from . import _grids

NkiTensor = Tensor

# --- dtypes: nl.float32, nl.bfloat16, ..., nl.bool_ (the model's table), and NKI's other names ------
globals().update(_core._DTYPES)


class _UnmodelledDtype(_core.Dtype):
    """A dtype NKI documents that this model's engines do not have yet: naming it is fine, using it
    is refused by name."""


for _n in ("float8_e4m3fn", "float8_e5m2_x4", "float8_e4m3fn_x4", "float8_e8m0fnu", "float4_e2m1fn_x4", "int64"):
    globals()[_n] = _UnmodelledDtype(_n)
DType = _core.Dtype

# --- buffers (objects: NKI 0.3 on refuses the strings 'sbuf', 'psum', ...) -------------------------------
sbuf, psum, hbm, shared_hbm = _old.sbuf, _old.psum, _old.hbm, _old.shared_hbm
private_hbm = _old.private_hbm
_BUFFERS = (sbuf, psum, hbm, shared_hbm, private_hbm)


def is_hbm(buffer):
    return buffer in (hbm, shared_hbm, private_hbm)


def is_sbuf(buffer):
    return buffer is sbuf


def is_psum(buffer):
    return buffer is psum


def is_on_chip(buffer):
    return buffer in (sbuf, psum)


class tile_size:
    """The hardware's tile limits (NKI's nl.tile_size), this model's figures."""
    pmax = 128
    psum_fmax = 512
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512
    sbuf_size_bytes = 24 * 1024 * 1024
    sbuf_fmax_bytes = sbuf_size_bytes // 128
    sbuf_fmax = sbuf_fmax_bytes // 4
    total_available_sbuf_size = sbuf_size_bytes


class NKIObject:
    """The base of the classes a kernel defines. As NKI's, each is a data class whether or not it is
    decorated with @dataclass: its fields are its class attributes, annotated or not, in order,
    each defaulting to its value (None when annotated without one), and its initializer is
    `__init__(self, field=default, ...)`, which calls `__post_init__` when the class has one (a
    @dataclass class gets the same fields from dataclasses)."""

    _nki_fields = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        ann = cls.__dict__.get("__annotations__", {})
        fields = list(ann)
        for name, value in list(cls.__dict__.items()):
            if name.startswith("_") or name in ann or callable(value) or isinstance(
                    value, (staticmethod, classmethod, property)):
                continue
            fields.append(name)
        for name in fields:
            if name not in cls.__dict__:
                setattr(cls, name, None)  # annotated without a default: None, as NKI's initializer has it
            ann.setdefault(name, object)  # so that @dataclass, applied after this, sees every field
        cls.__annotations__ = {n: ann[n] for n in fields}
        cls._nki_fields = tuple(dict.fromkeys([*cls._nki_fields, *fields]))

    def __init__(self, *args, **kwargs):
        cls, names = type(self), type(self)._nki_fields
        if len(args) > len(names):
            raise TypeError(f"{cls.__name__}() takes {len(names)} positional arguments, {len(args)} given")
        for name, value in zip(names, args):
            if name in kwargs:
                raise TypeError(f"{cls.__name__}() got multiple values for argument '{name}'")
            kwargs[name] = value
        for name in names:
            object.__setattr__(self, name, kwargs.pop(name, getattr(cls, name, None)))
        if kwargs:
            raise TypeError(f"{cls.__name__}() got unexpected keyword arguments {sorted(kwargs)}")
        if hasattr(self, "__post_init__"):
            self.__post_init__()


# --- tensor creation -----------------------------------------------------------------------------------

def _buffer(buffer, api):
    if buffer is None:
        return sbuf
    if isinstance(buffer, str):
        raise TypeError(f"{caller()}: nl.{api}: buffer={buffer!r} is a string: give nl.sbuf, nl.psum, nl.hbm, "
                        "nl.private_hbm or nl.shared_hbm")
    if not any(buffer is b for b in _BUFFERS):
        raise TypeError(f"{caller()}: nl.{api}: buffer={buffer!r}: give nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or "
                        "nl.shared_hbm")
    return buffer


def _dtype_of(dtype, api):
    if isinstance(dtype, _UnmodelledDtype):
        why = " (NKI documents it for NeuronCore-v4, Trainium3; the model's presets are trn1 and trn2)" \
            if dtype.name != "int64" else ""
        raise ValueError(f"{caller()}: nl.{api}: {dtype.name} is not a dtype this model's engines have{why}; they "
                         f"have {', '.join(n for n, _, ok in _native.dtypes() if ok)}")
    return dtype


def _shape(shape):
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    return list(shape)


def _address(shape, dtype, buffer, address, name, api):
    """An on-chip tensor placed at address=(partition, byte offset within each partition): in PSUM
    at a bank boundary, within the bank; tensors placed at the same bytes share them."""
    loc = caller()
    if not is_on_chip(buffer):
        raise ValueError(f"{loc}: nl.{api}: address= places an SBUF or PSUM tensor; HBM tensors are placed by the model")
    if not isinstance(address, (tuple, list)) or len(address) != 2:
        raise ValueError(f"{loc}: nl.{api}: address must be (partition, byte offset), got {address!r}")
    part = _core.integer(address[0], "the partition of address")
    offset = _core.integer(address[1], "the byte offset of address")
    dims = _core.dims(_shape(shape), "a dimension of the shape")
    return Tensor(_native.ndarray_alloc([(d, False) for d in dims], _core.dtype(dtype).name, offset, part, [], [],
                                        "" if name is None else str(name), loc, buffer.name, True))


def ndarray(shape, dtype, buffer=sbuf, name="", address=None):
    """A new tensor, not initialised: an SBUF or PSUM tile (placed by the allocator, or at
    address=(partition, byte offset)), or an HBM tensor (a kernel's output: nl.shared_hbm)."""
    _core.require_trace("ndarray", "nki")
    b = _buffer(buffer, "ndarray")
    _dtype_of(dtype, "ndarray")
    if address is not None:
        _core.flush()
        return _address(shape, dtype, b, address, name, "ndarray")
    t = _old.ndarray(_shape(shape), dtype, buffer=b, name=name, _namespace="nki")
    if b is hbm or b is private_hbm:
        _core._state.private_hbm.add(t.name)  # not an output (see _run.trace)
    return t


def zeros(shape, dtype, buffer=sbuf, name=""):
    """A new on-chip tile of zeros."""
    return _old.zeros(_shape(shape), _dtype_of(dtype, "zeros"), buffer=_buffer(buffer, "zeros"), name=name,
                     _namespace="nki")


def full(shape, fill_value, dtype, buffer=sbuf, name=""):
    """A new on-chip tile filled with fill_value."""
    return _old.full(_shape(shape), fill_value, _dtype_of(dtype, "full"), buffer=_buffer(buffer, "full"), name=name,
                    _namespace="nki")


def ones(shape, dtype, buffer=sbuf, name=""):
    return full(shape, 1, dtype, buffer=buffer, name=name)


def zeros_like(x, dtype=None, buffer=None, name=""):
    return zeros(x.shape, dtype or x.dtype, buffer=buffer or sbuf, name=name)


def empty_like(x, dtype=None, buffer=None, name="", *, transpose_axes=None, address=None):
    """A new tensor of x's shape (transpose_axes: permuted), dtype and buffer unless given."""
    shape = list(x.shape)
    if transpose_axes is not None:
        axes = [_core.integer(a, "an axis of transpose_axes") for a in transpose_axes]
        if sorted(axes) != list(builtins.range(len(shape))):
            raise ValueError(f"{caller()}: nl.empty_like: transpose_axes {tuple(axes)} is not a permutation of the "
                             f"{len(shape)} axes")
        shape = [shape[a] for a in axes]
    if buffer is None:
        buffer = x.buffer
    return ndarray(shape, dtype or x.dtype, buffer=buffer, name=name, address=address)


def expand_dims(x, axis):
    return _old.expand_dims(x, axis)


def broadcast_to(x, shape, dtype=None):
    t = x.broadcast_to(shape)
    return t if dtype is None or dtype == t.dtype else copy(t, dtype=dtype)


def shared_constant(constant, dtype=None):
    return _old.shared_constant(constant, dtype=dtype, _namespace="nki")


def shared_identity_matrix(n, dtype=None, dst=None):
    return _old.shared_identity_matrix(n, dtype=dtype or float32, _namespace="nki")


def device_print(print_prefix, tensor):
    """Accepted: tensor values exist only when the Program runs (compare the outputs instead)."""
    return None


@contextlib.contextmanager
def no_reorder():
    """The instructions in the block keep their order (this model's sequencers issue each engine's
    instructions in program order)."""
    yield


# --- loops: Python's own ---------------------------------------------------------------------------------

def _range(args, api, sequential):
    r = builtins.range(*[_core.integer(a, f"an argument of nl.{api}") for a in args])
    if not _core.in_trace():
        return iter(r)
    return _python_loop(r, sequential)


def _python_loop(r, sequential):
    """Every iteration runs in Python, as the kernel's own loop; the tracer marks the loop (its tiles
    rotate over buffers as the older namespace's unrolled loops do)."""
    _core.flush()
    loop = _native.Range(len(r), sequential, caller())
    try:
        loop.enter()
        while True:
            k = loop.next()
            if k is None:
                return
            yield r[k]
            _core.flush()
    finally:
        loop.exit()


def affine_range(start, stop=None, step=1):
    """Python's range (deprecated in NKI 0.7 for range itself): every iteration runs."""
    return _range((start,) if stop is None else (start, stop, step), "affine_range", False)


def sequential_range(start, stop=None, step=1):
    return _range((start,) if stop is None else (start, stop, step), "sequential_range", True)


def static_range(start, stop=None, step=1):
    return _range((start,) if stop is None else (start, stop, step), "static_range", True)


def ds(start, size):
    """t[nl.ds(i * 128, 128)] is t[i * 128:i * 128 + 128]."""
    start = _core.as_int(start, "the start of nl.ds")
    return builtins.slice(start, start + _core.integer(size, "the size of nl.ds"))


def program_id(axis=0):
    """The logical NeuronCore's index (0: this model runs one)."""
    _core.require_trace("program_id", "nki")
    return 0


def num_programs(axes=0):
    _core.require_trace("num_programs", "nki")
    return 1


def program_ndim():
    _core.require_trace("program_ndim", "nki")
    return 0


# --- the calls, from their declarations in today's spelling ------------------------------------------------

_ENV = dict(globals())
_CALLS = {n: _calls.today_function("language", n, _ENV, "nki.language")
          for (ns, n), d in _calls.DECLS.items() if ns == "language" and d["today"]}
globals().update(_CALLS)
identity = copy

# ALU operators and activation functions as op arguments (nisa.tensor_tensor(dst, a, b, nl.add)).
for _n in _calls.ALU:
    if _n in _CALLS:
        _CALLS[_n]._nki_alu = _n
for _red, _alu in (("max", "maximum"), ("min", "minimum"), ("sum", "add"), ("prod", "multiply")):
    _CALLS[_red]._nki_alu = _alu
for _n in _calls.ACT:
    if _n in _CALLS:
        _CALLS[_n]._nki_act = _n


class _Op:
    """An operator NKI names that is an op argument only (nl.bypass, nl.average, ...)."""

    def __init__(self, name, alu=None):
        self.__name__ = name
        if alu is not None:
            self._nki_alu = alu

    def __repr__(self):
        return f"nl.{self.__name__}"


bypass = _Op("bypass", "bypass")

_core.OPS["nki"].update({n: _CALLS[n] for n in ("add", "subtract", "multiply", "divide", "bitwise_and", "bitwise_or",
                                               "bitwise_xor", "left_shift", "right_shift", "mod", "power", "less",
                                               "less_equal", "greater", "greater_equal", "invert", "negative")})


# --- documented, not modelled yet: refused by name ----------------------------------------------------------

for _n in ("fori_loop", "while_loop", "dynamic_range"):
    globals()[_n] = _calls.refused(f"nl.{_n}", "loops whose trip count is known only when the kernel runs need the sequencers' "
                                 "dynamic loops")
for _n in ("abs_max", "abs_min", "gelu_apprx_sigmoid_dx", "rand"):
    if _n not in _CALLS:
        globals()[_n] = _calls.refused(f"nl.{_n}", "a call its engines do not run")
# --- the tiled and blocked views (NKI 0.7) ---------------------------------------------------------------------------
NkiGrid, NkiTileGrid, NkiBlockGrid = _grids.NkiGrid, _grids.NkiTileGrid, _grids.NkiBlockGrid
tiles, blocks = _grids.tiles, _grids.blocks


def alloc_tiles(*, tile_shape, element_shape, buffer, dtype, address=None, name=""):
    """New, uninitialised storage of element_shape as a grid of tile_shape tiles."""
    return _grids.alloc_tiles(ndarray, tile_shape=tile_shape, element_shape=element_shape, buffer=buffer, dtype=dtype,
                              address=address, name=name)


def alloc_blocks(*, tile_shape, block_shape, element_shape, buffer, dtype, address=None, name=""):
    """New, uninitialised storage of element_shape as a grid of blocks of block_shape tiles."""
    return _grids.alloc_blocks(ndarray, tile_shape=tile_shape, block_shape=block_shape, element_shape=element_shape,
                               buffer=buffer, dtype=dtype, address=address, name=name)



class MemoryRegion(enum.Enum):
    """Where a tensor lives (nl.sbuf, ... are the buffers themselves)."""
    sbuf = "sbuf"
    psum = "psum"
    private_hbm = "private_hbm"
    shared_hbm = "shared_hbm"


average = _Op("average")
prelu = _Op("prelu")
