#!/usr/bin/env python3
"""The layout audit's live keys: a frame after --keys against a fresh start.

Usage: layout_audit_keys.py HEADSPLIT WORK [WINDOW ARGS...] -- CASE...
Each CASE is "START|KEYS|FRESH": KEYS is --keys's list pressed on the configuration and step
the options START give, FRESH the options of the configuration the keys lead to, started at
the step the keys' frame shows (a change keeps the step's op: fused mode has a step more);
both with the window's options (size, text, presenter mode). Both frames are taken with --screenshot and --layout-report; the numbers shown must be the
same: every cell's tensor, place, panel, text, and whether its number shows. Exit 1, naming
what differs, where any case's do not.
"""
import json
import os
import shlex
import subprocess
import sys


def frame(binary, work, name, args):
    png, report = os.path.join(work, name + ".png"), os.path.join(work, name + ".json")
    cmd = [binary, "--screenshot", png, "--layout-report", report] + args
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise SystemExit("FAIL: %s: %s" % (" ".join(shlex.quote(a) for a in cmd), r.stderr.strip()[:2000]))
    return json.load(open(report))


def numbers(d):
    """Every cell of the frame: (panel, tensor, values_of, index) -> (text, shown)."""
    out = {}
    for i in d["items"]:
        if i["kind"] != "cell":
            continue
        key = (i["panel"], i.get("tensor", ""), i.get("values_of", ""), tuple(i.get("index", [])))
        out[key] = (i["text"], bool(i["value_shown"]))
    return out


def main():
    binary, work = sys.argv[1], sys.argv[2]
    split = sys.argv.index("--")
    base, cases = sys.argv[3:split], sys.argv[split + 1:]
    failures = 0
    for n, case in enumerate(cases):
        begin, keys, fresh = case.split("|")
        d = frame(binary, work, "keys%d" % n, base + shlex.split(begin) + ["--keys", keys])
        after = numbers(d)
        step = d["what"].split()[-1]
        start = numbers(frame(binary, work, "fresh%d" % n, base + shlex.split(fresh) + ["--step", step]))
        shown = sum(s for _, s in start.values())
        differ = sorted(k for k in set(after) | set(start) if after.get(k) != start.get(k))
        if differ or not start:
            failures += 1
            print("FAIL: --keys %s: %d of %d cells differ from a fresh start (%s, step %s), e.g. %s"
                  % (keys, len(differ), len(start), fresh, step,
                     [(k, after.get(k), start.get(k)) for k in differ[:3]]))
        else:
            print("--keys %s: the %d cells (%d numbers shown) of a fresh start (%s, step %s)" % (keys, len(start), shown, fresh, step))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
