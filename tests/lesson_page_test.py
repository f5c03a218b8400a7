#!/usr/bin/python3
"""The page in a live lesson (issue 44), over loopback: `headsplit lesson --no-window --bind
127.0.0.1 --port 0 --site SITE --max-students 3`, a teacher (Debian's python3-websockets, as the
teacher window drives the server) and pages in headless Chromium over the DevTools protocol
(tools/web/page_probe.py's browser and client), all open at once:

  - three students open the student address and follow (the third from a host that is not a
    secure context, as a LAN address is: the single-threaded page); their addresses (location.search)
    take the teacher's configuration, step and presenter mode; the teacher steps, changes
    heads and asks the question, and every student's address follows;
  - the students answer by clicking the question's buttons (one changes its mind); the
    teacher's stats count them; the reveal shows every student the counts, the right one
    marked;
  - "explore on my own" stops following, "back to the teacher" catches up; locking brings an
    exploring student back and hides the button; under the lock a following student's own
    keys (Right, Page Down, End, Home, Space, H, Q) leave its page where the teacher put it,
    its mark says they wait, and the teacher's next step still reaches it; a student's own
    "ask" is refused as driving; pausing shows "paused";
  - a query the page's own checks refuse (heads=0) is said in one line and not run;
  - the teacher's page (the teacher address in a browser) takes the lesson's state, counts
    the answers and shows the revealed counts; its own step (a key press) reaches the
    students; its Q and the next step ask the class the lesson's question (the class stays on
    the step before), its key 1 reveals the counts;
  - a fourth student is told the class is full; a student's page left for another gives back
    its seat, even kept in the back/forward cache, so the fourth's reload joins, and the first
    page shown again by "back" follows again; a dropped connection comes back and catches
    up, and SIGINT tells every page the lesson has ended; each page stays usable on its own.

Timing: a student's address must follow the teacher within max(1 s, 10 frames of that page),
the frame time measured on the same page in the same run (a loaded machine slows both). Every
other wait is a generous timeout. Usage: lesson_page_test.py HEADSPLIT SITE
"""
import asyncio
import base64
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
import urllib.parse
import urllib.request

import websockets

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "web"))
import page_probe  # noqa: E402  (the browser and its DevTools client)

SIZE = {"width": 900, "height": 640}


class Failed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failed(message)


def params(search):
    """location.search as a dict of lists (a repeated name keeps every value)."""
    return urllib.parse.parse_qs(search.lstrip("?"), keep_blank_values=True)


class Teacher:
    """The teacher's WebSocket: sends set/ask/reveal, keeps the latest state and stats."""

    def __init__(self, ws):
        self.ws, self.state, self.stats = ws, None, None
        self.changed = asyncio.Event()
        self.task = asyncio.ensure_future(self.read())

    async def read(self):
        try:
            async for text in self.ws:
                msg = json.loads(text)
                if msg["type"] == "state":
                    self.state = msg
                elif msg["type"] == "stats":
                    self.stats = msg
                self.changed.set()
        except websockets.ConnectionClosed:  # the server's end, checked where it matters
            pass

    async def send(self, **msg):
        await self.ws.send(json.dumps(msg))

    async def wait(self, what, pred, timeout=30):
        deadline = time.monotonic() + timeout
        while not pred(self):
            left = deadline - time.monotonic()
            check(left > 0, "the teacher waited in vain for " + what + "; stats " + json.dumps(self.stats))
            self.changed.clear()
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass


