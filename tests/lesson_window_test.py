#!/usr/bin/python3
"""The live lesson's teacher window (issue 44), under Xvfb, over loopback only.

  1. `headsplit lesson --bind 127.0.0.1 --port 0 --screenshot card.png` saves the join card
     (the student address, the code, the QR code) and exits 0 after printing its two lines;
     the picture is not blank and holds the QR code's pure white and pure black;
  2. `headsplit lesson --bind 127.0.0.1 --port 0` with its window: a student (Debian's
     python3-websockets) joins with the printed student address and gets the window's state
     (presenter mode, step 0); keys sent to the window (XTest) reach the student as states:
     Right (step 1), H (heads 2 -> 3), J then P (paused); Q and Right ask the question, the
     student answers, key 1 reveals it: the student's state carries the counts; F12 saves
     the histogram's screenshot (not blank; at 1024x768 in presenter mode the answers' bars
     stand in the caption band at the top, not over the stage's memory strip);
  3. the window manager's close (WM_DELETE_WINDOW): the student gets {"type":"ended"}, the
     command exits 0; so does SIGINT (the terminal's Ctrl+C) to another lesson's window.

Every wait has a timeout. Usage: lesson_window_test.py HEADSPLIT PNG_STATS (inside xvfb-run)
"""
import asyncio
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

from Xlib import display

from lesson_test import Failed, check, connect
from xwindow import close, find_window, press


def png_stats(png_stats_exe, path):
    out = subprocess.run([png_stats_exe, path], capture_output=True, text=True, timeout=20).stdout.split()
    check(len(out) >= 6, "png_stats %s: %r" % (path, out))
    return {"w": int(out[1]), "h": int(out[2]), "colours": int(out[4]), "brightness": float(out[6])}


def make_site(base):
    site = os.path.join(base, "site")
    os.makedirs(site)
    with open(os.path.join(site, "index.html"), "w") as f:
        f.write("<!doctype html><p>the page</p>\n")
    return site


def params(state):
    return dict(urllib.parse.parse_qsl(state["query"], keep_blank_values=True))


async def read_urls(proc, timeout=60):
    urls = {}
    for _ in range(2):
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout)).decode().strip()
        check(":" in line, "expected a line `teacher: URL` or `student: URL`, got %r" % line)
        name, url = line.split(": ", 1)
        urls[name] = url
    check(set(urls) == {"teacher", "student"}, "the two lines: %s" % urls)
    return urls


# The answers' bars after a reveal (panel_lesson.cpp): the right option's green and the
# others' blue-grey, drawn as solid rectangles, so their pixels have exactly these colours.
ANSWER_BARS = "59D973,8C99BF"


def check_answers_above_stage(png_stats_exe, path, size):
    """In presenter mode the class's answers stand in the caption band at the top, never over
    the stage below it (whose memory strip is at the window's bottom at a view step): every
    pixel of their bars lies in the window's top 40% (the caption takes at most 55% of the
    height, and at the text size of this test far less)."""
    out = subprocess.run([png_stats_exe, path, "--box", ANSWER_BARS], capture_output=True, text=True, timeout=20).stdout.split()
    at = out.index("box") if "box" in out else -1
    check(at > 0 and out[at + 1] != "none", "no answers' bars in the screenshot after the reveal: %r" % out)
    x0, y0, x1, y1 = (int(v) for v in out[at + 1:at + 5])
    check(y1 < 0.4 * size["h"], "the answers' bars reach y = %d of %d: they cover the stage (box %d,%d-%d,%d)"
          % (y1, size["h"], x0, y0, x1, y1))


def card_screenshot(headsplit, png_stats_exe, base, site):
    card = os.path.join(base, "card.png")
    r = subprocess.run([headsplit, "lesson", "--bind", "127.0.0.1", "--port", "0", "--site", site, "--backend", "cpu",
                        "--screenshot", card, "--window", "1024x768"],
                       capture_output=True, text=True, timeout=90, cwd=base,
                       env=dict(os.environ, XDG_CONFIG_HOME=os.path.join(base, "config")))
    check(r.returncode == 0, "the join card's screenshot run exited %d: %s" % (r.returncode, r.stderr[-600:]))
    lines = r.stdout.strip().split("\n")
    check(len(lines) == 2 and lines[0].startswith("teacher: http://127.0.0.1:") and lines[1].startswith("student: "),
          "the screenshot run's lines: %r" % r.stdout)
    s = png_stats(png_stats_exe, card)
    check((s["w"], s["h"]) == (1024, 768), "the card's size: %s" % s)
    check(s["colours"] >= 8 and 10 < s["brightness"] < 245, "the join card looks blank: %s" % s)
    return s


