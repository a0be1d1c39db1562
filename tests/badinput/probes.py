#!/usr/bin/env python3
"""Bad input, as a new user gives it, to the NKI Python front end and to ncore-sim: each probe must
end in a clear error and a non-zero exit (or, where the input is legal, in the right answer), never
in a silent wrong answer, a crash, a hang or a message that leaks the implementation.

  probes.py --build DIR [--only SUBSTR,...] [--json FILE] [--compare BEFORE.json] [--jobs N]

Each probe runs in a process of its own (a Python probe through DIR/ncore-python, a command-line
probe as DIR/sim/ncore-sim) with a time limit, and is classified from what it printed and how it
exited:

  error     non-zero exit (2 for ncore-sim's bad input) with a message that matches what the probe
            expects and leaks nothing (pybind11's argument lists, C++ library messages, tracebacks
            into the front end's own files for a user error)
  right     exit 0 with the right answer (the probe prints RESULT OK after comparing with NumPy)
  WRONG     exit 0 with a wrong answer, or an error where the input is legal
  BAD-ERROR an error, but the wrong kind: a wrong exit status, an unclear or leaking message
  CRASH     killed by a signal
  HANG      over the time limit

The exit status is 0 when every probe met its expectation. --compare prints a before/after table
against the JSON of an earlier run (of another build)."""
import argparse
import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))

# Messages that leak the implementation instead of saying what is wrong with the input.
LEAKS = [r"incompatible function arguments", r"Invoked with:", r"basic_filebuf", r"std::bad_alloc\b(?!.*tensor)",
         r"_ncore_native\.", r"pybind11", r"At Most \d+ required", r"terminate called", r"Segmentation fault",
         r"what\(\):"]

PRELUDE = """\
import os, sys
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl
import neuronxcc.nki.isa as nisa

def check(got, want):
    ok = got.shape == want.shape and np.array_equal(got, want)
    print("RESULT OK" if ok else "RESULT WRONG")
    sys.exit(0 if ok else 1)

@nki.jit
def copy_rows(a, rows):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // rows):
        nl.store(out[i * rows:(i + 1) * rows], nl.load(a[i * rows:(i + 1) * rows]))
    return out
"""


def py(name, code, match=None, exit=None, ok=False, env=None):
    """A Python probe: `code` after the prelude. ok: legal input, must print RESULT OK."""
    return {"name": name, "kind": "py", "code": textwrap.dedent(code), "match": match, "exit": exit, "ok": ok,
            "env": env or {}}


def cli(name, args, match=None, exit=2, ok=False, setup=None, after=None):
    """An ncore-sim probe. {tmp} in args is a scratch directory; setup(tmp) makes its files; after(tmp)
    returns a complaint about what the run left behind, or None."""
    return {"name": name, "kind": "cli", "args": args, "match": match, "exit": exit, "ok": ok, "setup": setup,
            "after": after}


def _lines(text, indent=""):
    return "".join(indent + line + "\n" for line in textwrap.dedent(text).strip("\n").splitlines())


def kernel(name, body, out="a.shape", call="nki.simulate_kernel(k, np.ones((128, 4), np.float32))", **kw):
    """A Python probe of a kernel k(a) that makes `out` in HBM (of shape `out`, a's dtype), runs `body`
    and returns out; `call` then runs it."""
    code = ("\n@nki.jit\ndef k(a):\n"
            f"    out = nl.ndarray({out}, dtype=a.dtype, buffer=nl.shared_hbm)\n"
            + _lines(body, "    ") + "    return out\n" + _lines(call))
    return py(name, code, **kw)


def alloc(name, decl, **kw):
    """A Python probe of a kernel that only makes the tensor `decl` and returns its input."""
    return py(name, f"\n@nki.jit\ndef k(a):\n    t = {decl}\n    return a\n"
                    "nki.simulate_kernel(k, np.ones((128, 4), np.float32))\n", **kw)


