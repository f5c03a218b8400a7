#!/usr/bin/python3
"""The folders are layers (issue 43): no include runs from a lower layer to a higher one.

Reads every `#include "..."` line of the source files under each group's roots (for core:
core/include/headsplit/ and core/src/), maps the including file and the included header to
their layers by folder (a public header by its include prefix, a private one by the file it
names under the group's private root, e.g. "backends/replay.hpp" in core/src), and reports
each include that goes up, unless ALLOWED names it.
Folders of one rank may include each other; a file in a folder the table does not know is
reported too, so that a new folder is placed before it is used. Includes that name no layer
(a file beside the includer, a library) are not checked.

Prints one line per bad arrow, FILE:LINE: includes HEADER: the rule; exit 1 when there is any.
Usage: check_layers.py [--self-test] [ROOT]   (ROOT: default this script's ../)
  --self-test  first checks the checker: a made-up tree with one upward include must be
               reported, and the same tree without it must pass. With no ROOT, only that.
"""
import fnmatch
import os
import re
import sys
import tempfile

# The layers, bottom to top. A group's folders lie under its roots; its headers are included
# as INCLUDE_PREFIX + folder + "/...". Later groups sit above earlier ones (app above core).
# In ORDER, a tuple is one rank: its folders may include each other.
GROUPS = [
    # Core, each folder a rank of its own: tensor and op descriptions; the backends; the
    # engine; the words read into a trace after the run; the file formats (the checks before
    # a named file is read, GPT-2's vocabulary and BPE); the model (presets, checkpoints, which
    # read their files through the formats); training (a tiny model trained on a task through the
    # engine's backward pass, saved as a checkpoint); io on top (the trace JSON and the take-home
    # scripts, files written whole, a configuration as options, which names a preset).
    {
        "name": "core",
        "roots": ("core/include/headsplit", "core/src"),
        "include_prefix": "headsplit/",
        "private_root": "core/src",  # its sources include private headers as "folder/file.hpp"
        "order": ("base", "backends", "engine", "teaching", "formats", "model", "training", "io"),
    },
    # The app: the GL loader and PNG; what the stage draws where (and the seam the panels tell
    # a frame through); the window-free state; the panels; the unattended runs (the frame's
    # recorder among them); the live lesson's server (no window);
    # then the entries, one rank: the window's loop, the subcommands (which open it), the
    # page's main and hooks (which open it from the address, with the subcommands' options,
    # and which the loop calls in the page).
    {
        "name": "app",
        "roots": ("app",),
        "include_prefix": "",
        "order": ("gui/platform", "gui/view", "gui/model", "gui/panels", "gui/runs", "lesson",
                  ("gui/root", "cli", "web")),
    },
]

# Upward arrows accepted for now, each with what it is for: (including file, glob;
# included header, as written; why). Keep this table small: remove a line when its arrow goes.
ALLOWED = []

SOURCE = (".c", ".cc", ".cpp", ".h", ".hpp")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def ranks():
    """(group name, folder) -> (group index, rank) for every layer of GROUPS."""
    out = {}
    for g, group in enumerate(GROUPS):
        for r, step in enumerate(group["order"]):
            for folder in step if isinstance(step, tuple) else (step,):
                out[(group["name"], folder)] = (g, r)
    return out


def folder_of(rest, group):
    """The folder of GROUP that path REST (below a root, or below the include prefix) lies in:
    the longest that matches, a known one or else the first path component; None for a file
    directly in the root."""
    known = [f for step in group["order"] for f in (step if isinstance(step, tuple) else (step,))]
    best = max((f for f in known if rest.startswith(f + "/")), key=len, default=None)
    if best:
        return best
    return rest.split("/", 1)[0] if "/" in rest else None


def layer_of_file(rel):
    for group in GROUPS:
        for root in group["roots"]:
            if rel.startswith(root + "/"):
                folder = folder_of(rel[len(root) + 1:], group)
                return (group["name"], folder) if folder else None
    return None


