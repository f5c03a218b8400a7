#!/usr/bin/env python3
"""The page's budgets, measured side by side on this machine (a benchmark, not a test):
the site's size gzipped, the first frame's time after the page begins to load (headless
Chromium, 1366x768), and gpt2-small at T = 128 traced in the page against the desktop's
`headsplit trace --backend cpu`: the sum of the trace's step times (the same measure in both:
the forward pass and its recording), and the page's whole computation (inputs, weights,
forward) against the desktop command's wall time. Medians of RUNS, alternating page and
desktop.

The page's first trace (a link straight to gpt2-small) runs code that V8 has only just
compiled, with its first tier, except what the page warmed while its window started
(web/page.hpp: warm_up_engine); a later trace in the same page runs the optimized code. The
link's whole wait (the page's start of loading to the first frame with the trace) is printed
too: the warming must not lengthen it. Both
are measured: the later one in presenter mode, where C flips the causal mask and C again
flips it back, so that the third trace is the first one's configuration again.

usage: page_bench.py HEADSPLIT SITE_DIR [RUNS]   (run from the source tree; needs chromium)
"""
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))


def main():
    headsplit, site = sys.argv[1], sys.argv[2]
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    size = sum(len(gzip.compress(open(os.path.join(site, f), "rb").read(), 9)) for f in os.listdir(site))
    print(f"site: {size / 1e6:.2f} MB gzipped ({len(os.listdir(site))} files)")
    server = subprocess.Popen([sys.executable, os.path.join(here, "serve.py"), site, "--port", "0"],
                              stdout=subprocess.PIPE, text=True)
    base = server.stdout.readline().strip()
    work = tempfile.mkdtemp()
    try:
        first, page_steps, page_all, desk_steps, desk_wall, shown, link_first = [], [], [], [], [], [], []
        later_steps, later_all = [], []
        for r in range(runs):
            jobs = [{"url": base + "?step=0", "width": 1366, "height": 768},
                    {"url": base + "?preset=gpt2-small&tokens=128", "timeout": 300},
                    {"url": base + "?preset=gpt2-small&tokens=128&present", "timeout": 300, "address": True,
                     "actions": [{"key": "c"}, {"wait": 2500}, {"key": "c"}, {"wait": 2500}]}]
            json.dump(jobs, open(f"{work}/jobs.json", "w"))
            subprocess.run(["/usr/bin/python3", os.path.join(here, "page_probe.py"),
                            f"{work}/jobs.json", f"{work}/results.json"], check=True)
            res = json.load(open(f"{work}/results.json"))
            for j in res:
                if j.get("error"):
                    sys.exit(f"page_bench: {j['url']}: {j['error']}")
            first.append(res[0]["first_frame_ms"])
            page_all.append(res[1]["compute_ms"])
            shown.append(res[1]["trace_shown_ms"])
            link_first.append(res[1]["first_frame_ms"])
            page_steps.append(res[1]["steps_ms"])
            if "no-causal" in res[2]["address"]:
                sys.exit(f"page_bench: the causal mask did not flip back in presenter mode ({res[2]['address']})")
            later_all.append(res[2]["compute_ms"])
            later_steps.append(res[2]["steps_ms"])
            t0 = time.perf_counter()
            out = subprocess.run([headsplit, "trace", "--preset", "gpt2-small", "--tokens", "128", "--backend", "cpu"],
                                 check=True, capture_output=True, text=True).stdout
            desk_wall.append((time.perf_counter() - t0) * 1e3)
            total = [line for line in out.splitlines() if line.startswith("total:")][0]
            desk_steps.append(float(total.split(",")[-1].split()[0]))  # "total: ..., X ms": the steps' times
        med = statistics.median
        print(f"first frame: median {med(first):.0f} ms (min {min(first):.0f}, max {max(first):.0f}) after the page began to load")
        print(f"a link to gpt2-small T = 128: its trace on screen after a median {med(shown):.0f} ms (min "
              f"{min(shown):.0f}, max {max(shown):.0f}) from the page's start of loading (its first frame: "
              f"{med(link_first):.0f} ms; the browser has the site's files in its cache by then)")
        print(f"gpt2-small T = 128, steps' time: page {med(page_steps):.1f} ms, desktop {med(desk_steps):.1f} ms, "
              f"ratio {med(page_steps) / med(desk_steps):.2f}")
        print(f"gpt2-small T = 128, whole: page's computation {med(page_all):.1f} ms, desktop command's wall time "
              f"{med(desk_wall):.1f} ms, ratio {med(page_all) / med(desk_wall):.2f}")
        print(f"a later trace in the same page (its third): steps {med(later_steps):.1f} ms, ratio "
              f"{med(later_steps) / med(desk_steps):.2f}; whole {med(later_all):.1f} ms, ratio "
              f"{med(later_all) / med(desk_wall):.2f}")
    finally:
        server.terminate()
    return 0


if __name__ == "__main__":
    sys.exit(main())
