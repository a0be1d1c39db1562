"""What the CLI check scripts share: each check prints `ok` or `FAIL` and what it checked, and
the script's exit status says whether any failed (`finish()`); and reading a waves dump."""
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def finish():
    sys.exit(1 if failures else 0)


def vcd_records(fst2vcd, dump):
    """The FST dump read with GTKWave's fst2vcd, in order: ("var", scope, name, code) for each
    signal (scope: its dotted path; name: the path, the signal and the range of a vector, as
    GTKWave names it), ("time", t) and ("bits", bits, code) for a vector's value."""
    vcd = subprocess.run([fst2vcd, dump], capture_output=True, text=True).stdout
    stack = []
    for line in vcd.splitlines():
        if line.startswith("$scope"):
            stack.append(line.split()[2])
        elif line.startswith("$upscope"):
            stack.pop()
        elif line.startswith("$var"):
            f = line.split()
            yield "var", ".".join(stack), ".".join(stack + [f[4]]) + (f[5] if f[5].startswith("[") else ""), f[3]
        elif line.startswith("#"):
            yield "time", int(line[1:])
        elif line.startswith("b"):
            bits, code = line[1:].split()
            yield "bits", bits, code