def baremetal_copy(name, before="", **kw):
    """A Python probe that copies a 128 x 4 float32 array with copy_rows on the baremetal path, after
    the statements `before` (what is wrong is in them or in the probe's env)."""
    return py(name, "\n" + before + "a = np.random.rand(128, 4).astype(np.float32)\n"
                                    "nki.baremetal(copy_rows)(a, 128)\n", **kw)


def a_file(name, file, **kw):
    """An ncore-sim probe of the stream kernel whose input a is the file `file` that make_files made."""
    return cli(name, [*STREAM, "--a", "{tmp}/" + file], setup=make_files, **kw)


def missing_folder(option, path, before_run):
    """An ncore-sim probe of an output path in a folder that does not exist; before_run: the message
    must come before the run (no latency printed)."""
    want = f"{option} /nonexistent/" + path.replace(".", r"\.")
    return cli(f"{option} in a missing folder", [*STREAM, option, "/nonexistent/" + path],
               match=(r"^(?![\s\S]*Latency)[\s\S]*" if before_run else "") + want)


def golden_with(option, *args):
    """An ncore-sim probe of an option that the golden backend cannot honour."""
    return cli(f"golden backend with {option}", [*STREAM, "--backend", "golden", option, *args],
               match=f"{option}.*golden|golden.*{option}")


# ncore-sim on the stream kernel of 25600 elements, the base of most command-line probes
STREAM = ["--kernel", "stream", "-n", "25600"]


def npy(path, arr):
    import numpy as np
    np.save(path, arr)


