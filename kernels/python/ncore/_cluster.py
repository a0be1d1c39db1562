"""Runs commands on a Dask distributed cluster: ncore-sweep's configurations, and the cases of the
long tools (ncore-regress by seed range, the conv harness, the fidelity table) with --scheduler.

Each task is one command run in a process of its own on a worker (SystemC elaborates once per
process, so a run's preset, thread count and PE array are its process's), under a time limit:
a command still running at the limit is ended, with its children, and reported as timed out.
Without a scheduler address the cluster is a local one of this machine's cores (one worker
process per core, one task at a time each, on the loopback address); with one
(`tcp://HOST:PORT`) the tasks go to that scheduler's workers, which need the build at the same
path as here (a shared path, or the same checkout built on each machine).

A worker that dies mid-task has its task rerun on another (the scheduler's own retry): each
task's result arrives once, whichever worker ran it. The task function travels by value, so a
worker needs Dask and the build, not this package on its path.
"""
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid

# Where a task's files go: a placeholder in its arguments, replaced on the worker by a scratch
# folder of the task's own ("{dir}"), or by the path of its output file there ("{out}"), whose text
# comes back with the result.
DIR = "{dir}"
OUT = "{out}"
TAIL = 4000  # characters of a command's stdout and stderr kept in its result


def run_command(cmd, env=None, timeout=None, files=None, fetch=None):
    """Runs cmd (a list; DIR and OUT in an argument name the task's folder and output file) in a
    process group of its own, after writing `files` ({name: bytes}) into the task's folder. Returns a
    dict: returncode (None when cut by the time limit), timed_out, stdout and stderr (their ends),
    out (the output file's text, or None), files ({name: bytes} of the `fetch` names that exist),
    wall_seconds, host."""
    scratch = tempfile.mkdtemp(prefix="ncore-task-")
    out = os.path.join(scratch, "out")
    args = [a.replace(OUT, out).replace(DIR, scratch) for a in cmd]
    for name, data in (files or {}).items():
        with open(os.path.join(scratch, name), "wb") as f:
            f.write(data)
    full_env = dict(os.environ, **(env or {}))
    t0 = time.monotonic()
    timed_out = False
    try:
        p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                             start_new_session=True)
        try:
            so, se = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            so, se = p.communicate()
        text = None
        if os.path.exists(out):
            with open(out) as f:
                text = f.read()
        got = {}
        for name in fetch or ():
            if os.path.exists(os.path.join(scratch, name)):
                with open(os.path.join(scratch, name), "rb") as f:
                    got[name] = f.read()
        return {"returncode": None if timed_out else p.returncode, "timed_out": timed_out,
                "stdout": so[-TAIL:], "stderr": se[-TAIL:], "out": text, "files": got,
                "wall_seconds": round(time.monotonic() - t0, 3), "host": socket.gethostname()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def task(cmd, env=None, timeout=None, files=None, fetch=None):
    """A task for run_all: a command and what run_command takes with it."""
    return {"cmd": cmd, "env": env, "timeout": timeout, "files": files, "fetch": fetch}


@contextlib.contextmanager
def client(scheduler=None, workers=None):
    """A Dask client: of the scheduler at `scheduler` (tcp://HOST:PORT), or of a local cluster of
    `workers` worker processes (default: this machine's cores) on the loopback address."""
    try:
        import cloudpickle
        import distributed
    except ImportError:
        raise SystemExit("a Dask cluster needs Debian's python3-distributed (tools/install-deps installs it) "
                         f"in this Python ({sys.executable})") from None
    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # workers need not import this package
    if scheduler:
        with distributed.Client(scheduler, timeout="30s") as c:
            yield c
        return
    n = workers or os.cpu_count() or 1
    space = tempfile.mkdtemp(prefix="ncore-dask-")  # the workers' own folder, gone with them
    try:
        # The worker processes start with Ctrl-C ignored (it reaches the terminal's whole process group):
        # this process stops them as it closes the cluster.
        before = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True, host="127.0.0.1",
                                               dashboard_address=None, silence_logs=40, local_directory=space)
        finally:
            signal.signal(signal.SIGINT, before)
        with cluster, distributed.Client(cluster) as c:
            yield c
    finally:
        shutil.rmtree(space, ignore_errors=True)


def describe(c):
    """'N workers at ADDRESS' for the client's cluster."""
    info = c.scheduler_info()
    return f"{len(info.get('workers', {}))} workers at {info.get('address', '?')}"


def run_all(c, tasks, on_result, retries=0):
    """Submits tasks (key -> task(...)) to the client's cluster and calls
    on_result(key, result) as each one completes, in the order they complete. A task that raised or
    whose workers kept dying has a result with `error`. Returns when every task has reported."""
    import distributed
    futures = {}
    run = uuid.uuid4().hex[:12]  # this call's tasks: not mistaken for an earlier call's still on the cluster
    for key, t in tasks.items():
        f = c.submit(run_command, **t, key=f"ncore-{run}-{key}", pure=False, retries=retries)
        futures[f] = key
    for f in distributed.as_completed(list(futures)):
        key = futures.pop(f)
        try:
            result = f.result()
        except Exception as e:  # noqa: BLE001: a task's failure is a row, not the end of the run
            result = {"returncode": None, "timed_out": False, "stdout": "", "stderr": "", "out": None, "files": {},
                      "wall_seconds": None, "host": None, "error": f"{type(e).__name__}: {e}"}
        on_result(key, result)


def run_ordered(tasks, scheduler=None, workers=None, on_result=None):
    """Runs a list of tasks on a cluster (scheduler: an address, or "local" or None for a local
    cluster of `workers` processes); returns their results in the list's order. on_result(index,
    result) is called as each arrives."""
    results = [None] * len(tasks)

    def arrived(i, r):
        results[i] = r
        if on_result:
            on_result(i, r)
    with client(None if scheduler in (None, "local") else scheduler, workers) as c:
        run_all(c, dict(enumerate(tasks)), arrived)
    return results


def add_scheduler_option(ap, what="the runs"):
    """--scheduler and --workers on an argparse parser, for the tools that spread work over a cluster."""
    ap.add_argument("--scheduler", metavar="tcp://HOST:PORT",
                    help=f"run {what} on this Dask scheduler's workers (`dask scheduler`, `dask worker`); "
                         "`local`: a local cluster of this machine's cores")
    ap.add_argument("--workers", type=int, help="with --scheduler local: worker processes (default: the cores)")
