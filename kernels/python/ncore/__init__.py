"""ncore: options of the NeuronCore model's Python front end (neuronxcc.nki), and the figures of
the last run.

    import ncore
    ncore.set_options(backend="rtl", config="trn2", check=True, threads="auto", pe_model="rtl",
                      profile=None)
    ...                                  # run kernels with nki.baremetal / nki.benchmark
    ncore.last_run()["cycles"]           # cycles, time_us, instructions, dma_transfer_count, ...
    ncore.sweep("matmul_blocked", grid={"m": [256, 512], "k": [256]})   # a grid on a Dask cluster
                                         # (ncore-sweep --help: the options, rows and files)

Each option can also come from the environment (the option wins over the environment):

    NCORE_BACKEND     rtl (default: the RTL, cycle by cycle) or golden (the golden model, no timing)
    NCORE_CONFIG      trn2 (default) or trn1
    NCORE_CHECK       1: compare every instruction with the golden model as it completes
    NCORE_THREADS     auto (default), 1 or 2: threads of the RTL model (one per process)
    NCORE_PE_MODEL    rtl (default) or fast: the RTL model's PE array (one per process); fast is the
                      simulation-only array with the same cycles and bits (ncore-sim --pe-model)
    NCORE_PROFILE     NAME: write NAME.summary.json, NAME.trace.json, NAME.timeline.html for every run
    NCORE_DMA_QUEUES  DMA queues the kernel's transfers are spread over (default 4)
    NCORE_SET         NAME=VALUE,...: what-if hardware, the preset run with timing parameters changed
                      (clock_mhz, hbm_bytes_per_us, dma_fixed_cost_ns, kernel_start_ns, ...; one set
                      per process: docs/sweeps.md); last_run()["preset_set"] says which
    NCORE_VERBOSE     1: print a line per run (latency, instructions, DMA transfers)
    NCORE_QUIET       1: no progress lines (a trace or a run longer than two seconds shows one on
                      stderr, rewritten in place, when stderr is a terminal)
    NCORE_WAVES       FILE.fst: dump each RTL run's waveforms (NCORE_WAVES_SCOPE, NCORE_WAVES_WINDOW)

Files a run writes (NCORE_PROFILE, NCORE_WAVES) are checked before it starts. Ctrl-C stops a trace
or a run within a fraction of a second (KeyboardInterrupt), closing a waveform file being written.
"""
import _ncore_native

from ncore._sweep import sweep
from neuronxcc.nki import _run

__all__ = ["set_options", "options", "last_run", "trace", "declared", "sweep", "version_line", "__version__",
           "revision"]

__version__ = _ncore_native.__version__
revision = _ncore_native.revision  # the git revision the model was built from


def version_line(tool="ncore-python"):
    """'<tool> <version> (revision <git revision>)', as every command's --version prints it."""
    return f"{tool} {__version__} (revision {revision})"


def set_options(**kwargs):
    """Sets options for the following runs (None: back to the environment or default)."""
    _run.set_options(**kwargs)


def options():
    """The options in effect."""
    return {k: _run.option(k) for k in _run._DEFAULTS}


def last_run():
    """The figures of the last run: backend, cycles, time_us, clock_mhz, instructions,
    checked_instructions, dma_transfer_count, hbm_read_bytes, hbm_write_bytes, pe_macs,
    evaluated_cycles, skipped_cycles, wall_seconds, rtl_threads, pe_model, kernel, preset,
    model_version, model_revision."""
    return dict(_run.last)


def trace(kernel, *args, **kwargs):
    """The Program a kernel (of neuronxcc.nki or of today's nki) traces to for these arguments
    (NumPy arrays as its HBM inputs), without running it: .listing(), .instruction_count(), .opcode_counts(), .save(path), .tensors()."""
    func = getattr(kernel, "func", kernel)
    dialect = getattr(kernel, "dialect", "neuronxcc")  # an `import nki` kernel's: "nki"
    prog, _, _ = _run.trace(func, args, kwargs, getattr(kernel, "grid", ()), dialect)
    return prog


def declared(kernel, dtype="fp32", **params):
    """The Program of a C++ kernel declared in kernels/ (ncore-sim --kernel NAME), traced for the
    current configuration: the twin of a Python kernel, to compare with ncore.trace's."""
    return _ncore_native.build_declared(kernel, params, dtype, _run.current_preset(), _run.option("dma_queues"))
