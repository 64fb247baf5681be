#!/usr/bin/env bash
# test_serve_prefork: `qaudit serve` on a prefork server's workers (issue 43). A preloaded parent
# forks workers that wait for work without allocating, as idle nginx workers do, so that none
# has its dump thread yet (the preload starts a forked child's at an allocation); serve starts
# each as `qaudit snapshot` does, through ptrace. Checked:
# - serve run as the workers' user (nginx's www-data model: a worker dropped from root to it,
#   dumpable): that worker's series in /metrics and its profile; a worker of another user, not
#   dumpable, and the root parent are absent from /metrics and 404 with one line;
# - serve run as root: the parent (it has forked: no thread either) and every worker in
#   /metrics, each worker's live blocks those it made, its heap profile a gzipped profile.proto
#   naming the worker's own function; a worker given work allocates and the next scrape says so
#   (its counters move on, never back);
# - a worker serve may read but not trace (another tracer holds it): 503 and one line naming
#   the tracer, at once (refused for good, not waited on), the others still served; a stopped worker is left as it was (no
#   thread started in it), 503 and one line, then served once it runs again;
# - no requested dump left in the workers' dump directory.
# Run in a pid namespace of its own when it can (root), so that its serve sees only its own
# processes: another test's, run at once, are neither scraped nor have their dumps moved.
# usage: prefork.sh QAUDIT BIN_DIR LIB_DIR
set -uo pipefail
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null; then
  echo "FAIL: run as root with setpriv: the workers drop to other users, as nginx's do"
  exit 1
fi
. "$(dirname "$0")/common.sh"
own_pid_namespace "$0" "$@"
qaudit=$(realpath "$1") bin=$(realpath "$2") lib=$(realpath "$3")
work=$(mktemp -d)
chmod 755 "$work"
pids=()
cleanup() {
  exec 3>&- 2>/dev/null
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
need_tools curl python3
user=65533 other=65534 # the workers' user (serve's too), and a user serve may not read
mkdir -m 1777 "$work/dumps" "$work/tmp"
export TMPDIR=$work/tmp

# The server, every stack kept (the profiles are checked for the workers' functions): worker 0
# and 1 stay root, 2 drops to $user (dumpable, as nginx's workers), 3 to
# $other (not dumpable), 4 stays root and gets another tracer, 5 stays root and is stopped.
mkfifo "$work/in"
QAUDIT_STACKS=always QAUDIT_OUT=$work/dumps/%p.json LD_PRELOAD=$lib/libqaudit-preload.so \
  "$bin/fixture_prefork_workers" stay stay "drop:$user" "undumpable:$other" stay stay \
  <"$work/in" >"$work/server.out" 2>&1 &
parent=$!
pids+=("$parent")
exec 3>"$work/in"
wait_for 100 grep -q ready "$work/server.out" || { echo "FAIL: the server: $(cat "$work/server.out")"; exit 1; }
mapfile -t worker < <(sed -n 's/^worker //p' "$work/server.out")
pids+=("${worker[@]}")
sleep 0.3 # past the preload's 100 ms after the fork: only an allocation would start a thread now
threads() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
single=0
for p in "$parent" "${worker[@]}"; do [ "$(threads "$p")" = 1 ] && single=$((single + 1)); done
[ "$single" = 7 ] && pass "the idle workers and their parent have no dump thread" ||
  fail "threads before any scrape: $single of 7 processes have one thread only"

# Another tracer on worker 4 (a debugger, strace): serve may read it, not trace it.
python3 -c '
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
if libc.ptrace(0x4206, int(sys.argv[1]), None, None) != 0:  # PTRACE_SEIZE: it keeps running
    sys.exit("PTRACE_SEIZE: errno %d" % ctypes.get_errno())
print("seized", flush=True)
time.sleep(600)' "${worker[4]}" >"$work/tracer.out" 2>&1 &
tracer=$!
pids+=("$tracer")
wait_for 50 grep -q seized "$work/tracer.out" || fail "the tracer: $(cat "$work/tracer.out")"

start_serve() { # start_serve NAME [setpriv arguments]: serve's url in $url
  local name=$1; shift
  "$@" "$qaudit" serve --listen 127.0.0.1:0 --timeout 3000 --min-interval 100 \
    >"$work/$name.log" 2>&1 &
  pids+=("$!")
  wait_for 100 grep -q "listening on" "$work/$name.log" || { echo "FAIL: qaudit serve: $(cat "$work/$name.log")"; exit 1; }
  url=http://127.0.0.1:$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$work/$name.log")
}
# status ARGS...: the HTTP status (000: no answer within 20 s), the body in $work/body
status() { curl -s -m 20 -o "$work/body" -w '%{http_code}' "$@"; }
one_line() { [ "$(wc -l <"$work/body")" = 1 ]; }
# value NAME PID: the series' value in $work/metrics, or ""
value() { sed -n "s/^$1{pid=\"$2\",.*} //p" "$work/metrics"; }
scrape() { [ "$(status "$url/metrics")" = 200 ] && cp "$work/body" "$work/metrics"; }
# is_profile PID FUNCTION: the heap profile of PID is gzipped profile.proto naming FUNCTION
is_profile() {
  [ "$(status "$url/debug/pprof/heap?pid=$1")" = 200 ] &&
    python3 -c 'import gzip, sys; sys.exit(sys.argv[2].encode() not in gzip.decompress(open(sys.argv[1], "rb").read()))' \
      "$work/body" "$2"
}

echo "--- serve as the workers' user ($user)"
start_serve user setpriv --reuid="$user" --regid="$user" --clear-groups
scrape || fail "/metrics as $user: $(cat "$work/body")"
[ "$(value qaudit_scrape_success "${worker[2]}")" = 1 ] && [ "$(value qaudit_live_blocks "${worker[2]}")" -ge 300 ] &&
  pass "worker 2 ($user): its series, its dump thread started by serve" ||
  fail "worker 2 as $user: $(grep "pid=\"${worker[2]}\"" "$work/metrics")"
