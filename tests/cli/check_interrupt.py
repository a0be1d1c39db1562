#!/usr/bin/env python3
"""Ctrl-C (SIGINT) stops a long run and leaves nothing half-written: ncore-sim ends with status
130, closes its waveform file (a readable .fst, no .fst.hier left) and writes no --out or --json;
a Python run raises KeyboardInterrupt (the native run does not hold the signal until it ends),
and so does a long Python trace (loops replayed in C++).

Each run would take far longer than the test waits before the signal (a matmul of 2^33 MACs on
the RTL PE array), so a run that finished instead of stopping fails; a run that does not stop
within the time limit fails too. No wall-clock figure is asserted.

Progress: on a terminal (a pseudo-terminal here) a run shows its progress line (a bar, the
instructions done of all, the cycle, the time left) and a trace its count of instructions so far;
with output to a pipe neither appears.

usage: check_interrupt.py <ncore-sim> <ncore-python> <scratch dir>
"""
import os
import pty
import re
import signal
import subprocess
import sys
import textwrap
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

C = Checks(sys.argv[1], sys.argv[3])
PY = sys.argv[2]
path, check = C.path, C.check
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "kernels",
                        "python", "examples")
LIMIT = 120  # seconds a stopped process may take to end (a generous bound for a loaded machine)


def stop(p):
    """Sends SIGINT to p; its exit status, or None (and killed) when it does not end within LIMIT."""
    p.send_signal(signal.SIGINT)
    try:
        return p.wait(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        p.kill()
        return None


def interrupt(cmd, ready, env=None):
    """Starts cmd, waits until its output so far contains `ready` (or 20 s), 2 s more, then sends
    SIGINT. Returns (exit status, or None when it did not end within LIMIT; its output)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    lines = []
    reader = threading.Thread(target=lambda: lines.extend(p.stdout), daemon=True)
    reader.start()
    t0 = time.monotonic()
    while ready and not any(ready in line for line in lines) and time.monotonic() - t0 < 20 and p.poll() is None:
        time.sleep(0.1)
    time.sleep(2)
    t1 = time.monotonic()
    rc = stop(p)
    print(f"     (started {t1 - t0:.1f} s before the signal; ended {time.monotonic() - t1:.2f} s after it)")
    reader.join(timeout=10)
    return rc, "".join(lines)


def progress_on_a_terminal(cmd, pattern):
    """Runs cmd with a pseudo-terminal as its stdout and stderr until a line matches `pattern`
    (or LIMIT), then sends SIGINT. Returns (the match or None, exit status, all output)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    chunks = []

    def read():
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:  # the terminal closed when the process ended
                return
            if not data:
                return
            chunks.append(data.decode(errors="replace"))

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    t0 = time.monotonic()
    m = None
    while m is None and time.monotonic() - t0 < LIMIT and p.poll() is None:
        time.sleep(0.2)
        m = re.search(pattern, "".join(chunks))
    rc = stop(p)
    reader.join(timeout=10)
    os.close(master)
    return m, rc, "".join(chunks)


for f in os.listdir(C.dir):
    os.remove(path(f))
big = ["--kernel", "matmul_blocked", "-k", "2048", "-m", "2048", "-n", "2048", "--dtype", "bf16"]
rc, out = interrupt([C.sim, *big, "--waves", path("m.fst"), "--waves-scope", "pe", "--out", path("o.npy"),
                        "--json", path("o.json")], None)
check(rc == 130, f"ncore-sim stops on SIGINT with status 130 ({rc})\n{out[-500:]}")
check("interrupted (Ctrl-C)" in out, "ncore-sim says it was interrupted")
check("Correctness passed" not in out, "the run did not finish instead")
check(os.path.exists(path("m.fst")) and not os.path.exists(path("m.fst.hier")),
      f"the waveform file is closed, no .fst.hier left ({sorted(os.listdir(C.dir))})")
check(not os.path.exists(path("o.npy")) and not os.path.exists(path("o.json")), "no --out or --json written")
check("\r" not in out and "instructions, cycle" not in out, "no progress lines when the output is a pipe")
m, rc, out = progress_on_a_terminal(
    [C.sim, *big], r"\[ncore-sim\] \[[#.]{24}\] +\d+% [\d,]+ of [\d,]+ instructions, cycle [\d,]+ \([\d.]+ us\), "
    r"[^,]+, (about [^\r\n]+ left|time left unknown)")
print(f"     on a terminal: {m.group(0) if m else None!r}")
check(m is not None and "\r" in out, f"a run on a terminal shows its progress line, rewritten in place\n{out[-500:]!r}")
check(rc == 130, f"and stops on SIGINT with status 130 ({rc})")
fst2vcd = subprocess.run(["fst2vcd", path("m.fst")], capture_output=True, text=True)
check(fst2vcd.returncode == 0 and "$enddefinitions" in fst2vcd.stdout, "the interrupted dump reads back (fst2vcd)")

run_py = path("run.py")
with open(run_py, "w") as f:
    f.write(textwrap.dedent(f"""\
        import sys
        import numpy as np
        sys.path.insert(0, {EXAMPLES!r})
        import neuronxcc.nki as nki
        from matrix import matmul_blocked
        a = np.random.rand(2048, 2048).astype(np.float16)
        b = np.random.rand(2048, 2048).astype(np.float16)
        print("running", flush=True)
        try:
            nki.baremetal(matmul_blocked)(a, b)
            print("finished", flush=True)
        except KeyboardInterrupt as e:
            print("KeyboardInterrupt:", e, flush=True)
        """))
rc, out = interrupt([PY, run_py], "running")
check(rc == 0 and "KeyboardInterrupt: the run was interrupted" in out and "finished" not in out,
      f"a Python RTL run raises KeyboardInterrupt on SIGINT ({rc})\n{out[-500:]}")

trace_py = path("trace.py")
with open(trace_py, "w") as f:
    f.write(textwrap.dedent(f"""\
        import sys
        import numpy as np
        sys.path.insert(0, {EXAMPLES!r})
        import ncore
        from kernels import vector_add_tiled
        a = np.zeros(25600000, np.float32)
        print("tracing", flush=True)
        try:
            ncore.trace(vector_add_tiled, a, a, 1)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print("KeyboardInterrupt in the trace", flush=True)
        """))
rc, out = interrupt([PY, trace_py], "tracing")
check(rc == 0 and "KeyboardInterrupt in the trace" in out and "finished" not in out,
      f"a long Python trace raises KeyboardInterrupt on SIGINT ({rc})\n{out[-500:]}")
check("tracing the kernel" not in out, "no trace progress when the output is a pipe")
m, rc, out = progress_on_a_terminal([PY, trace_py], r"\[ncore\] tracing the kernel: [\d,]+ instructions so far, [^\r\n]*\d")
print(f"     on a terminal: {m.group(0) if m else None!r}")
check(m is not None, f"a long Python trace on a terminal shows its count of instructions\n{out[-500:]!r}")
C.finish("interrupt checks")
