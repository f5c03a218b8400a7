// The page's JavaScript side (emcc --js-library): the address, the page's text, downloads.
// Each function is declared extern "C" in web/page.cpp; strings cross as UTF-8 pointers.
mergeInto(LibraryManager.library, {
  // The address's parameters as JSON [[name, value], ...], malloc'd (the caller frees it).
  headsplit_page_query: function () {
    var pairs = [];
    var dec = function (s) { return decodeURIComponent(s.replace(/\+/g, " ")); };
    location.search.replace(/^\?/, "").split("&").forEach(function (part) {
      if (!part) return;
      var eq = part.indexOf("=");
      try {
        pairs.push(eq < 0 ? [dec(part), ""] : [dec(part.slice(0, eq)), dec(part.slice(eq + 1))]);
      } catch (e) {  // not percent-encoding: the options refuse the value
        pairs.push([part.slice(0, Math.max(eq, 0)) || part, "\uFFFD"]);
      }
    });
    var json = JSON.stringify(pairs);
    var n = lengthBytesUTF8(json) + 1;
    var out = _malloc(n);
    stringToUTF8(json, out, n);
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

  // performance.now() of the user's last act on the page (index.html's listeners), 0 before.
  headsplit_page_last_input: function () {
    return Module.lastInput || 0;
  },

  // ImGui copies (Ctrl+C in a text box): to the system's clipboard where the browser allows it.
  headsplit_page_copy: function (text) {
    if (navigator.clipboard) navigator.clipboard.writeText(UTF8ToString(text)).catch(function () {});
  },

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
    var a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 60000);
  },
});
