// HeadSplit's service worker, for static hosts that cannot send headers (GitHub Pages, a
// university's web space): it answers the page's own requests with the two headers that give
// the page shared memory for its threads. index.html registers it, and reloads once, only when
// the page arrived without them; a host that sends them never runs it.
self.addEventListener("install", function () { self.skipWaiting(); });
self.addEventListener("activate", function (event) { event.waitUntil(self.clients.claim()); });

self.addEventListener("fetch", function (event) {
  var request = event.request;
  // Other origins' files keep their own headers (the page loads none), and the browser's
  // cache-only requests from elsewhere cannot be fetched here.
  if (new URL(request.url).origin !== self.location.origin) return;
  if (request.cache === "only-if-cached" && request.mode !== "same-origin") return;
  event.respondWith(fetch(request).then(function (response) {
    if (response.status === 0) return response;  // opaque: nothing to add to
    var headers = new Headers(response.headers);
    headers.set("Cross-Origin-Opener-Policy", "same-origin");
    headers.set("Cross-Origin-Embedder-Policy", "require-corp");
    headers.set("Cross-Origin-Resource-Policy", "same-origin");
    return new Response(response.body, {status: response.status, statusText: response.statusText, headers: headers});
  }));
});
