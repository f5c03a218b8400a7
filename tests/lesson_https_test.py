#!/usr/bin/python3
"""The live lesson over HTTPS (issue 44's --https), over loopback, with HOME and XDG_DATA_HOME in
a temporary folder: `headsplit lesson --no-window --https --bind 127.0.0.1 --port 0 --site SITE`

  - prints https:// addresses and the certificate's path and SHA-256 fingerprint; the
    certificate is in XDG_DATA_HOME/headsplit, its key readable by its owner only;
  - serves the page over TLS with that very certificate (verified with it as the only trust
    anchor, its fingerprint the printed one), with the COOP and COEP headers;
  - a student joins /lesson over wss:// and gets the state; the teacher's change reaches it;
  - a second start keeps the certificate (same fingerprint); a damaged one is replaced and
    said so; a data folder that cannot be written is refused in one line naming it.

With SITE (the page, make web), headless Chromium (--ignore-certificate-errors, as a student
who accepted the certificate) opens the student address at a host that is not loopback: the
page is cross-origin isolated and runs the threaded build (app.js), and it follows the lesson.

Every wait has a timeout. Usage: lesson_https_test.py HEADSPLIT [SITE]
"""
import asyncio
import hashlib
import http.client
import json
import os
import signal
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import urllib.parse

import lesson_page_test  # the DevTools tab helpers
from lesson_test import Failed, check, connect, make_site

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools", "web"))
import page_probe  # noqa: E402  (the browser and its DevTools client)


def environment(base):
    env = dict(os.environ)
    env["HOME"] = os.path.join(base, "home")
    env["XDG_DATA_HOME"] = os.path.join(base, "data")
    os.makedirs(env["HOME"], exist_ok=True)
    return env


async def start(headsplit, site, env):
    """Starts the lesson; returns (process, {"teacher": url, "student": url, "certificate": line})."""
    proc = await asyncio.create_subprocess_exec(
        headsplit, "lesson", "--no-window", "--https", "--bind", "127.0.0.1", "--port", "0", "--site", site,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env)
    said = {}
    for _ in range(3):
        line = (await asyncio.wait_for(proc.stdout.readline(), 30)).decode().rstrip("\n")
        if not line:
            err = (await asyncio.wait_for(proc.stderr.read(), 10)).decode()
            raise Failed("headsplit lesson --https ended early: " + err.strip())
        name, _, value = line.partition(": ")
        said[name] = value
    check(set(said) == {"teacher", "student", "certificate"}, "it printed " + json.dumps(said))
    for who in ("teacher", "student"):
        check(said[who].startswith("https://127.0.0.1:"), f"the {who} address is {said[who]}")
    return proc, said


async def stop(proc):
    if proc.returncode is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        code = await asyncio.wait_for(proc.wait(), 30)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()
        raise Failed("the lesson did not end within 30 s of SIGINT")
    check(code == 0, f"the lesson exited {code} on SIGINT")


def certificate_of(said, env):
    """(path, fingerprint) from the printed line; checks where it is and the key's mode."""
    path, _, rest = said["certificate"].partition(" SHA-256 ")
    fingerprint = rest.split(" ", 1)[0]
    folder = os.path.join(env["XDG_DATA_HOME"], "headsplit")
    check(os.path.dirname(path) == folder, f"the certificate is at {path}, not in {folder}")
    key = os.path.join(folder, "lesson-https-key.pem")
    mode = stat.S_IMODE(os.stat(key).st_mode)
    check(mode == 0o600, f"the key file's mode is {mode:o}")
    return path, fingerprint


def get_page(port, context):
    """GET / over TLS: (status, headers, body, the server's certificate as DER)."""
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=20)
    try:
        conn.request("GET", "/")
        reply = conn.getresponse()
        der = conn.sock.getpeercert(binary_form=True)
        return reply.status, {k.lower(): v for k, v in reply.getheaders()}, reply.read(), der
    finally:
        conn.close()


async def served(said, cert_path, fingerprint):
    """The page over TLS with the printed certificate, and a student over wss://."""
    student = urllib.parse.urlsplit(said["student"])
    teacher = urllib.parse.urlsplit(said["teacher"])
    context = ssl.create_default_context(cafile=cert_path)  # it, and only it, is trusted
    try:
        status, headers, body, der = await asyncio.to_thread(get_page, student.port, context)
    except (ssl.SSLError, OSError) as e:
        raise Failed(f"no HTTPS at {said['student']} with the printed certificate: {e}")
    check(status == 200 and b"the page" in body, f"GET / over HTTPS gave {status}")
    check(headers.get("cross-origin-opener-policy") == "same-origin", "COOP: " + json.dumps(headers))
    check(headers.get("cross-origin-embedder-policy") == "require-corp", "COEP: " + json.dumps(headers))
    served_print = ":".join("%02X" % b for b in hashlib.sha256(der).digest())
    check(served_print == fingerprint, f"the server's certificate is {served_print}, the printed one {fingerprint}")

    pupil = await connect(f"wss://127.0.0.1:{student.port}/lesson?{student.query}", ssl=context)
    await pupil.wait("the state over wss://", lambda c: c.states())
    lead = await connect(f"wss://127.0.0.1:{teacher.port}/lesson?{teacher.query}", ssl=context)
    await lead.wait("the teacher's state", lambda c: c.states())
    await lead.send({"type": "set", "query": "text=the%20cat%20sat&heads=2&step=4"})
    await pupil.wait("the teacher's change", lambda c: "step=4" in c.states()[-1]["query"])
    for c in (pupil, lead):
        await c.ws.close()


