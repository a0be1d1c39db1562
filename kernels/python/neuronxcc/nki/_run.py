"""Tracing a Python kernel and running it through the run pipeline (sim/run), with the options
of the `ncore` module (environment variables NCORE_BACKEND, NCORE_CONFIG, NCORE_CHECK,
NCORE_THREADS, NCORE_PE_MODEL, NCORE_PROFILE, NCORE_DMA_QUEUES, NCORE_VERBOSE)."""
import contextlib
import inspect
import io
import itertools
import operator
import os
import shutil
import sys

import numpy as np

import _ncore_native as _native

from . import _core

_ENV = {"backend": "NCORE_BACKEND", "config": "NCORE_CONFIG", "check": "NCORE_CHECK", "threads": "NCORE_THREADS",
        "pe_model": "NCORE_PE_MODEL",
        "profile": "NCORE_PROFILE", "dma_queues": "NCORE_DMA_QUEUES", "verbose": "NCORE_VERBOSE", "quiet": "NCORE_QUIET",
        "waves": "NCORE_WAVES", "waves_scope": "NCORE_WAVES_SCOPE", "waves_window": "NCORE_WAVES_WINDOW"}
_DEFAULTS = {"backend": "rtl", "config": "trn2", "check": False, "threads": "auto", "pe_model": "rtl", "profile": None, "dma_queues": 4,
             "verbose": False, "quiet": False, "waves": None, "waves_scope": None, "waves_window": None}
_set = {}         # options given through ncore.set_options
_threads = {}     # preset -> the thread count this process's RTL model was built with
last = {}         # the figures of the last run


def _parse_bool(v, name):
    if isinstance(v, bool):
        return v
    s = str(v).strip().lower()
    if s in ("1", "true", "yes", "on"):
        return True
    if s in ("0", "false", "no", "off", ""):
        return False
    raise ValueError(f"{name}={v!r}: expected 0 or 1")


def option(name):
    if name in _set:
        v = _set[name]
    elif os.environ.get(_ENV[name]) not in (None, ""):
        v = os.environ[_ENV[name]]
    else:
        return _DEFAULTS[name]
    where = f"{_ENV[name]}" if name not in _set else f"ncore.set_options({name}=...)"
    if name == "backend" and v not in ("rtl", "golden"):
        raise ValueError(f"{where}={v!r}: choose rtl or golden")
    if name == "config" and v not in ("trn2", "trn1"):
        raise ValueError(f"{where}={v!r}: choose trn2 or trn1")
    if name in ("check", "verbose", "quiet"):
        return _parse_bool(v, where)
    if name == "pe_model" and v not in ("rtl", "fast"):
        raise ValueError(f"{where}={v!r}: choose rtl or fast")
    if name == "threads" and str(v) not in ("auto", "1", "2"):
        raise ValueError(f"{where}={v!r}: choose auto, 1 or 2")
    if name == "dma_queues":
        try:
            v = operator.index(v) if not isinstance(v, str) else int(v.strip())
        except (TypeError, ValueError):
            raise ValueError(f"{where}={v!r}: choose a whole number of DMA queues, 1 to 16") from None
        if not 1 <= v <= 16:
            raise ValueError(f"{where}={v}: choose 1 to 16")
    if name in ("waves", "profile", "waves_window") and not isinstance(v, (str, os.PathLike)):
        raise TypeError(f"{where}={v!r}: expected a {'file name' if name != 'waves_window' else 'START:END string'}, "
                        f"not {type(v).__name__}")
    if name == "waves_scope" and not isinstance(v, (str, list, tuple)):
        raise TypeError(f"{where}={v!r}: expected scope names (a comma-separated string or a list)")
    return os.fspath(v) if isinstance(v, os.PathLike) else v


def set_options(**kw):
    for k in kw:
        if k not in _DEFAULTS:
            raise TypeError(f"unknown option '{k}' (options: {', '.join(_DEFAULTS)})")
    before = dict(_set)
    for k, v in kw.items():
        if v is None:
            _set.pop(k, None)
        else:
            _set[k] = v
    try:
        for k in kw:
            option(k)  # validate now
    except ValueError:
        _set.clear()
        _set.update(before)
        raise


def current_preset():
    return option("config")


# --- tracing ------------------------------------------------------------------------------------

_HOST_DTYPES = ("float32", "float16", "int8", "uint8", "int16", "uint16", "int32", "uint32")


