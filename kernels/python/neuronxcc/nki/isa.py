"""neuronxcc.nki.isa (nisa) on the ncore model: the instructions of the NeuronCore's engines,
with NKI's signatures. Each function is made from its declaration in the C++ call surface
(kernels/nki/include/nki/calls.hpp, see _calls.py), which checks the hardware's rules in NKI's
words and traces the instructions. An instruction with a result returns a pending tile (see
_core.py): `x[...] = nisa.tensor_copy(t)` writes into x, `psum += nisa.nc_matmul(a, b)`
accumulates into psum; the destination-first spelling (`nisa.tensor_copy(dst=x, src=t)`) too.
"""
from enum import IntEnum

import _ncore_native as _native

from . import _calls, _run, compiler
from ._base import caller
from ._calls import act_name, alu_name  # noqa: F401  (nisa.alu_name: how an op argument is read)

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
    return nc_version.gen2 if _run.current_preset() == "trn1" else nc_version.gen3


# --- the instructions, from their declarations ---------------------------------------------------------

def _memset(call, values, kwargs):
    """memset(dst=t, value=v): the shape and dtype are the destination's."""
    dst = kwargs.get("dst")
    if dst is not None:
        names = call.names
        if values[names.index("shape")] is None:
            values[names.index("shape")] = dst.shape
        if values[names.index("dtype")] is None:
            values[names.index("dtype")] = dst.dtype
    return call(values, kwargs, dst, False)


def _activation(call, values, kwargs):
    """activation(..., reduce_res=r): activation_reduce, its add-reduce along the free axis into r."""
    if "reduce_res" not in kwargs:
        return call(values, kwargs, kwargs.get("dst"), False)
    red = activation_reduce._nki_call
    v = dict(zip(call.names, values))
    v["reduce_res"] = kwargs["reduce_res"]
    v["reduce_op"] = kwargs.get("reduce_op", "add")
    return red([v.get(n) if n in v else _calls._default(p["default"]) for n, p in zip(red.names, red.params)],
               kwargs, kwargs.get("dst"), False)


_PRE = {"memset": (_memset, ()), "activation": (_activation, ("reduce_op", "reduce_res"))}

for _d in _calls.DECLS.values():
    if _d["ns"] == "isa":
        globals()[_d["name"]] = _calls.function("isa", _d["name"], *_PRE.get(_d["name"], (None, ())))


# --- not modelled --------------------------------------------------------------------------------------

_MODELLED = ", ".join(n for (ns, n) in _calls.DECLS if ns == "isa")


def _unmodelled(name):
    def fn(*args, **kwargs):
        raise ValueError(f"{caller()}: nisa.{name} is not supported by this model (its engines run {_MODELLED})")

    fn.__name__ = name
    return fn


for _n in ["local_gather", "tensor_copy_dynamic_src", "tensor_copy_dynamic_dst",
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


def __getattr__(name):
    # nisa.sbuf.mod_alloc (the direct-allocation spelling of the Trainium1 handout)
    if name in ("sbuf", "psum"):
        return getattr(compiler, name)
    raise AttributeError(f"module 'neuronxcc.nki.isa' has no attribute '{name}'")
