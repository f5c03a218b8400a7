"""Times PyTorch's nn.MultiheadAttention forward on the shapes headsplit bench passes in,
for `headsplit bench --vs-torch` (run with Debian's /usr/bin/python3 and python3-torch).

argv: repeat threads [--backward] d1,h1,t1 [d2,h2,t2 ...]   prints one JSON object per line:
{"d": D, "heads": H, "tokens": T, "median_ms": ..., "min_ms": ..., "max_ms": ..., "threads": N}
The module matches headsplit's split mode: no Q/K/V bias, an output projection with bias,
a causal mask, batch 1; need_weights=False lets PyTorch take its fastest path. With
--backward each run is the forward and autograd's backward from a seeded gradient (the
parameters' and x's gradients made anew each time).
"""
import json
import statistics
import sys
import time

import torch


def main():
    repeat, threads = int(sys.argv[1]), int(sys.argv[2])
    backward = "--backward" in sys.argv[3:]
    torch.set_num_threads(threads)
    for spec in (a for a in sys.argv[3:] if a != "--backward"):
        d, heads, tokens = (int(v) for v in spec.split(","))
        mha = torch.nn.MultiheadAttention(d, heads, bias=False, batch_first=True)
        mha.out_proj.bias = torch.nn.Parameter(torch.zeros(d))
        mha.eval()
        x = torch.randn(1, tokens, d)
        mask = torch.triu(torch.ones(tokens, tokens, dtype=torch.bool), diagonal=1)
        times = []
        if backward:
            x.requires_grad_(True)
            grad = torch.randn(1, tokens, d)
            for i in range(repeat + 1):  # the first is the warm-up
                mha.zero_grad(set_to_none=True)
                x.grad = None
                t0 = time.perf_counter()
                out, _ = mha(x, x, x, attn_mask=mask, need_weights=False)
                out.backward(grad)
                if i:
                    times.append((time.perf_counter() - t0) * 1e3)
        with torch.no_grad():
            mha(x, x, x, attn_mask=mask, need_weights=False)  # warm-up
            for _ in range(0 if backward else repeat):
                t0 = time.perf_counter()
                mha(x, x, x, attn_mask=mask, need_weights=False)
                times.append((time.perf_counter() - t0) * 1e3)
        print(json.dumps({"d": d, "heads": heads, "tokens": tokens, "median_ms": statistics.median(times),
                          "min_ms": min(times), "max_ms": max(times), "threads": torch.get_num_threads()}))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