is_profile "${worker[2]}" worker_start && pass "worker 2 ($user): its heap profile names worker_start" ||
  fail "worker 2's profile as $user: $(head -c 200 "$work/body" | tr -cd '[:print:]')"
grep -q "pid=\"${worker[3]}\"" "$work/metrics" && fail "worker 3 ($other, not dumpable) in /metrics as $user" ||
  pass "worker 3 ($other, not dumpable) and the root parent absent as $user"
grep -q "pid=\"$parent\"" "$work/metrics" && fail "the root parent in /metrics as $user"
[ "$(status "$url/debug/pprof/heap?pid=${worker[3]}")" = 404 ] && one_line &&
  pass "worker 3's profile as $user: 404, one line: $(cat "$work/body")" ||
  fail "worker 3's profile as $user: $(cat "$work/body")"

echo "--- serve as root"
kill -STOP "${worker[5]}"
start_serve root
scrape || fail "/metrics as root: $(cat "$work/body")"
[ "$(value qaudit_scrape_success "${worker[5]}")" = 0 ] && [ "$(threads "${worker[5]}")" = 1 ] &&
  pass "worker 5 (stopped): qaudit_scrape_success 0, left as it was" ||
  fail "worker 5 (stopped): $(threads "${worker[5]}") threads, $(grep "pid=\"${worker[5]}\"" "$work/metrics")"
code=$(status "$url/debug/pprof/heap?pid=${worker[5]}")
[ "$code" = 503 ] && one_line && grep -q "it is stopped" "$work/body" &&
  pass "worker 5 (stopped): 503, one line: $(cat "$work/body")" ||
  fail "worker 5 (stopped): $code $(cat "$work/body")"
kill -CONT "${worker[5]}"
is_profile "${worker[5]}" worker_start && pass "worker 5 once it runs again: its heap profile" ||
  fail "worker 5 once it runs again: $(head -c 200 "$work/body" | tr -cd '[:print:]')"
for i in 0 1 2 3; do # its own (i + 1) * 100, the parent's 100 it inherited, stdout's buffer too
  blocks=$(value qaudit_live_blocks "${worker[$i]}") own=$(((i + 1) * 100))
  [ "$(value qaudit_scrape_success "${worker[$i]}")" = 1 ] && [ "${blocks:-0}" -ge $((own + 100)) ] &&
    [ "$blocks" -le $((own + 101)) ] &&
    pass "worker $i: its series, $blocks live blocks ($own its own, the rest inherited)" ||
    fail "worker $i: $(grep "pid=\"${worker[$i]}\"" "$work/metrics")"
done
[ "$(value qaudit_scrape_success "$parent")" = 1 ] && pass "the parent (it has forked, no thread either): its series" ||
  fail "the parent: $(grep "pid=\"$parent\"" "$work/metrics")"
[ "$(threads "${worker[0]}")" = 2 ] && pass "worker 0 has its dump thread now" || fail "worker 0 has $(threads "${worker[0]}") threads"
for i in 0 1 3; do
  is_profile "${worker[$i]}" worker_start && pass "worker $i: its heap profile names worker_start" ||
    fail "worker $i's profile: $(head -c 200 "$work/body" | tr -cd '[:print:]')"
done

echo "--- a worker given work"
allocs=$(value qaudit_allocations_total "${worker[0]}")
[ -n "$allocs" ] || fail "worker 0 has no qaudit_allocations_total before its work"
echo 0 >&3
echo 0 >&3
sleep 0.3
scrape || fail "/metrics: $(cat "$work/body")"
[ "$(value qaudit_live_blocks "${worker[0]}")" = 1200 ] && [ "$(value qaudit_allocations_total "${worker[0]}")" = $((allocs + 1000)) ] &&
  pass "worker 0 after two requests: $(value qaudit_live_blocks "${worker[0]}") live blocks, allocations $allocs -> $(value qaudit_allocations_total "${worker[0]}")" ||
  fail "worker 0 after work: $(grep "pid=\"${worker[0]}\"" "$work/metrics")"
is_profile "${worker[0]}" worker_request && pass "worker 0: its heap profile names worker_request" ||
  fail "worker 0's profile after work: $(head -c 200 "$work/body" | tr -cd '[:print:]')"

echo "--- a worker serve may read but not trace"
code=$(status "$url/debug/pprof/heap?pid=${worker[4]}")
[ "$code" = 503 ] && one_line && grep -q "serve cannot start it: it is traced by process $tracer" "$work/body" &&
  pass "worker 4 (traced): 503, one line: $(cat "$work/body")" ||
  fail "worker 4 (traced): $code $(cat "$work/body")"
scrape || fail "/metrics: $(cat "$work/body")"
[ "$(value qaudit_scrape_success "${worker[4]}")" = 0 ] && [ "$(value qaudit_scrape_success "${worker[1]}")" = 1 ] &&
  pass "worker 4 has qaudit_scrape_success 0, the others are served" ||
  fail "with worker 4 traced: $(grep -c 'scrape_success.* 1$' "$work/metrics") served"

echo "--- what the workers' dump directory holds"
left=$(find "$work/dumps" -name '*.snapshot-*')
[ -z "$left" ] && pass "no requested dump left there" || fail "left: $left"

[ "$failures" = 0 ] && echo "PASS" || echo "$failures check(s) failed"
[ "$failures" = 0 ]
