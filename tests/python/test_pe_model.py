"""ncore.set_options(pe_model=) and NCORE_PE_MODEL: a Python kernel on the fast PE array gives the
RTL array's cycles and bits, last_run() names the PE array, and a bad name is refused. Each PE
array in its own process (SystemC elaborates once per process)."""
import json
import os
import subprocess

import pytest

NCORE_PYTHON = os.environ.get("NCORE_PYTHON")
needs_build = pytest.mark.skipif(not NCORE_PYTHON, reason="run from CTest (NCORE_PYTHON)")

# A matmul_blocked of signed inputs in check mode; prints cycles, the PE array and the output's bits.
PROGRAM = r"""
import json, sys, hashlib
import numpy as np
import ncore
import neuronxcc.nki as nki
sys.path.insert(0, sys.argv[1])
from matrix import matmul_blocked
rng = np.random.default_rng(3)
lhsT = rng.uniform(-1, 1, (256, 128)).astype(np.float32)
rhs = rng.uniform(-1, 1, (256, 512)).astype(np.float32)
lhsT[:, 3] = -0.0
lhsT[7, 5] = np.inf
lhsT[:, 9] = np.float32(1e-41)
if len(sys.argv) > 2:
    ncore.set_options(pe_model=sys.argv[2])
ncore.set_options(check=True, threads=1)
out = nki.baremetal(matmul_blocked)(lhsT, rhs)
r = ncore.last_run()
print(json.dumps({"cycles": r["cycles"], "pe_macs": r["pe_macs"], "pe_model": r["pe_model"],
                  "bits": hashlib.sha256(np.ascontiguousarray(out).tobytes()).hexdigest()}))
"""
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "kernels",
                        "python", "examples")


def run(*args, env=None):
    e = {k: v for k, v in os.environ.items() if k != "NCORE_PE_MODEL"}
    e.update(env or {})
    p = subprocess.run([NCORE_PYTHON, "-c", PROGRAM, EXAMPLES, *args], capture_output=True, text=True, env=e,
                       timeout=1800)
    return p.returncode, p.stdout, p.stderr


@needs_build
def test_fast_pe_model_same_cycles_and_bits():
    rc, out, err = run("rtl")
    assert rc == 0, err
    rtl = json.loads(out.strip().splitlines()[-1])
    rc, out, err = run("fast")
    assert rc == 0, err
    fast = json.loads(out.strip().splitlines()[-1])
    rc, out, err = run(env={"NCORE_PE_MODEL": "fast"})
    assert rc == 0, err
    env = json.loads(out.strip().splitlines()[-1])
    assert (rtl["pe_model"], fast["pe_model"], env["pe_model"]) == ("rtl", "fast", "fast")
    for r in (fast, env):
        assert (r["cycles"], r["pe_macs"], r["bits"]) == (rtl["cycles"], rtl["pe_macs"], rtl["bits"])


@needs_build
def test_bad_pe_model_is_refused():
    rc, out, err = run("slow")
    assert rc != 0 and "pe_model" in err and "rtl or fast" in err