def layer_of_include(path, root):
    for group in GROUPS:
        prefix = group["include_prefix"]
        if prefix and path.startswith(prefix):
            folder = folder_of(path[len(prefix):], group)
            return (group["name"], folder) if folder else None
    for group in GROUPS:  # a private header named from the group's private root
        private = group.get("private_root")
        if private and "/" in path and os.path.isfile(os.path.join(root, private, path)):
            return (group["name"], folder_of(path, group))
    for group in GROUPS:  # groups whose headers are included by folder alone (app's)
        if not group["include_prefix"]:
            folder = folder_of(path, group)
            if folder and (group["name"], folder) in ranks():
                return (group["name"], folder)
    return None


def name(layer):
    return layer[1] if layer[0] == GROUPS[0]["name"] else "%s/%s" % layer


def check(root):
    """The bad arrows under ROOT, one line each."""
    rank = ranks()
    bad = []
    files = []
    for group in GROUPS:
        for r in group["roots"]:
            for dirpath, dirnames, filenames in os.walk(os.path.join(root, r)):
                dirnames.sort()
                files += [os.path.join(dirpath, f) for f in sorted(filenames) if f.endswith(SOURCE)]
    for path in files:
        rel = os.path.relpath(path, root).replace(os.sep, "/")
        src = layer_of_file(rel)
        if src is None:
            continue
        if src not in rank:
            bad.append("%s: folder %s is in no layer (add it to GROUPS in tools/check_layers.py)" % (rel, name(src)))
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                header = m.group(1)
                dst = layer_of_include(header, root)
                if dst is None or dst == src:
                    continue
                if dst not in rank:
                    bad.append("%s:%d: includes %s: folder %s is in no layer" % (rel, number, header, name(dst)))
                    continue
                if rank[dst] <= rank[src]:
                    continue
                if any(fnmatch.fnmatch(rel, f) and header == h for f, h, _ in ALLOWED):
                    continue
                bad.append("%s:%d: includes %s: %s may not include %s, a layer above it" %
                           (rel, number, header, name(src), name(dst)))
    return bad


def self_test():
    """The checker finds an upward include in a made-up tree, and passes the tree without it."""
    with tempfile.TemporaryDirectory() as tmp:
        def write(rel, text):
            path = os.path.join(tmp, rel)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w") as f:
                f.write(text)

        def reported(want, what):
            """[] when the tree's one bad arrow is WANT, else a line saying what was found."""
            found = check(tmp)
            return [] if found == [want] else ["self-test: %s: expected %r, got %r" % (what, [want], found)]
        write("core/include/headsplit/base/tensor.hpp", "#pragma once\n#include <vector>\n")
        write("core/include/headsplit/engine/engine.hpp", '#pragma once\n#include "headsplit/base/tensor.hpp"\n')
        write("core/src/engine/engine.cpp", '#include "headsplit/engine/engine.hpp"\n#include "local.hpp"\n')
        write("core/src/io/json.cpp", '#include "headsplit/teaching/words.hpp"\n#include "headsplit/engine/engine.hpp"\n')
        clean = check(tmp)
        if clean:
            return ["self-test: a tree with no upward include was reported:"] + clean
        write("core/src/backends/cpu.cpp", '#include "headsplit/base/tensor.hpp"\n#include "headsplit/engine/engine.hpp"\n')
        failed = reported("core/src/backends/cpu.cpp:2: includes headsplit/engine/engine.hpp: "
                          "backends may not include engine, a layer above it", "an upward include")
        if failed:
            return failed
        write("core/src/gui/x.cpp", "\n")
        if not any("folder gui is in no layer" in line for line in check(tmp)):
            return ["self-test: a file in an unknown folder was not reported"]
        os.remove(os.path.join(tmp, "core/src/gui/x.cpp"))
        write("core/src/engine/forward.hpp", "#pragma once\n")
        write("core/src/backends/cpu.cpp", '#include "engine/forward.hpp"\n')
        return reported("core/src/backends/cpu.cpp:1: includes engine/forward.hpp: "
                        "backends may not include engine, a layer above it", "a private header's upward include")
    return []


def main(argv):
    args = [a for a in argv if a != "--self-test"]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(__doc__.strip().splitlines()[-4], file=sys.stderr)
        return 2
    if "--self-test" in argv:
        failed = self_test()
        for line in failed:
            print(line)
        if failed:
            return 1
        print("check_layers: self-test passed")
        if not args:
            return 0
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    bad = check(root)
    for line in bad:
        print(line)
    if bad:
        return 1
    print("check_layers: no include goes up a layer (%d allowed: see ALLOWED)" % len(ALLOWED))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
