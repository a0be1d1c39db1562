#!/usr/bin/env python3
"""Ctrl-C (SIGINT) stops a long run and leaves nothing half-written: ncore-sim ends with status
130, closes its waveform file (a readable .fst, no .fst.hier left) and writes no --out or --json;
a Python run raises KeyboardInterrupt (the native run does not hold the signal until it ends),
and so does a long Python trace (loops replayed in C++).

Each run would take far longer than the test waits before the signal (a matmul of 2^33 MACs on
the RTL PE array), so a run that finished instead of stopping fails; a run that does not stop
within the time limit fails too. No wall-clock figure is asserted.

usage: check_interrupt.py <ncore-sim> <ncore-python> <scratch dir>
"""
import os
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
    p.send_signal(signal.SIGINT)
    try:
        rc = p.wait(timeout=LIMIT)
    except subprocess.TimeoutExpired:
        p.kill()
        rc = None
    print(f"     (started {t1 - t0:.1f} s before the signal; ended {time.monotonic() - t1:.2f} s after it)")
    reader.join(timeout=10)
    return rc, "".join(lines)


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
C.finish("interrupt checks")
