# Sourced by the page's tests (web_test.sh, web_single_test.sh) once they have set $here (the
# tests' folder), $py and $site: $tools, a $work folder removed on exit with the servers the
# test started, bad() to say a failure (the test exits with $fail), and serve_site.
tools=$here/../tools/web
work=$(mktemp -d)
server_pids=
cleanup() { kill $server_pids 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# serve_site VAR FILE [serve.py options]: serves $site with tools/web/serve.py in the
# background and sets VAR to its address; ends the test when the server has not started in
# 30 s (a loaded machine starts Python slowly).
serve_site() {
  local var=$1 out=$2 address
  shift 2
  "$py" "$tools/serve.py" "$site" --port 0 "$@" >"$out" 2>&1 &
  server_pids="$server_pids $!"
  for _ in $(seq 300); do [ -s "$out" ] && break; sleep 0.1; done
  address=$(head -1 "$out")
  case $address in http://127.0.0.1:*) ;; *) echo "FAIL: the server ($*) did not start: $(cat "$out")"; exit 1 ;; esac
  printf -v "$var" %s "$address"
}
