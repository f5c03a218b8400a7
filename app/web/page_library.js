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
