"""nki (today's NKI, 0.3 on) on the ncore NeuronCore model.

Kernel files written for today's NKI run here unchanged: `import nki`, `import nki.language as
nl`, `import nki.isa as nisa`. The ISA calls take their destination first (`nisa.tensor_tensor(dst,
data1, data2, op)`), loops and `if` run as Python runs them, and a kernel is called with NumPy
arrays or torch CPU tensors (its results come back as the same kind):

- @nki.jit: the kernel runs on the RTL model, cycle by cycle (NKI_SIMULATOR=1: on the golden
  model); mode= is accepted and ignored, platform_target= is refused as NKI refuses it
  (NEURON_PLATFORM_TARGET_OVERRIDE=trn1|trn2 chooses the model's preset).
- nki.simulate(kernel)(*args): on the golden model (bit for bit the RTL's results, no timing).

Every run's latency, instruction count and DMA transfers are `ncore.last_run()`; NCORE_PROFILE
writes its profile (the `ncore` module lists the model's options). The calls are the ones
neuronxcc.nki runs, declared once in C++ (kernels/nki/include/nki/calls.hpp), in today's spelling.
"""
import os

from neuronxcc.nki import _core, _run

from . import collectives, compiler, isa, language, typing

__all__ = ["jit", "simulate", "language", "isa", "typing", "compiler", "collectives", "dtype"]

dtype = language.DType  # the class of nl.float32, nl.bfloat16, ... (kernels annotate `dt: nki.dtype`)

_TARGETS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2"}


def _preset():
    """The model's preset: NEURON_PLATFORM_TARGET_OVERRIDE's (trn1/inf2/gen2, trn2/gen3), else ncore's
    option (NCORE_CONFIG, default trn2)."""
    target = os.environ.get("NEURON_PLATFORM_TARGET_OVERRIDE", "").strip()
    if not target:
        return None
    if target in ("trn3", "gen4"):
        raise ValueError(f"NEURON_PLATFORM_TARGET_OVERRIDE={target}: this model has the trn1 and trn2 NeuronCores "
                         "(NeuronCore-v2, -v3), not trn3's")
    if target not in _TARGETS:
        raise ValueError(f"NEURON_PLATFORM_TARGET_OVERRIDE={target!r}: supported values are trn1/inf2/gen2 and "
                         "trn2/gen3")
    return _TARGETS[target]


def _simulator_env():
    v = os.environ.get("NKI_SIMULATOR", "").strip().lower()
    if v in ("", "0", "false", "no", "off"):
        return False
    if v in ("1", "true", "yes", "on"):
        return True
    raise ValueError(f"NKI_SIMULATOR={v!r}: expected 0 or 1")


class _Kernel:
    """A kernel of today's NKI, run on the model when called with arrays."""

    dialect = "nki"  # the namespace it is traced in (ncore.trace reads it)

    def __init__(self, func, simulate=False, lnc=None):
        self.func = func
        self.simulate = simulate
        self.lnc = lnc
        self.__name__ = getattr(func, "__name__", "kernel")
        self.__doc__ = getattr(func, "__doc__", None)
        self.__wrapped__ = func

    def __call__(self, *args, **kwargs):
        if _core.in_trace():  # a kernel called from a kernel: part of the same trace
            return self.func(*args, **kwargs)
        if self.lnc not in (None, 1) and self.lnc != 2:
            raise ValueError(f"{self.__name__}[{self.lnc}]: a kernel runs on 1 or 2 logical NeuronCores")
        if self.lnc == 2:
            raise ValueError(f"{self.__name__}[{self.lnc}]: launching a kernel on {self.lnc} logical NeuronCores "
                             "(LNC=2) needs a second NeuronCore, which this model does not have yet: call it without "
                             "a grid (one NeuronCore)")
        golden = self.simulate or _simulator_env()
        label = "nki.simulate" if golden else "nki.jit"
        out, _ = _run.run(self.func, args, kwargs, backend="golden" if golden else None, label=label,
                          dialect="nki", preset=_preset())
        return out

    def __getitem__(self, grid):
        """kernel[2]: the kernel on 2 logical NeuronCores (LNC=2)."""
        g = _run.launch_grid(grid)
        if len(g) != 1:
            raise ValueError(f"{self.__name__}[{grid!r}]: today's NKI launches a kernel on a number of logical "
                             "NeuronCores (kernel[2]), not over a multi-axis grid")
        return _Kernel(self.func, self.simulate, g[0])


def _lnc_env():
    """NEURON_LOGICAL_NC_CONFIG: the logical NeuronCores a kernel runs on (1, or 2)."""
    v = os.environ.get("NEURON_LOGICAL_NC_CONFIG", "").strip()
    if v in ("", "1"):
        return None
    if v == "2":
        return 2
    raise ValueError(f"NEURON_LOGICAL_NC_CONFIG={v!r}: expected 1 or 2")


def jit(fn=None, *, compile_config=None, specialization_config=None, **kwargs):
    """Marks a kernel: called with NumPy arrays or torch CPU tensors it runs on the RTL model
    (NKI_SIMULATOR=1: on the golden model) and returns its outputs as the same kind. mode= is
    accepted and ignored (the framework is inferred from the arguments); platform_target= is an
    error, as in NKI 0.3 on (set NEURON_PLATFORM_TARGET_OVERRIDE)."""
    if "platform_target" in kwargs:
        raise ValueError("nki.jit: platform_target is no longer supported: set the NEURON_PLATFORM_TARGET_OVERRIDE "
                         "environment variable instead (trn1 or trn2 on this model)")
    if fn is None:
        return lambda f: _Kernel(getattr(f, "func", f), lnc=_lnc_env())
    return _Kernel(getattr(fn, "func", fn), lnc=_lnc_env())


def simulate(kernel):
    """nki.simulate(kernel)(*args): runs the kernel on the golden model (the instructions' results
    bit for bit as the RTL computes them, without timing) and returns its outputs."""
    func = getattr(kernel, "func", kernel)
    return _Kernel(func, simulate=True, lnc=getattr(kernel, "lnc", None))
