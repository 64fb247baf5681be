#!/usr/bin/env bash
# test_serve_prometheus: `qaudit serve` scraped by the real engines (issue 43). ringkv and
# Debian's redis-server run under libqaudit-preload.so with bounded load; Debian's `prometheus`
# scrapes the daemon every second with its bearer token; the test asks Prometheus' HTTP API for
# each process's series and holds them against snapshots of the same process taken just before
# and after (a counter lies between the two), sees rate() above zero under load, and reads the
# heap endpoint with `go tool pprof -top` against `qaudit report` on a snapshot. Then what an
# operator leaves it running for: 401 without the token, a stopped process (SIGSTOP) gets 503
# while the other is served, its pending dump taken once it runs again (no file left in its
# dump directory), a vanished pid 404, bad requests 4xx and one line.
# Both daemons end on SIGTERM with exit 0 within a bounded wait. A missing engine, program or
# preload fails the test at once with one line: it never passes by not running, nor times out
# later for a prerequisite.
# Run in a pid namespace of its own when it can (root), as prefork.sh: its serve scrapes only
# its own processes, never another test's run at the same time.
# usage: prometheus.sh QAUDIT BIN_DIR LIB_DIR
set -uo pipefail
. "$(dirname "$0")/common.sh"
own_pid_namespace "$0" "$@"
qaudit=$(realpath "$1") bin=$(realpath "$2") lib=$(realpath "$3")
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -CONT "$p" 2>/dev/null; kill -9 "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
need_tools prometheus go redis-server redis-benchmark redis-cli curl python3
preload=$lib/libqaudit-preload.so
for file in "$qaudit" "$bin/ringkv" "$preload"; do
  [ -f "$file" ] || { echo "FAIL: $file is missing: build it first (make)"; exit 1; }
done
# The dynamic loader only warns about a preload it cannot load, and the program runs without it:
# then serve would find nothing to scrape and the test would time out waiting for series.
loader=$(LD_PRELOAD=$preload /bin/true 2>&1)
[ -z "$loader" ] || { echo "FAIL: $preload cannot be preloaded: $loader"; exit 1; }
# TMPDIR inside the test's directory: every serve's default state directory is made there, so
# that one the cleanup has to kill leaves nothing in the system's /tmp.
export HOME=$work/home GOCACHE=$work/gocache GOPATH=$work/gopath GOPROXY=off GOFLAGS= TMPDIR=$work/tmp
mkdir -p "$HOME" "$work/dumps" "$TMPDIR"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The audited processes: ringkv with every stack kept (the pprof comparison needs sites), and
# redis-server, a server nobody here wrote.
export QAUDIT_OUT=$work/dumps/%p.json
QAUDIT_STACKS=always LD_PRELOAD=$preload "$bin/ringkv" --port 0 --threads 1 \
  >"$work/ringkv.log" 2>&1 &
ringkv=$!
pids+=("$ringkv")
redis_port=$(free_port)
LD_PRELOAD=$preload redis-server --port "$redis_port" --bind 127.0.0.1 \
  --save "" --appendonly no >"$work/redis.log" 2>&1 &
redis=$!
pids+=("$redis")
# A steady Python loop (for the delta's notes, which quote a Python process's calls): blocks of
# 1000 bytes go to malloc, the small objects to pymalloc; it ends by itself after 240 s.
cat >"$work/steady.py" <<'EOF2'
import time
end, kept = time.monotonic() + 240, []
while time.monotonic() < end:
    kept = [bytes(1000) for _ in range(200)] + [{"k": i} for i in range(200)]
    time.sleep(0.01)
EOF2
# The interpreter itself, not a wrapper script (pyenv's shim) whose image would exec it.
interpreter=$(python3 -c 'import sys; print(sys.executable)')
LD_PRELOAD=$preload "$interpreter" "$work/steady.py" >"$work/python.log" 2>&1 &
python=$!
pids+=("$python")
wait_for 100 grep -q "listening on" "$work/ringkv.log" || { echo "FAIL: ringkv did not start"; exit 1; }
ringkv_port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/ringkv.log")
wait_for 100 redis-cli -p "$redis_port" ping >/dev/null 2>&1 || { echo "FAIL: redis-server did not start"; exit 1; }
for p in "$ringkv" "$redis" "$python"; do
  grep -q libqaudit-preload "/proc/$p/maps" || { echo "FAIL: pid $p runs without the preload"; exit 1; }
done