class Page:
    """One browser tab and its DevTools connection."""

    def __init__(self, name, dt, ws):
        self.name, self.dt, self.ws = name, dt, ws

    async def eval(self, expr):
        return await self.dt.evaluate(expr)

    async def wait(self, what, expr, timeout=60):
        """Polls `expr` until it is truthy; returns (its value, seconds waited)."""
        start = time.monotonic()
        while True:
            try:
                value = await self.eval(expr)
            except Exception:  # between documents
                value = None
            if value:
                return value, time.monotonic() - start
            if time.monotonic() - start > timeout:
                console = "; ".join(self.dt.console[-5:])
                mark = await self.eval("(document.getElementById('lesson') || {}).textContent || ''")
                raise Failed(f"{self.name}: waited {timeout} s in vain for {what} (mark: {mark!r}; console: {console})")
            await asyncio.sleep(0.05)

    async def search(self):
        return await self.eval("location.search")

    async def click(self, selector):
        """A real mouse click at the centre of the element (the page's own listeners get it)."""
        box = await self.eval(f"""(() => {{ const e = document.querySelector({json.dumps(selector)});
          if (!e) return null; const r = e.getBoundingClientRect();
          return {{x: r.left + r.width / 2, y: r.top + r.height / 2}}; }})()""")
        check(box, f"{self.name}: no {selector} to click")
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            await self.dt.send("Input.dispatchMouseEvent", {"type": kind, "x": box["x"], "y": box["y"], "button": "left",
                                                            "clickCount": 1})

    async def shot(self, name):
        """With LESSON_SHOTS=DIR, a screenshot of the page in DIR (for a reader's eyes only)."""
        folder = os.environ.get("LESSON_SHOTS")
        if folder:
            shot = await self.dt.send("Page.captureScreenshot", {"format": "png"})
            with open(os.path.join(folder, name + ".png"), "wb") as f:
                f.write(base64.b64decode(shot["data"]))

    async def key_until(self, key, what, expr):
        """Presses `key` on the canvas until `expr` holds, up to three times (a key a busy page
        missed is pressed again: the probe's input, not the lesson, is what that would test);
        whether it came to hold."""
        for _ in range(3):
            await self.eval("document.getElementById('canvas').focus()")
            await page_probe.key(self.dt, key)
            try:
                await self.wait(what, expr, timeout=5)
                return True
            except Failed:
                pass
        return False

    async def frame_seconds(self):
        """This page's time per drawn frame, over a second of its idle drawing."""
        count = "Number(document.body.dataset.framesDrawn || 0)"
        a, t0 = await self.eval(count), time.monotonic()
        await asyncio.sleep(1.0)
        b, t1 = await self.eval(count), time.monotonic()
        return (t1 - t0) / max(1, b - a)


