"""One configuration of an NKI Python kernel file, as ncore-sweep runs it on a worker, in a process
of its own:

  ncore-python -m ncore._sweep_run SPEC OUT

SPEC (JSON): kernel_file, function, inputs and outputs ({name: [dims, dtype or null]}, dims
numbers or grid names: "K,M", "2*K,M"), reference (a NumPy expression over the inputs, or null),
tolerance, config (the grid values: the kernel's keyword arguments are the ones its signature
has, the rest are dimensions or settings) and options (ncore.set_options). Writes OUT (JSON):
the run's figures (ncore.last_run()), correct (null without a reference), max_abs_error, and error
(the message of a configuration that broke a rule or failed, null otherwise).
"""
import importlib
import importlib.util
import inspect
import json
import math
import os
import sys

import numpy as np

import ncore
import neuronxcc.nki as nki

TORCH_DTYPES = ("bf16",)  # inputs NumPy has no dtype for: torch tensors
NUMPY_DTYPES = {"fp32": np.float32, "fp16": np.float16}
DEFAULT_TOLERANCE = {"fp32": 1e-4, "fp16": 1e-2, "bf16": 5e-2}


def load(path, function):
    """The function from the kernel file: as a module of its folder's package when the folder's name
    is one (relative imports work), else from the file alone."""
    folder = os.path.dirname(os.path.abspath(path))
    name = os.path.splitext(os.path.basename(path))[0]
    sys.path.insert(0, folder)
    if os.path.basename(folder).isidentifier() and os.path.exists(os.path.join(folder, "__init__.py")):
        sys.path.insert(0, os.path.dirname(folder))
        mod = importlib.import_module(os.path.basename(folder) + "." + name)
    else:
        spec = importlib.util.spec_from_file_location(f"sweep_{name}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    if not hasattr(mod, function):
        raise ValueError(f"{path} has no function {function}")
    return getattr(mod, function)


def dims_of(text, names):
    """'K,M' with K=256, M=512 in `names` -> (256, 512)."""
    out = []
    for part in text.split(","):
        v = eval(part, {"__builtins__": {}}, dict(names))  # noqa: S307: numbers and grid names only
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"dimension {part.strip()} = {v!r}: expected a positive whole number")
        out.append(v)
    return tuple(out)


def make_array(rng, dims, dtype, fill=None):
    a = np.full(dims, np.nan, np.float32) if fill else rng.random(dims, dtype=np.float32)
    if dtype in TORCH_DTYPES:
        import torch
        return torch.from_numpy(a).to(torch.bfloat16)
    return a.astype(NUMPY_DTYPES[dtype])


def as_numpy(a):
    if hasattr(a, "float") and hasattr(a, "numpy"):  # a torch tensor
        return a.float().numpy().astype(np.float64)
    return np.asarray(a, dtype=np.float64)


def run(spec):
    config, options = spec["config"], dict(spec["options"])
    dtype = options.pop("dtype", "fp32")
    seed = options.pop("seed", 0)
    ncore.set_options(**options)
    kernel = load(spec["kernel_file"], spec["function"])
    params = inspect.signature(getattr(kernel, "func", kernel)).parameters
    rng = np.random.default_rng(int(seed))
    arrays = {}
    for group, fill in (("inputs", False), ("outputs", True)):
        for name, (dims, dt) in spec[group].items():
            arrays[name] = make_array(rng, dims_of(dims, config), dt or dtype, fill)
    used = {n for dims, _ in list(spec["inputs"].values()) + list(spec["outputs"].values())
            for n in config if n in dims}
    kwargs = {k: v for k, v in config.items() if k in params and k not in arrays}
    unknown = [k for k in config if k not in params and k not in used and k not in spec["options"]
               and k not in spec.get("sets", ())]
    if unknown:
        raise ValueError(f"grid name {', '.join(unknown)}: not a parameter of {spec['function']}, a dimension of "
                         "an input or a setting")
    args = [arrays[p] for p in params if p in arrays]
    if getattr(kernel, "dialect", None) == "nki":  # today's nki: the @nki.jit kernel runs on the model
        res = kernel(*args, **kwargs)
    else:
        res = nki.baremetal(kernel)(*args, **kwargs)
    if res is None and spec["outputs"]:
        res = arrays[next(iter(spec["outputs"]))]
    fig = dict(ncore.last_run())
    fig.update(correct=None, max_abs_error=None, error=None)
    if spec.get("reference"):
        names = {n: as_numpy(arrays[n]) for n in spec["inputs"]}
        ref = np.asarray(eval(spec["reference"], {"np": np, "__builtins__": {}}, dict(config, **names)),  # noqa: S307
                         dtype=np.float64)
        got = as_numpy(res)
        out_dtype = next(iter(spec["outputs"].values()))[1] if spec["outputs"] else None
        if out_dtype is None:  # a returned result: of the inputs' dtype
            out_dtype = next(iter(spec["inputs"].values()))[1] if spec["inputs"] else None
        tol = spec.get("tolerance") or DEFAULT_TOLERANCE[out_dtype or dtype]
        if got.shape != ref.shape:
            fig["correct"] = False
            fig["max_abs_error"] = math.inf
        else:
            err = float(np.max(np.abs(got - ref))) if ref.size else 0.0
            fig["max_abs_error"] = err
            fig["correct"] = bool(err <= tol * float(np.max(np.abs(ref)) if ref.size else 0.0))
    return fig


def main():
    spec, out = json.loads(sys.argv[1]), sys.argv[2]
    try:
        fig = run(spec)
    except Exception as e:  # noqa: BLE001: a configuration's error is its row's
        fig = {"error": f"{type(e).__name__}: {e}"}
    with open(out, "w") as f:
        json.dump(fig, f, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
