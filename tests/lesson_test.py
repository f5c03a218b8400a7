#!/usr/bin/python3
"""The live lesson's server over loopback (issue 44), with Debian's python3-websockets as the
clients: `headsplit lesson --no-window --bind 127.0.0.1 --port 0 --site SITE` on a site this
test makes, then

  - HTTP: the site's files served; traversal (plain and encoded), a symlink out, a folder
    without index.html and a huge header refused, nothing outside the site served;
  - 300 students join and get the state at once; the 301st is told the class is full;
  - the teacher sends 20 changes: every student gets all 20, in order;
  - the teacher asks, students answer (and change their minds), the teacher's stats count
    them, the reveal sends the histogram (counts only);
  - every refusal: a wrong code, a student driving (refused, kept), over 4 KiB, a binary
    frame, malformed JSON, over 20 messages a second (each closed), counted for the teacher;
  - a client that never reads is dropped without stalling the others; a client that
    disconnects mid-message; the teacher reconnecting gets the state;
  - SIGINT tells every student {"type":"ended"}; the server exits 0 having printed two lines;
  - the command line's refusals (port in use, no site, no display without --no-window, a bad --bind).

  - a second lesson with the default seats per address (issue 65), clients from other loopback
    addresses (127.0.0.2 and on): an address's 61st student is refused while another address
    joins; a page from another origin is refused naming it, the page's own origin joins; wrong
    codes from one address lock it, the right code too, until a try is due, while another
    address joins; each refusal counted for the teacher.

  - the server driven from another thread (tests/lesson_post_check.cpp, as the teacher
    window will drive it): posted changes reach every student in order; posts racing the
    stop are dropped.

Every wait has a timeout. Usage: lesson_test.py HEADSPLIT LESSON_POST_CHECK
"""
import asyncio
import base64
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

import websockets

STUDENTS = 300
CHANGES = 20
MARKER = "OUTSIDE-THE-SITE-3141"


class Failed(Exception):
    pass


def fail(message):
    raise Failed(message)


def check(condition, message):
    if not condition:
        fail(message)


class Client:
    """A WebSocket connection whose messages a background task collects."""

    def __init__(self, ws):
        self.ws = ws
        self.messages = []
        self.times = []
        self.closed = None
        self.changed = asyncio.Event()
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self):
        try:
            async for text in self.ws:
                self.messages.append(json.loads(text))
                self.times.append(time.monotonic())
                self.changed.set()
        except websockets.ConnectionClosed:
            pass
        self.closed = self.ws.close_code
        self.changed.set()

    async def wait(self, what, pred, timeout=20):
        deadline = time.monotonic() + timeout
        while not pred(self):
            self.changed.clear()
            left = deadline - time.monotonic()
            if left <= 0:
                fail("timed out waiting for %s; last messages %s, closed %s" % (what, self.messages[-2:], self.closed))
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except asyncio.TimeoutError:
                pass

    def states(self):
        return [m for m in self.messages if m["type"] == "state"]

    def last(self, kind):
        found = [m for m in self.messages if m["type"] == kind]
        return found[-1] if found else None

    async def send(self, doc):
        await self.ws.send(doc if isinstance(doc, (str, bytes)) else json.dumps(doc))


async def connect(url, **kw):
    ws = await websockets.connect(url, open_timeout=20, close_timeout=5, ping_interval=None, max_size=2 ** 20, **kw)
    return Client(ws)


def make_site(base):
    site = os.path.join(base, "site")
    os.makedirs(os.path.join(site, "empty"))
    os.makedirs(os.path.join(site, "sub"))
    with open(os.path.join(site, "index.html"), "w") as f:
        f.write("<!doctype html><p>the page</p>\n")
    with open(os.path.join(site, "app.js"), "w") as f:
        f.write("console.log('app');\n")
    with open(os.path.join(site, "sub", "a.js"), "w") as f:
        f.write("// a\n")
    with open(os.path.join(base, "secret.txt"), "w") as f:
        f.write(MARKER + "\n")
    os.symlink(os.path.join(base, "secret.txt"), os.path.join(site, "out.txt"))
    os.symlink(base, os.path.join(site, "outdir"))
    return site