def _host_dtype(a, name):
    """The NKI dtype of a kernel argument's HBM tensor: the array's own (bool as bool_)."""
    if a.dtype.byteorder == ">":
        raise ValueError(f"argument '{name}' is a big-endian numpy array ({a.dtype.str}): the model reads "
                         f"little-endian data (pass {name}.astype({name}.dtype.newbyteorder('<')))")
    k = a.dtype.name
    if k in _HOST_DTYPES:
        return k
    if k == "bool":
        return "bool_"
    hint = "np.int32" if a.dtype.kind in "iu" else "np.float32"
    raise ValueError(f"argument '{name}' is a numpy array of {k}: the model's HBM tensors are float32, float16, "
                     f"int8, uint8, int16, uint16, int32, uint32 or bool (pass {name}.astype({hint}))")


def _is_torch(v):
    """Whether v is a torch tensor (without importing torch: it is loaded only when one is given)."""
    return type(v).__module__.split(".")[0] == "torch" and hasattr(v, "dtype") and hasattr(v, "numpy")


def _host_array(value, name):
    """A kernel argument as (a C-contiguous NumPy array of its elements, its NKI dtype), or None
    when it is not an array. A torch CPU tensor is read in place where it can be; a bfloat16 one
    as its 16-bit patterns (NumPy has no bfloat16)."""
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(value), _host_dtype(value, name)
    if not _is_torch(value):
        return None
    import torch  # deferred: only a kernel called with torch tensors needs it
    if value.device.type != "cpu":
        raise ValueError(f"argument '{name}' is a torch tensor on device '{value.device}': the model reads CPU "
                         f"tensors (pass {name}.cpu())")
    t = value.detach().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(np.uint16), "bfloat16"
    modelled = (torch.float32, torch.float16, torch.int8, torch.uint8, torch.int16, torch.int32, torch.bool)
    if t.dtype not in modelled:
        raise ValueError(f"argument '{name}' is a torch tensor of {t.dtype}: the model's HBM tensors are float32, "
                         f"bfloat16, float16, int8, uint8, int16, int32 or bool (pass {name}.float())")
    a = t.numpy()
    return a, _host_dtype(a, name)


def _to_torch(arr, dtype_name):
    """A result as a torch tensor of the kernel's dtype (bfloat16 values come widened to float32, exactly)."""
    import torch  # deferred: only a kernel called with torch tensors needs it
    t = torch.from_numpy(np.ascontiguousarray(arr))
    return t.to(torch.bfloat16) if dtype_name == "bfloat16" else t


def launch_grid(grid):
    """The SPMD launch grid of kernel[grid] as a tuple of positive ints."""
    g = grid if isinstance(grid, (tuple, list)) else (grid,)
    try:
        g = tuple(int(x) for x in g)
    except (TypeError, ValueError):
        raise ValueError(f"SPMD launch grid {grid!r}: expected positive integers, as kernel[4, 2]") from None
    if not g or any(x < 1 for x in g):
        raise ValueError(f"SPMD launch grid {grid!r}: expected positive integers, as kernel[4, 2]")
    return g


_DEFINITIONS = {}


def _definition(func):
    """The kernel's file and first line (found once per function: inspect reads the source)."""
    code = getattr(func, "__code__", None)
    key = code if code is not None else func
    r = _DEFINITIONS.get(key)
    if r is None:
        try:
            r = _core._relative(inspect.getsourcefile(func) or "<unknown>"), inspect.getsourcelines(func)[1]
        except (OSError, TypeError):
            r = "<unknown>", 0
        _DEFINITIONS[key] = r
    return r


