"""What the CLI check scripts share: running ncore-sim, files in a scratch folder, and a list
of named checks that ends the script with status 1 when any failed."""
import os
import subprocess
import sys


class Checks:
    def __init__(self, sim, scratch):
        self.sim = sim
        self.dir = scratch
        self.failures = []
        os.makedirs(scratch, exist_ok=True)

    def path(self, name):
        return os.path.join(self.dir, name)

    def run(self, *args):
        """ncore-sim with these arguments: (exit status, stdout + stderr)."""
        p = subprocess.run([self.sim, *map(str, args)], capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    def check(self, cond, what):
        print(("ok   " if cond else "FAIL ") + what)
        if not cond:
            self.failures.append(what)

    def finish(self, what="checks"):
        if self.failures:
            print(f"{len(self.failures)} check(s) failed")
            sys.exit(1)
        print(f"all {what} passed")
