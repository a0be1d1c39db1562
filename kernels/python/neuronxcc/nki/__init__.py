"""neuronxcc.nki on the ncore NeuronCore model.

Kernel files written for the chip run here unchanged: `import neuronxcc.nki as nki`,
`import neuronxcc.nki.language as nl`, `import neuronxcc.nki.isa as nisa`. A kernel called with
NumPy arrays is traced by the model's C++ tracer into a Program and run through the model's run
pipeline:

- nki.baremetal(kernel)(*arrays): on the RTL model, cycle by cycle (NCORE_BACKEND=golden: on the
  golden model); returns the kernel's outputs as NumPy arrays.
- nki.simulate_kernel(kernel, *arrays): on the golden model (bit for bit the RTL's results, no
  timing).
- nki.benchmark(kernel, warmup=, iters=)(*arrays): on the RTL model; the model is deterministic, so
  it runs once and every latency percentile is the simulated latency (microseconds at the
  modelled clock).
- @nki.jit: called with NumPy arrays, as baremetal (mode="simulation": as simulate_kernel,
  mode="benchmark": as benchmark).

Options (the `ncore` module, or environment variables): NCORE_BACKEND (rtl|golden), NCORE_CONFIG
(trn2|trn1), NCORE_CHECK (1: every instruction compared with the golden model), NCORE_THREADS
(auto|1|2), NCORE_PROFILE (NAME: write the profile of every run), NCORE_VERBOSE (1: a line per run).
"""
import functools
import os
import sys

from . import compiler, isa, language, typing
from . import _core, _run

__all__ = ["jit", "baremetal", "benchmark", "simulate_kernel", "profile", "language", "isa", "compiler", "typing",
           "tile_size"]

tile_size = language.tile_size


class _Latency:
    def __init__(self, us):
        self._us = us

    def get_latency_percentile(self, p):
        """The simulated latency in microseconds (every percentile: the model is deterministic)."""
        p = int(p)
        if not 0 <= p <= 100:
            raise ValueError(f"percentile {p}: expected 0 to 100")
        return self._us


class _BenchmarkResult:
    def __init__(self, us):
        self.nc_latency = _Latency(us)


class _Kernel:
    """A kernel function with how it runs when called with NumPy arrays."""

    def __init__(self, func, mode="auto", **kwargs):
        functools.update_wrapper(self, func)
        self.func = func
        self.mode = mode
        self.options = kwargs
        self.benchmark_result = None
        self.grid = ()  # the SPMD launch grid of kernel[4, 2]

    def __call__(self, *args, **kwargs):
        if _core.in_trace():  # a kernel called from a kernel: part of the same trace
            return self.func(*args, **kwargs)
        mode = self.mode
        if mode in ("auto", "baremetal", "jax", "torchxla"):
            out, _ = _run.run(self.func, args, kwargs, profile=self._profile_name(), label="baremetal", grid=self.grid,
                              files=self._files())
            return out
        if mode == "simulation":
            out, _ = _run.run(self.func, args, kwargs, backend="golden", label="simulate_kernel", grid=self.grid)
            return out
        if mode == "benchmark":
            return self._benchmark(args, kwargs)
        raise ValueError(f"nki.jit mode={mode!r}: auto, baremetal, benchmark or simulation")

    def _benchmark(self, args, kwargs):
        warmup = int(self.options.get("warmup", 10))
        iters = int(self.options.get("iters", 100))
        if warmup < 0 or iters <= 0:
            raise ValueError(f"benchmark: warmup={warmup}, iters={iters}: warmup >= 0 and iters > 0")
        out, stats = _run.run(self.func, args, kwargs, backend="rtl", profile=self._profile_name(), label="benchmark",
                              grid=self.grid, files=self._files())
        us = stats["time_us"]
        self.benchmark_result = _BenchmarkResult(us)
        print(f"[ncore] benchmark {self.func.__name__}: {us:.3f} us ({stats['cycles']} cycles at "
              f"{stats['clock_mhz']} MHz); simulated once: the model is deterministic (warmup={warmup}, "
              f"iters={iters} not repeated)", file=sys.stderr)
        return out

    def _profile_name(self):
        """save_trace_name, else save_neff_name: the name this model's profile is written under."""
        return self.options.get("save_trace_name") or self.options.get("save_neff_name")

    def _files(self):
        """The files the chip's tools would write under these exact names: save_neff_name gets the
        Program image (this model's compiled kernel, the binary --save-image writes), save_trace_name
        the profile's Perfetto trace."""
        return dict(neff=self.options.get("save_neff_name"), trace=self.options.get("save_trace_name"))

    def __getitem__(self, grid):
        """kernel[4, 2]: the kernel launched over an SPMD grid. This model has one NeuronCore: the
        instances run on it one after the other, in one Program (nl.program_id tells them apart,
        and nl.shared_hbm tensors are shared among them)."""
        k = _Kernel(self.func, self.mode, **self.options)
        k.grid = _run.launch_grid(grid)
        return k


def _decorator(mode, kernel, kwargs):
    if kernel is None:
        return lambda f: _Kernel(getattr(f, "func", f), mode, **kwargs)
    return _Kernel(getattr(kernel, "func", kernel), mode, **kwargs)


def jit(func=None, mode="auto", **kwargs):
    """Marks a kernel. Called with NumPy arrays it runs as baremetal (mode="simulation": on the golden
    model; mode="benchmark": as nki.benchmark)."""
    return _decorator(mode, func, kwargs)


def baremetal(kernel=None, **kwargs):
    """Runs the kernel on the RTL model (NCORE_BACKEND=golden: the golden model) and returns its
    outputs. save_trace_name (or save_neff_name) writes this model's profile under that name."""
    return _decorator("baremetal", kernel, kwargs)


def benchmark(kernel=None, **kwargs):
    """Runs the kernel on the RTL model once (it is deterministic); afterwards
    `.benchmark_result.nc_latency.get_latency_percentile(p)` is the simulated latency in
    microseconds. warmup, iters and additional_compile_opt are accepted; save_trace_name writes the
    profile under that name."""
    return _decorator("benchmark", kernel, kwargs)


def profile(func=None, working_directory=None, save_neff_name=None, save_trace_name=None, **kwargs):
    """Runs the kernel on the RTL model and writes its profile (in working_directory, if given)."""
    name = save_trace_name or "profile.ntff"
    if working_directory:
        os.makedirs(working_directory, exist_ok=True)
        name = os.path.join(working_directory, name)
    return _decorator("baremetal", func, dict(save_trace_name=name, save_neff_name=save_neff_name))


def simulate_kernel(kernel, *args, **kwargs):
    """Runs the kernel on the golden model (functional, no timing) and returns its outputs."""
    func = getattr(kernel, "func", kernel)
    out, _ = _run.run(func, args, kwargs, backend="golden", label="simulate_kernel", grid=getattr(kernel, "grid", ()))
    return out
