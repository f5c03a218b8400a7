#!/usr/bin/python3
"""How fast a live lesson reaches its class, over loopback.

Starts `headsplit lesson --no-window --bind 127.0.0.1 --port 0` on a throwaway site, joins
STUDENTS WebSocket clients (Debian's python3-websockets, all in this one process), and has the
teacher make CHANGES state changes, one every INTERVAL seconds. For each change: the time from
the teacher's send to the first and to the last student receiving it. Then the server's CPU
time over the changes and its resident memory (/proc/PID), idle and with the class joined.

The clients share one Python event loop, so the times include the clients' own work of
reading 300 messages; they bound the server's delay from above.

Usage: tools/lesson_bench.py [HEADSPLIT] [--students N] [--changes N] [--interval S]
  HEADSPLIT  default build/app/headsplit beside this script's folder
"""
import argparse
import asyncio
import json
import os
import statistics
import tempfile
import time

import websockets


def proc_stats(pid):
    """(CPU seconds used so far, resident KiB, peak resident KiB) of process PID."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = (int(fields[11]) + int(fields[12])) / ticks  # utime, stime
    rss = hwm = 0
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
            elif line.startswith("VmHWM:"):
                hwm = int(line.split()[1])
    return cpu, rss, hwm


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(p / 100 * len(ordered) + 0.5)) - 1))]


async def student(url, seen, ready):
    async with websockets.connect(url, open_timeout=30, ping_interval=None, max_size=2 ** 20) as ws:
        ready.set()
        async for text in ws:
            now = time.monotonic()
            msg = json.loads(text)
            if msg.get("type") == "state":
                seen.setdefault(msg["seq"], []).append(now)


async def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("headsplit", nargs="?", default=os.path.join(here, "..", "build", "app", "headsplit"))
    ap.add_argument("--students", type=int, default=300)
    ap.add_argument("--changes", type=int, default=20)
    ap.add_argument("--interval", type=float, default=0.25)
    args = ap.parse_args()

    with tempfile.TemporaryDirectory(prefix="headsplit-lesson-bench-") as site:
        with open(os.path.join(site, "index.html"), "w") as f:
            f.write("<!doctype html><p>bench</p>\n")
        proc = await asyncio.create_subprocess_exec(
            args.headsplit, "lesson", "--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site,
            "--max-students", str(args.students), stdout=asyncio.subprocess.PIPE)
        try:
            teacher_line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().split(" ", 1)[1].strip()
            student_line = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().split(" ", 1)[1].strip()
            port = teacher_line.split(":")[2].split("/")[0]
            base = "ws://127.0.0.1:%s/lesson?" % port
            await asyncio.sleep(0.5)
            _, rss_idle, _ = proc_stats(proc.pid)

            seen = {}
            readies = [asyncio.Event() for _ in range(args.students)]
            tasks = [asyncio.create_task(student(base + student_line.split("?", 1)[1], seen, r)) for r in readies]
            t0 = time.monotonic()
            await asyncio.wait_for(asyncio.gather(*(r.wait() for r in readies)), 60)
            join_s = time.monotonic() - t0
            teacher = await websockets.connect(base + teacher_line.split("?", 1)[1], ping_interval=None,
                                               max_size=2 ** 20)
            drain = asyncio.create_task(teacher_reader(teacher))
            await asyncio.sleep(1.0)
            _, rss_joined, _ = proc_stats(proc.pid)

            cpu0, _, _ = proc_stats(proc.pid)
            wall0 = time.monotonic()
            first_ms, last_ms = [], []
            for k in range(1, args.changes + 1):
                sent = time.monotonic()
                await teacher.send(json.dumps({"type": "set", "query": "text=the%%20cat%%20sleeps&heads=2&step=%d&present" % (k % 12)}))
                deadline = sent + 10
                while len(seen.get(k, [])) < args.students:
                    if time.monotonic() > deadline:
                        raise SystemExit("change %d reached %d of %d students in 10 s" % (k, len(seen.get(k, [])), args.students))
                    await asyncio.sleep(0.001)
                first_ms.append((min(seen[k]) - sent) * 1000)
                last_ms.append((max(seen[k]) - sent) * 1000)
                await asyncio.sleep(max(0.0, args.interval - (time.monotonic() - sent)))
            cpu1, rss_end, hwm = proc_stats(proc.pid)
            wall = time.monotonic() - wall0

            print("headsplit lesson, %d students over loopback, %d changes %.2f s apart" % (args.students, args.changes, args.interval))
            print("  joined in %.2f s" % join_s)
            print("  teacher -> first student: median %.1f ms, p99 %.1f ms" % (statistics.median(first_ms), percentile(first_ms, 99)))
            print("  teacher -> last student:  median %.1f ms, p99 %.1f ms, max %.1f ms" % (
                statistics.median(last_ms), percentile(last_ms, 99), max(last_ms)))
            print("  server CPU over the changes: %.3f s in %.2f s wall (%.1f%% of one core)" % (
                cpu1 - cpu0, wall, 100 * (cpu1 - cpu0) / wall))
            print("  server resident memory: %.1f MiB idle, %.1f MiB with the class, %.1f MiB after, peak %.1f MiB" % (
                rss_idle / 1024, rss_joined / 1024, rss_end / 1024, hwm / 1024))
            drain.cancel()
            for t in tasks:
                t.cancel()
        finally:
            if proc.returncode is None:
                proc.send_signal(2)
                try:
                    await asyncio.wait_for(proc.wait(), 10)
                except asyncio.TimeoutError:
                    proc.kill()
                    await proc.wait()


async def teacher_reader(ws):
    try:
        async for _ in ws:
            pass
    except websockets.ConnectionClosed:
        pass


if __name__ == "__main__":
    asyncio.run(main())