def raw_exchange(port, data, timeout, source="127.0.0.1"):
    """Sends `data` and reads until the server closes or `timeout` passes; the bytes read."""
    with socket.socket() as s:
        s.bind((source, 0))
        s.settimeout(timeout)
        s.connect(("127.0.0.1", port))
        s.sendall(data)
        reply = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
        except (ConnectionResetError, socket.timeout):
            pass
    return reply


def http_get(port, target, extra=b"", timeout=10):
    """Sends one raw GET (the path exactly as given) and returns (status, whole reply)."""
    reply = raw_exchange(port, b"GET " + target.encode() + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n" + extra +
                         b"Connection: close\r\n\r\n", timeout)
    m = re.match(rb"HTTP/1\.[01] (\d{3})", reply)
    return (int(m.group(1)) if m else None), reply


def flood_frames(port, query, source, first, frame, seconds):
    """A WebSocket (its handshake by hand) that sends `first`, then `frame` over and over, never
    reading its answers, until the server cuts it or `seconds` pass; the seconds it lasted, or None."""
    with socket.socket() as s:
        s.bind((source, 0))
        s.settimeout(5)
        s.connect(("127.0.0.1", port))
        s.sendall(("GET /lesson?%s HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                   % (query, base64.b64encode(os.urandom(16)).decode())).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = s.recv(4096)
            check(chunk, "the flood's handshake was refused")
            head += chunk
        check(head.startswith(b"HTTP/1.1 101"), "the flood's handshake: %r" % head[:80])
        t0 = time.monotonic()
        s.settimeout(1)
        batch = frame * 200
        try:
            s.sendall(first)
            while time.monotonic() - t0 < seconds:
                s.sendall(batch)
        except (BrokenPipeError, ConnectionResetError, socket.timeout):
            return time.monotonic() - t0
    return None


def check_http(port, site):
    status, reply = http_get(port, "/")
    check(status == 200 and b"the page" in reply, "GET / gave %s" % status)
    status, reply = http_get(port, "/app.js")
    check(status == 200 and b"text/javascript" in reply.lower(), "GET /app.js gave %s: %r" % (status, reply[:200]))
    # Reaching outside the site: refused, plainly or encoded.
    refused = ["/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/%2e%2e%2fsecret.txt",
               "/%252e%252e/secret.txt", "/sub/../../secret.txt", "/sub/%2e%2e/%2e%2e/secret.txt",
               "/%2f..%2fsecret.txt", "/.%2e/secret.txt", "/../site/index.html", "/%2e%2e/site/index.html",
               "/out.txt", "/outdir/secret.txt", "/empty", "/empty/", "/sub/", "//etc/passwd", "/missing.js",
               "/sub\\a.js"]
    # Paths the server's parser normalizes back into the site ("/.." is "/"): a site file or nothing.
    inside = ["/..", "/%00", "/sub%2fa.js", "/sub/../index.html", "/./index.html", "/%2e/index.html",
              "/sub%2f..%2findex.html"]
    site_files = set()
    for folder, _, files in os.walk(site):
        for name in files:
            with open(os.path.join(folder, name), "rb") as f:
                site_files.add(f.read())
    for target in refused + inside:
        status, reply = http_get(port, target)
        check(MARKER.encode() not in reply, "GET %s leaked a file outside the site" % target)
        if target in refused:
            check(status != 200, "GET %s was served (status %s)" % (target, status))
        elif status == 200:
            check(reply.split(b"\r\n\r\n", 1)[1] in site_files, "GET %s served something else" % target)
    # CONNECT (which libwebsockets hands over as a raw socket): answered 405 and closed at once
    # (it was held for good, and 300 of them starved every join).
    for request in (b"CONNECT x:1 HTTP/1.1\r\nHost: x:1\r\n\r\n", b"CONNECT 127.0.0.1:22 HTTP/1.0\r\n\r\n"):
        t0 = time.monotonic()
        reply = raw_exchange(port, request, 5)
        check(reply.startswith(b"HTTP/1.1 405 ") and b"CONNECT is not served" in reply and time.monotonic() - t0 < 3,
              "%r got %r after %.1f s" % (request, reply[:120], time.monotonic() - t0))
    # A shared link of 10,000 bytes reaches the page, whose own checks answer it (it was closed
    # with no answer past about 4 KB).
    status, reply = http_get(port, "/?text=" + "a" * 10000)
    check(status == 200 and b"the page" in reply, "a 10,000-byte link gave %s: %r" % (status, reply[:80]))
    # A header far over the server's limit: refused, and the server still serves.
    status, reply = http_get(port, "/", extra=b"X-Huge: " + b"a" * 65536 + b"\r\n")
    check(status != 200, "a 64 KiB header was answered with 200")
    status, _ = http_get(port, "/")
    check(status == 200, "the server stopped serving after a huge header")
    return len(refused) + len(inside) + 1


async def read_urls(proc):
    lines = []
    for _ in range(2):
        line = await asyncio.wait_for(proc.stdout.readline(), 20)
        check(line, "headsplit lesson printed %d lines before its output ended" % len(lines))
        lines.append(line.decode().rstrip("\n"))
    check(lines[0].startswith("teacher: http://127.0.0.1:"), "first line: " + lines[0])
    check(lines[1].startswith("student: http://127.0.0.1:"), "second line: " + lines[1])
    teacher = urllib.parse.urlsplit(lines[0].split(" ", 1)[1])
    student = urllib.parse.urlsplit(lines[1].split(" ", 1)[1])
    check(teacher.port == student.port and teacher.port > 0, "ports: " + str(lines))
    return teacher.port, teacher.query, student.query


def stats_of(teacher):
    return teacher.last("stats") or {}


async def run(headsplit, base):
    site = make_site(base)
    log_path = os.path.join(base, "server.log")
    log = open(log_path, "w")
    proc = await asyncio.create_subprocess_exec(
        headsplit, "lesson", "--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site,
        "--max-students", str(STUDENTS), "--seats-per-address", str(STUDENTS), stdout=asyncio.subprocess.PIPE, stderr=log)
    try:
        await asyncio.wait_for(scenario(headsplit, proc, site), 150)
    except (Failed, asyncio.TimeoutError, OSError, websockets.WebSocketException) as e:
        await asyncio.sleep(0.2)
        state = "still running" if proc.returncode is None else "exited %d" % proc.returncode
        with open(log_path) as f:
            said = f.read()[-2000:]
        raise Failed("%s (the server: %s; its stderr ends %r)" % (e or type(e).__name__, state, said))
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


async def scenario(headsplit, proc, site):
    port, teacher_query, student_query = await read_urls(proc)
    check(re.fullmatch(r"lesson=[A-Z2-9]{6}", student_query), "student query: " + student_query)
    check(re.fullmatch(r"lesson=[A-Z2-9]{6}&teacher=[0-9a-f]{64}", teacher_query), "teacher query: " + teacher_query)
    ws_base = "ws://127.0.0.1:%d/lesson?" % port
    student_url = ws_base + student_query

    http_checks = await asyncio.get_running_loop().run_in_executor(None, check_http, port, site)
    print("lesson_test: HTTP: the site served; %d hostile requests served nothing outside it" % http_checks, flush=True)

    # A WebSocket anywhere but /lesson is refused at the handshake.
    try:
        await websockets.connect("ws://127.0.0.1:%d/elsewhere?%s" % (port, student_query), open_timeout=10)
        fail("a WebSocket at /elsewhere was accepted")
    except (websockets.InvalidStatusCode, websockets.InvalidMessage):
        pass

    teacher = await connect(ws_base + teacher_query)
    await teacher.wait("the teacher's first state", lambda c: c.states() and c.last("stats"))
    check(teacher.states()[0]["seq"] == 0, "the first state's seq: %s" % teacher.states()[0])

    # 300 students, 50 at a time; each gets the state at once.
    t0 = time.monotonic()
    students = []
    for i in range(0, STUDENTS, 50):
        students += await asyncio.gather(*(connect(student_url) for _ in range(50)))
    await asyncio.gather(*(s.wait("a student's first state", lambda c: c.states()) for s in students))
    joined_s = time.monotonic() - t0
    await teacher.wait("300 connected", lambda c: stats_of(c).get("connected") == STUDENTS)
    extra = await connect(student_url)
    await extra.wait("the 301st student's answer", lambda c: c.closed is not None)
    check(extra.messages and extra.messages[0]["type"] == "full", "the 301st got %s" % extra.messages)
    print("lesson_test: %d students joined in %.2f s; the 301st was told the class is full" % (STUDENTS, joined_s),
          flush=True)

    # 20 changes: every student gets every one, in order.
    sent = {}
    queries = {}
    for k in range(1, CHANGES + 1):
        queries[k] = "text=the%%20cat%%20sleeps&heads=2&step=%d&present" % (k % 12)
        sent[k] = time.monotonic()
        await teacher.send({"type": "set", "query": queries[k]})
    await asyncio.gather(*(s.wait("20 changes", lambda c: c.states()[-1]["seq"] >= CHANGES) for s in students))
    latest = []
    for s in students:
        got = [(m["seq"], m["query"]) for m in s.states()[1:]]
        check(got == [(k, queries[k]) for k in range(1, CHANGES + 1)], "a student got %s" % got[:5])
        latest.append(s.times[-1])
    last_ms = [(max(s.times[k] for s in students) - sent[k]) * 1000 for k in range(1, CHANGES + 1)]
    print("lesson_test: %d students got all %d changes in order; the last of them %.1f ms after the teacher "
          "(median over the changes, sent back to back)" % (STUDENTS, CHANGES, statistics.median(last_ms)), flush=True)

    # The question: answers counted, changeable, then revealed as counts.
    await teacher.send({"type": "ask", "prompt": "What shape has queries after the view?",
                        "options": ["[1, 3, 6]", "[1, 3, 2, 3]", "[1, 2, 3, 3]"], "answer": 1})
    seq_ask = CHANGES + 1
    await asyncio.gather(*(s.wait("the question", lambda c: c.states()[-1]["seq"] >= seq_ask) for s in students))
    check(all(s.states()[-1]["question"]["options"][1] == "[1, 3, 2, 3]" and "answer" not in s.states()[-1]["question"]
              for s in students), "the question as students see it")
    for i, s in enumerate(students):
        await s.send({"type": "answer", "choice": (i + 1) % 3 if i < 30 else i % 3})
    await teacher.wait("300 answers", lambda c: stats_of(c).get("answered") == STUDENTS)
    # 30 change their minds; a join after each answer, answered once the answer was taken
    # (a connection's messages are handled in order).
    before = [len(s.states()) for s in students[:30]]
    for i, s in enumerate(students[:30]):
        await s.send({"type": "answer", "choice": i % 3})
        await s.send({"type": "join"})
    await asyncio.gather(*(s.wait("the join after a changed answer", lambda c, n=n: len(c.states()) > n)
                           for s, n in zip(students[:30], before)))
    check("counts" not in stats_of(teacher), "counts before the reveal: %s" % stats_of(teacher))
    await teacher.send({"type": "reveal"})
    await teacher.wait("the histogram", lambda c: "counts" in stats_of(c))
    check(stats_of(teacher)["counts"] == [100, 100, 100], "the histogram: %s" % stats_of(teacher))
    check(stats_of(teacher)["answer"] == 1, "the right answer: %s" % stats_of(teacher))
    await asyncio.gather(*(s.wait("the reveal", lambda c: c.states()[-1]["seq"] >= seq_ask + 1) for s in students))
    check(students[0].states()[-1]["question"]["counts"] == [100, 100, 100], "students' histogram")
    print("lesson_test: 300 answers (30 changed) counted; the reveal shows [100, 100, 100]", flush=True)

    # Most students leave; the class count follows.
    await asyncio.gather(*(s.ws.close() for s in students[10:]))
    students = students[:10]
    await teacher.wait("10 connected", lambda c: stats_of(c).get("connected") == 10)

    # Every refusal, and whether it closes.
    wrong = await connect(ws_base + "lesson=ZZZZZZ")
    wrong_teacher = await connect(ws_base + "lesson=%s&teacher=%s" % (student_query[7:], "0" * 64))
    for c in (wrong, wrong_teacher):
        await c.wait("a wrong code's refusal", lambda c: c.closed is not None)
        check(c.messages == [{"type": "refused", "reason": "wrong_code"}] and c.closed == 1008,
              "a wrong code got %s, closed %s" % (c.messages, c.closed))
    driver = await connect(student_url)
    await driver.send({"type": "set", "query": "heads=3"})
    await driver.send({"type": "reveal"})
    await driver.send({"type": "join"})
    await driver.wait("the driving refusals", lambda c: len(c.states()) >= 2)
    check([m.get("reason") for m in driver.messages if m["type"] == "refused"] == ["driving", "driving"],
          "a driving student got %s" % driver.messages)
    check(driver.closed is None and driver.states()[-1]["query"] == queries[CHANGES], "the driving student's state")
    refusals = {"too_big": ({"type": "join", "pad": "x" * 5000}, 1009), "binary": (b"\x00\x01binary", 1003),
                "malformed": ('{"type": "answer", "choice": ', 1008)}
    for reason, (message, code) in refusals.items():
        c = await connect(student_url)
        await c.wait("the first state", lambda c: c.states())
        await c.send(message)
        await c.wait("the %s refusal" % reason, lambda c: c.closed is not None)
        check(c.last("refused") == {"type": "refused", "reason": reason} and c.closed == code,
              "%s: got %s, closed %s" % (reason, c.messages[-2:], c.closed))
    # 21 messages at once: one over the bucket's 20, refused as the last one read, so the
    # server's close meets no unread bytes. On a machine so loaded that the bucket refilled
    # while they were sent, 40 more: then the close may meet unread bytes and the kernel reset
    # the connection (losing the refusal's text), but it is closed and counted all the same.
    flooder = await connect(student_url)
    await flooder.wait("the first state", lambda c: c.states())
    for _ in range(21):
        await flooder.send({"type": "join"})
    try:
        await flooder.wait("the rate refusal", lambda c: c.closed is not None, timeout=2)
        check(flooder.last("refused") == {"type": "refused", "reason": "rate_limited"} and flooder.closed == 1008,
              "the flood: %s, closed %s" % (flooder.messages[-2:], flooder.closed))
        check(len(flooder.states()) == 21, "the flood got %d states for 20 joins" % len(flooder.states()))
    except Failed:
        print("lesson_test: the machine is slow: a second burst for the rate limit", flush=True)
        try:
            for _ in range(40):
                await flooder.send({"type": "join"})
        except websockets.ConnectionClosed:
            pass
        await flooder.wait("the rate refusal", lambda c: c.closed is not None)
    await driver.send({"type": "dance"})
    await driver.send({"type": "answer", "choice": 0})  # after the reveal
    await driver.wait("two more refusals", lambda c: len([m for m in c.messages if m["type"] == "refused"]) == 4)
    want = {"wrong_code": 2, "driving": 2, "too_big": 1, "binary": 1, "malformed": 1, "rate_limited": 1, "full": 1,
            "unknown": 1, "bad_value": 1, "too_many_tries": 0, "address_full": 0, "origin": 0}
    await teacher.wait("the refusals counted", lambda c: stats_of(c).get("refused") == want)
    print("lesson_test: refused and counted: %s" % ", ".join("%s %d" % kv for kv in want.items()), flush=True)

    # A client that never reads: dropped, while the others get every change in order.
    slow_sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    slow_sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    slow_sock.connect(("127.0.0.1", port))
    slow_ws = await websockets.connect(student_url, sock=slow_sock, open_timeout=20, ping_interval=None,
                                       max_queue=1, read_limit=4096, close_timeout=1)
    base_seq = teacher.states()[-1]["seq"]
    big = "text=" + "a" * 1900
    flood = 600
    t0 = time.monotonic()
    for k in range(flood):
        await teacher.send({"type": "set", "query": "%s&step=%d" % (big, k)})
        if k % 100 == 99:
            await asyncio.sleep(0.5)  # the teacher's own rate: 200 a second
    await asyncio.gather(*(s.wait("the flood of changes", lambda c: c.states()[-1]["seq"] >= base_seq + flood, 30)
                           for s in students + [driver]))
    took = time.monotonic() - t0
    for s in students + [driver]:
        seqs = [m["seq"] for m in s.states() if m["seq"] > base_seq]
        check(seqs == list(range(base_seq + 1, base_seq + flood + 1)), "a reading student missed changes")
    await teacher.wait("the slow client dropped", lambda c: stats_of(c).get("dropped_slow") == 1)
    slow_ws.transport.abort()
    print("lesson_test: a client that never read was dropped; 11 others got %d changes in order in %.1f s"
          % (flood, took), flush=True)

    # A client that disconnects in the middle of a message: the header of a 100-byte masked
    # text frame and 10 of its bytes, then the socket is gone.
    half = await connect(student_url)
    await half.wait("the first state", lambda c: c.states())
    half.ws.transport.write(bytes([0x81, 0x80 | 100, 1, 2, 3, 4]) + b"0123456789")
    half.ws.transport.abort()
    await teacher.wait("the half-sent client gone", lambda c: stats_of(c).get("connected") == 11)
    await teacher.send({"type": "set", "query": "text=after&step=1"})
    await asyncio.gather(*(s.wait("a change after it", lambda c: c.states()[-1]["query"] == "text=after&step=1")
                           for s in students))

    # The teacher reconnects and gets the state at once.
    await teacher.ws.close()
    teacher = await connect(ws_base + teacher_query)
    await teacher.wait("the state again", lambda c: c.states() and c.last("stats"))
    check(teacher.states()[0]["query"] == "text=after&step=1" and teacher.states()[0]["seq"] == base_seq + flood + 1,
          "the reconnected teacher got %s" % teacher.states()[0])
    check(teacher.states()[0]["question"]["counts"] == [100, 100, 100], "the question kept over a reconnect")
    print("lesson_test: a client cut mid-message changed nothing; the teacher reconnected to seq %d"
          % teacher.states()[0]["seq"], flush=True)

    # The end: every student is told.
    proc.send_signal(signal.SIGINT)
    everyone = students + [driver]
    await asyncio.gather(*(s.wait("the end", lambda c: c.closed is not None) for s in everyone))
    for s in everyone:
        check(s.messages[-1]["type"] == "ended" and s.closed == 1001, "at the end: %s %s" % (s.messages[-1], s.closed))
    code = await asyncio.wait_for(proc.wait(), 20)
    rest = await proc.stdout.read()
    check(code == 0, "headsplit lesson exited %d" % code)
    check(rest == b"", "more than two lines on stdout: %r" % rest[:200])
    print("lesson_test: SIGINT told %d students the lesson ended; exit 0" % len(everyone), flush=True)


async def check_posts(post_check, site):
    """The server driven from another thread (tests/lesson_post_check.cpp): each line given to
    its stdin is a teacher message posted through the server's queue; at the end of stdin it
    stops the server while four threads keep posting."""
    proc = await asyncio.create_subprocess_exec(post_check, site, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE)
    try:
        port = int((await asyncio.wait_for(proc.stdout.readline(), 20)).split()[1])
        query = (await asyncio.wait_for(proc.stdout.readline(), 20)).decode().split()[1]
        url = "ws://127.0.0.1:%d/lesson?%s" % (port, query)
        students = await asyncio.gather(*(connect(url) for _ in range(20)))
        await asyncio.gather(*(s.wait("the first state", lambda c: c.states()) for s in students))
        for k in range(1, 11):
            proc.stdin.write(b'{"type":"set","query":"step=%d"}\n' % k)
        proc.stdin.write(b'{"type":"set","query":"a b"}\n')  # refused: changes nothing
        await proc.stdin.drain()
        await asyncio.gather(*(s.wait("10 posted changes", lambda c: c.states()[-1]["seq"] >= 10) for s in students))
        for s in students:
            check([(m["seq"], m["query"]) for m in s.states()[1:11]] == [(k, "step=%d" % k) for k in range(1, 11)],
                  "posted changes: %s" % s.states()[1:3])
        proc.stdin.close()
        await asyncio.gather(*(s.wait("the end", lambda c: c.closed is not None) for s in students))
        check(all(s.messages[-1]["type"] == "ended" and s.closed == 1001 for s in students), "the end after posts")
        said = (await asyncio.wait_for(proc.stdout.read(), 20)).decode()
        code = await asyncio.wait_for(proc.wait(), 20)
        check(code == 0 and "posted 11 lines" in said, "lesson_post_check exited %d: %s" % (code, said))
        return said.strip()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()


async def connect_from(address, url, **kw):
    """A WebSocket whose connection comes from `address` (any of 127.0.0.0/8 on Linux)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind((address, 0))
    port = urllib.parse.urlsplit(url).port
    await asyncio.get_running_loop().run_in_executor(None, sock.connect, ("127.0.0.1", port))
    return await connect(url, sock=sock, **kw)


async def refused_with(what, client, reason, code):
    await client.wait(what, lambda c: c.closed is not None, 10)
    got = client.last("refused") or {}
    check(got.get("reason") == reason and client.closed == code and got.get("message"),
          "%s: got %s, closed %s" % (what, client.messages, client.closed))
    return got


async def check_guards(headsplit, site):
    """The seats, the origin and the wrong codes of one address (lesson/guard.hpp)."""
    proc = await asyncio.create_subprocess_exec(
        headsplit, "lesson", "--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site,
        "--max-students", "100", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        port, teacher_query, student_query = await read_urls(proc)
        base = "ws://127.0.0.1:%d/lesson?" % port
        teacher = await connect(base + teacher_query)
        await teacher.wait("the teacher's stats", lambda c: c.last("stats"))
        # The default seats per address: 60 from one address, then refused; another joins.
        seated = await asyncio.gather(*(connect_from("127.0.0.2", base + student_query) for _ in range(60)))
        await asyncio.gather(*(c.wait("a seat", lambda c: c.states()) for c in seated))
        extra = await connect_from("127.0.0.2", base + student_query)
        said = await refused_with("the 61st from one address", extra, "address_full", 1013)
        check("60 students from 127.0.0.2" in said["message"] and "--seats-per-address" in said["message"],
              "the seats' refusal: %s" % said["message"])
        other = await connect_from("127.0.0.3", base + student_query)
        await other.wait("another address's seat", lambda c: c.states())
        await seated[0].ws.close()
        await teacher.wait("a seat given back", lambda c: stats_of(c).get("connected") == 60)
        again = await connect_from("127.0.0.2", base + student_query)
        await again.wait("the seat given back, taken", lambda c: c.states())
        # A page from another origin; the page's own origin.
        foreign = await connect(base + student_query, origin="http://evil.example")
        said = await refused_with("another origin", foreign, "origin", 1008)
        check("http://evil.example" in said["message"] and "127.0.0.1:%d" % port in said["message"],
              "the origin's refusal: %s" % said["message"])
        own = await connect_from("127.0.0.4", base + student_query, origin="http://127.0.0.1:%d" % port)
        await own.wait("the page's own origin", lambda c: c.states())
        # Wrong codes from one address until it is locked; then its right code waits too.
        t0 = time.monotonic()
        wrong = 0
        while True:
            c = await connect_from("127.0.0.5", base + "lesson=ZZZZZZ")
            await c.wait("a wrong code's answer", lambda c: c.closed is not None, 10)
            if c.last("refused")["reason"] == "too_many_tries":
                break
            wrong += 1
            check(wrong <= 40, "40 wrong codes from one address and none refused as too many")
        took = time.monotonic() - t0
        locked = await connect_from("127.0.0.5", base + student_query)
        said = await refused_with("the right code from a locked address", locked, "too_many_tries", 1008)
        check(0 < said.get("retry_after", 0) <= 3 and "127.0.0.5" in said["message"], "the lock's refusal: %s" % said)
        check(wrong >= 20, "only %d wrong codes before the lock" % wrong)
        free = await connect_from("127.0.0.6", base + student_query)
        await free.wait("another address during the lock", lambda c: c.states())
        # Floods of frames that carry no message: pings (answered by libwebsockets, never
        # seen by the lesson but in its bytes) and empty continuation frames, each masked as
        # a client's must be. Each is cut within a second or two (pings were answered forever).
        ping, empty = bytes([0x89, 0x80, 1, 2, 3, 4]), bytes([0x00, 0x80, 1, 2, 3, 4])
        loop = asyncio.get_running_loop()
        for source, frame, first in (("127.0.0.7", ping, b""), ("127.0.0.8", empty, bytes([0x01, 0x81, 0, 0, 0, 0]) + b"{")):
            lasted = await loop.run_in_executor(None, flood_frames, port, student_query, source, first, frame, 8)
            check(lasted is not None and lasted < 4, "a flood from %s lasted %s s" % (source, lasted))
        want = {"address_full": 1, "origin": 1, "too_many_tries": 2, "wrong_code": wrong, "rate_limited": 2}
        await teacher.wait("the guards' refusals counted",
                           lambda c: all(stats_of(c).get("refused", {}).get(k) == v for k, v in want.items()))
        for c in seated + [other, again, own, free, teacher]:
            c.task.cancel()
            c.ws.transport.abort()
        return ("an address's 61st student refused, another address seated; another origin refused; %d wrong codes "
                "in %.2f s, then the address locked, its right code too; a ping flood and an empty-frame flood cut"
                % (wrong, took))
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


def check_command_line(headsplit, site):
    """The refusals of the command line: one line on stderr, a non-zero exit, nothing on stdout."""
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    busy = holder.getsockname()[1]
    cases = [
        (["--no-window", "--bind", "127.0.0.1", "--port", str(busy), "--site", site], "port is in use"),
        (["--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site + "/nowhere"], "--site"),
        (["--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site + "/app.js"], "--site"),
        (["--no-window", "--bind", "127.0.0.1", "--port", "0", "--site", site + "/sub"], "index.html"),
        (["--no-window", "--bind", "no.such.address", "--port", "0", "--site", site], "--bind"),
        (["--no-window", "--bind", "192.0.2.1", "--port", "0", "--site", site], "not an address of this machine"),
        (["--no-window", "--port", "70000", "--site", site], "--port"),
        (["--no-window", "--port", "0", "--max-students", "0", "--site", site], "--max-students"),
        (["--no-window", "--port", "0", "--seats-per-address", "0", "--site", site], "--seats-per-address"),
        (["--bind", "127.0.0.1", "--port", "0", "--site", site], "--no-window"),
        # A link-local address needs its interface: not a port's fault (it advised another port).
        (["--no-window", "--bind", "fe80::1", "--port", "0", "--site", site], "a link-local address (fe80::/10)"),
        (["--no-window", "--bind", "FE80::abcd", "--port", "8080", "--site", site], "a link-local address (fe80::/10)"),
        # A display that cannot be opened: refused before the lesson's addresses are printed.
        (["--bind", "127.0.0.1", "--port", "0", "--site", site], "cannot open the teacher window", {"DISPLAY": ":12345"}),
    ]
    # No display: the teacher window cannot open, and --no-window is named.
    quiet = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY")}
    for args, words, *env in cases:
        r = subprocess.run([headsplit, "lesson"] + args, capture_output=True, text=True, timeout=20,
                           env=dict(quiet, **env[0]) if env else quiet)
        lines = r.stderr.strip().split("\n")
        check(r.returncode != 0 and len(lines) == 1 and words in lines[0] and r.stdout == "",
              "headsplit lesson %s: exit %d, stderr %r" % (" ".join(args), r.returncode, r.stderr))
    holder.close()
    return len(cases)


def main():
    if len(sys.argv) != 3:
        print("usage: lesson_test.py HEADSPLIT LESSON_POST_CHECK")
        sys.exit(2)
    headsplit, post_check = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="headsplit-lesson-") as base:
        try:
            asyncio.run(run(headsplit, base))
            posts = asyncio.run(check_posts(post_check, os.path.join(base, "site")))
            print("lesson_test: posted from another thread, 20 students got 10 changes in order; " + posts, flush=True)
            guards = asyncio.run(check_guards(headsplit, os.path.join(base, "site")))
            print("lesson_test: " + guards, flush=True)
            refused = check_command_line(headsplit, os.path.join(base, "site"))
        except Failed as e:
            print("lesson_test: FAIL: %s" % e, flush=True)
            sys.exit(1)
        print("lesson_test: %d bad command lines refused in one line each" % refused)
    print("all lesson checks passed")


if __name__ == "__main__":
    main()
