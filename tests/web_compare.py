#!/usr/bin/env python3
"""Compares the page's trace (?json=1) with `headsplit trace --json --backend cpu`'s:
the same steps (op, head, shapes, strides, storage), the same token ids, and every value
within TOL. usage: web_compare.py PAGE.json DESKTOP.json [TOL]; exit 1 with the first
differences."""
import json
import math
import sys


def values(node, path, out):
    """Every number under node, with its path; null stays None (a masked -inf)."""
    if isinstance(node, dict):
        for k in sorted(node):
            values(node[k], f"{path}.{k}", out)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            values(v, f"{path}[{i}]", out)
    else:
        out.append((path, node))


def main():
    page = json.load(open(sys.argv[1]))
    desk = json.load(open(sys.argv[2]))
    tol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
    # What differs by where it ran, not by what it computed.
    for doc in (page, desk):
        for key in ("backend", "timing", "ms", "notice"):
            doc.pop(key, None)
        for s in doc.get("steps", []):
            for key in ("ms", "dispatches", "wall_ms", "gpu_ms"):
                s.pop(key, None)
        doc.get("config", {}).pop("backend", None)
        doc.get("config", {}).get("checkpoint", {}).pop("dir", None)  # where the model lies
    a, b = [], []
    values(page, "", a)
    values(desk, "", b)
    bad = []
    if len(a) != len(b):
        bad.append(f"{len(a)} leaves in the page's trace, {len(b)} in the desktop's")
    worst = 0.0
    for (pa, va), (pb, vb) in zip(a, b):
        if pa != pb:
            bad.append(f"{pa} against {pb}")
            break
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)) and not isinstance(va, bool):
            d = abs(va - vb)
            if math.isnan(d) or d > tol * max(1.0, abs(vb)):
                bad.append(f"{pa}: page {va}, desktop {vb}")
            worst = max(worst, d)
        elif va != vb:
            bad.append(f"{pa}: page {va!r}, desktop {vb!r}")
    if bad:
        print(f"FAIL: {len(bad)} differences, first: " + "; ".join(bad[:5]))
        return 1
    print(f"same: {len(a)} values, largest difference {worst:.3g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
