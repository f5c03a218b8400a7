#!/usr/bin/python3
"""HeadSplit's tiny model (headsplit train) written in PyTorch with the teaching code's weight
splits: the oracle of tests/oracle_train.py, and, run as a script, the same training steps
timed on PyTorch for `headsplit train`'s speed figures.

Usage: tiny_attention_torch.py [--steps N] [--threads N]   (the induction task's sizes)
Prints the median milliseconds a step over the steps after a warm-up, and steps per second.
"""
import math
import statistics
import sys
import time

import torch


def attention(x, w, heads, scale="sqrt"):
    """Multi-head self-attention with weight splits, causal, as the teaching code writes it;
    the scores divided by sqrt(head_dim), head_dim ("head_dim") or nothing ("none")."""
    b, t, d = x.shape
    hd = d // heads
    q = (x @ w["w_query"].T).view(b, t, heads, hd).transpose(1, 2)
    k = (x @ w["w_key"].T).view(b, t, heads, hd).transpose(1, 2)
    v = (x @ w["w_value"].T).view(b, t, heads, hd).transpose(1, 2)
    scores = q @ k.transpose(2, 3)
    mask = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
    scores = scores.masked_fill(mask, -torch.inf) / {"sqrt": math.sqrt(hd), "head_dim": hd, "none": 1}[scale]
    ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).contiguous().view(b, t, d)
    return ctx @ w["w_out"].T + w["b_out"]


def loss_of(p, doc, ids, targets):
    d, layers = doc["d_model"], doc["layers"]
    h = p["embed"][ids] + p["position"]
    for l in range(layers):
        pre = "layers.%d." % l
        w = {k: p[pre + k] for k in ("w_query", "w_key", "w_value", "w_out", "b_out")}
        h = h + attention(h, w, doc["heads"], doc.get("scale", "sqrt"))
    logits = h @ p["unembed"].T
    return torch.nn.functional.cross_entropy(logits.reshape(-1, doc["vocab"]), targets.reshape(-1), ignore_index=-1)



def bench(steps, threads):
    """Adam steps of the induction task's model (2 layers x 2 heads, d_model 32, vocab 32,
    T 24, batch 64) on random batches; returns the median ms a step."""
    torch.set_num_threads(threads)
    torch.manual_seed(0)
    doc = {"d_model": 32, "layers": 2, "heads": 2, "vocab": 32}
    d, v, t, b = 32, 32, 24, 64
    p = {"embed": torch.randn(v, d), "position": torch.randn(t, d), "unembed": torch.randn(v, d) / math.sqrt(d)}
    for l in range(2):
        for k in ("w_query", "w_key", "w_value", "w_out"):
            p["layers.%d.%s" % (l, k)] = torch.randn(d, d) / math.sqrt(d)
        p["layers.%d.b_out" % l] = torch.zeros(d)
    for x in p.values():
        x.requires_grad_(True)
    opt = torch.optim.Adam(list(p.values()), lr=1e-2)
    times = []
    for s in range(steps + 10):
        ids = torch.randint(0, v, (b, t))
        targets = torch.randint(0, v, (b, t))
        t0 = time.perf_counter()
        opt.zero_grad()
        loss_of(p, doc, ids, targets).backward()
        opt.step()
        if s >= 10:
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


if __name__ == "__main__":
    args = sys.argv[1:]
    steps = int(args[args.index("--steps") + 1]) if "--steps" in args else 200
    threads = int(args[args.index("--threads") + 1]) if "--threads" in args else torch.get_num_threads()
    ms = bench(steps, threads)
    print("pytorch %s, %d threads: induction's model, %.3f ms a step (median of %d), %.1f steps/s"
          % (torch.__version__, threads, ms, steps, 1e3 / ms))