async def open_page(port, name, url):
    request = urllib.request.Request(f"http://127.0.0.1:{port}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(request, timeout=30) as r:
        target = json.load(r)["id"]
    ws = await websockets.connect(f"ws://127.0.0.1:{port}/devtools/page/{target}", max_size=None, ping_interval=None)
    page = Page(name, page_probe.DevTools(ws), ws)
    await page.dt.send("Page.enable")
    await page.dt.send("Runtime.enable")
    await page.dt.send("Emulation.setFocusEmulationEnabled", {"enabled": True})
    await page.dt.send("Emulation.setDeviceMetricsOverride", {**SIZE, "deviceScaleFactor": 1, "mobile": False})
    page.opened = time.monotonic()
    await page.dt.send("Page.navigate", {"url": url})
    return page


def view_of(search):
    """The teacher's view in an address: what a following student's address must hold."""
    p = params(search)
    return {k: v for k, v in p.items() if k not in ("lesson", "teacher", "font-scale", "light", "json", "layout-report")}


async def run(headsplit, site, base):
    log = open(os.path.join(base, "server.log"), "w")
    proc = await asyncio.create_subprocess_exec(
        headsplit, "lesson", "--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site,
        "--max-students", "3", stdout=asyncio.subprocess.PIPE, stderr=log)
    browser = None
    pages = []
    try:
        lines = [(await asyncio.wait_for(proc.stdout.readline(), 30)).decode().split() for _ in range(2)]
        check(lines[0][0] == "teacher:" and lines[1][0] == "student:", "the server printed " + str(lines))
        teacher_url, student_url = lines[0][1], lines[1][1]
        port = urllib.parse.urlsplit(student_url).port
        query = urllib.parse.urlsplit(teacher_url).query
        teacher = Teacher(await websockets.connect(f"ws://127.0.0.1:{port}/lesson?{query}", ping_interval=None))
        await teacher.wait("the first state", lambda t: t.state)

        async def teach(what, **msg):
            seq = teacher.state["seq"]
            await teacher.send(**msg)
            await teacher.wait(what, lambda t: t.state["seq"] > seq)
            return time.monotonic()

        sent = await teach("the first view", type="set", query="text=the%20cat%20sat%20down&d-out=8&heads=2&step=3&present")

        profile = tempfile.mkdtemp(prefix="headsplit-lesson-chromium-", dir=base)
        os.environ["PROBE_HOST_RULES"] = "MAP lan.test 127.0.0.1"
        browser, dev_port = page_probe.start_chromium(os.path.join(profile, "browser"), open(os.path.join(base, "chromium.log"), "w"))
        # The third student's page comes from a host that is not a secure context, as a LAN
        # address is: it runs the single-threaded build.
        lan_url = student_url.replace("//127.0.0.1:", "//lan.test:")
        students = [await open_page(dev_port, f"student {i + 1}", url) for i, url in enumerate([student_url] * 2 + [lan_url])]
        pages += students

        def follows(search, view):
            return all(params(search).get(k) == v for k, v in view.items())

        async def all_follow(what):
            """Every following student's address holds the teacher's view; returns the seconds each took."""
            view = view_of(teacher.state["query"])
            took = []
            for s in students:
                if await s.eval("document.body.dataset.lesson") == "exploring":
                    continue
                start = time.monotonic()
                while not follows(await s.search(), view):
                    check(time.monotonic() - start < 60, f"{s.name}'s address {await s.search()} never followed {view} ({what})")
                    await asyncio.sleep(0.02)
                took.append(time.monotonic() - start)
            return took

        joined = []
        for s in students:
            await s.wait("following", "document.body.dataset.lesson === 'following' && document.body.dataset.settled !== undefined")
            await s.wait("the teacher's view", "location.search.includes('step=3') && location.search.includes('heads=2') && "
                                               "location.search.includes('present')")
            joined.append(time.monotonic() - s.opened)
        for s, build in zip(students, ["app", "app", "app-single"]):
            check("lesson=" in await s.search(), f"{s.name}'s address lost its lesson code: {await s.search()}")
            check(await s.eval("document.body.dataset.build") == build, f"{s.name} runs {await s.eval('document.body.dataset.build')}")
        frame = max([await s.frame_seconds() for s in students])
        print(f"students following: {', '.join('%.2f s' % j for j in joined)} from opening the address; "
              f"frame {frame * 1e3:.0f} ms")
        check(teacher.stats and teacher.stats["connected"] == 3, "stats: " + json.dumps(teacher.stats))

        # The teacher's page (the teacher address in a browser) takes the lesson's state.
        tpage = await open_page(dev_port, "the teacher's page", teacher_url)
        pages.append(tpage)
        await tpage.wait("teaching", "document.body.dataset.lesson === 'teaching' && location.search.includes('step=3') && "
                                     "location.search.includes('heads=2')")
        # It sends its own spelling of that view (every option written out, mode= among them,
        # which the teacher client's query leaves out): the class's state until the client's
        # next change.
        await teacher.wait("the teacher page's spelling", lambda t: "mode=" in t.state["query"])
        check("step=3" in teacher.state["query"], "the teacher's page sent " + teacher.state["query"])

        # The teacher steps, then changes heads: every address follows within 10 of its page's
        # frames (a count, not a time: a loaded machine slows the frames and the following
        # alike; 1.29 s against 1.26 s, ten frames timed before, under a full test run).
        latencies, frame_counts = [], []
        drawn = "Number(document.body.dataset.framesDrawn || 0)"
        for what, q in (("step 5", "text=the%20cat%20sat%20down&d-out=8&heads=2&step=5&present"),
                        ("heads 4", "text=the%20cat%20sat%20down&d-out=8&heads=4&step=5&present"),
                        ("a new sentence", "text=the%20dog%20ran%20far%20away&d-out=8&heads=4&step=2")):
            before = [await s.eval(drawn) for s in students]
            sent = await teach(what, type="set", query=q)
            for s, b in zip(students, before):
                view = view_of(q)
                while not follows(await s.search(), view):
                    check(time.monotonic() - sent < 60, f"{s.name}'s address {await s.search()} never followed {what}")
                    await asyncio.sleep(0.02)
                latencies.append(time.monotonic() - sent)
                frame_counts.append(await s.eval(drawn) - b)
            check(max(frame_counts) <= 10, f"{what}: a student's address followed after {max(frame_counts)} of its frames "
                                           f"({max(latencies):.2f} s; at most 10 frames)")
        print(f"addresses followed in {statistics.median(latencies):.2f} s median, {max(latencies):.2f} s at most, "
              f"{statistics.median(frame_counts):.0f} frames median, {max(frame_counts)} at most "
              f"({len(latencies)} changes x students)")

        # The question: each student answers by clicking; one changes its mind.
        await teach("the question", type="ask", prompt="What shape has attn_scores?",
                    options=["[1, 4, 5, 5]", "[1, 5, 5]", "[4, 5, 5]"], answer=0)
        for s in students:
            await s.wait("the question", "document.querySelectorAll('#lesson-question .lesson-option').length === 3")
        await students[0].click('[data-choice="0"]')
        await students[1].click('[data-choice="2"]')
        await students[2].click('[data-choice="0"]')
        await teacher.wait("three answers", lambda t: t.stats.get("answered") == 3)
        await tpage.wait("three answered", "document.getElementById('lesson-mark').textContent.includes('3 answered')")
        await students[1].shot("question")
        await students[1].click('[data-choice="0"]')
        await students[1].wait("its new choice shown", "document.querySelector('[data-choice=\"0\"]').classList.contains('chosen')")
        await asyncio.sleep(0.3)  # the change of mind's message is on its way
        await teach("the reveal", type="reveal")
        check(teacher.state["question"]["counts"] == [3, 0, 0], "the revealed counts: " + json.dumps(teacher.state["question"]))
        for s in students:
            text, _ = await s.wait("the counts", "document.querySelector('.lesson-option.right') && "
                                                 "document.querySelector('.lesson-option.right').textContent")
            check("3" in text and "right" in text, f"{s.name} shows the right answer as {text!r}")
        text, _ = await tpage.wait("the counts", "(document.querySelector('.lesson-option.right') || {}).textContent")
        check("3" in text and "right" in text, f"the teacher's page shows the right answer as {text!r}")
        await students[1].shot("revealed")
        await teach("the question closed", type="close_question")

        # Explore and back.
        explorer, follower = students[0], students[1]
        await explorer.click("#lesson-explore")
        await explorer.wait("exploring", "document.body.dataset.lesson === 'exploring'")
        before = await explorer.search()
        await teach("step 4", type="set", query="text=the%20dog%20ran%20far%20away&d-out=8&heads=4&step=4")
        await all_follow("step 4")
        await asyncio.sleep(0.5)
        check(await explorer.search() == before, f"an exploring student's address moved: {before} -> {await explorer.search()}")
        await explorer.click("#lesson-explore")
        await explorer.wait("back to the teacher", "document.body.dataset.lesson === 'following' && location.search.includes('step=4')")

        # Locked: an exploring student is brought back, and the button goes.
        await explorer.click("#lesson-explore")
        await explorer.wait("exploring again", "document.body.dataset.lesson === 'exploring'")
        await teach("a step while exploring", type="set", query="text=the%20dog%20ran%20far%20away&d-out=8&heads=4&step=6")
        await teach("the lock", type="set", locked=True)
        await explorer.wait("brought back", "document.body.dataset.lesson === 'following' && location.search.includes('step=6') && "
                                            "!document.getElementById('lesson-explore')")
        # Locked, a following student's own keys do not move its page (its address stays
        # put) and its mark says they wait; the teacher's states still reach it.
        held = follower
        # (Its address first reaches the teacher's step 6: the state sent while the other
        # explored may still be on its way, and would move the address after `before`.)
        await held.wait("the teacher's step 6", "document.body.dataset.lesson === 'following' && location.search.includes('step=6')")
        await asyncio.sleep(0.5)
        before = await held.search()
        for k in ("ArrowRight", "PageDown", "End", "Home", " ", "h", "q"):
            await held.eval("document.getElementById('canvas').focus()")
            await page_probe.key(held.dt, k)
        await asyncio.sleep(1.5)  # a key a page took would have moved its address by now
        check(await held.search() == before, f"a held student's own keys moved its page: {before} -> {await held.search()}")
        await held.wait("the keys seen and dropped", "Number(document.body.dataset.lessonIgnored || 0) >= 1")
        # The mark says so for 3 s after a dropped key: one more key, and the mark read while
        # that lasts (on a loaded machine the keys above may be more than 3 s back by now).
        await held.eval("document.getElementById('canvas').focus()")
        await page_probe.key(held.dt, "ArrowRight")
        await held.wait("the held page's mark after its keys",
                        "document.getElementById('lesson-mark').textContent.includes('wait for the teacher')", timeout=20)
        await teach("a step under the lock", type="set", query="text=the%20dog%20ran%20far%20away&d-out=8&heads=4&step=8")
        await all_follow("a step under the lock")
        await held.shot("held")
        # A student's page cannot ask the class a question: the server refuses it as driving.
        refused = teacher.stats["refused"].get("driving", 0)
        await held.eval("headsplitLesson.send({type: 'ask', prompt: 'mine?', options: ['[1]', '[2]'], answer: 0})")
        await teacher.wait("the student's ask refused", lambda t: t.stats["refused"].get("driving", 0) > refused)
        check(teacher.state["question"] is None or teacher.state["question"]["prompt"] != "mine?",
              "a student's ask reached the class: " + json.dumps(teacher.state["question"]))
        await teach("the pause", type="set", paused=True)
        await follower.wait("paused", "document.getElementById('lesson-mark').textContent.includes('paused')")
        await follower.shot("paused")
        await teach("the unlock", type="set", locked=False, paused=False)
        await follower.wait("the button back", "!!document.getElementById('lesson-explore')")

        # A query the page refuses: one line, nothing run, the page as it was.
        before = await follower.search()
        await teach("a refused query", type="set", query="text=the%20dog%20ran&heads=0&step=1")
        line, _ = await follower.wait("the refusal", "(document.querySelector('#lesson .lesson-problem') || {}).textContent")
        check("heads" in line and "\n" not in line, "the refusal: " + repr(line))
        await follower.shot("refused")
        check(await follower.search() == before, "a refused query moved the address: " + await follower.search())
        await teach("a good query again", type="set", query="text=the%20dog%20ran%20far%20away&d-out=8&heads=4&step=3")
        await all_follow("a good query again")

        # The teacher's page's own step reaches the class.
        seq = teacher.state["seq"]
        # The key moves the teacher page's own step first.
        await tpage.key_until("ArrowRight", "its own step", "location.search.includes('step=4')")
        await teacher.wait("the teacher page's step", lambda t: t.state["seq"] > seq and "step=4" in t.state["query"] and
                           "heads=2" in t.state["query"])
        await all_follow("the teacher page's step")
        mark, _ = await tpage.wait("the class count", "(document.getElementById('lesson-mark') || {}).textContent")
        check("3 connected" in mark, "the teacher's page says " + repr(mark))
        await tpage.shot("teacher")

        # The teacher's page asks as the window does: Q, then the next step goes to the class as
        # the lesson's question while the class stays on the step before it; the teacher's
        # answer (key 1) reveals the class's counts, and the class moves on to the step.
        seq = teacher.state["seq"]
        await tpage.eval("document.getElementById('canvas').focus()")
        await page_probe.key(tpage.dt, "q")
        await tpage.wait("the quiz on", "location.search.includes('quiz')")
        await tpage.key_until("ArrowRight", "the step asked", "location.search.includes('step=5')")
        await teacher.wait("the teacher page's question", lambda t: t.state["question"] is not None and
                           t.state["seq"] > seq and not t.state["question"]["revealed"])
        q = teacher.state["question"]
        check(q["prompt"].startswith("Step 5") and len(q["options"]) >= 2, "the teacher page's question: " + json.dumps(q))
        check("step=4" in teacher.state["query"] and "quiz" not in params(teacher.state["query"]),
              "the class's view while the question waits: " + teacher.state["query"])
        for s in students:
            await s.wait("the teacher page's question", "document.querySelectorAll('#lesson-question .lesson-option').length === "
                         + str(len(q["options"])))
        await students[0].click('[data-choice="1"]')
        await teacher.wait("an answer", lambda t: t.stats.get("answered") == 1)
        await tpage.eval("document.getElementById('canvas').focus()")
        await page_probe.key(tpage.dt, "1")
        await teacher.wait("the teacher page's reveal", lambda t: (t.state["question"] or {}).get("revealed") is True)
        counts = teacher.state["question"]["counts"]
        check(counts[1] == 1 and sum(counts) == 1, "the revealed counts: " + json.dumps(teacher.state["question"]))
        await teacher.wait("the class on the step asked", lambda t: "step=5" in t.state["query"])
        for s in students:
            await s.wait("the counts", "!!document.querySelector('.lesson-option.right')")
        await students[0].shot("teacher-page-revealed")
        await page_probe.key(tpage.dt, "q")  # the quiz off: the steps below are not asked
        await tpage.wait("the quiz off", "!location.search.includes('quiz')")
        await teach("the question closed", type="close_question")

        # The class is full.
        extra = await open_page(dev_port, "a fourth student", student_url)
        pages.append(extra)
        await extra.wait("full, and usable", "document.body.dataset.lesson === 'full' && document.body.dataset.settled !== undefined")
        await extra.shot("full")

        # A student who leaves keeps no seat (issue 65): a page left for another closes its
        # connection, though the browser may keep it whole (its back/forward cache) to show it
        # again; then the fourth student's reload joins. Back on the first page (the same
        # document, the marker set before it was left still there) it connects again and follows.
        leaver = students[0]
        origin = "http://127.0.0.1:%d" % port
        await leaver.eval("window.headsplitKept = 1")
        await leaver.dt.send("Page.navigate", {"url": origin + "/sw.js"})
        await teacher.wait("the left page's seat given back", lambda t: t.stats["connected"] == 2, 10)
        await extra.dt.send("Page.reload")
        await extra.wait("the reload joined", "document.body.dataset.lesson === 'following'")
        await extra.dt.send("Page.navigate", {"url": origin + "/sw.js"})
        await teacher.wait("the fourth student gone", lambda t: t.stats["connected"] == 2, 10)
        await leaver.eval("history.back()")
        await leaver.wait("back, and following", "document.body.dataset.lesson === 'following'")
        kept = await leaver.eval("window.headsplitKept === 1")
        await teacher.wait("the page shown again, seated", lambda t: t.stats["connected"] == 3, 10)
        print("a page left gave back its seat, a reload took it, and back %s it followed again"
              % ("(from the back/forward cache)" if kept else "(reloaded)"))

        # A dropped connection comes back and catches up.
        await follower.eval("headsplitLesson.ws.close()")
        await follower.wait("reconnected", "document.body.dataset.lesson === 'following' && headsplitLesson.tries === 0")
        await teach("a step after the reconnection", type="set", query="text=the%20dog%20ran%20far%20away&d-out=8&heads=4&step=2")
        await all_follow("a step after the reconnection")

        # The end: every page says so and still works on its own (a key moves its step).
        proc.send_signal(signal.SIGINT)
        check(await asyncio.wait_for(proc.wait(), 30) == 0, "the server's exit status on SIGINT")
        for s in students + [tpage]:
            await s.wait("the end", "document.body.dataset.lesson === 'ended'")
        before = params(await follower.search()).get("step")
        if not await follower.key_until("ArrowRight", "its own step", f"!location.search.includes('step={before[0]}&')"):
            raise Failed("an ended lesson's page did not take a key")
        for p in pages:
            bad = [c for c in p.dt.console if c.startswith("exception")]
            check(not bad, f"{p.name} threw: {bad}")
        print("explore/back, lock, pause, a refused query, the teacher's page, full, reconnect and the end: as expected")
    finally:
        for p in pages:
            p.dt.reader.cancel()
            await p.ws.close()
        if browser:
            browser.kill()
            browser.wait(timeout=10)
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


def remove_folder(base):
    """Removes a test's temporary folder. Chromium's helpers may still be writing the profile as
    they exit: a folder left in /tmp must not fail a test whose checks are done."""
    for _ in range(20):
        shutil.rmtree(base, ignore_errors=True)
        if not os.path.exists(base):
            break
        time.sleep(0.1)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: lesson_page_test.py HEADSPLIT SITE")
    start = time.monotonic()
    base = tempfile.mkdtemp(prefix="headsplit-lesson-page-")
    try:
        asyncio.run(asyncio.wait_for(run(sys.argv[1], sys.argv[2], base), 240))
    except Failed as e:
        sys.exit("FAIL: " + str(e))
    finally:
        remove_folder(base)
    print("lesson_page: passed in %.0f s" % (time.monotonic() - start))


if __name__ == "__main__":
    main()
