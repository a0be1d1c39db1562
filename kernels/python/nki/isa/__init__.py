"""nki.isa (nisa), today's NKI, on the ncore model: the engines' instructions, destination first.

Each function is made from its declaration in the C++ call surface in today's spelling
(kernels/nki/include/nki/calls.hpp, Decl::today): `nisa.tensor_tensor(dst, data1, data2, op)`
writes into dst when it is called (positional or keyword arguments, NKI's defaults); the rules of
the hardware are checked in C++ and refused in NKI's words. Instructions of engines this model
does not have yet are refused by name.
"""
from neuronxcc.nki import _calls, _run

from .. import language as nl

# --- NKI's enums (nki.isa.constants) -------------------------------------------------------------------------
from .constants import dge_mode, dma_engine, engine, matmul_perf_mode, nc_version, oob_mode, reduce_cmd  # noqa: E402
from . import constants  # noqa: E402,F401

NkiInstruction = _calls.NkiInstruction


class NkiValidationError(Exception):
    """Raised when hardware constraints are violated."""


tensor_engine = engine.tensor
vector_engine = engine.vector
scalar_engine = engine.scalar
gpsimd_engine = engine.gpsimd
unknown_engine = engine.unknown


def get_nc_version():
    """The NeuronCore version of the model's preset (trn1: gen2, trn2: gen3)."""
    return nc_version.gen2 if _run.current_preset() == "trn1" else nc_version.gen3


def get_nc_sub_version():
    return 0


# --- the instructions, from their declarations ----------------------------------------------------------------

_ENV = {"engine": engine, "reduce_cmd": reduce_cmd, "dge_mode": dge_mode, "oob_mode": oob_mode,
        "matmul_perf_mode": matmul_perf_mode, "dma_engine": dma_engine, "nl": nl, "equal": nl.equal,
        "maximum": nl.maximum}

_MODELLED = sorted(n for (ns, n), d in _calls.DECLS.items() if ns == "isa" and d["today"])
for _n in _MODELLED:
    globals()[_n] = _calls.today_function("isa", _n, _ENV, "nki.isa")


# --- documented, not modelled yet: refused by name --------------------------------------------------------------

for _n in ("tensor_partition_reduce", "tensor_scalar_cumulative", "activate2", "local_gather", "nc_n_gather",
           "nc_stream_shuffle", "rng", "set_rng_seed", "rand_set_state", "rand_get_state", "rand2", "exponential",
           "sequence_bounds", "core_barrier", "dma_compute", "quantize_mx", "nc_matmul_mx", "range_select",
           "select_reduce", "sendrecv", "register_alloc", "register_move", "register_load", "register_store",
           "nonzero_with_count", "topk", "scalar_load", "scalar_store", "VirtualRegister", "NkiScalar"):
    if _n not in globals():
        globals()[_n] = _calls.refused(f"nisa.{_n}", f"its engines run {', '.join(_MODELLED)}")