# The daemon, on a free loopback port, with a token.
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$work/token"
chmod 600 "$work/token"
token=$(cat "$work/token")
"$qaudit" serve --listen 127.0.0.1:0 --token-file "$work/token" --timeout 2000 >"$work/serve.log" 2>&1 &
serve=$!
pids+=("$serve")
wait_for 100 grep -q "listening on" "$work/serve.log" || { echo "FAIL: qaudit serve: $(cat "$work/serve.log")"; exit 1; }
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$work/serve.log")
url=http://127.0.0.1:$port
auth=(-H "Authorization: Bearer $token")
status() { curl -s -o "$work/body" -w '%{http_code}' "$@"; }
# stop_serve PID NAME: SIGTERM, then its exit awaited at most 5 s (delta waits end within 100 ms,
# docs/design.md): it must have ended by then, with 0.
ended() { # ended PID: gone, or a zombie (exited, not yet waited for)
  local state
  state=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1)
  [ -z "$state" ] || [ "$state" = Z ]
}
stop_serve() {
  kill -TERM "$1"
  local deadline=$(($(date +%s%N) + 5000000000))
  until ended "$1"; do
    if [ "$(date +%s%N)" -gt "$deadline" ]; then
      fail "$2 still runs 5 s after SIGTERM"
      return 1
    fi
    sleep 0.1
  done
  wait "$1"
  local rc=$?
  [ "$rc" = 0 ] && pass "$2: SIGTERM ends it with exit 0" || fail "$2: exit $rc after SIGTERM"
  [ "$rc" = 0 ]
}
one_line() { [ "$(wc -l <"$work/body")" = 1 ]; }

echo "--- authorization"
[ "$(status "$url/metrics")" = 401 ] && pass "a scrape without the token is 401" || fail "no token: $(cat "$work/body")"
[ "$(status -H "Authorization: Bearer ${token}x" "$url/metrics")" = 401 ] &&
  pass "a scrape with another token is 401" || fail "wrong token: $(cat "$work/body")"
[ "$(status "${auth[@]}" "$url/metrics")" = 200 ] && pass "a scrape with the token is 200" ||
  fail "with the token: $(cat "$work/body")"
tok2=$work/open-token
echo secret >"$tok2"
chmod 644 "$tok2"
"$qaudit" serve --listen 0.0.0.0:0 >/dev/null 2>"$work/err" && fail "serve beyond loopback without a token started" ||
  grep -q "beyond loopback: give --token-file" "$work/err" && pass "beyond loopback without a token: refused" ||
  fail "beyond loopback: $(cat "$work/err")"
"$qaudit" serve --listen 127.0.0.1:0 --token-file "$tok2" >/dev/null 2>"$work/err"
grep -q "others than its owner may read it" "$work/err" && pass "a token file others may read: refused" ||
  fail "readable token file: $(cat "$work/err")"

echo "--- Prometheus"
prom_port=$(free_port)
cat >"$work/prometheus.yml" <<EOF2
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: qaudit
    authorization:
      credentials_file: $work/token
    static_configs:
      - targets: ["127.0.0.1:$port"]
EOF2
prometheus --config.file "$work/prometheus.yml" --storage.tsdb.path "$work/tsdb" \
  --web.listen-address "127.0.0.1:$prom_port" >"$work/prometheus.log" 2>&1 &
pids+=("$!")
prom=http://127.0.0.1:$prom_port
wait_for 300 curl -sf "$prom/-/ready" -o /dev/null || { echo "FAIL: prometheus did not start: $(tail -5 "$work/prometheus.log")"; exit 1; }

# Bounded load on both while Prometheus scrapes.
redis-benchmark -p "$ringkv_port" -n 20000000 -c 4 -q -t set,get >/dev/null 2>&1 &
load1=$!
redis-benchmark -p "$redis_port" -n 20000000 -c 4 -q -t set,get >/dev/null 2>&1 &
load2=$!
pids+=("$load1" "$load2")

query() { # query PROMQL: the JSON of Prometheus' instant query
  curl -s --get "$prom/api/v1/query" --data-urlencode "query=$1"
}
value_of() { # value_of PROMQL PID: the value of the series of PID, or empty
  query "$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    if r["metric"].get("pid") == sys.argv[1]:
        print(r["value"][1]); break' "$2"
}
has_series() { [ -n "$(value_of "qaudit_allocations_total" "$1")" ]; }
wait_for 300 has_series "$ringkv" && pass "Prometheus has ringkv's series (pid $ringkv)" ||
  fail "no ringkv series in Prometheus: $(query qaudit_allocations_total | head -c 600)"
wait_for 100 has_series "$redis" && pass "Prometheus has redis-server's series (pid $redis)" ||
  fail "no redis-server series in Prometheus"