async def check_server(headsplit, base):
    site = make_site(base)
    env = environment(base)
    proc, said = await start(headsplit, site, env)
    try:
        cert_path, fingerprint = certificate_of(said, env)
        check(said["certificate"].endswith("(made now)"), "a first start says " + said["certificate"])
        await served(said, cert_path, fingerprint)
    finally:
        await stop(proc)

    # Kept: the same certificate the next time.
    proc, said = await start(headsplit, site, env)
    try:
        again_path, again = certificate_of(said, env)
        check(again == fingerprint and "kept" in said["certificate"], "a second start says " + said["certificate"])
    finally:
        await stop(proc)

    # Damaged: replaced, said so, and served.
    with open(cert_path, "r+b") as f:
        f.truncate(100)
    proc, said = await start(headsplit, site, env)
    try:
        new_path, new = certificate_of(said, env)
        check(new != fingerprint and "no PEM certificate" in said["certificate"], "after damage: " + said["certificate"])
        await served(said, new_path, new)
    finally:
        await stop(proc)

    # A data folder that cannot be written: one line naming it and what to do.
    blocked = dict(env, XDG_DATA_HOME=os.path.join(base, "a-file"))
    with open(blocked["XDG_DATA_HOME"], "w") as f:
        f.write("not a folder\n")
    run = subprocess.run([headsplit, "lesson", "--no-window", "--https", "--bind", "127.0.0.1", "--port", "0",
                          "--site", site], env=blocked, capture_output=True, text=True, timeout=30)
    err = run.stderr.strip()
    check(run.returncode != 0 and "\n" not in err and blocked["XDG_DATA_HOME"] in err and "set XDG_DATA_HOME" in err,
          f"an unwritable data folder gave {run.returncode}: {err!r}")
    # A control character in the data folder's name reaches the terminal escaped.
    odd = dict(env, XDG_DATA_HOME=os.path.join(base, "data\x1b]0;owned\x07"))
    proc, said = await start(headsplit, site, odd)
    try:
        line = said["certificate"]
        check("\x1b" not in line and "\x07" not in line and "data\\x1b]0;owned\\x07/headsplit" in line,
              "a data folder with ESC and BEL in its name: certificate: %r" % line)
    finally:
        await stop(proc)
    print("https: page, headers, wss, kept, replaced and refused: as expected")


async def check_page(headsplit, site, base):
    """A student's page over HTTPS at a host that is not loopback: threaded and isolated."""
    env = environment(base)
    proc, said = await start(headsplit, site, env)
    browser = None
    page = None
    try:
        os.environ["PROBE_HOST_RULES"] = "MAP lan.test 127.0.0.1"
        profile = tempfile.mkdtemp(prefix="headsplit-https-chromium-", dir=base)
        browser, dev_port = page_probe.start_chromium(os.path.join(profile, "browser"), open(os.path.join(base, "chromium.log"), "w"),
                                                      ["--ignore-certificate-errors"])
        url = said["student"].replace("//127.0.0.1:", "//lan.test:")
        page = await lesson_page_test.open_page(dev_port, "the https student", url)
        await page.wait("the lesson followed", "document.body.dataset.lesson === 'following' && "
                                               "document.body.dataset.settled !== undefined")
        check(await page.eval("location.protocol") == "https:", "the page is at " + await page.eval("location.href"))
        check(await page.eval("window.crossOriginIsolated") is True, "the https page is not cross-origin isolated")
        # Isolated by the server's own headers: the page's service worker (which adds them where a
        # host does not) was never needed.
        res = await page.dt.send("Runtime.evaluate", {"expression": "navigator.serviceWorker.getRegistrations().then(r => r.length)",
                                                      "awaitPromise": True, "returnByValue": True})
        workers = res.get("result", {}).get("value")
        check(workers == 0, f"the https page needed its service worker for its headers ({workers} registered)")
        build = await page.eval("document.body.dataset.build")
        check(build == "app", f"the https page runs {build}, not the threaded app")
        scripts = await page.eval("Array.from(document.scripts).map(s => s.src.split('/').pop()).filter(n => n).join(' ')")
        check("app.js" in scripts.split() and "app-single.js" not in scripts.split(), "the page loaded " + scripts)
        bad = [c for c in page.dt.console if c.startswith("exception")]
        check(not bad, f"the https page threw: {bad}")
        print(f"https page: crossOriginIsolated, build {build}, scripts {scripts}, following the lesson")
    finally:
        if page:
            page.dt.reader.cancel()
            await page.ws.close()
        if browser:
            browser.kill()
            browser.wait(timeout=10)
        await stop(proc)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: lesson_https_test.py HEADSPLIT [SITE]")
    start_time = time.monotonic()
    base = tempfile.mkdtemp(prefix="headsplit-lesson-https-")
    try:
        if len(sys.argv) == 2:
            asyncio.run(asyncio.wait_for(check_server(sys.argv[1], base), 150))
        else:
            asyncio.run(asyncio.wait_for(check_page(sys.argv[1], sys.argv[2], base), 150))
    except (Failed, lesson_page_test.Failed) as e:
        sys.exit("FAIL: " + str(e))
    finally:
        lesson_page_test.remove_folder(base)
    print("lesson_https: passed in %.0f s" % (time.monotonic() - start_time))


if __name__ == "__main__":
    main()
