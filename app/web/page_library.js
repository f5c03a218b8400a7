// The page's JavaScript side (emcc --js-library): the address, the page's text, downloads.
// Each function is declared extern "C" in web/page.cpp; strings cross as UTF-8 pointers.
mergeInto(LibraryManager.library, {
  // The address's query as the browser holds it (percent-encoded, with its "?"), malloc'd (the
  // caller frees it); the engine's parse_query decodes it as the command line reads arguments.
  headsplit_page_query: function () {
    var q = location.search;
    var n = lengthBytesUTF8(q) + 1;
    var out = _malloc(n);
    stringToUTF8(q, out, n);
    return out;
  },

  // Replaces the address's query without a new history entry: pairs as JSON, names and
  // values percent-encoded ("" makes a bare flag).
  headsplit_page_set_query: function (pairsJson) {
    var pairs = JSON.parse(UTF8ToString(pairsJson));
    var q = pairs.map(function (p) {
      return encodeURIComponent(p[0]) + (p[1] === "" ? "" : "=" + encodeURIComponent(p[1]));
    }).join("&");
    var url = location.pathname + (q ? "?" + q : "") + location.hash;
    if (url !== location.pathname + location.search + location.hash) history.replaceState(null, "", url);
  },

  // The text of the element with this id: a hidden <pre> at the end of the body when absent.
  headsplit_page_set_text: function (id, text) {
    var name = UTF8ToString(id);
    var el = document.getElementById(name);
    if (!el) {
      el = document.createElement("pre");
      el.id = name;
      document.body.appendChild(el);
    }
    el.textContent = UTF8ToString(text);
  },

  // A data- attribute of the body (what tests wait for): data-NAME="VALUE".
  headsplit_page_mark: function (name, value) {
    document.body.dataset[UTF8ToString(name)] = UTF8ToString(value);
  },

  // The refusal of a bad address value, in place of the window.
  headsplit_page_refuse: function (line) {
    var el = document.getElementById("refusal");
    el.textContent = UTF8ToString(line);
    el.hidden = false;
    document.getElementById("canvas").hidden = true;
    document.getElementById("status").hidden = true;
  },

  // Seconds since the user's last act on the page (index.html's listeners); a day before any.
  headsplit_page_since_input: function () {
    return Module.lastInput === undefined ? 86400 : (performance.now() - Module.lastInput) / 1000;
  },

  // ImGui copies (Ctrl+C in a text box): to the system's clipboard where the browser allows it.
  headsplit_page_copy: function (text) {
    if (navigator.clipboard) navigator.clipboard.writeText(UTF8ToString(text)).catch(function () {});
  },

  // The files at `pathsJson` (a JSON list of paths in the page's memory file system) offered as
  // one download, a zip named `name` holding each under its own name: one download, where
  // several would each ask the browser's leave. Stored (no compression: a few kB of text), with
  // each file's CRC-32 as the format asks, so any unzip checks them.
  headsplit_page_download_zip: function (pathsJson, nameC) {
    var crcTable = [];
    for (var n = 0; n < 256; n++) {
      var c = n;
      for (var k = 0; k < 8; k++) c = c & 1 ? 0xEDB88320 ^ (c >>> 1) : c >>> 1;
      crcTable.push(c >>> 0);
    }
    var crc32 = function (bytes) {
      var c = 0xFFFFFFFF;
      for (var i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]) & 0xFF] ^ (c >>> 8);
      return (c ^ 0xFFFFFFFF) >>> 0;
    };
    var now = new Date();
    var dosTime = (now.getHours() << 11) | (now.getMinutes() << 5) | (now.getSeconds() >> 1);
    var dosDate = ((now.getFullYear() - 1980) << 9) | ((now.getMonth() + 1) << 5) | now.getDate();
    var parts = [], central = [], offset = 0;
    // A zip header: 4-byte signature, then little-endian fields of 2 or 4 bytes.
    var header = function (signature, fields) {
      var size = 4 + fields.reduce(function (sum, f) { return sum + f[1]; }, 0);
      var view = new DataView(new ArrayBuffer(size));
      view.setUint32(0, signature, true);
      var at = 4;
      fields.forEach(function (f) {
        if (f[1] === 2) view.setUint16(at, f[0], true); else view.setUint32(at, f[0], true);
        at += f[1];
      });
      return new Uint8Array(view.buffer);
    };
    JSON.parse(UTF8ToString(pathsJson)).forEach(function (path) {
      var data = FS.readFile(path).slice();
      var name = new TextEncoder().encode(path.replace(/^.*\//, ""));
      var crc = crc32(data);
      // version 2.0, flags 0x800 (UTF-8 names), method 0 (stored), time, date, CRC, sizes, name length, extra length
      var common = [[20, 2], [0x800, 2], [0, 2], [dosTime, 2], [dosDate, 2], [crc, 4], [data.length, 4], [data.length, 4],
                    [name.length, 2], [0, 2]];
      var local = header(0x04034B50, common);
      parts.push(local, name, data);
      central.push(header(0x02014B50, [[20, 2]].concat(common, [[0, 2], [0, 2], [0, 2], [0, 4], [offset, 4]])), name);
      offset += local.length + name.length + data.length;
    });
    var centralSize = central.reduce(function (sum, p) { return sum + p.length; }, 0);
    var count = central.length / 2;
    var end = header(0x06054B50, [[0, 2], [0, 2], [count, 2], [count, 2], [centralSize, 4], [offset, 4], [0, 2]]);
    headsplitOffer(new Blob(parts.concat(central, [end]), {type: "application/zip"}), UTF8ToString(nameC));
  },
  headsplit_page_download_zip__deps: ["$headsplitOffer"],

  // The file at `path` (the page's memory file system) offered as a download named `name`.
  // A handout (a folder) goes as its index.html alone, its pictures inside it as data:
  // addresses, so one file opens and prints anywhere.
  headsplit_page_download: function (pathC, nameC, handout) {
    var path = UTF8ToString(pathC), name = UTF8ToString(nameC), blob;
    if (handout) {
      var b64 = function (bytes) {
        var s = "";
        for (var i = 0; i < bytes.length; i += 0x8000)
          s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
        return btoa(s);
      };
      var html = FS.readFile(path + "/index.html", {encoding: "utf8"}).replace(/src="([^"\/]+\.png)"/g,
        function (all, file) { return "src=\"data:image/png;base64," + b64(FS.readFile(path + "/" + file)) + "\""; });
      blob = new Blob([html], {type: "text/html"});
    } else {
      blob = new Blob([FS.readFile(path).slice()], {type: /\.png$/.test(name) ? "image/png" : "text/x-python"});
    }
    headsplitOffer(blob, name);
  },
  headsplit_page_download__deps: ["$headsplitOffer"],

  // The live lesson (web/page_lesson.hpp): the browser's own WebSocket to the server the page
  // came from (ws://, or wss:// for an https page), at /lesson with the address's code (and
  // the teacher's secret). A lost connection is tried again after 0.5 s, doubling to 8 s, and
  // catches up from the state the server sends on connecting; "full", "ended" and a refused
  // code end the tries, and the page goes on as a page of its own; so do another origin and an
  // address past its seats, in the server's own words. An address locked for its wrong codes
  // tries again when the server says a try is due.
  // A page that is left (pagehide: another page opened in the tab, or the tab closed) closes
  // its connection, giving back its seat: the browser may keep a left page whole, connection
  // and all, to show it again on "back". Shown again (pageshow), it connects again.
  // What it shows (#lesson, over the canvas): the mark (following, exploring, paused, ...),
  // "explore on my own" / "back to the teacher", the question and its answers; the body's
  // data-lesson holds the mark's word, for tests.
  headsplit_lesson_start: function (codeC, secretC, adopt) {
    var L = headsplitLesson;
    L.code = UTF8ToString(codeC);
    L.secret = UTF8ToString(secretC);
    L.teacher = L.secret !== "";
    L.adopt = !!adopt;
    window.addEventListener("pagehide", L.leave);
    window.addEventListener("pageshow", L.back);
    L.connect();
  },
  headsplit_lesson_start__deps: ["$headsplitLesson"],

  // The teacher's page: its view as a query, every frame; sent when it changed, at most every
  // 0.15 s (the newest then), once the lesson's state is in.
  headsplit_lesson_teach: function (queryC) {
    headsplitLesson.teach(UTF8ToString(queryC));
  },
  headsplit_lesson_teach__deps: ["$headsplitLesson"],

  // The teacher's page: a message of the lesson's protocol (the question's ask, reveal and
  // close_question, web/page_lesson.cpp), sent in order once connected.
  headsplit_lesson_post: function (jsonC) {
    headsplitLesson.post(UTF8ToString(jsonC));
  },
  headsplit_lesson_post__deps: ["$headsplitLesson"],

  // Whether the teacher's lock holds this student's page: following, connected, exploring
  // locked. The page then drops its own stepping and changing input.
  headsplit_lesson_held: function () {
    var L = headsplitLesson;
    return !L.teacher && !L.exploring && !L.done && L.ws && L.ws.readyState === 1 && L.state && L.state.locked ? 1 : 0;
  },
  headsplit_lesson_held__deps: ["$headsplitLesson"],

  // The page dropped the student's own input under the lock: the mark says so for a while.
  headsplit_lesson_ignored: function () {
    var L = headsplitLesson;
    L.ignored++;
    document.body.dataset.lessonIgnored = String(L.ignored);
    clearTimeout(L.ignoredTimer);
    L.ignoredTimer = setTimeout(function () { L.ignoredTimer = 0; L.render(); }, 3000);
    L.render();
  },
  headsplit_lesson_ignored__deps: ["$headsplitLesson"],

  // A state whose query the page refused: said in the mark, the page left as it was.
  headsplit_lesson_refused: function (lineC) {
    headsplitLesson.problem = UTF8ToString(lineC);
    headsplitLesson.render();
  },
  headsplit_lesson_refused__deps: ["$headsplitLesson"],

  $headsplitLesson: {
    ws: null, backoff: 0.5, state: null, stats: null, exploring: false, done: "", problem: "",
    applied: null, choice: null, own: null, sent: null, sendTimer: 0, lastSend: 0, tries: 0,
    outbox: [], ignored: 0, ignoredTimer: 0, away: false, retryTimer: 0, retryAfter: 0, said: "",

    connect: function () {
      var L = headsplitLesson;
      L.retryTimer = 0;
      if (L.away || L.ws || L.done) return;
      var query = "lesson=" + encodeURIComponent(L.code) + (L.teacher ? "&teacher=" + encodeURIComponent(L.secret) : "");
      var ws;
      try {
        ws = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/lesson?" + query);
      } catch (e) {
        L.done = "unreachable";
        L.render();
        return;
      }
      L.ws = ws;
      L.sent = null;  // a new connection: the teacher's view is sent again
      ws.onmessage = function (e) { L.receive(e.data); };
      ws.onclose = function () {
        if (L.ws !== ws) return;
        L.ws = null;
        if (L.done) return L.render();
        L.tries++;
        L.render();
        L.retryTimer = setTimeout(L.connect, Math.max(L.backoff, L.retryAfter) * 1000);
        L.backoff = Math.min(8, L.backoff * 2);
        L.retryAfter = 0;
      };
      L.render();
    },

    leave: function () {
      var L = headsplitLesson, ws = L.ws;
      L.away = true;
      clearTimeout(L.retryTimer);
      L.retryTimer = 0;
      L.ws = null;
      if (ws) ws.close(1000);
    },
    back: function () {
      var L = headsplitLesson;
      if (!L.away) return;
      L.away = false;
      L.backoff = 0.5;
      L.connect();
    },

    receive: function (text) {
      var L = headsplitLesson, msg;
      try { msg = JSON.parse(text); } catch (e) { return; }
      if (msg.type === "state") {
        L.said = "";
        L.backoff = 0.5;
        L.tries = 0;
        var first = L.state === null;
        L.state = msg;
        if (!msg.question || (L.choice && L.choice.id !== msg.question.id)) L.choice = null;
        if (msg.locked) L.exploring = false;
        if (L.teacher) {
          if (first && L.adopt && msg.query) {
            L.own = null;
            L.follow(msg.query);
          }
          while (L.outbox.length && L.ws && L.ws.readyState === 1) L.ws.send(L.outbox.shift());
          L.flush();
        } else if (!L.exploring) {
          L.follow(msg.query);
        }
      } else if (msg.type === "stats") {
        L.stats = msg;
      } else if (msg.type === "full" || msg.type === "ended") {
        L.done = msg.type;
      } else if (msg.type === "refused" && (msg.reason === "wrong_code" || msg.reason === "origin" || msg.reason === "address_full")) {
        L.done = "refused";
        L.said = msg.message || "";
      } else if (msg.type === "refused" && msg.reason === "too_many_tries") {
        L.retryAfter = Number(msg.retry_after) || 8;
        L.said = msg.message || "";
      } else if (msg.type === "refused") {
        console.warn("the lesson refused a message: " + msg.reason);
      }
      L.render();
    },

    // The state's query applied by the page (web/page_lesson.cpp), once per query: a state
    // that changed only the question or the class leaves the student's view alone.
    follow: function (query) {
      var L = headsplitLesson;
      if (query === L.applied) return;
      L.applied = query;
      L.problem = "";
      if (query) Module.ccall("headsplit_lesson_follow", null, ["string"], [query]);
    },

    send: function (msg) {
      var L = headsplitLesson;
      if (L.ws && L.ws.readyState === 1) L.ws.send(JSON.stringify(msg));
    },

    // The teacher's messages in order: held while the connection is down or its first state
    // has not come (the server's state is the teacher's to change from).
    post: function (text) {
      var L = headsplitLesson;
      if (!L.outbox.length && L.state && L.ws && L.ws.readyState === 1) L.ws.send(text);
      else L.outbox.push(text);
    },

    teach: function (query) {
      var L = headsplitLesson;
      L.own = query;
      L.flush();
    },
    flush: function () {
      var L = headsplitLesson;
      if (L.own === null || L.own === L.sent || !L.state || !L.ws || L.ws.readyState !== 1 || L.sendTimer) return;
      var wait = L.lastSend + 150 - performance.now();
      if (wait > 0) {
        L.sendTimer = setTimeout(function () { L.sendTimer = 0; L.flush(); }, wait);
        return;
      }
      L.sent = L.own;
      L.lastSend = performance.now();
      if (L.own !== L.state.query) L.send({type: "set", query: L.own});
    },

    // The mark's word: what the page is doing in the lesson now.
    mode: function () {
      var L = headsplitLesson;
      if (L.done) return L.done;
      if (!L.ws || L.ws.readyState !== 1 || !L.state) return L.tries ? "reconnecting" : "connecting";
      if (L.teacher) return "teaching";
      return L.exploring ? "exploring" : "following";
    },

    render: function () {
      var L = headsplitLesson, box = document.getElementById("lesson");
      if (!box) return;
      var mode = L.mode(), s = L.state;
      document.body.dataset.lesson = mode;
      if (s) document.body.dataset.lessonSeq = String(s.seq);
      var words = {
        connecting: "joining the lesson\u2026",
        reconnecting: "connection lost: trying again\u2026 (the page works on its own meanwhile)",
        following: "following the teacher",
        exploring: "exploring on my own",
        full: "the class is full: this page works on its own",
        ended: "the lesson has ended: this page works on its own",
        refused: (L.said || (L.teacher ? "the teacher's secret" : "the lesson's code") + " was not accepted") + ": this page works on its own",
        unreachable: "the lesson cannot be reached from this page",
      };
      var line = words[mode] || "";
      if (mode === "reconnecting" && L.said) line = L.said + " (the page works on its own meanwhile)";
      if (mode === "teaching") {
        var st = L.stats;
        line = "teaching: " + (st ? st.connected : 0) + " connected" + (s && s.question ? ", " + (st ? st.answered : 0) + " answered" : "");
      }
      var live = s && !L.done && L.ws;
      if (live && s.paused) line += " \u00b7 paused";
      if (live && s.locked && !L.teacher) line += " \u00b7 the teacher keeps the class together";
      if (live && s.locked && !L.teacher && L.ignoredTimer) line += ": your keys and clicks wait for the teacher";
      box.textContent = "";
      box.hidden = false;
      var add = function (tag, text, cls) {
        var el = document.createElement(tag);
        if (text !== undefined) el.textContent = text;
        if (cls) el.className = cls;
        return el;
      };
      var row = add("div");
      var mark = add("span", line, "lesson-mark");
      mark.id = "lesson-mark";
      row.appendChild(mark);
      var button = function (text, id, act) {
        var b = add("button", text);
        b.id = id;
        b.onclick = function () { act(); L.render(); document.getElementById("canvas").focus(); };
        row.appendChild(b);
      };
      if (live && !L.teacher && !s.locked)
        button(L.exploring ? "back to the teacher" : "explore on my own", "lesson-explore", function () {
          L.exploring = !L.exploring;
          if (!L.exploring) {
            L.applied = null;
            L.follow(L.state.query);
          }
        });
      if (live && L.teacher) {
        button(s.paused ? "resume" : "pause", "lesson-pause", function () { L.send({type: "set", paused: !s.paused}); });
        button(s.locked ? "let them explore" : "keep them together", "lesson-lock", function () { L.send({type: "set", locked: !s.locked}); });
      }
      box.appendChild(row);
      if (L.problem) box.appendChild(add("div", L.problem, "lesson-problem"));
      var q = s && s.question;
      if (!q || L.done) return;
      var panel = add("div", undefined, "lesson-question");
      panel.id = "lesson-question";
      panel.appendChild(add("div", q.prompt, "lesson-prompt"));
      var counts = q.revealed ? q.counts : (L.teacher && L.stats && L.stats.counts) || null;
      q.options.forEach(function (text, k) {
        var label = text;
        if (q.revealed) label += "  \u2014 " + counts[k] + (k === q.answer ? "  \u2713 right" : "");
        var b = add("button", label, "lesson-option");
        b.dataset.choice = String(k);
        if (L.choice && L.choice.k === k) b.className += " chosen";
        if (q.revealed && k === q.answer) b.className += " right";
        if (q.revealed || L.teacher) b.disabled = true;
        else b.onclick = function () {
          L.choice = {id: q.id, k: k};
          L.send({type: "answer", choice: k});
          L.render();
          document.getElementById("canvas").focus();
        };
        panel.appendChild(b);
      });
      if (!q.revealed && !L.teacher) panel.appendChild(add("div", L.choice ? "you may change your answer until the teacher shows the answers" : "choose one", "lesson-hint"));
      box.appendChild(panel);
    },
  },

  // A blob offered to the browser's downloads under `name`.
  $headsplitOffer: function (blob, name) {
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
  },
});