labels=$(query "qaudit_allocations_total{pid=\"$ringkv\"}" | python3 -c '
import json, sys; m = json.load(sys.stdin)["data"]["result"][0]["metric"]
print(" ".join(sorted(k for k in m if m[k])))')
[ "$labels" = "__name__ build_id exe instance job pid run_id" ] && pass "labels: $labels" || fail "labels: $labels"
for name in qaudit_frees_total qaudit_allocated_bytes_total qaudit_live_bytes qaudit_live_blocks \
  qaudit_peak_live_bytes qaudit_queue_pushes_total qaudit_queue_depth_one_allocations_total \
  qaudit_queue_connection_peak_depth_count qaudit_counts_exact qaudit_scrape_success; do
  [ -n "$(value_of "$name" "$ringkv")" ] || fail "ringkv has no $name in Prometheus"
done
[ "$(value_of qaudit_queue_depth_one_check "$ringkv")" = 1 ] && pass "ringkv's depth-one check: 1 (passed)" ||
  fail "depth-one check: $(value_of qaudit_queue_depth_one_check "$ringkv")"
[ -z "$(value_of qaudit_queue_pushes_total "$redis")" ] && pass "redis-server (no queue audit) has no queue series" ||
  fail "redis-server has queue series"

# rate() while the load runs.
sleep 6
for p in "$ringkv" "$redis"; do
  r=$(value_of "rate(qaudit_allocations_total[10s])" "$p")
  python3 -c 'import sys; sys.exit(0 if float(sys.argv[1] or 0) > 0 else 1)' "$r" &&
    pass "rate(qaudit_allocations_total) of $p under load: $r/s" || fail "rate of $p: '$r'"
done

# Values against snapshots: a scrape that Prometheus stored after a first snapshot and before a
# second lies between the two, for each counter.
dump_total() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"][sys.argv[2]])' "$1" "$2"; }
for p in "$ringkv" "$redis"; do
  s1=$("$qaudit" snapshot "$p" 2>/dev/null) || fail "snapshot of $p"
  sleep 2.5
  v=$(value_of "qaudit_allocations_total" "$p")
  vb=$(value_of "qaudit_allocated_bytes_total" "$p")
  s2=$("$qaudit" snapshot "$p" 2>/dev/null) || fail "snapshot of $p"
  a1=$(dump_total "$s1" allocs) a2=$(dump_total "$s2" allocs)
  [ -n "$v" ] && [ "$a1" -le "$v" ] && [ "$v" -le "$a2" ] &&
    pass "pid $p: qaudit_allocations_total $v lies between its snapshots' $a1 and $a2" ||
    fail "pid $p: qaudit_allocations_total '$v' not within snapshots $a1..$a2"
  b1=$(dump_total "$s1" bytes_requested) b2=$(dump_total "$s2" bytes_requested)
  [ -n "$vb" ] && [ "$b1" -le "$vb" ] && [ "$vb" -le "$b2" ] &&
    pass "pid $p: qaudit_allocated_bytes_total within its snapshots" ||
    fail "pid $p: qaudit_allocated_bytes_total '$vb' not within $b1..$b2"
  echo "$s1" >>"$work/ours"
  echo "$s2" >>"$work/ours"
done
kill "$load1" "$load2" 2>/dev/null
wait "$load1" "$load2" 2>/dev/null

echo "--- pprof"
sleep 1.5 # the last scrape's figures out of --min-interval: the endpoint takes a dump of its own
snap=$("$qaudit" snapshot "$ringkv" 2>/dev/null)
echo "$snap" >>"$work/ours"
"$qaudit" report "$snap" --format json -o "$work/report.json" 2>/dev/null
# go tool pprof sends no token: a second daemon, on loopback without one, as an operator runs it
# on a host whose scrapers are local.
"$qaudit" serve --listen 127.0.0.1:0 >"$work/serve2.log" 2>&1 &
serve2=$!
pids+=("$serve2")
wait_for 100 grep -q "listening on" "$work/serve2.log" || fail "second serve: $(cat "$work/serve2.log")"
url2=http://127.0.0.1:$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$work/serve2.log")
go tool pprof -top -nodefraction=0 -sample_index=alloc_objects "$url2/debug/pprof/heap?pid=$ringkv" >"$work/top.txt" 2>"$work/top.err"
python3 - "$work/report.json" "$work/top.txt" <<'EOF2' && pass "go tool pprof -top on /debug/pprof/heap names qaudit report's top sites" || fail "pprof top: $(head -20 "$work/top.txt") vs report"
import json, re, sys
report = json.load(open(sys.argv[1]))
def leaf(site):
    return site["frames"][0]["locations"][0]["function"] if site["frames"] else None
want = [(leaf(s), s["allocs"]) for s in report["sites"]][:3]
got = {}
for line in open(sys.argv[2]):
    m = re.match(r"\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(\S.*)$", line)
    if m:
        got.setdefault(m.group(2).strip(), int(m.group(1)))
print("report:", want, "\npprof:", list(got.items())[:5])
ok = len(want) > 0 and all(got.get(name, -1) >= allocs for name, allocs in want)
sys.exit(0 if ok else 1)
EOF2
stop_serve "$serve2" "the second qaudit serve"
[ "$(status "${auth[@]}" "$url/debug/pprof/allocs?pid=$ringkv")" = 200 ] &&
  go tool pprof -top "$work/body" 2>/dev/null | grep -q "^Type: alloc_space" &&
  pass "/debug/pprof/allocs: alloc_space by default" || fail "allocs: $(head -c 200 "$work/body")"

echo "--- a delta profile (?seconds=S)"
# Between two snapshots, bounded load runs and a 2 s delta is taken: its allocations are more than
# none and at most what the snapshots saw made in between; /metrics is answered during the wait.
d1=$("$qaudit" snapshot "$ringkv" 2>/dev/null)
echo "$d1" >>"$work/ours"
timeout 30 redis-benchmark -p "$ringkv_port" -n 100000 -c 2 -q -t set >/dev/null 2>&1 &
load3=$!
pids+=("$load3")
curl -s -o "$work/delta.pb.gz" -w '%{http_code}' "${auth[@]}" "$url/debug/pprof/heap?pid=$ringkv&seconds=2" >"$work/delta.code" &
delta=$!
sleep 0.5
start=$(date +%s%N)
code=$(status "${auth[@]}" "$url/metrics")
took=$((($(date +%s%N) - start) / 1000000))
! ended "$delta" && [ "$code" = 200 ] &&
  pass "/metrics answered ($took ms) while a delta waits" || fail "metrics during a delta: $code, delta done early"
wait "$delta"
wait "$load3" 2>/dev/null
d2=$("$qaudit" snapshot "$ringkv" 2>/dev/null)
echo "$d2" >>"$work/ours"
[ "$(cat "$work/delta.code")" = 200 ] || fail "delta: $(cat "$work/delta.code") $(head -c 200 "$work/delta.pb.gz")"
go tool pprof -top -sample_index=alloc_objects "$work/delta.pb.gz" >"$work/delta.txt" 2>&1
delta_allocs=$(sed -n 's/.* of \([0-9]*\) total.*/\1/p' "$work/delta.txt")
between=$(($(dump_total "$d2" allocs) - $(dump_total "$d1" allocs)))
[ -n "$delta_allocs" ] && [ "$delta_allocs" -gt 0 ] && [ "$delta_allocs" -le "$between" ] &&
  pass "the delta's $delta_allocs allocations lie within the $between made between the snapshots" ||
  fail "delta allocations '$delta_allocs' vs $between between snapshots: $(head -8 "$work/delta.txt")"
# Every figure the delta's comments quote is the window's: a Python process's note quotes its
# allocation calls, here at most those made between two snapshots around the delta (its whole
# life's are more); nothing said of a final dump or of the (removed) dumps' files.
p1=$("$qaudit" snapshot "$python" 2>/dev/null)
[ "$(status "${auth[@]}" "$url/debug/pprof/allocs?pid=$python&seconds=2")" = 200 ] &&
  cp "$work/body" "$work/pydelta.pb.gz" || fail "python delta: $(cat "$work/body")"
p2=$("$qaudit" snapshot "$python" 2>/dev/null)
echo "$p1" >>"$work/ours"
echo "$p2" >>"$work/ours"
go tool pprof -comments "$work/pydelta.pb.gz" >"$work/pydelta.txt" 2>&1
calls() { echo $(($(dump_total "$1" allocs) + $(dump_total "$1" reallocs))); }
py_between=$(($(calls "$p2") - $(calls "$p1")))
quoted=$(sed -n 's/.* of its \([0-9,]*\) allocation calls.*/\1/p' "$work/pydelta.txt" | tr -d ,)
[ -n "$quoted" ] && [ "$quoted" -gt 0 ] && [ "$quoted" -le "$py_between" ] &&
  pass "the delta's Python note quotes $quoted calls, within the $py_between made between the snapshots" ||
  fail "python delta's note quotes '$quoted' calls, $py_between between the snapshots: $(cat "$work/pydelta.txt")"
grep -qE "final dump|live at the snapshot|\.json" "$work/pydelta.txt" &&
  fail "the delta's comments speak of a dump, not the window: $(grep -E "final dump|live at|\.json" "$work/pydelta.txt")" ||
  pass "the delta's comments say nothing of a final dump nor of the dumps' files"
bad_ok=1
for bad in 0 301 abc; do
  [ "$(status "${auth[@]}" "$url/debug/pprof/heap?pid=$ringkv&seconds=$bad")" = 400 ] && one_line ||
    { bad_ok=0; fail "seconds=$bad: not 400 with one line: $(cat "$work/body")"; }
done
[ "$bad_ok" = 1 ] && pass "seconds=0, 301 and abc are 400, one line"

echo "--- a stopped process"
kill -STOP "$redis"
sleep 1.2 # figures younger than --min-interval (1 s) are served from the last dump: let them age
code=$(status "${auth[@]}" "$url/debug/pprof/heap?pid=$redis")
[ "$code" = 503 ] && pass "a stopped process's profile is 503: $(cat "$work/body")" || fail "stopped: $code $(cat "$work/body")"
start=$(date +%s%N)
code=$(status "${auth[@]}" "$url/metrics")
took=$((($(date +%s%N) - start) / 1000000))
grep -q "^qaudit_scrape_success{pid=\"$redis\".* 0$" "$work/body" && grep -q "^qaudit_scrape_success{pid=\"$ringkv\".* 1$" "$work/body" &&
  grep -q "^qaudit_allocations_total{pid=\"$ringkv\"" "$work/body" && ! grep -q "^qaudit_allocations_total{pid=\"$redis\"" "$work/body" &&
  [ "$code" = 200 ] && [ "$took" -lt 4000 ] &&
  pass "/metrics with a stopped process: it has scrape_success 0, ringkv served, in $took ms" ||
  fail "metrics with a stopped process ($code, $took ms): $(grep scrape_success "$work/body")"
[ "$(status "${auth[@]}" "$url/debug/pprof/heap?pid=$ringkv")" = 200 ] &&
  pass "the other process's profile is still served" || fail "ringkv while redis stopped: $(cat "$work/body")"
kill -CONT "$redis"
sleep 1.5
wait_for 50 grep -q "^qaudit_scrape_success{pid=\"$redis\".* 1$" <(curl -s "${auth[@]}" "$url/metrics") &&
  pass "resumed: scraped again" || fail "resumed: not scraped"
sleep 1
left=$(ls "$work/dumps" | while read -r f; do grep -qx "$work/dumps/$f" "$work/ours" || echo "$f"; done)
[ -z "$left" ] && pass "no scrape left a dump in the processes' dump directory" || fail "dumps left: $left"

echo "--- vanished and bad requests"
kill -9 "$redis"
wait "$redis" 2>/dev/null
[ "$(status "${auth[@]}" "$url/debug/pprof/heap?pid=$redis")" = 404 ] && pass "a vanished pid is 404: $(cat "$work/body")" ||
  fail "vanished: $(cat "$work/body")"
[ "$(status "${auth[@]}" "$url/debug/pprof/heap?pid=12x")" = 400 ] && one_line && pass "a bad pid is 400, one line" || fail "bad pid"
[ "$(status "${auth[@]}" "$url/nowhere")" = 404 ] && one_line && pass "an unknown path is 404, one line" || fail "unknown path"
[ "$(status "${auth[@]}" -X POST "$url/metrics")" = 405 ] && one_line && pass "POST is 405, one line" || fail "POST"
code=$(status "${auth[@]}" "$url/metrics?x=$(head -c 40000 /dev/zero | tr '\0' a)")
[ "${code:0:1}" = 4 ] && pass "a huge query is $code" || fail "huge query: $code"
[ "$(status "${auth[@]}" "$url/targets")" = 200 ] && python3 -c '
import json, sys; t = json.load(open(sys.argv[1])); p = [x["labels"]["__param_pid"] for x in t]; sys.exit(0 if sys.argv[2] in p and sys.argv[3] not in p else 1)' \
  "$work/body" "$ringkv" "$redis" && pass "/targets: ringkv with __param_pid, redis-server gone" || fail "/targets: $(cat "$work/body")"
kill -0 "$serve" && pass "qaudit serve still runs" || fail "qaudit serve ended"
stop_serve "$serve" "qaudit serve"
state=$(sed -n 's/.*state in \(.*\))$/\1/p' "$work/serve.log")
[ -n "$state" ] && [ ! -e "$state" ] && pass "SIGTERM: its state directory removed" || fail "state directory $state left"

echo "$failures failed"
[ "$failures" -eq 0 ]
