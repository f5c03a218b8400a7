#!/usr/bin/python3
"""Drives headless Chromium through the DevTools protocol for the page's tests.

Loads each address, waits until the page has settled (its body's data-settled, set after
three frames with the trace in) or refused (#refusal shown), then saves what was asked: the
element texts (the trace JSON, the layout report, the refusal), a screenshot, the time to the
first frame. The DevTools client is Debian's python3-websockets (asyncio), so the tests run on
a stock Debian 12 with nothing from outside its archive.

usage: page_probe.py JOBS.json RESULTS.json
  JOBS.json: [{"url": ..., "width": 1366, "height": 768, "screenshot": "a.png",
               "texts": {"trace-json": "t.json"}, "timeout": 60}, ...]
  A job may also act on the settled page, in order ("actions"): {"key": "ArrowRight"} (also
  "Ctrl+A", "F12", "Enter", a letter), {"type": "text"}, {"paste": "text"} (a paste event
  carrying it), {"click": "label"} (the centre of that label in the page's layout report: the
  address needs layout-report=1), {"wait": ms}, {"tap": "PageDown"} (down and up at once, as a
  presentation clicker sends them); "downloads": a folder where the browser saves what the
  page downloads.
  RESULTS.json: [{"url", "settled", "refusal", "first_frame_ms", "trace_shown_ms" (the first
                  frame with a computed trace), "compute_ms", "steps_ms",
                  "longest_busy_frame_ms", "busy_frames" (frames drawn while a trace computed),
                  "frames_settled" and "frames" (frames drawn when it
                  settled and after the actions), "long_tasks" ([start, duration] in ms of
                  each task that held the page's thread 50 ms or more, the browser's Long Tasks
                  API, on the clock of the page's marks), "address", "console", "error"}, ...]
  "build": "app" or "app-single" (index.html's choice). PROBE_HOST_RULES adds Chromium's
  --host-resolver-rules (e.g. "MAP lan.test 127.0.0.1": a host that is not a secure context).
  The texts are read after the actions. Debugging: PROBE_DEBUG=1 prints each poll and keeps
  the page's console lines; KEYLOG=1 adds a #keylog element listing the key, mouse, focus and
  paste events the page received (name it in "texts" to save it).
"""
import asyncio
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websockets

KEYS = {"ArrowRight": 39, "ArrowLeft": 37, "ArrowUp": 38, "ArrowDown": 40, "Enter": 13, "Escape": 27, "Home": 36,
        "End": 35, "Backspace": 8, "Tab": 9, "F5": 116, "F11": 122, "F12": 123, " ": 32, "PageDown": 34, "PageUp": 33}
DEBUG = bool(os.environ.get("PROBE_DEBUG"))


def host_rules():
    """PROBE_HOST_RULES="MAP lan.test 127.0.0.1": names the browser resolves to a loopback
    address while treating them as any other host (plain http:// there is not a secure
    context, as a LAN address is not)."""
    rules = os.environ.get("PROBE_HOST_RULES")
    return [f"--host-resolver-rules={rules}"] if rules else []


def start_chromium(profile, log, extra=()):
    """Starts the browser; returns (process, DevTools port). Raises when it does not listen in 30 s.

    Its messages go to the file `log` (a pipe nobody drains would stall it); `extra`: more
    command-line switches (--ignore-certificate-errors for a self-signed https:// page)."""
    proc = subprocess.Popen([os.environ.get("CHROMIUM", "chromium"),
                             "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
                             "--disable-background-networking", "--disable-component-update", "--disable-sync",
                             "--no-first-run", "--disable-quic", "--disable-dev-shm-usage", "--remote-debugging-port=0",
                             f"--user-data-dir={profile}", "--window-size=1366,768", *host_rules(), *extra, "about:blank"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    said = lambda: open(log.name, errors="replace").read()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"chromium exited ({proc.returncode}): " + said()[-500:])
        m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", said())
        if m:
            return proc, int(m.group(1))
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("chromium did not start within 30 s: " + said()[-500:])


class DevTools:
    """One page's DevTools connection: commands by id, the page's errors kept for the result."""

    def __init__(self, ws):
        self.ws, self.next_id, self.pending, self.console = ws, 1, {}, []
        self.reader = asyncio.ensure_future(self.read())

    async def read(self):
        async for raw in self.ws:
            msg = json.loads(raw)
            method = msg.get("method")
            if method == "Runtime.exceptionThrown":
                d = msg["params"]["exceptionDetails"]
                self.console.append("exception: " + d.get("text", "") + " " + (d.get("exception") or {}).get("description", ""))
            elif method == "Runtime.consoleAPICalled" and (msg["params"]["type"] in ("error", "warning") or DEBUG):
                args = msg["params"].get("args", [])
                self.console.append(msg["params"]["type"] + ": " +
                                    " ".join(str(a.get("value", a.get("description", ""))) for a in args))
            fut = self.pending.pop(msg.get("id"), None) if "id" in msg else None
            if fut and not fut.done():
                if "error" in msg:
                    fut.set_exception(RuntimeError(msg["error"].get("message", "error")))
                else:
                    fut.set_result(msg.get("result", {}))
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(RuntimeError("the DevTools connection closed"))

    async def send(self, method, params=None, timeout=60):
        ident, self.next_id = self.next_id, self.next_id + 1
        fut = asyncio.get_running_loop().create_future()
        self.pending[ident] = fut
        await self.ws.send(json.dumps({"id": ident, "method": method, "params": params or {}}))
        return await asyncio.wait_for(fut, timeout)

    async def evaluate(self, expr):
        res = await self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True})
        if "exceptionDetails" in res:
            raise RuntimeError("the page threw: " + res["exceptionDetails"].get("text", ""))
        return res.get("result", {}).get("value")


