#!/usr/bin/python3
"""The settings file, through an interactive window closed as a user closes it.

Run inside xvfb-run. Each case starts `headsplit` with no unattended option (so it keeps its
layout in $XDG_CONFIG_HOME/headsplit/imgui.ini), in an empty working folder, then acts on
its X window: a drag of the left splitter (XTest, as a mouse does) and the window manager's
close (a WM_DELETE_WINDOW message, as a title bar's close button sends).

  1. a settings file with left=0.300 and stage=nan: the window opens with the left panel at
     0.3 of its width (the drag starts on that splitter and moves it to 0.35; the default is
     0.2), the NaN and the infinity are dropped;
     closed, it exits 0 and the file holds the dragged fraction and finite numbers;
  2. nothing new in the working folder (a dangling path once wrote files named by garbage);
  3. the settings path a named pipe: the window starts anyway (reading it once blocked
     forever), says one line, closes, and the pipe is still a pipe;
  4. a settings file larger than the reader's bound: the window starts from its defaults,
     says so, and leaves the file as it was.
Under the sanitizers (make check) the same run checks the close for memory errors.

usage: settings_window_test.py HEADSPLIT
"""
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import time

from Xlib import X, display
from Xlib.ext import xtest

from xwindow import close, find_window, wait_drawn

WIDTH, HEIGHT = 1280, 800
failures = []


def fail(msg):
    print("FAIL: " + msg)
    failures.append(msg)


def drag(d, x0, y, x1):
    """Presses the left button at (x0, y), moves to (x1, y) in steps, lets go: a mouse's drag."""
    xtest.fake_input(d, X.MotionNotify, x=x0, y=y)
    d.sync()
    time.sleep(0.5)
    xtest.fake_input(d, X.ButtonPress, 1)
    d.sync()
    time.sleep(0.5)
    for k in range(1, 11):
        xtest.fake_input(d, X.MotionNotify, x=x0 + (x1 - x0) * k // 10, y=y)
        d.sync()
        time.sleep(0.1)
    time.sleep(0.5)
    xtest.fake_input(d, X.ButtonRelease, 1)
    d.sync()
    time.sleep(0.5)


def run_window(headsplit, config, cwd, act, timeout):
    """Starts the window, lets `act(display, window)` act on it, closes it; (exit code, stderr)."""
    env = dict(os.environ, XDG_CONFIG_HOME=config)
    err_path = os.path.join(config, "..", "stderr.txt")
    with open(err_path, "w") as err:
        proc = subprocess.Popen([headsplit, "--window", f"{WIDTH}x{HEIGHT}"], cwd=cwd, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    d = display.Display()
    try:
        w = find_window(d, proc.pid, timeout)
        if w is None:
            proc.kill()
            proc.wait()
            return None, "no window within %d s" % timeout
        if not wait_drawn(w, timeout):  # the first frames: the trace computed, the panels placed
            proc.kill()
            proc.wait()
            return None, "the window drew no settled frame within %d s" % timeout
        act(d, w)
        close(d, w)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return None, "did not exit within %d s of the close" % timeout
    finally:
        d.close()
    with open(err_path) as f:
        return code, f.read()


def fractions(path):
    text = open(path).read()
    return {k: v for k, v in re.findall(r"^(left|right|stage|code)=(\S+)$", text, re.M)}


def main():
    headsplit = sys.argv[1]
    timeout = 120  # a sanitizer build draws its frames slowly
    work = tempfile.mkdtemp(prefix="headsplit-settings-")
    try:
        config, cwd = os.path.join(work, "config"), os.path.join(work, "cwd")
        os.makedirs(os.path.join(config, "headsplit"))
        os.makedirs(cwd)
        ini = os.path.join(config, "headsplit", "imgui.ini")

        # 1, 2: read, dragged, kept; nothing in the working folder.
        with open(ini, "w") as f:
            f.write("[HeadSplit][Layout]\nleft=0.300\nright=0.250\nstage=nan\ncode=inf\n\n")
        x0 = int(WIDTH * 0.3)
        code, err = run_window(headsplit, config, cwd, lambda d, w: drag(d, x0, HEIGHT // 2, x0 + 64), timeout)
        if code != 0:
            fail(f"the window closed by the window manager exited {code}: {err.strip()[-800:]}")
        kept = fractions(ini) if os.path.exists(ini) else {}
        left = float(kept.get("left", "nan"))
        if not 0.34 <= left <= 0.36:  # neither the file's 0.3 nor the default 0.2
            fail(f"the left splitter dragged from 0.3 to 0.35 of the width: the settings file says left={kept.get('left')} "
                 f"({open(ini).read() if os.path.exists(ini) else 'no file'})")
        for name in ("right", "stage", "code"):
            v = kept.get(name, "missing")
            if not re.fullmatch(r"0\.\d+", v):
                fail(f"the settings file's {name}={v}: a fraction was expected (nan and inf are dropped)")
        if os.listdir(cwd):
            fail(f"the window wrote into its working folder: {os.listdir(cwd)}")
        print(f"dragged and closed: the settings file keeps left={kept.get('left')}, right={kept.get('right')}, "
              f"stage={kept.get('stage')}, code={kept.get('code')}; the working folder stays empty")

        # 3: a named pipe where the settings file would be.
        os.remove(ini)
        os.mkfifo(ini)
        code, err = run_window(headsplit, config, cwd, lambda d, w: None, timeout)
        if code != 0:
            fail(f"with a named pipe for the settings file the window exited {code}: {err.strip()[-800:]}")
        elif "named pipe" not in err:
            fail(f"with a named pipe for the settings file the window said: {err.strip()!r}")
        if not stat.S_ISFIFO(os.stat(ini).st_mode):
            fail("the named pipe was replaced")
        print("a named pipe for the settings file: " + err.strip().splitlines()[0] if err.strip() else "(nothing said)")
        os.remove(ini)

        # 4: a file over the bound is neither read nor replaced.
        big = "[HeadSplit][Layout]\nleft=0.400\n" + "; padding\n" * 10000
        with open(ini, "w") as f:
            f.write(big)
        code, err = run_window(headsplit, config, cwd, lambda d, w: None, timeout)
        if code != 0 or "more than the 64.0 KiB" not in err:
            fail(f"a settings file of {len(big)} bytes: exit {code}, said {err.strip()!r}")
        if open(ini).read() != big:
            fail("a settings file the window could not read was replaced")
        print("a settings file of %d bytes: %s" % (len(big), err.strip().splitlines()[0] if err.strip() else "(nothing said)"))
        if os.listdir(cwd):
            fail(f"the window wrote into its working folder: {os.listdir(cwd)}")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if failures:
        sys.exit(f"{len(failures)} settings check(s) failed")
    print("settings: read as untrusted, kept on a window manager's close")


if __name__ == "__main__":
    main()
