// Drives headless Chromium through the DevTools protocol for the page's tests: loads each
// address, waits until the page has settled (its body's data-settled, set after three
// frames with the trace in) or refused (#refusal shown), then saves what was asked: the
// element texts (the trace JSON, the layout report, the refusal), a screenshot, the time
// to the first frame. Node's own WebSocket (node --experimental-websocket); no npm package.
//
// usage: node --experimental-websocket page_probe.mjs JOBS.json RESULTS.json
//   JOBS.json: [{"url": ..., "width": 1366, "height": 768, "screenshot": "a.png",
//                "texts": {"trace-json": "t.json"}, "timeout": 60}, ...]
//   A job may also act on the settled page, in order ("actions"): {"key": "ArrowRight"} (also
//   "Ctrl+A", "F12", "Enter", a letter), {"type": "text"}, {"paste": "text"} (a paste event
//   carrying it), {"click": "label"} (the centre of that label in the page's layout report:
//   the address needs layout-report=1), {"wait": ms}, {"tap": "PageDown"} (down and up at
//   once, as a presentation clicker sends them); "downloads": a folder where the
//   browser saves what the page downloads.
//   RESULTS.json: [{"url", "settled", "refusal", "first_frame_ms", "trace_shown_ms" (the first
//                   frame with a computed trace), "compute_ms", "steps_ms",
//                   "longest_busy_frame_ms", "frames_settled" and "frames" (frames drawn when it
//                   settled and after the actions), "address", "console", "error"}, ...]
//   The texts are read after the actions. Debugging: PROBE_DEBUG=1 prints each poll and keeps
//   the page's console lines; KEYLOG=1 adds a #keylog element listing the key, mouse, focus
//   and paste events the page received (name it in "texts" to save it).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [jobsPath, resultsPath] = process.argv.slice(2);
const jobs = JSON.parse(readFileSync(jobsPath, "utf8"));
const profile = mkdtempSync(join(tmpdir(), "headsplit-chromium-"));
const chromium = spawn(process.env.CHROMIUM || "chromium", [
  "--headless=new", "--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
  "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
  "--disable-quic", "--disable-dev-shm-usage", "--remote-debugging-port=0", `--user-data-dir=${profile}`,
  "--window-size=1366,768", "about:blank"], { stdio: ["ignore", "ignore", "pipe"] });

const KEYS = { ArrowRight: 39, ArrowLeft: 37, ArrowUp: 38, ArrowDown: 40, Enter: 13, Escape: 27, Home: 36, End: 35,
  Backspace: 8, Tab: 9, F5: 116, F11: 122, F12: 123, " ": 32, PageDown: 34, PageUp: 33 };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const port = await new Promise((resolve, reject) => {
  let err = "";
  const timer = setTimeout(() => reject(new Error("chromium did not start: " + err.slice(-500))), 30000);
  chromium.stderr.on("data", (d) => {
    err += d;
    const m = /DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(err);
    if (m) { clearTimeout(timer); resolve(m[1]); }
  });
  chromium.on("exit", (code) => reject(new Error(`chromium exited (${code}): ` + err.slice(-500))));
});

const targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json();
const page = targets.find((t) => t.type === "page");
const ws = new WebSocket(page.webSocketDebuggerUrl);
await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
let nextId = 1;
const pending = new Map();
const consoleLines = [];  // the page's errors, for a job's result
ws.onmessage = (ev) => {
  const msg = JSON.parse(ev.data);
  if (msg.method === "Runtime.exceptionThrown") consoleLines.push("exception: " + msg.params.exceptionDetails.text + " " +
    ((msg.params.exceptionDetails.exception || {}).description || ""));
  if (msg.method === "Runtime.consoleAPICalled" && (msg.params.type === "error" || msg.params.type === "warning" || process.env.PROBE_DEBUG))
    consoleLines.push(msg.params.type + ": " + msg.params.args.map((a) => a.value ?? a.description ?? "").join(" "));
  if (msg.id && pending.has(msg.id)) {
    const { resolve, reject } = pending.get(msg.id);
    pending.delete(msg.id);
    msg.error ? reject(new Error(msg.error.message)) : resolve(msg.result);
  }
};
const send = (method, params = {}) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, { resolve, reject });
  ws.send(JSON.stringify({ id, method, params }));
});
const evaluate = async (expr) => (await send("Runtime.evaluate", { expression: expr, returnByValue: true })).result.value;

