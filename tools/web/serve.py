#!/usr/bin/env python3
"""Serves HeadSplit's page (build-web/site) on 127.0.0.1 with the headers its threads need:
Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp.

usage: serve.py SITE_DIR [--port N] [--no-isolation-headers]
  N = 0: any free port; the address is printed first. --no-isolation-headers leaves the two
  headers out, as a static host that cannot send them does (the page's service worker then
  adds them; its test uses this).
"""
import argparse
import functools
import http.server
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map,
                      ".wasm": "application/wasm", ".js": "text/javascript", ".data": "application/octet-stream"}

    isolation_headers = True

    def end_headers(self):
        if self.isolation_headers:
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cache-Control", "no-cache")
        super().end_headers()

    def log_message(self, *args):
        pass


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("site")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--no-isolation-headers", action="store_true")
    a = ap.parse_args()
    Handler.isolation_headers = not a.no_isolation_headers
    server = http.server.ThreadingHTTPServer(("127.0.0.1", a.port), functools.partial(Handler, directory=a.site))
    print(f"http://127.0.0.1:{server.server_address[1]}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