async def key(dt, name):
    parts = name.split("+")
    k = parts.pop()
    modifiers = (2 if "Ctrl" in parts else 0) | (8 if "Shift" in parts else 0)
    code = KEYS.get(k, ord(k.upper()[0]))
    text = k if len(k) == 1 and not modifiers else None
    common = {"key": k, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code, "modifiers": modifiers}
    if modifiers & 2:
        await dt.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", "key": "Control", "windowsVirtualKeyCode": 17, "modifiers": 2})
    down = {"type": "keyDown", "text": text, **common} if text else {"type": "rawKeyDown", **common}
    await dt.send("Input.dispatchKeyEvent", down)
    await asyncio.sleep(0.15)  # a frame sees the key down (ImGui 1.86 reads the keys' state once a frame)
    await dt.send("Input.dispatchKeyEvent", {"type": "keyUp", **common})
    if modifiers & 2:
        await dt.send("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Control", "windowsVirtualKeyCode": 17})
    await asyncio.sleep(0.06)


async def tap(dt, name):
    """Down and up at once, as a presentation clicker or a quick finger sends them."""
    code = KEYS.get(name, ord(name.upper()[0]))
    common = {"key": name, "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}
    await dt.send("Input.dispatchKeyEvent", {"type": "rawKeyDown", **common})
    await dt.send("Input.dispatchKeyEvent", {"type": "keyUp", **common})
    await asyncio.sleep(0.02)


async def click(dt, label):
    report = json.loads(await dt.evaluate('(document.getElementById("layout-report") || {}).textContent || "{}"'))
    # The controls panel scrolls and is not one the audit clips: its items count as shown.
    items = [i for i in report.get("items", []) if i.get("text") == label and (i.get("visible") is not False or i.get("panel") == "")]
    if not items:
        raise RuntimeError(f'no "{label}" on screen in the page\'s layout report')
    x, y = items[0]["x"] + items[0]["w"] / 2, items[0]["y"] + items[0]["h"] / 2
    await dt.send("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    await asyncio.sleep(0.15)  # as with keys: a frame sees the button down before it is let go
    await dt.send("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "clickCount": 1})
    await asyncio.sleep(0.15)
    await dt.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y, "button": "left", "clickCount": 1})
    await asyncio.sleep(0.1)


async def perform(dt, act):
    if "key" in act:
        return await key(dt, act["key"])
    if "tap" in act:
        return await tap(dt, act["tap"])
    if "type" in act:
        for ch in act["type"]:
            await key(dt, ch)
        return
    if "wait" in act:
        return await asyncio.sleep(act["wait"] / 1000)
    if "paste" in act:
        # A paste event carrying the text, as the browser fires on Ctrl+V or its menu's Paste
        # (the protocol's own Ctrl+V runs the browser's paste command and drops the key events).
        await dt.evaluate("(() => { const d = new DataTransfer(); d.setData(\"text/plain\", " + json.dumps(act["paste"]) +
                          "); window.dispatchEvent(new ClipboardEvent(\"paste\", { clipboardData: d })); })()")
        return await asyncio.sleep(0.1)
    if "click" in act:
        return await click(dt, act["click"])
    raise RuntimeError("unknown action " + json.dumps(act))


STATE = """(() => { const r = document.getElementById("refusal"), d = document.body ? document.body.dataset : {};
  return { settled: d.settled === undefined ? null : d.settled, refusal: r && !r.hidden ? r.textContent : null,
           first: d.firstFrame === undefined ? null : d.firstFrame }; })()"""
KEYLOG = """(() => { const p = document.createElement("pre"); p.id = "keylog"; document.body.appendChild(p);
  for (const t of ["keydown", "keyup", "keypress", "blur", "focus", "paste", "mousedown", "mouseup"])
    window.addEventListener(t, (e) => { p.textContent += t + " " + (e.key || "") + " " + (e.keyCode || "") + " " +
      (e.target && e.target.id) + " " + (e.clientX || "") + "," + (e.clientY || "") + "\\n"; }, true); })()"""


# The browser's own record of each task that held the page's thread 50 ms or more (its
# Long Tasks API): [start, duration] in ms on performance.now()'s clock, the page's marks'.
LONG_TASKS = """window.__longTasks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__longTasks.push([e.startTime, e.duration]); })
    .observe({ entryTypes: ["longtask"] });"""


def number(value):
    """A data- attribute's number: an int when it is whole (as JavaScript prints it), NaN when absent."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return int(v) if v.is_integer() else v


async def run_job(dt, job):
    result = {"url": job["url"]}
    await dt.send("Emulation.setDeviceMetricsOverride", {"width": job.get("width", 1366), "height": job.get("height", 768),
                                                         "deviceScaleFactor": job.get("scale", 1), "mobile": False})
    await dt.send("Page.navigate", {"url": "about:blank"})
    await dt.send("Page.navigate", {"url": job["url"]})
    deadline = time.monotonic() + job.get("timeout", 60)
    state = None
    while time.monotonic() < deadline:
        try:
            state = await dt.evaluate(STATE)
        except Exception:  # the page is between documents
            state = None
        if DEBUG:
            print(json.dumps(state), file=sys.stderr)
        if state and (state["settled"] is not None or state["refusal"] is not None):
            break
        await asyncio.sleep(0.1)
    if not state or (state["settled"] is None and state["refusal"] is None):
        raise RuntimeError("timed out")
    result["settled"] = None if state["settled"] is None else number(state["settled"])
    result["refusal"] = state["refusal"]
    result["first_frame_ms"] = None if state["first"] is None else number(state["first"])
    data = lambda name: dt.evaluate(f"document.body.dataset.{name} || 'NaN'")
    result["trace_shown_ms"] = number(await data("traceShown"))
    result["frames_settled"] = number(await data("framesDrawn"))
    if job.get("downloads"):
        await dt.send("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": job["downloads"], "eventsEnabled": False})
    if os.environ.get("KEYLOG"):
        await dt.evaluate(KEYLOG)
    for act in job.get("actions", []):
        await perform(dt, act)
    for ident, path in job.get("texts", {}).items():
        text = await dt.evaluate(f"(() => {{ const e = document.getElementById({json.dumps(ident)}); return e ? e.textContent : null; }})()")
        if text is None:
            raise RuntimeError(f"no #{ident} in the page")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    if job.get("address"):
        result["address"] = await dt.evaluate("location.search")
    result["compute_ms"] = number(await data("computeMs"))
    result["steps_ms"] = number(await data("stepsMs"))
    result["step_ms"] = await dt.evaluate("document.body.dataset.stepMs || ''")
    result["longest_busy_frame_ms"] = number(await data("longestBusyFrameMs"))
    result["busy_frames"] = number(await data("busyFrames"))
    result["frames"] = number(await data("framesDrawn"))
    result["build"] = await dt.evaluate("document.body.dataset.build || ''")  # app, or app-single (no threads)
    result["long_tasks"] = await dt.evaluate("window.__longTasks || []")
    if job.get("screenshot"):
        await asyncio.sleep(0.2)  # a few more frames: the settled frame is on the canvas
        shot = await dt.send("Page.captureScreenshot", {"format": "png"})
        with open(job["screenshot"], "wb") as f:
            f.write(base64.b64decode(shot["data"]))
    return result


async def probe(jobs, port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as r:
        targets = json.load(r)
    page = next(t for t in targets if t.get("type") == "page")
    # No size cap: screenshots and trace texts come back as single messages of megabytes.
    async with websockets.connect(page["webSocketDebuggerUrl"], max_size=None, ping_interval=None) as ws:
        dt = DevTools(ws)
        await dt.send("Page.enable")
        await dt.send("Runtime.enable")
        await dt.send("Page.addScriptToEvaluateOnNewDocument", {"source": LONG_TASKS})
        results = []
        for job in jobs:
            dt.console.clear()
            try:
                result = await run_job(dt, job)
            except Exception as e:  # one job's failure is its result, not the run's
                result = {"url": job["url"], "error": str(e) or type(e).__name__}
            if dt.console:
                result["console"] = dt.console[:20]
            results.append(result)
        dt.reader.cancel()
        return results


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: page_probe.py JOBS.json RESULTS.json")
    with open(sys.argv[1], encoding="utf-8") as f:
        jobs = json.load(f)
    profile = tempfile.mkdtemp(prefix="headsplit-chromium-")
    proc = None
    try:
        log = open(os.path.join(profile, "probe-chromium.log"), "w")
        proc, port = start_chromium(os.path.join(profile, "browser"), log)
        results = asyncio.run(probe(jobs, port))
        with open(sys.argv[2], "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    finally:
        if proc:
            proc.kill()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        # Chromium may still be writing its profile as it exits: a profile left in /tmp must
        # not fail a probe whose results are in.
        for _ in range(10):
            shutil.rmtree(profile, ignore_errors=True)
            if not os.path.exists(profile):
                break
            time.sleep(0.1)
        else:
            print(f"note: could not remove the browser profile {profile}", file=sys.stderr)


if __name__ == "__main__":
    main()