async def live(headsplit, png_stats_exe, base, site):
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(base, "config"))
    proc = await asyncio.create_subprocess_exec(
        headsplit, "lesson", "--bind", "127.0.0.1", "--port", "0", "--site", site, "--backend", "cpu",
        "--window", "1024x768", cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    d = display.Display()
    try:
        urls = await read_urls(proc)
        student_query = urllib.parse.urlsplit(urls["student"]).query
        port = urllib.parse.urlsplit(urls["student"]).port
        st = await connect("ws://127.0.0.1:%d/lesson?%s" % (port, student_query))
        await st.wait("the first state", lambda s: s.last("state") is not None)
        first = params(st.last("state"))
        check(first.get("step") == "0" and "present" in first and first.get("heads") == "2",
              "the first state: %s" % st.last("state")["query"])

        w = None
        deadline = time.monotonic() + 60
        while w is None and time.monotonic() < deadline:
            w = find_window(d, proc.pid, 5)
        check(w is not None, "no window for pid %d" % proc.pid)
        await asyncio.sleep(2)  # the first frames

        press(d, w, "Right")
        await st.wait("step 1", lambda s: params(s.last("state")).get("step") == "1")
        press(d, w, "h")
        await st.wait("heads 3", lambda s: params(s.last("state")).get("heads") == "3")
        check(params(st.last("state")).get("step") == "1", "the step after H: %s" % st.last("state")["query"])
        press(d, w, "j")  # the join card hidden: the class's line and the histogram show
        press(d, w, "p")
        await st.wait("paused", lambda s: s.last("state")["paused"] is True)

        press(d, w, "q")  # predict the shape: the next step is asked
        press(d, w, "Right")
        await st.wait("the question", lambda s: s.last("state")["question"] is not None)
        q = st.last("state")["question"]
        check(len(q["options"]) >= 2 and "revealed" in q and not q["revealed"], "the question: %s" % q)
        check(params(st.last("state")).get("step") == "1", "the class stays on the step before the one asked: %s"
              % st.last("state")["query"])
        await st.send({"type": "answer", "choice": 1})
        await asyncio.sleep(0.5)
        press(d, w, "1")  # the teacher answers: the reveal
        await st.wait("the reveal", lambda s: (s.last("state")["question"] or {}).get("revealed") is True)
        q = st.last("state")["question"]
        check(q["counts"][1] == 1 and sum(q["counts"]) == 1 and 0 <= q["answer"] < len(q["options"]),
              "the revealed question: %s" % q)
        await st.wait("step 2", lambda s: params(s.last("state")).get("step") == "2")

        await asyncio.sleep(1)  # the window's stats: the histogram's counts
        press(d, w, "F12")
        shots = []
        deadline = time.monotonic() + 20
        while not shots and time.monotonic() < deadline:
            await asyncio.sleep(0.3)
            shots = [p for p in glob.glob(os.path.join(base, "*.png")) if not p.endswith("card.png")]
        check(shots, "F12 saved no screenshot in %s" % base)
        await asyncio.sleep(0.5)
        hist = png_stats(png_stats_exe, shots[0])
        check(hist["colours"] >= 8, "the histogram's screenshot looks blank: %s" % hist)
        check_answers_above_stage(png_stats_exe, shots[0], hist)

        close(d, w)
        await st.wait("the end", lambda s: any(m["type"] == "ended" for m in s.messages))
        code = await asyncio.wait_for(proc.wait(), 30)
        err = (await proc.stderr.read()).decode()
        check(code == 0, "headsplit lesson exited %d: %s" % (code, err[-600:]))
        check("every student was told" in err, "the end on stderr: %r" % err[-300:])
        return shots[0]
    finally:
        d.close()
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def interrupted(headsplit, base, site):
    """SIGINT to `headsplit lesson` with its window: the window closes, the student is told."""
    env = dict(os.environ, XDG_CONFIG_HOME=os.path.join(base, "config"))
    proc = await asyncio.create_subprocess_exec(
        headsplit, "lesson", "--bind", "127.0.0.1", "--port", "0", "--site", site, "--backend", "cpu",
        "--window", "800x600", cwd=base, env=env, stdin=subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    try:
        urls = await read_urls(proc)
        u = urllib.parse.urlsplit(urls["student"])
        st = await connect("ws://127.0.0.1:%d/lesson?%s" % (u.port, u.query))
        await st.wait("the first state", lambda s: s.last("state") is not None)
        proc.send_signal(signal.SIGINT)
        await st.wait("the end", lambda s: any(m["type"] == "ended" for m in s.messages))
        code = await asyncio.wait_for(proc.wait(), 30)
        check(code == 0, "headsplit lesson after SIGINT exited %d" % code)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def main():
    if len(sys.argv) != 3:
        print("usage: lesson_window_test.py HEADSPLIT PNG_STATS")
        sys.exit(2)
    headsplit, png_stats_exe = sys.argv[1], sys.argv[2]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="headsplit-lesson-window-") as base:
        site = make_site(base)
        try:
            card = card_screenshot(headsplit, png_stats_exe, base, site)
            print("lesson_window_test: the join card's screenshot: %s" % card, flush=True)
            asyncio.run(live(headsplit, png_stats_exe, base, site))
            asyncio.run(interrupted(headsplit, base, site))
        except Failed as e:
            print("lesson_window_test: FAIL: %s" % e, flush=True)
            sys.exit(1)
    print("lesson_window_test: keys reached the student, the reveal carried the counts, the close ended the "
          "lesson, and so did SIGINT (%.0f s)" % (time.monotonic() - started))


if __name__ == "__main__":
    main()