def trace(func, args, kwargs, grid=(), dialect="neuronxcc", preset=None):
    """Traces func with its numpy array arguments as HBM tensors. Returns (program, input arrays by
    name, the order of the returned tensors, which argument each returned input is). With an SPMD
    launch grid, every instance is traced into the one Program, in row-major order of program ids:
    this model has one NeuronCore, which runs the instances one after the other (the scheduler
    overlaps their independent work as it overlaps loop iterations). dialect: the namespace the
    kernel is written in ("neuronxcc", or "nki": today's NKI); preset: the model's (None: the
    option's)."""
    sig = inspect.signature(func)
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as e:
        raise TypeError(f"{func.__name__}: {e}") from None
    bound.apply_defaults()
    def_file, def_line = _definition(func)
    arrays, dtypes = {}, {}
    result = {"readonly": [n for n, v in bound.arguments.items() if isinstance(v, np.ndarray) and not v.flags.writeable],
              "torch": any(_is_torch(v) for v in bound.arguments.values())}

    as_given = dict(bound.arguments)

    def body(tracer):
        bound.arguments.update(as_given)  # a second trace starts from the arguments as given
        _core._state.active = True
        _core._state.dialect = dialect
        _core._state.private_hbm = set()
        _core._state.pending = []
        _native.reset_loops()
        try:
            hbm = {}
            for name, value in list(bound.arguments.items()):
                host = _host_array(value, name)
                if host is not None:
                    arrays[name], dt = host
                    dtypes[name] = dt
                    t = _core.Tensor(tracer.input(name, list(value.shape), dt, _core.location(def_file, def_line)))
                    hbm[name] = t
                    bound.arguments[name] = t
            _core._state.grid, _core._state.shared = tuple(grid), []
            for pid in itertools.product(*[range(n) for n in grid]):
                _core._state.pid, _core._state.shared_next = pid, 0
                ret = func(*bound.args, **bound.kwargs)
            _core.flush()
            outs = [] if ret is None else list(ret) if isinstance(ret, (tuple, list)) else [ret]
            order = []
            for o in outs:
                if not isinstance(o, _core.Tensor):
                    raise TypeError(f"{func.__name__} returned {type(o).__name__}: a kernel returns HBM tensors")
                n = o._native()
                given = next((k for k, t in hbm.items() if t._native().same_view(n)), None)
                if given is not None:
                    order.append(("input", given))
                else:
                    if dialect == "nki" and (not n.buffer.endswith("hbm") or n.name in _core._state.private_hbm):
                        where = "nl.hbm" if n.buffer.endswith("hbm") else f"nl.{n.buffer}"
                        raise ValueError(f"{_core.location(def_file, def_line)}: {func.__name__} returns {n}, allocated "
                                         f"in {where}: a kernel's outputs must be allocated with buffer=nl.shared_hbm")
                    tracer.output(n, _core.location(def_file, def_line))
                    order.append(("output", n.name, n.dtype))
            result["order"] = order
            result["dtypes"] = dtypes
            result["tuple"] = isinstance(ret, (tuple, list))
            result["none"] = ret is None
        finally:
            _native.reset_loops()
            _core._state.active = False
            _core._state.dialect = "neuronxcc"
            _core._state.pending = []
            _core._state.grid, _core._state.pid, _core._state.shared = (), (), []

    preset = preset or current_preset()
    if dialect != "nki":
        prog = _native.trace(func.__name__, preset, body, option("dma_queues"), not option("quiet"))
        return prog, arrays, result
    # Today's NKI: a tile lives until its last use, also past its loop. A first trace (what the
    # kernel prints not shown) measures each tile's last use; the second places the tiles by them
    # (TraceOptions::measure_last_uses, last_uses).
    with contextlib.redirect_stdout(io.StringIO()):
        _, last_uses = _native.trace(func.__name__, preset, body, option("dma_queues"), False, False,
                                     want_last_uses=True)
    prog = _native.trace(func.__name__, preset, body, option("dma_queues"), not option("quiet"), True, last_uses)
    return prog, arrays, result


# --- running -----------------------------------------------------------------------------------------

def _threads_for(prog, preset):
    # The PE array of this process's models, before the first core is made (one per process).
    _native.set_pe_model(option("pe_model"))
    t = option("threads")
    if preset in _threads:
        if t != "auto" and int(t) != _threads[preset]:
            raise ValueError(f"NCORE_THREADS={t}: this process already runs the {preset} model on "
                             f"{_threads[preset]} thread(s) (one model per process); start a new process")
        return _threads[preset]
    n = _native.auto_threads(preset, prog) if t == "auto" else int(t)
    if n not in _native.thread_counts(preset):
        raise ValueError(f"NCORE_THREADS={t}: the {preset} model runs on "
                         f"{' or '.join(map(str, _native.thread_counts(preset)))} thread(s)")
    _threads[preset] = n
    return n


_RTL_ONLY = ("check", "waves", "waves_scope", "waves_window")
_noted = set()


def _where(name):
    return f"ncore.set_options({name}=...)" if name in _set else _ENV[name]


def _check_run_options(backend, chosen, label, profile):
    """Before the run: the files it writes can be written (a missing folder is found now, not after
    the simulation), and no option asks the golden model for what only an RTL run has (check mode,
    waveforms): refused when the options chose the golden backend, said once when the call did
    (nki.simulate_kernel)."""
    if backend == "golden":
        asked = [n for n in _RTL_ONLY if option(n)]
        if asked and chosen is None:
            raise ValueError(f"{', '.join(_where(n) for n in asked)} asks for an RTL run, but {_where('backend')} is "
                             "golden (the golden model alone: no timing, no waveforms, nothing to check against): "
                             "leave out one of the two")
        for n in asked:
            if (n, label) not in _noted:
                _noted.add((n, label))
                print(f"[ncore] {label} runs the golden model: {_where(n)} is for RTL runs and is not used here",
                      file=sys.stderr)
    else:
        waves = option("waves")
        if waves:
            _native.check_writable(_where("waves"), waves)
    name = profile or option("profile")
    if name:
        base = os.path.splitext(name)[0] if name.endswith((".ntff", ".neff")) else name
        given = f"{_where('profile')}={name}:" if not profile else f"save_trace_name={name}:"
        for ext in (".summary.json", ".trace.json", ".timeline.html"):
            _native.check_writable(given, base + ext)