async function key(name) {
  const parts = name.split("+");
  const k = parts.pop();
  const modifiers = parts.includes("Ctrl") ? 2 : 0 | (parts.includes("Shift") ? 8 : 0);
  const code = KEYS[k] || k.toUpperCase().charCodeAt(0);
  const text = k.length === 1 && !modifiers ? k : undefined;
  const common = { key: k, windowsVirtualKeyCode: code, nativeVirtualKeyCode: code, modifiers };
  if (modifiers & 2) await send("Input.dispatchKeyEvent", { type: "rawKeyDown", key: "Control", windowsVirtualKeyCode: 17, modifiers: 2 });
  await send("Input.dispatchKeyEvent", { type: text ? "keyDown" : "rawKeyDown", text, ...common });
  await sleep(150);  // a frame sees the key down (ImGui 1.86 reads the keys' state once a frame)
  await send("Input.dispatchKeyEvent", { type: "keyUp", ...common });
  if (modifiers & 2) await send("Input.dispatchKeyEvent", { type: "keyUp", key: "Control", windowsVirtualKeyCode: 17 });
  await sleep(60);
}

// A tap: down and up at once, as a presentation clicker or a quick finger sends them.
async function tap(name) {
  const code = KEYS[name] || name.toUpperCase().charCodeAt(0);
  const common = { key: name, windowsVirtualKeyCode: code, nativeVirtualKeyCode: code };
  await send("Input.dispatchKeyEvent", { type: "rawKeyDown", ...common });
  await send("Input.dispatchKeyEvent", { type: "keyUp", ...common });
  await sleep(20);
}

async function perform(act) {
  if (act.key) return key(act.key);
  if (act.tap) return tap(act.tap);
  if (act.type) { for (const ch of act.type) await key(ch); return; }
  if (act.wait) return sleep(act.wait);
  if (act.paste !== undefined) {
    // A paste event carrying the text, as the browser fires on Ctrl+V or its menu's Paste (the
    // protocol's own Ctrl+V runs the browser's paste command and drops the keys' events).
    await evaluate(`(() => { const d = new DataTransfer(); d.setData("text/plain", ${JSON.stringify(act.paste)});
      window.dispatchEvent(new ClipboardEvent("paste", { clipboardData: d })); })()`);
    return sleep(100);
  }
  if (act.click) {
    const report = JSON.parse(await evaluate(`(document.getElementById("layout-report") || {}).textContent || "{}"`));
    // The controls panel scrolls and is not one the audit clips: its items count as shown.
    const item = (report.items || []).find((i) => i.text === act.click && (i.visible !== false || i.panel === ""));
    if (!item) throw new Error(`no "${act.click}" on screen in the page's layout report`);
    const x = item.x + item.w / 2, y = item.y + item.h / 2;
    await send("Input.dispatchMouseEvent", { type: "mouseMoved", x, y });
    await sleep(150);  // as with keys: a frame sees the button down before it is let go
    await send("Input.dispatchMouseEvent", { type: "mousePressed", x, y, button: "left", clickCount: 1 });
    await sleep(150);
    await send("Input.dispatchMouseEvent", { type: "mouseReleased", x, y, button: "left", clickCount: 1 });
    return sleep(100);
  }
  throw new Error("unknown action " + JSON.stringify(act));
}