def make_files(tmp):
    import numpy as np
    npy(os.path.join(tmp, "a.npy"), np.random.rand(25600).astype(np.float32))
    npy(os.path.join(tmp, "a64.npy"), np.random.rand(25600))
    npy(os.path.join(tmp, "abe.npy"), np.random.rand(25600).astype(">f4"))
    npy(os.path.join(tmp, "short.npy"), np.random.rand(100).astype(np.float32))
    npy(os.path.join(tmp, "bias.npy"), np.random.rand(128).astype(np.float32))
    with open(os.path.join(tmp, "empty.npy"), "wb"):
        pass
    with open(os.path.join(tmp, "garbage.npy"), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00\xff\xff{'descr': '<f4', 'fortran_order': False, 'shape': (25600,), }")
    arr = np.asfortranarray(np.random.rand(128, 200).astype(np.float32))
    np.save(os.path.join(tmp, "fortran.npy"), arr)


def corrupt_image(tmp, sim):
    """A saved image with its HBM size field made huge (one flipped high bit)."""
    path = os.path.join(tmp, "good.img")
    subprocess.run([sim, "--kernel", "stream", "-n", "25600", "--backend", "golden", "--save-image", path, "-q"],
                   capture_output=True, check=True)
    data = bytearray(open(path, "rb").read())
    return path, data


def no_hier_left(tmp):
    left = [f for f in os.listdir(tmp) if f.endswith(".hier")]
    return f"left behind: {', '.join(left)}" if left else None


PROBES = [
    # --- integers: a float or a string where NKI needs an integer -----------------------------
    kernel("loop count a float (1000 / 128)", """
        for i in nl.affine_range(a.shape[0] / 128):
            nl.store(out[i * 128:(i + 1) * 128], nl.load(a[i * 128:(i + 1) * 128]))
        """, call="""
        a = np.random.rand(1000, 16).astype(np.float32) + 1
        check(nki.simulate_kernel(k, a), a)
        """, match=r"TypeError.*float.*integer"),
    kernel("sequential_range count a float", """
        for i in nl.sequential_range(2.5):
            nl.store(out[0:128], nl.load(a[0:128]))
        """, match=r"TypeError.*float.*integer"),
    kernel("static_range count a float", """
        for i in nl.static_range(2.5):
            nl.store(out[0:128], nl.load(a[0:128]))
        """, match=r"TypeError.*float.*integer"),
    kernel("loop count a string", """
        for i in nl.affine_range('3'):
            nl.store(out[0:128], nl.load(a[0:128]))
        """, match=r"TypeError.*str.*integer"),
    kernel("slice bound a float", "nl.store(out[0:128], nl.load(a[0:128.0]))",
        match=r"TypeError.*(float|slice).*integer"),
    kernel("index a float", "nl.store(out, nl.load(a[:, 1.0]))", out="(128, 1)",
        match=r"(TypeError|IndexError).*float"),
    kernel("nl.ds start a float", "nl.store(out, nl.load(a[nl.ds(0.5, 128)]))", out="(128, 4)",
        call="nki.simulate_kernel(k, np.ones((256, 4), np.float32))", match=r"TypeError.*float.*integer"),
    kernel("nl.ds size a float", "nl.store(out, nl.load(a[nl.ds(0, 128.0)]))", out="(128, 4)",
        call="nki.simulate_kernel(k, np.ones((256, 4), np.float32))", match=r"TypeError.*float.*integer"),
    kernel("nl.arange bound a float", """
        i_p = nl.arange(128.0)[:, None]
        i_f = nl.arange(4)[None, :]
        nl.store(out, nl.load(a[i_p, i_f]))
        """, out="(128, 4)", match=r"TypeError.*float.*integer"),
    kernel("ndarray shape a float", """
        t = nl.ndarray((128.0, 4), dtype=a.dtype, buffer=nl.sbuf)
        t[...] = nl.load(a)
        nl.store(out, t)
        """, match=r"TypeError.*float.*integer"),
    alloc("ndarray shape a string", "nl.ndarray(('128', 4), dtype=a.dtype, buffer=nl.sbuf)",
        match=r"TypeError.*str.*integer"),
    alloc("zeros shape a float", "nl.zeros((128, 4.5), dtype=a.dtype, buffer=nl.sbuf)",
        match=r"TypeError.*float.*integer"),
    kernel("reshape to a float shape", "nl.store(out, nl.load(a.reshape((128, 4.0))))", out="(128, 4)",
        match=r"TypeError.*float.*integer"),
    py("a numpy integer count is fine", """
        a = np.random.rand(512, 8).astype(np.float32)
        check(nki.simulate_kernel(copy_rows, a, np.int64(128)), a)
        """, ok=True),
    kernel("a bool loop count", """
        for i in nl.affine_range(True):
            nl.store(out, nl.load(a))
        """, call="""
        a = np.random.rand(128, 8).astype(np.float32)
        check(nki.simulate_kernel(k, a), a)
        """, ok=True),
    # --- sizes that overflow ---------------------------------------------------------------
    py("sbuf tile of 2**62 elements per partition", """
        @nki.jit
        def k(a):
            t = nl.ndarray((128, 2**62), dtype=nl.float32, buffer=nl.sbuf)
            u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
            u[...] = nl.load(a)
            t[:, 0:64] = nl.load(a)
            out = nl.ndarray((128, 64), dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, u)
            return out
        a = np.random.rand(128, 64).astype(np.float32)
        check(nki.simulate_kernel(k, a), a)
        """, match=r"(ValueError|OverflowError|MemoryError).*(size|bytes|exceed|SBUF|too large|overflow)"),
    alloc("hbm tensor of shape (2**32, 2**32, 4)",
        "nl.ndarray((2**32, 2**32, 4), dtype=nl.float32, buffer=nl.shared_hbm)",
        match=r"(ValueError|OverflowError|MemoryError).*(size|bytes|exceed|HBM|too large|overflow)"),
    alloc("tile of 2**64 elements per partition", "nl.ndarray((128, 2**64), dtype=nl.float32, buffer=nl.sbuf)",
        match=r"(ValueError|OverflowError).*(size|bytes|exceed|too large|overflow|2\*\*64|18446744073709551616)"),
    alloc("negative dimension", "nl.ndarray((128, -4), dtype=nl.float32, buffer=nl.sbuf)",
        match=r"ValueError.*(-4|negative|positive)"),
    alloc("tile over the SBUF's partition size", "nl.ndarray((128, 100000), dtype=nl.float32, buffer=nl.sbuf)",
        match=r"ValueError.*(SBUF|sbuf|exceed|bytes)"),
    alloc("partition dimension over 128", "nl.ndarray((256, 4), dtype=nl.float32, buffer=nl.sbuf)",
        match=r"number of partitions 256 exceed architecture limitation of 128"),
    # --- arguments -----------------------------------------------------------------------------
    py("read-only output argument", """
        @nki.jit
        def k(a, out):
            nl.store(out, nl.load(a))
        a = np.random.rand(128, 4).astype(np.float32)
        r = np.zeros_like(a)
        r.flags.writeable = False
        nki.simulate_kernel(k, a, r)
        check(r, a)
        """, match=r"(ValueError|TypeError).*(read-only|writeable|not writable)"),
    py("big-endian float32 input", """
        a = np.random.rand(128, 4).astype('>f4')
        nki.simulate_kernel(copy_rows, a, 128)
        """, match=r"(TypeError|ValueError).*(byte order|big-endian|endian)"),
    py("float64 input", """
        a = np.random.rand(128, 4)
        nki.simulate_kernel(copy_rows, a, 128)
        """, match=r"(TypeError|ValueError).*float64"),
    py("dtype message names only real types", """
        a = np.random.rand(128, 4).astype(np.complex64)
        nki.simulate_kernel(copy_rows, a, 128)
        """, match=r"^(?!.*ncore\.bfloat16).*(TypeError|ValueError).*complex64"),
    kernel("output never written", "",
        match=r"probe\.py:\d+:.*[`']out[`'].*(never written|err_tensor_output_not_written_to)"),
    kernel("load out of bounds", "nl.store(out, nl.load(a[128:256]))", out="(128, 4)",
        match=r"probe\.py:\d+:.*(out of bound|exceed|range)"),
    py("shape mismatch in add", """
        @nki.jit
        def k(a, b):
            out = nl.ndarray((128, 4), dtype=a.dtype, buffer=nl.shared_hbm)
            nl.store(out, nl.add(nl.load(a), nl.load(b)))
            return out
        nki.simulate_kernel(k, np.ones((128, 4), np.float32), np.ones((128, 3), np.float32))
        """, match=r"probe\.py:\d+:.*(shape|broadcast)"),
    alloc("unknown dtype name", "nl.ndarray((128, 4), dtype='float128', buffer=nl.sbuf)",
        match=r"(TypeError|ValueError).*float128"),
    py("integer operand of nc_matmul", """
        @nki.jit
        def k(a):
            out = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.shared_hbm)
            t = nl.load(a)
            nl.store(out, nl.copy(nisa.nc_matmul(t, t)))
            return out
        nki.simulate_kernel(k, np.ones((128, 128), np.int32))
        """, match=r"probe\.py:\d+:.*(int32|integer)"),
    py("kernel argument of an unsupported kind", """
        nki.simulate_kernel(copy_rows, [1.0, 2.0], 128)
        """, match=r"(TypeError|ValueError|AttributeError).*list"),
    # --- options ------------------------------------------------------------------------------
    baremetal_copy("waves option not a path", before="import ncore\nncore.set_options(waves=42)\n",
        match=r"(TypeError|ValueError).*waves.*42"),
    baremetal_copy("profile path in a missing folder",
        match=r"(ValueError|FileNotFoundError|OSError).*NCORE_PROFILE.*nonexistent",
        env={"NCORE_PROFILE": "/nonexistent/x"}),
    baremetal_copy("waves path in a missing folder",
        match=r"(ValueError|FileNotFoundError|OSError).*NCORE_WAVES.*nonexistent",
        env={"NCORE_WAVES": "/nonexistent/x.fst", "NCORE_BACKEND": "rtl"}),
    baremetal_copy("golden backend with waves asked for", match=r"ValueError.*NCORE_WAVES.*golden",
        env={"NCORE_BACKEND": "golden", "NCORE_WAVES": "x.fst"}),
    baremetal_copy("golden backend with check asked for", match=r"ValueError.*NCORE_CHECK.*golden",
        env={"NCORE_BACKEND": "golden", "NCORE_CHECK": "1"}),
    baremetal_copy("unknown backend", match=r"ValueError.*NCORE_BACKEND.*fpga", env={"NCORE_BACKEND": "fpga"}),
    baremetal_copy("dma queues not a number", match=r"ValueError.*NCORE_DMA_QUEUES.*four",
        env={"NCORE_DMA_QUEUES": "four"}),
    py("unknown option", """
        import ncore
        ncore.set_options(thread=2)
        """, match=r"TypeError.*thread"),
    py("percentile out of range", """
        a = np.random.rand(128, 4).astype(np.float32)
        b = nki.benchmark(copy_rows, warmup=1, iters=1)
        b(a, 128)
        b.benchmark_result.nc_latency.get_latency_percentile(101)
        """, match=r"ValueError.*101"),
    py("a legal copy is right", """
        a = np.random.rand(512, 8).astype(np.float32)
        check(nki.simulate_kernel(copy_rows, a, 128), a)
        """, ok=True),
    # --- ncore-sim: numbers ----------------------------------------------------------------------
    cli("-n at the int64 maximum", ["--kernel", "stream", "-n", "9223372036854775807"],
        match=r"9223372036854775807.*(more than 2\^60|does not fit)"),
    cli("--batch 2**43", ["--kernel", "conv", "--batch", "8796093022208"],
        match=r"8796093022208.*(more than 2\^60|does not fit)"),
    cli("-n not a number", ["--kernel", "stream", "-n", "abc"], match=r"-n.*abc.*not an integer"),
    cli("-n a float", ["--kernel", "stream", "-n", "1.5"], match=r"-n.*1\.5.*not an integer"),
    cli("-n beyond int64", ["--kernel", "stream", "-n", "99999999999999999999"],
        match=r"-n.*99999999999999999999.*(not an integer|range)"),
    cli("-n negative", ["--kernel", "stream", "-n", "-5"], match=r"positive integer"),
    cli("--seed negative", [*STREAM, "--seed", "-1"], match=r"--seed.*-1"),
    cli("--dma-queues 17", [*STREAM, "--dma-queues", "17"], match=r"--dma-queues.*17"),
    cli("--threads 3", [*STREAM, "--threads", "3"], match=r"--threads 3"),
    cli("--waves-window backwards", [*STREAM, "--waves", "{tmp}/w.fst",
                                     "--waves-window", "10:5"], match=r"--waves-window.*10:5"),
    cli("--example with -n (the given -n replaces the example's)", ["--kernel", "stream", "--example", "-n", "51200"],
        exit=0, ok=True, match=r"n=51200"),
    cli("an option given twice", [*STREAM, "-n", "51200"], match=r"-n is given twice"),
    cli("transpose not a multiple of 128", ["--kernel", "transpose", "-n", "100"], match=r"multiple of 128|128"),
    cli("conv pool size 0", ["--kernel", "conv", "--pool-size", "0"], match=r"--pool-size.*positive"),
    # --- ncore-sim: files ----------------------------------------------------------------------
    cli("--a a directory", [*STREAM, "--a", "{tmp}"], match=r"--a.*directory"),
    cli("--a missing", [*STREAM, "--a", "{tmp}/missing.npy"], match=r"cannot open"),
    a_file("--a empty file", "empty.npy", match=r"empty\.npy.*(not a \.npy|truncated|magic|header)"),
    a_file("--a corrupt header", "garbage.npy", match=r"garbage\.npy"),
    a_file("--a wrong size", "short.npy", match=r"short\.npy.*100"),
    a_file("--a float64", "a64.npy", match=r"a64\.npy.*(float64|<f8)"),
    a_file("--a big-endian float32", "abe.npy", match=r"abe\.npy.*(byte order|big-endian)"),
    cli("--input unknown name", [*STREAM, "--input", "zz={tmp}/a.npy"], setup=make_files,
        match=r"--input.*zz"),
    cli("--input and --a for one tensor", [*STREAM, "--a", "{tmp}/a.npy", "--input",
                                           "a_vec={tmp}/a.npy"], setup=make_files,
        match=r"--input a_vec.*--a|--a.*--input"),
    cli("--bias with --no-bias", ["--kernel", "conv", "--bias", "{tmp}/bias.npy", "--no-bias"], setup=make_files,
        match=r"--bias.*--no-bias|--no-bias.*--bias"),
    cli("--image missing", [*STREAM, "--image", "{tmp}/missing.img"], match=r"missing\.img"),
    cli("--image not an image", [*STREAM, "--image", HERE + "/probes.py"], match=r"image"),
    cli("--image truncated", [*STREAM, "--image", "{tmp}/trunc.img"], match=r"trunc\.img",
        setup="truncated_image"),
    cli("--image with a flipped bit in its HBM size", [*STREAM, "--image",
                                                           "{tmp}/huge.img"],
        match=r"huge\.img.*(damaged|hbm_bytes.*exceeds)", setup="huge_image"),
    # --- ncore-sim: output paths are checked before the run ------------------------------------
    *[missing_folder(option, path, before_run) for option, path, before_run in [
        ("--out", "o.npy", True), ("--json", "o.json", True), ("--records", "o.csv", True), ("--profile", "p", True),
        ("--listing", "l.txt", False), ("--save-image", "i.img", False), ("--waves", "x.fst", False)]],
    # --- ncore-sim: options the golden backend cannot honour ----------------------------------
    *[golden_with(option, *args) for option, *args in [("--waves", "{tmp}/w.fst"), ("--records", "{tmp}/r.csv"),
                                                         ("--check",)]],
    # --- ncore-sim: names ----------------------------------------------------------------------
    cli("unknown kernel", ["--kernel", "bogus", "-n", "128"], match=r"--kernel.*bogus"),
    cli("unknown dtype", [*STREAM, "--dtype", "fp64"], match=r"--dtype.*fp64"),
    cli("unknown config", [*STREAM, "--config", "trn9"], match=r"--config.*trn9"),
    cli("option of another kernel", [*STREAM, "--row-chunk", "4"],
        match=r"--row-chunk is an option of kernel"),
    cli("a legal run is right", [*STREAM, "--backend", "golden"], exit=0, ok=True,
        match=r"Correctness passed\? True"),
]


def prepare(p, tmp, sim):
    if p.get("setup") == "truncated_image" or p.get("setup") == "huge_image":
        path, data = corrupt_image(tmp, sim)
        if p["setup"] == "truncated_image":
            open(os.path.join(tmp, "trunc.img"), "wb").write(data[: len(data) // 2])
        else:
            # one flipped bit of the header's hbm_bytes: bit 34, 16 GiB more (what made a run
            # allocate 16.8 GB before it started)
            out = bytearray(data)
            hbm = _hbm_field(out)
            out[hbm + 4] ^= 0x04
            open(os.path.join(tmp, "huge.img"), "wb").write(out)
    elif callable(p.get("setup")):
        p["setup"](tmp)


def _hbm_field(data):
    """The offset of the image header's hbm_bytes (firmware/src/image.cpp: magic 8, version u32,
    insn_bytes u32, kernel and preset as u32 length + bytes, then hbm_bytes u64)."""
    import struct
    at = 16
    for _ in range(2):
        (n,) = struct.unpack_from("<I", data, at)
        at += 4 + n
    return at


def classify(p, rc, out, err, timed_out):
    text = (out + "\n" + err).strip()
    last = [l for l in err.strip().splitlines() if l.strip()]
    msg = last[-1] if last else (out.strip().splitlines() or [""])[-1]
    if timed_out:
        return "HANG", msg
    if rc < 0:
        return "CRASH", f"signal {-rc}"
    if p["ok"]:
        good = rc == 0 and ("RESULT OK" in out if p["kind"] == "py" else re.search(p["match"], text) is not None)
        return ("right" if good else "WRONG"), msg
    if rc == 0:
        return "WRONG", "exit 0: " + ("RESULT WRONG" if "RESULT WRONG" in out else msg)
    if "RESULT WRONG" in out:
        return "WRONG", msg
    leak = next((l for l in LEAKS if re.search(l, text)), None)
    if leak:
        return "BAD-ERROR", f"leaks internals ({leak}): {msg}"
    if p["kind"] == "cli" and rc != p["exit"]:
        return "BAD-ERROR", f"exit {rc}, not {p['exit']}: {msg}"
    if p["kind"] == "py":
        # the error a user sees is the exception's last line; it must name what is wrong
        if not re.search(p["match"], err, re.S | re.M):
            return "BAD-ERROR", f"unclear: {msg}"
        return "error", msg
    if not re.search(p["match"], text, re.M):
        return "BAD-ERROR", f"unclear: {msg}"
    return "error", msg


def run_probe(p, build):
    sim = os.path.join(build, "sim", "ncore-sim")
    with tempfile.TemporaryDirectory(prefix="ncore-probe-") as tmp:
        prepare(p, tmp, sim)
        env = dict(os.environ)
        env.pop("NCORE_PROFILE", None)
        env.pop("NCORE_WAVES", None)
        if p["kind"] == "py":
            path = os.path.join(tmp, "probe.py")
            with open(path, "w") as f:
                f.write(PRELUDE + p["code"])
            env.setdefault("NCORE_BACKEND", "golden")
            env.update(p["env"])
            cmd = [os.path.join(build, "ncore-python"), path]
        else:
            cmd = [sim, *[a.replace("{tmp}", tmp) for a in p["args"]], "-q"]
        try:
            r = subprocess.run(cmd, cwd=tmp, env=env, capture_output=True, text=True, timeout=300)
            rc, out, err, to = r.returncode, r.stdout, r.stderr, False
        except subprocess.TimeoutExpired as e:
            rc, out, err, to = None, e.stdout or "", e.stderr or "", True
            out = out.decode() if isinstance(out, bytes) else out
            err = err.decode() if isinstance(err, bytes) else err
        outcome, msg = classify(p, rc, out, err, to)
        if outcome in ("error", "right") and p["kind"] == "cli" and p.get("after"):
            complaint = p["after"](tmp)
            if complaint:
                outcome, msg = "BAD-ERROR", complaint
        return {"name": p["name"], "kind": p["kind"], "outcome": outcome, "message": msg[:300], "exit": rc}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True, help="build directory (with ncore-python and sim/ncore-sim)")
    ap.add_argument("--only", help="only the probes whose name contains one of these (comma-separated)")
    ap.add_argument("--json", help="write the outcomes here")
    ap.add_argument("--compare", help="an earlier run's JSON: print a before/after table")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    wanted = [w for w in (a.only or "").split(",") if w]
    probes = [p for p in PROBES if not wanted or any(w in p["name"] for w in wanted)]
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        results = list(ex.map(lambda p: run_probe(p, build), probes))
    before = {}
    if a.compare:
        before = {r["name"]: r for r in json.load(open(a.compare))["probes"]}
    bad = [r for r in results if r["outcome"] not in ("error", "right")]
    for r in results:
        b = before.get(r["name"])
        head = f"{b['outcome']:9s} -> " if b else ""
        print(f"{head}{r['outcome']:9s} [{r['kind']}] {r['name']}: {r['message']}")
    print(f"{len(results) - len(bad)} of {len(results)} probes as expected"
          + (f"; not: {', '.join(r['name'] for r in bad)}" if bad else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"build": build, "probes": results}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
