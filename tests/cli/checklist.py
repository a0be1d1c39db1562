"""What the CLI check scripts share: each check prints `ok` or `FAIL` and what it checked, and
the script's exit status says whether any failed (`finish()`)."""
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)
    return cond


def finish():
    sys.exit(1 if failures else 0)