await send("Page.enable");
await send("Runtime.enable");
const results = [];
for (const job of jobs) {
  const result = { url: job.url };
  consoleLines.length = 0;
  try {
    await send("Emulation.setDeviceMetricsOverride",
      { width: job.width || 1366, height: job.height || 768, deviceScaleFactor: job.scale || 1, mobile: false });
    await send("Page.navigate", { url: "about:blank" });
    await send("Page.navigate", { url: job.url });
    const deadline = Date.now() + 1000 * (job.timeout || 60);
    let state = null;
    while (Date.now() < deadline) {
      state = await evaluate(`(() => { const r = document.getElementById("refusal"), d = document.body ? document.body.dataset : {};
        return { settled: d.settled === undefined ? null : d.settled, refusal: r && !r.hidden ? r.textContent : null,
                 first: d.firstFrame === undefined ? null : d.firstFrame }; })()`).catch(() => null);
      if (process.env.PROBE_DEBUG) console.error(JSON.stringify(state));
      if (state && (state.settled !== null || state.refusal !== null)) break;
      await sleep(100);
    }
    if (!state || (state.settled === null && state.refusal === null)) throw new Error("timed out");
    result.settled = state.settled === null ? null : Number(state.settled);
    result.refusal = state.refusal;
    result.first_frame_ms = state.first === null ? null : Number(state.first);
    result.trace_shown_ms = Number(await evaluate("document.body.dataset.traceShown || 'NaN'"));
    result.frames_settled = Number(await evaluate("document.body.dataset.framesDrawn || 'NaN'"));
    if (job.downloads)
      await send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: job.downloads, eventsEnabled: false });
    if (process.env.KEYLOG) await evaluate(`(() => { const p = document.createElement("pre"); p.id = "keylog"; document.body.appendChild(p);
      for (const t of ["keydown", "keyup", "keypress", "blur", "focus", "paste", "mousedown", "mouseup"]) window.addEventListener(t, (e) => { p.textContent += t + " " + (e.key || "") + " " + (e.keyCode || "") + " " + (e.target && e.target.id) + " " + (e.clientX || "") + "," + (e.clientY || "") + "\\n"; }, true); })()`);
    for (const act of job.actions || []) await perform(act);
    for (const [id, file] of Object.entries(job.texts || {})) {
      const text = await evaluate(`(() => { const e = document.getElementById(${JSON.stringify(id)}); return e ? e.textContent : null; })()`);
      if (text === null) throw new Error(`no #${id} in the page`);
      writeFileSync(file, text);
    }
    if (job.address) result.address = await evaluate("location.search");
    result.compute_ms = Number(await evaluate("document.body.dataset.computeMs || 'NaN'"));
    result.steps_ms = Number(await evaluate("document.body.dataset.stepsMs || 'NaN'"));
    result.step_ms = await evaluate("document.body.dataset.stepMs || ''");
    result.longest_busy_frame_ms = Number(await evaluate("document.body.dataset.longestBusyFrameMs || 'NaN'"));
    result.frames = Number(await evaluate("document.body.dataset.framesDrawn || 'NaN'"));
    if (job.screenshot) {
      await sleep(200);  // a few more frames: the settled frame is on the canvas
      const shot = await send("Page.captureScreenshot", { format: "png" });
      writeFileSync(job.screenshot, Buffer.from(shot.data, "base64"));
    }
  } catch (e) {
    result.error = String(e.message || e);
  }
  if (consoleLines.length) result.console = consoleLines.slice(0, 20);
  results.push(result);
}
writeFileSync(resultsPath, JSON.stringify(results, null, 1));
ws.close();
// Chromium may still be writing its profile as it exits: wait for it (up to 5 s), then remove
// the profile with retries; a profile left in /tmp must not fail a probe whose results are in.
const exited = new Promise((r) => chromium.once("exit", r));
chromium.kill();
await Promise.race([exited, sleep(5000)]);
try {
  rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
} catch (e) {
  console.error(`note: could not remove the browser profile ${profile}: ${e.message}`);
}
process.exit(0);
