#!/usr/bin/python3
"""Ten training steps of HeadSplit's tiny model (tests/train_dump.cpp's JSON) against PyTorch:
the same model written with the teaching code's weight splits, from the same parameters, on
the same batches. Each step's loss and every gradient must equal autograd's at that step's
parameters, and the parameters after ten steps those torch.optim.Adam makes from HeadSplit's
gradients, within 1e-5 relative (|a - b| / max(1, |b|)). Adam is driven by HeadSplit's own
gradients so that a gradient that is rounding noise (which Adam scales up to a whole step)
cannot make the two runs part.

Usage: oracle_train.py [--tolerance T] STEPS.json...
       oracle_train.py --self-test STEPS.json
Prints the largest difference of each kind per file; exit 1 on any over the tolerance. With
--self-test, the file must pass and each of a wrong gradient, loss and update (one value
changed by 1e-3) written into it must fail.
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from tiny_attention_torch import loss_of  # noqa: E402


def shaped(name, values, doc):
    d, v, t = doc["d_model"], doc["vocab"], doc["tokens"]
    if name in ("embed", "unembed"):
        return torch.tensor(values, dtype=torch.float32).view(v, d)
    if name == "position":
        return torch.tensor(values, dtype=torch.float32).view(t, d)
    if name.endswith("b_out"):
        return torch.tensor(values, dtype=torch.float32)
    return torch.tensor(values, dtype=torch.float32).view(d, d)


def rel(a, b):
    return ((a - b).abs() / torch.clamp(b.abs(), min=1.0)).max().item()


def check(path, doc, tol, quiet=False):
    names = list(doc["before"].keys())
    p = {n: shaped(n, doc["before"][n], doc).requires_grad_(True) for n in names}
    opt = torch.optim.Adam([p[n] for n in names], lr=doc["lr"])
    worst = {"loss": 0.0, "gradient": 0.0, "adam": 0.0}
    where = {}
    b, t = len(doc["steps"][0]["ids"]) // doc["tokens"], doc["tokens"]
    for s, step in enumerate(doc["steps"]):
        ids = torch.tensor(step["ids"]).view(b, t)
        targets = torch.tensor(step["targets"]).view(b, t)
        opt.zero_grad()
        loss = loss_of(p, doc, ids, targets)
        loss.backward()
        e = abs(loss.item() - step["loss"]) / max(1.0, abs(loss.item()))
        if e > worst["loss"]:
            worst["loss"], where["loss"] = e, "step %d" % (s + 1)
        for n in names:
            mine = shaped(n, step["grads"][n], doc)
            e = rel(mine, p[n].grad)
            if e > worst["gradient"]:
                worst["gradient"], where["gradient"] = e, "step %d %s" % (s + 1, n)
            p[n].grad = mine
        opt.step()
    for n in names:
        e = rel(shaped(n, doc["after"][n], doc), p[n].detach())
        if e > worst["adam"]:
            worst["adam"], where["adam"] = e, n
    bad = False
    for k in ("loss", "gradient", "adam"):
        ok = worst[k] <= tol
        bad |= not ok
        if not quiet:
            print("%s: %-8s largest difference %.2e%s%s" % (path, k, worst[k], " at " + where[k] if k in where else "",
                                                         "" if ok else "  OVER %.0e" % tol))
    return not bad


def self_test(path):
    doc = json.load(open(path))
    if not check(path, doc, 1e-5):
        return False
    changes = [("a gradient", lambda d: d["steps"][4]["grads"]["layers.0.w_key"].__setitem__(7, d["steps"][4]["grads"]["layers.0.w_key"][7] + 1e-3)),
               ("an embedding's gradient", lambda d: d["steps"][0]["grads"]["embed"].__setitem__(40, d["steps"][0]["grads"]["embed"][40] + 1e-3)),
               ("a loss", lambda d: d["steps"][2].__setitem__("loss", d["steps"][2]["loss"] + 1e-3)),
               ("an update", lambda d: d["after"]["unembed"].__setitem__(3, d["after"]["unembed"][3] + 1e-3))]
    for what, change in changes:
        bad = json.loads(json.dumps(doc))
        change(bad)
        if check(path, bad, 1e-5, quiet=True):
            print("the oracle missed %s changed by 1e-3" % what)
            return False
    print("%s: the oracle catches a wrong gradient, loss and update" % path)
    return True


def main():
    args = sys.argv[1:]
    if args and args[0] == "--self-test":
        sys.exit(0 if self_test(args[1]) else 1)
    tol = 1e-5
    if args and args[0] == "--tolerance":
        tol, args = float(args[1]), args[2:]
    ok = True
    for path in args:
        ok &= check(path, json.load(open(path)), tol)
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
