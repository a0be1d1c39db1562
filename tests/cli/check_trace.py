#!/usr/bin/env python3
"""Checks a trace-event JSON file (Chrome's trace format, as Perfetto and chrome://tracing read
it) as ncore-sim --profile writes it: the events are well formed, every thread with slices is
named, and the complete ("X") slices of one thread (one track) never overlap.

usage: check_trace.py TRACE.json      (exit 0 when the file passes; prints one line per track)

Also imported by check_profile.py and check_timeline.py: check(path) returns (errors, tracks),
tracks being {tid: {"name": ..., "slices": [event, ...]}} in thread order.
"""
import json
import numbers
import sys

PHASES = {"X", "B", "E", "i", "I", "C", "M", "b", "e", "n", "s", "t", "f", "P", "O", "N", "D"}
EPS = 1e-9  # microseconds; a master-clock cycle is about 4e-4 us


def check(path):
    errors = []
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        return [f"{path}: not readable JSON: {e}"], {}
    events = doc.get("traceEvents") if isinstance(doc, dict) else doc
    if not isinstance(events, list):
        return [f"{path}: no traceEvents list"], {}

    names, slices = {}, {}
    for k, ev in enumerate(events):
        where = f"event {k}"
        if not isinstance(ev, dict):
            errors.append(f"{where}: not an object")
            continue
        ph = ev.get("ph")
        if ph not in PHASES:
            errors.append(f"{where}: phase {ph!r} is not a trace-event phase")
            continue
        if not isinstance(ev.get("pid"), int):
            errors.append(f"{where}: no integer pid")
        if ph == "M":
            if not isinstance(ev.get("name"), str) or not isinstance(ev.get("args"), dict):
                errors.append(f"{where}: metadata without name and args")
            elif ev["name"] == "thread_name":
                names[(ev["pid"], ev.get("tid"))] = ev["args"].get("name")
            continue
        if not isinstance(ev.get("ts"), numbers.Real) or ev["ts"] < 0:
            errors.append(f"{where}: ts {ev.get('ts')!r} is not a non-negative number")
            continue
        if not isinstance(ev.get("name"), str) or not ev["name"]:
            errors.append(f"{where}: no name")
        if ph == "X":
            if not isinstance(ev.get("tid"), int):
                errors.append(f"{where}: slice without an integer tid")
                continue
            if not isinstance(ev.get("dur"), numbers.Real) or ev["dur"] < 0:
                errors.append(f"{where}: slice dur {ev.get('dur')!r} is not a non-negative number")
                continue
            slices.setdefault((ev["pid"], ev["tid"]), []).append(ev)
        elif ph == "C":
            args = ev.get("args")
            if not isinstance(args, dict) or not args or not all(isinstance(v, numbers.Real) for v in args.values()):
                errors.append(f"{where}: counter without numeric args")

    tracks = {}
    for key in sorted(set(names) | set(slices), key=lambda k: (k[0], k[1] if isinstance(k[1], int) else -1)):
        evs = sorted(slices.get(key, []), key=lambda e: (e["ts"], e["ts"] + e["dur"]))
        name = names.get(key)
        if evs and not name:
            errors.append(f"track pid {key[0]} tid {key[1]}: slices but no thread_name")
        end, prev = -1.0, None
        for ev in evs:
            if ev["ts"] < end - EPS:
                errors.append(f"track {name!r}: {prev['name']} [{prev['ts']}, {end}] overlaps "
                              f"{ev['name']} [{ev['ts']}, {ev['ts'] + ev['dur']}]")
            if ev["ts"] + ev["dur"] >= end:
                end, prev = ev["ts"] + ev["dur"], ev
        tracks[key[1]] = {"name": name, "slices": evs}
    return errors, tracks


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    errors, tracks = check(sys.argv[1])
    for tid, t in tracks.items():
        print(f"track {tid} {t['name']}: {len(t['slices'])} slices")
    for e in errors:
        print("FAIL " + e)
    print("trace: " + ("ok" if not errors else f"{len(errors)} problems"))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