def run(func, args, kwargs, backend=None, profile=None, label="run", grid=(), files=None, dialect="neuronxcc",
        preset=None):
    """Traces and runs func (over an SPMD launch grid, if given); returns what the kernel returns
    (numpy arrays) and the figures. files: {"neff": path, "trace": path} written under exactly
    those names (the Program image; the profile's Perfetto trace). dialect and preset: see trace."""
    files = files or {}
    preset = preset or current_preset()
    prog, arrays, meta = trace(func, args, kwargs, grid, dialect, preset)
    written = set(prog.inputs_written()) & set(meta["readonly"])
    if written:
        raise ValueError(f"{func.__name__}: argument{'s' if len(written) > 1 else ''} "
                         f"{', '.join(repr(n) for n in sorted(written))} {'are' if len(written) > 1 else 'is a'} "
                         f"read-only numpy array{'s' if len(written) > 1 else ''} (flags.writeable is False), but the "
                         "kernel writes into it: pass a writable array (np.copy) to receive the result")
    if files.get("neff"):
        prog.save(files["neff"])
        print(f"[ncore] Program image written: {files['neff']} (the traced kernel's binary image)", file=sys.stderr)
    chosen = backend
    backend = backend or option("backend")
    _check_run_options(backend, chosen, label, profile)
    threads = _threads_for(prog, preset) if backend == "rtl" else 0
    waves = option("waves") if backend == "rtl" else None
    scopes = option("waves_scope")
    if isinstance(scopes, str):
        scopes = [x for x in scopes.split(",") if x]
    outs, updated, res = _native.run_program(prog, preset, arrays, backend, threads, option("check"), True,
                                             waves or "", list(scopes or []), option("waves_window") or "",
                                             not option("quiet"))
    if waves:
        print(f"[ncore] waveforms written: {waves} (FST: gtkwave {waves} waves/vector_add.gtkw, or another save "
              "file of waves/, from the repository root)", file=sys.stderr)
    stats = dict(res.stats)
    stats["kernel"] = func.__name__
    last.clear()
    last.update(stats)
    # Arguments the kernel wrote into (an output passed as an argument): back into the caller's arrays.
    bound = inspect.signature(func).bind(*args, **kwargs)
    for name, arr in updated.items():
        target = bound.arguments.get(name)
        if isinstance(target, np.ndarray) and target.flags.writeable:
            np.copyto(target, arr.astype(target.dtype, copy=False).reshape(target.shape))
        elif _is_torch(target):
            target.copy_(_to_torch(arr, meta["dtypes"][name]).reshape(target.shape))
    name = profile or option("profile")
    if name:
        base = os.path.splitext(name)[0] if name.endswith((".ntff", ".neff")) else name
        title = f"{func.__name__} ({label}, {preset}, {backend})"
        text = res.write_profile(base, title)
        written = f"{base}.summary.json" + (f", {base}.trace.json, {base}.timeline.html" if backend == "rtl" else "")
        if files.get("trace") and backend == "rtl":
            shutil.copyfile(f"{base}.trace.json", files["trace"])
            written += f", {files['trace']} (the trace)"
        print(f"[ncore] profile written: {written}", file=sys.stderr)
        if option("verbose"):
            print(text, file=sys.stderr)
    if option("verbose"):
        lat = f"{stats['time_us']:.3f} us" if stats["time_us"] is not None else "no timing (golden model)"
        print(f"[ncore] {func.__name__}: {lat}, {stats['instructions']} instructions, "
              f"{stats['dma_transfer_count']} DMA transfers", file=sys.stderr)
    values = []
    for kind, name, *dtype in meta["order"]:
        if kind == "input":
            dt = meta["dtypes"][name]
            v = updated.get(name)
            if v is None:  # not written: the argument as given
                v = bound.arguments.get(name, arrays[name])
            elif dt != "bfloat16":
                v = v.astype(arrays[name].dtype, copy=False)
            values.append(_to_torch(v, dt) if meta["torch"] and not _is_torch(v) else v)
            continue
        # a bool_ tensor comes back from the model as its uint8 bytes
        v = outs[name].astype(bool) if dtype == ["bool_"] else outs[name]
        values.append(_to_torch(v, dtype[0] if dtype else None) if meta["torch"] else v)
    if meta["none"]:
        return None, stats
    if meta["tuple"]:
        return tuple(values), stats
    return values[0], stats
