"""Every Catch2 test case is one CTest test: catch_discover_tests registers each by its name, and
CMake splits a name at ';' into several that match no test case, so the case never runs (and
CTest still counts it as passed). This fails on such a name, and on two cases with one name."""
import os
import re
import sys

root = sys.argv[1]
pattern = re.compile(r'TEST_CASE\(\s*"((?:[^"\\]|\\.)*)"')
bad, seen = [], {}
for top in ("tests", "tb"):
    for dirpath, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if not f.endswith((".cpp", ".hpp")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, root)
            with open(path, encoding="utf-8") as fh:
                for n, line in enumerate(fh, 1):
                    for name in pattern.findall(line):
                        if ";" in name:
                            bad.append(f"{rel}:{n}: test case name has ';' (CTest would not run it): {name}")
                        key = (os.path.dirname(rel), name)
                        if key in seen:
                            bad.append(f"{rel}:{n}: test case name also at {seen[key]}: {name}")
                        seen.setdefault(key, f"{rel}:{n}")
print("\n".join(bad) if bad else f"{len(seen)} test case names, none with ';' or repeated")
sys.exit(1 if bad else 0)
