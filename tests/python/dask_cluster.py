"""A real Dask cluster for the tests: `dask scheduler` and two `dask worker` processes on the
loopback address, started and stopped by the test that asks for the `cluster` fixture."""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

import pytest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def dask(*args):
    # the `dask` command of Debian's python3-distributed (`dask scheduler`, `dask worker`), run by this Python
    return subprocess.Popen([sys.executable, "-m", "dask", *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


class Cluster:
    """`dask scheduler` and two `dask worker` processes (no nanny: a killed worker stays dead)."""

    def __init__(self):
        port = free_port()
        self.address = f"tcp://127.0.0.1:{port}"
        self.scheduler = dask("scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard")
        self.space = tempfile.mkdtemp(prefix="ncore-test-dask-")  # the workers' folders, removed with them
        self.workers = [dask("worker", self.address, "--host", "127.0.0.1", "--nthreads", "1", "--no-nanny",
                             "--no-dashboard", "--name", f"w{i}", "--local-directory", self.space) for i in range(2)]
        import distributed
        with distributed.Client(self.address, timeout="60s") as c:
            c.wait_for_workers(2, timeout=60)

    def stop(self):
        for p in self.workers + [self.scheduler]:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
        shutil.rmtree(self.space, ignore_errors=True)


@pytest.fixture
def cluster():
    c = Cluster()
    yield c
    c.stop()
