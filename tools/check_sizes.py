#!/usr/bin/env python3
"""Holds the C and C++ sources to two sizes a reader can take in: a file of at most 700 lines,
a function of at most 100.

A function here is a definition that starts at the first column (the code does not indent
namespaces) with a line ending in "{" after a ")" (or a TEST_CASE / SECTION macro's), or with
a signature wrapped over indented lines of which the last ends so, and ends at the next line
that starts with "}". Lambdas and class members defined inside a class are counted with what
holds them.

Prints one line per file or function over its size, FILE:LINE: what and how long; exit 1 when
there is any.
Usage: check_sizes.py [--self-test] [ROOT]   (ROOT: default this script's ../)
  --self-test  first checks the checker: a made-up tree with a 101-line function and a
               701-line file must be reported, and the same tree a line shorter must pass.
               With no ROOT, only that.
"""
import os
import re
import sys
import tempfile

MAX_FILE = 700
MAX_FUNCTION = 100
FOLDERS = ("core", "app", "tests", "tools")
SOURCE = (".c", ".cc", ".cpp", ".h", ".hpp")
START = re.compile(r"^[A-Za-z_].*\)\s*(const)?\s*(noexcept)?\s*(override)?\s*(->\s*[\w:<>,\s*&]+)?\s*\{\s*$")
NOT_FUNCTION = re.compile(r"^(namespace|struct|class|enum|union|extern|typedef|using)\b")


WRAPPED_LINES = 8  # the most lines a signature may wrap over


def signature_end(lines, i):
    """The index of the line that ends the signature starting at lines[i] with its "{", or -1:
    lines[i] itself, or the first of the indented lines after it to end in "{", when the
    signature they make together reads as a function's."""
    line = lines[i]
    if not re.match(r"^[A-Za-z_]", line) or NOT_FUNCTION.match(line):
        return -1
    if START.match(line):
        return i
    if line.rstrip().endswith((";", "{", "}")) or "(" not in line:
        return -1
    joined = line.rstrip()
    for j in range(i + 1, min(i + WRAPPED_LINES, len(lines))):
        nxt = lines[j]
        if not nxt.startswith((" ", "\t")):
            return -1
        joined += " " + nxt.strip()
        if nxt.rstrip().endswith(";"):
            return -1
        if nxt.rstrip().endswith("{"):
            return j if START.match(joined) else -1
    return -1


def functions(lines):
    """(first line number, length in lines, first line) of each function in `lines`."""
    out = []
    i = 0
    while i < len(lines):
        line = lines[i]
        end = signature_end(lines, i)
        if end >= 0:
            j = end + 1
            while j < len(lines) and not lines[j].startswith("}"):
                j += 1
            out.append((i + 1, j - i + 1, line.strip()))
            i = j
        i += 1
    return out


def problems(root):
    bad = []
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith(("build", ".")))
            for f in sorted(filenames):
                if not f.endswith(SOURCE):
                    continue
                path = os.path.join(dirpath, f)
                rel = os.path.relpath(path, root)
                with open(path, encoding="utf-8", errors="replace") as fh:
                    lines = fh.read().split("\n")
                if lines and lines[-1] == "":
                    lines.pop()
                if len(lines) > MAX_FILE:
                    bad.append("%s:1: %d lines, over the %d a file may have" % (rel, len(lines), MAX_FILE))
                for at, length, first in functions(lines):
                    if length > MAX_FUNCTION:
                        bad.append("%s:%d: %s ... is %d lines, over the %d a function may have" %
                                   (rel, at, first[:60], length, MAX_FUNCTION))
    return bad


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "core", "src"))
        path = os.path.join(root, "core", "src", "a.cpp")

        def write(body_lines, padding):
            with open(path, "w") as fh:
                fh.write("int f(int x) {\n" + "    x += 1;\n" * body_lines + "}\n" + "// pad\n" * padding)

        write(98, 0)  # 100 lines: the limit
        if problems(root):
            return "a 100-line function was reported: %s" % problems(root)
        write(99, 0)
        found = problems(root)
        if len(found) != 1 or "101 lines" not in found[0]:
            return "a 101-line function was not reported as one: %s" % found
        # A signature wrapped over two lines starts the function at its first.
        with open(path, "w") as fh:
            fh.write("int f(int x,\n      int y) {\n" + "    x += y;\n" * 98 + "}\n")
        found = problems(root)
        if len(found) != 1 or "101 lines" not in found[0] or "a.cpp:1:" not in found[0]:
            return "a 101-line function with a wrapped signature was not reported as one: %s" % found
        write(98, MAX_FILE - 100)
        if problems(root):
            return "a %d-line file was reported: %s" % (MAX_FILE, problems(root))
        write(98, MAX_FILE - 99)
        found = problems(root)
        if len(found) != 1 or "701 lines" not in found[0]:
            return "a 701-line file was not reported as one: %s" % found
    return None


def main(argv):
    args = argv[1:]
    if args and args[0] == "--self-test":
        failure = self_test()
        if failure:
            print("check_sizes self-test: " + failure)
            return 1
        args = args[1:]
        if not args:
            return 0
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bad = problems(root)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
