#!/bin/bash
# qaudit attach and detach (issue 24) on processes started without the preload: ringkv under
# redis-benchmark (attach, snapshot, detach, attach again: no error, no key lost, the queue
# checks holding from the attach on), a multi-threaded fixture freeing 1,000 blocks it allocated
# before the attach (totals.preexisting), a prefork fixture (children forked after the attach
# count into dumps of their own), Debian's redis-server; and each refusal: exit 2, one line, the
# process as it was.
# usage: attach.sh QAUDIT RINGKV FIXTURE_ATTACH_TARGET FIXTURE_STATIC
set -u
qaudit=$1 ringkv=$2 target=$3 static=$4
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
command -v redis-benchmark >/dev/null && command -v redis-server >/dev/null ||
  { echo "redis-benchmark or redis-server missing (scripts/deps.sh installs redis)"; exit 1; }

# wait_for FILE PATTERN: up to 60 s for PATTERN in FILE.
wait_for() {
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
# field DUMP EXPR: a Python expression over the dump d.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
has_preload() { grep -q libqaudit-preload "/proc/$1/maps"; }
# launch OUT COMMAND...: starts COMMAND (killed at the end), its pid in $launched, once it has
# written "ready" into OUT.
launch() {
  local out=$1
  shift
  "$@" >"$out" &
  launched=$!
  pids+=("$launched")
  wait_for "$out" ready
}

# ---- ringkv under load: attach, snapshot, detach, and a second attach ----
"$ringkv" --port 0 --threads 2 >"$work/ringkv.out" 2>&1 &
rk=$!
pids+=("$rk")
wait_for "$work/ringkv.out" listening || fail "ringkv did not start"
port=$(grep -o '127.0.0.1:[0-9]*' "$work/ringkv.out" | cut -d: -f2)
redis-cli -p "$port" set before-attach kept >/dev/null
mkdir "$work/rk"
# A load running across the attach, snapshot and detach (stopped after them), and a bounded one
# between the attach and the detach, so that requests are served after the attach whatever the
# machine's speed.
redis-benchmark -h 127.0.0.1 -p "$port" -n 100000000 -c 50 -P 16 -t set,get -r 1000 -q \
  >"$work/bench0.out" 2>&1 &
across=$!
pids+=("$across")
sleep 0.5
if "$qaudit" attach "$rk" --out "$work/rk/" 2>"$work/attach1.err"; then
  pass "attach ringkv under load: $(cat "$work/attach1.err")"
else
  fail "attach ringkv: $(cat "$work/attach1.err")"
fi
redis-benchmark -h 127.0.0.1 -p "$port" -n 50000 -c 50 -P 16 -t set,get -r 1000 -q \
  >"$work/bench1.out" 2>&1
snap=$("$qaudit" snapshot "$rk" 2>/dev/null) && [ -f "$snap" ] && pass "snapshot after attach" ||
  fail "snapshot after attach"
last=$("$qaudit" detach "$rk" --timeout 60 2>"$work/detach1.err")
[ -f "$last" ] && pass "detach: $last" || fail "detach: $(cat "$work/detach1.err")"
kill "$across"
wait "$across" 2>/dev/null
! grep -qi error "$work/bench1.out" "$work/bench0.out" && grep -q "requests per second" "$work/bench1.out" &&
  pass "redis-benchmark across attach, snapshot, detach: no error" ||
  fail "redis-benchmark: $(tr '\r' '\n' <"$work/bench1.out" | tail -3)"
[ "$(redis-cli -p "$port" get before-attach)" = kept ] && pass "a key from before the attach kept" ||
  fail "key from before the attach lost"
if [ -f "$last" ]; then
  checks=$(field "$last" "' '.join(c['name']+'='+c['status'] for c in d['checks'])")
  [[ $checks == *depth_one_no_alloc=pass* && $checks == *conservation=pass* ]] &&
    pass "queue checks from the attach on: $checks" || fail "queue checks: $checks"
  [ "$(field "$last" "d['queues']['pushes'] > 0")" = True ] && pass "queue events after the attach" ||
    fail "no queue event reached the interposer after the attach"
  [ "$(field "$last" "d['reason']")" = detach ] && [ -n "$(field "$last" "d['process']['attached_at']")" ] &&
    pass "dump says detach and process.attached_at" || fail "dump reason or attached_at"
  [ "$(field "$last" "d['totals']['preexisting']['allocated_before_attach']")" = unknown ] &&
    pass "totals.preexisting says earlier allocations are unknown" || fail "totals.preexisting"
  "$qaudit" report "$last" >"$work/report1.txt" 2>&1
  grep -q "was counted from its qaudit attach to its detach" "$work/report1.txt" &&
    ! grep -q "only a snapshot" "$work/report1.txt" &&
    pass "the report names the detach dump as such" ||
    fail "report of a detach dump: $(grep -i -e snapshot -e detach "$work/report1.txt" | head -3)"
fi
has_preload "$rk" && pass "detached preload stays mapped (inert)"
"$qaudit" snapshot "$rk" >/dev/null 2>"$work/err"
[ $? -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && pass "snapshot of a detached process: $(cat "$work/err")" ||
  fail "snapshot of a detached process: $(cat "$work/err")"
redis-benchmark -h 127.0.0.1 -p "$port" -n 20000 -c 50 -P 16 -t set -q >"$work/bench2.out" 2>&1 &
bench=$!
# The second attach names a directory of its own, missing (a trailing '/' makes it), and asks
# for another stacks mode, which a later attach cannot change: it says so.
if "$qaudit" attach "$rk" --out "$work/rk2/" --stacks off 2>"$work/attach2.err"; then
  pass "second attach: $(cat "$work/attach2.err")"
else
  fail "second attach: $(cat "$work/attach2.err")"
fi
grep -q "stacks stay always" "$work/attach2.err" &&
  pass "a later attach says the stacks mode stays the first one's" ||
  fail "no word that --stacks off was not applied: $(cat "$work/attach2.err")"
wait "$bench"
last2=$("$qaudit" detach "$rk" --timeout 60 2>/dev/null)
[ "$(dirname "$last2")" = "$work/rk2" ] && [ -f "$last2" ] &&
  pass "the second attach's --out holds: its detach dump is $last2" ||
  fail "second detach dump '$last2', want it in $work/rk2/ (the second attach's --out)"
[ "$(redis-cli -p "$port" ping)" = PONG ] && pass "ringkv serves after two detaches" ||
  fail "ringkv after detach"

# ---- a multi-threaded process: frees of blocks allocated before the attach ----
mkdir "$work/mt"
launch "$work/mt.out" "$target" threads "$work/mt"
mt=$launched
if "$qaudit" attach "$mt" --out "$work/mt/" --stacks off 2>"$work/mt.err"; then
  touch "$work/mt/free-now"
  for _ in $(seq 600); do [ -f "$work/mt/freed" ] && break; sleep 0.1; done
  sleep 1
  dump=$("$qaudit" detach "$mt" 2>/dev/null)
  pre=$(field "$dump" "d['totals']['preexisting']['freed_blocks']")
  live=$(field "$dump" "d['totals']['live_blocks']")
  # 1,000 held blocks, and at most one in flight in each of the four churning threads.
  [ "$pre" -ge 1000 ] && [ "$pre" -le 1004 ] && pass "1,000 frees of blocks from before the attach: $pre" ||
    fail "preexisting frees $pre (want 1000..1004)"
  [ "$live" -le 64 ] && pass "live blocks after the churn: $live (no invented leak)" ||
    fail "live blocks $live"
  # A second attach is a new account: the 1,000 frees of the first are not in it (carried over,
  # its preexisting frees would be 1,000 and more); only the churn's blocks in flight at the
  # attach, as in the live blocks above. It counts allocations of its own.
  "$qaudit" attach "$mt" --out "$work/mt/" --stacks off 2>/dev/null
  sleep 0.2
  dump2=$("$qaudit" detach "$mt" 2>/dev/null)
  pre2=$(field "$dump2" "d['totals']['preexisting']['freed_blocks']")
  second=$(field "$dump2" "d['totals']['allocs']")
  [ "$pre2" -le 64 ] && [ "$second" -gt 0 ] &&
    pass "a second attach counts afresh: $pre2 preexisting frees (the first had $pre), $second allocations" ||
    fail "second attach: $pre2 preexisting frees (want at most 64, the first had $pre), $second allocations"
else
  fail "attach multi-threaded: $(cat "$work/mt.err")"
fi

# ---- hooks after the fact: a non-PIE program whose loop of queue events began before ----
mkdir "$work/hk"
launch "$work/hk.out" "$target" hooks
hk=$launched
readelf -rW "$target" | grep -q qaudit_hook &&
  fail "the hooks fixture has a relocation of qaudit_hook: it is not the non-PIE case"
if "$qaudit" attach "$hk" --out "$work/hk/" --stacks off 2>"$work/hk.err"; then
  sleep 0.5
  dump=$("$qaudit" detach "$hk" 2>/dev/null)
  pushes=$(field "$dump" "d['queues']['pushes']")
  checks=$(field "$dump" "' '.join(c['name']+'='+c['status'] for c in d['checks'])")
  [ "$pushes" -gt 0 ] && [[ $checks == *conservation=pass* ]] &&
    pass "hook events through qaudit_hook_slot after the attach: $pushes pushes, $checks" ||
    fail "hooks after the attach: $pushes pushes, $checks"
else
  fail "attach hooks: $(cat "$work/hk.err")"
fi

# ---- a queue already holding values at the attach: its pops of them balance against what it held
# when first seen (3), not against pushes the attach never saw ----
mkdir -p "$work/hh/d"
launch "$work/hh.out" "$target" hooks-held "$work/hh"
hh=$launched
if "$qaudit" attach "$hh" --out "$work/hh/d/" --stacks off 2>"$work/hh.err"; then
  touch "$work/hh/go"
  sleep 0.5
  dump=$("$qaudit" detach "$hh" 2>/dev/null)
  cons=$([ -f "$dump" ] && field "$dump" "[c['status']+': '+c['detail'] for c in d['checks'] if c['name']=='conservation'][0]")
  [[ $cons == pass:*"held when first seen 3"* ]] &&
    pass "a queue holding 3 values at the attach balances: $cons" || fail "held at the attach: $cons"
else
  fail "attach hooks-held: $(cat "$work/hh.err")"
fi

# ---- a prefork process: children forked after the attach count in dumps of their own ----
mkdir "$work/pf"
launch "$work/pf.out" "$target" prefork
pf=$launched
if "$qaudit" attach "$pf" --out "$work/pf/" --stacks off 2>"$work/pf.err"; then
  sleep 1
  "$qaudit" detach "$pf" >/dev/null 2>&1
  # One Python for every dump (a Python started twice per dump took most of this test's time).
  children=$(python3 - "$pf" "$work"/pf/qaudit-*.json <<'PY'
import json, sys
pf, children = int(sys.argv[1]), 0
for path in sys.argv[2:]:
    d = json.load(open(path))
    if d["process"].get("forked_from", {}).get("pid") == pf and d["totals"]["calls"]["malloc"] >= 100:
        children += 1
print(children)
PY
)
  [ "$children" -ge 5 ] && pass "$children children forked after the attach counted (100 mallocs each)" ||
    fail "children's dumps: $children"
else
  fail "attach prefork: $(cat "$work/pf.err")"
fi

# ---- an interpreter: a Python started with PYTHONMALLOC=malloc says so in the attached dump ----
mkdir "$work/py"
PYTHONMALLOC=malloc python3 -c "
import sys, time
print('ready', flush=True)
while True:
    x = [str(i) * 3 for i in range(1000)]
    time.sleep(0.01)" >"$work/py.out" &
py=$!
pids+=("$py")
if wait_for "$work/py.out" ready && "$qaudit" attach "$py" --out "$work/py/" --stacks off 2>"$work/py.err"; then
  sleep 0.3
  dump=$("$qaudit" detach "$py" 2>/dev/null)
  pm=$([ -f "$dump" ] && field "$dump" "d['process'].get('pythonmalloc')")
  [ "$pm" = malloc ] && pass "an attached Python's dump records PYTHONMALLOC=$pm" ||
    fail "attached Python: process.pythonmalloc '$pm' (want malloc)"
else
  fail "attach python: $(cat "$work/py.err")"
fi

# ---- endings after the attach, as under LD_PRELOAD: a fatal signal at its default, _exit and
# exec each leave the final dump (the status native), and the program reads back SIG_DFL; a
# chroot does not lose the exit dump; after a detach, the signal ends it with no dump more and
# its dispositions are its own again ----
for how in sigterm _exit exec chroot detach; do
  dir="$work/en-$how"
  mkdir -p "$dir/d" "$dir/jail"
  "$target" endings "$dir" >"$dir/out" &
  en=$!
  pids+=("$en")
  wait_for "$dir/out" ready || { fail "endings $how: the fixture did not start"; continue; }
  if ! "$qaudit" attach "$en" --out "$dir/d/" --stacks off 2>"$dir/err"; then
    fail "attach for $how: $(cat "$dir/err")"
    continue
  fi
  [ "$how" = detach ] && { "$qaudit" detach "$en" >/dev/null 2>&1 || fail "detach before the ending"; }
  echo "${how/detach/sigterm}" >"$dir/how"
  wait "$en"
  status=$?
  reasons=$(for f in "$dir"/d/*.json; do field "$f" "d['reason']"; done | sort | tr '\n' ' ')
  case $how in
  sigterm) want_status=143 want_reasons="fatal_signal " ;;
  _exit) want_status=3 want_reasons="_exit " ;;
  exec) want_status=0 want_reasons="exec " ;;
  chroot) want_status=0 want_reasons="exit " ;;
  detach) want_status=143 want_reasons="detach " ;;
  esac
  reads=$(cat "$dir/reads-back" 2>/dev/null)
  [ "$status" = "$want_status" ] && [ "$reasons" = "$want_reasons" ] && [ "$reads" = default ] &&
    pass "after the attach, $how: status $status, dumps: $reasons, SIGTERM reads back $reads" ||
    fail "after the attach, $how: status $status (want $want_status), dumps: '$reasons' (want '$want_reasons'), SIGTERM reads back '$reads'"
  if [ "$how" != detach ] && [ "$reasons" = "$want_reasons" ]; then
    mallocs=$(field "$(ls "$dir"/d/*.json)" "d['totals']['calls']['malloc']")
    [ "$mallocs" -ge 100 ] && pass "$how: the final dump holds the 100 blocks allocated after the attach ($mallocs mallocs)" ||
      fail "$how: $mallocs mallocs in the final dump"
  fi
done

# ---- Debian's redis-server under load ----
rport=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --daemonize no \
  >"$work/redis.out" 2>&1 &
rs=$!
pids+=("$rs")
for _ in $(seq 600); do redis-cli -p "$rport" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
redis-cli -p "$rport" set before-attach kept >/dev/null
mkdir "$work/rs"
redis-benchmark -h 127.0.0.1 -p "$rport" -n 100000000 -c 50 -P 16 -t set,get -q \
  >"$work/bench4.out" 2>&1 &
across=$!
pids+=("$across")
sleep 0.3
"$qaudit" attach "$rs" --out "$work/rs/" 2>"$work/rs.err" && pass "attach redis-server: $(cat "$work/rs.err")" ||
  fail "attach redis-server: $(cat "$work/rs.err")"
redis-benchmark -h 127.0.0.1 -p "$rport" -n 50000 -c 50 -P 16 -t set,get -q >"$work/bench3.out" 2>&1
kill "$across"
wait "$across" 2>/dev/null
dump=$("$qaudit" detach "$rs" --timeout 60 2>"$work/rs-detach.err")
[ -f "$dump" ] && [ "$(field "$dump" "d['totals']['allocs'] > 0")" = True ] &&
  pass "redis-server counted after the attach" ||
  fail "redis-server dump '$dump': $(cat "$work/rs-detach.err")"
# Named as the user ran it (its exe is redis-check-rdb, the symlink's target), and its title
# printed without the padding redis writes over argv.
grep -q "counting in redis-server (pid $rs)" "$work/rs.err" && ! grep -q redis-check-rdb "$work/rs.err" &&
  pass "attach names redis-server as the user ran it" || fail "attach's name: $(head -1 "$work/rs.err")"
# Debian's redis links jemalloc, whose own entry points (its C++ operators, which libstdc++ binds,
# and mallocx...) no attach reaches: said at the attach, in the dump and in the report.
grep -q "not counted.*jemalloc.*operator new" "$work/rs.err" &&
  pass "the attach says what of jemalloc it cannot reach: $(grep jemalloc "$work/rs.err")" ||
  fail "no word at the attach of jemalloc's entry points: $(cat "$work/rs.err")"
unreached=$([ -f "$dump" ] && field "$dump" "' '.join(k for k, n in d['precision']['allocators']['jemalloc'].get('attach_unreached', {}).items() if n > 0)")
[[ $unreached == *"operator new"* ]] && pass "the dump's precision names the entry points bound: $unreached" ||
  fail "precision.allocators.jemalloc.attach_unreached: '$unreached'"
if [ -f "$dump" ]; then
  "$qaudit" report "$dump" | tr '\n' ' ' | tr -s ' ' >"$work/rs-report.txt" 2>&1
  argv=$("$qaudit" report "$dump" --format json | python3 -c "import json,sys; print(repr(json.load(sys.stdin)['dumps'][0]['argv']))")
  [ "$argv" = "'redis-server 127.0.0.1:$rport'" ] && ! grep -q "redis-check-rdb (pid" "$work/rs-report.txt" &&
    pass "the report names redis-server by its title, without the padding: $argv" ||
    fail "redis-server's title in the report: $argv"
  grep -q "jemalloc's own entry points were not counted: qaudit attach cannot reach them.*operator new" "$work/rs-report.txt" &&
    pass "the report says which of jemalloc's entry points the attach did not reach" ||
    fail "redis report: $(grep -o "[^.]*jemalloc[^.]*" "$work/rs-report.txt" | head -3)"
fi
! grep -qi error "$work/bench3.out" "$work/bench4.out" && [ "$(redis-cli -p "$rport" get before-attach)" = kept ] &&
  pass "redis-server: no error, key kept" || fail "redis-server benchmark or key"

# ---- an nginx worker (Debian's nginx; the worker runs as nobody, forked by a root master), the
# preload in a directory only root may enter (as make mutants' scratch copy): loaded from memory;
# its --out directory missing: made, for the worker's user ----
chmod 755 "$work"
mkdir -p "$work/ngx/conf" "$work/ngx/logs" "$work/ngx/html"
private=$work/private
mkdir -m 700 "$private"
cp "$(dirname "$qaudit")/../lib/libqaudit-preload.so" "$private/"
echo hello >"$work/ngx/html/index.html"
nport=$(python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
cat >"$work/ngx/conf/nginx.conf" <<CONF
daemon off;
worker_processes 1;
pid $work/ngx/logs/nginx.pid;
error_log $work/ngx/logs/error.log notice;
events { worker_connections 64; }
http { access_log off; server { listen 127.0.0.1:$nport; root $work/ngx/html; } }
CONF
/usr/sbin/nginx -p "$work/ngx" -c conf/nginx.conf >"$work/ngx.out" 2>&1 &
master=$!
pids+=("$master")
worker=
for _ in $(seq 600); do worker=$(pgrep -P "$master"); [ -n "$worker" ] && break; sleep 0.1; done
[ -n "$worker" ] && pids+=("$worker")
for _ in $(seq 600); do curl -sf "http://127.0.0.1:$nport/" >/dev/null && break; sleep 0.1; done
if [ -n "$worker" ] && "$qaudit" attach "$worker" --out "$work/ngxdumps/" --preload "$private/libqaudit-preload.so" 2>"$work/ngx.err"; then
  grep -q "cannot load $private/libqaudit-preload.so.*Permission denied.*loaded from memory" "$work/ngx.err" &&
    pass "nginx worker: its user cannot read the preload, loaded from memory: $(tail -1 "$work/ngx.err")" ||
    fail "nginx worker: no word of the memfd: $(cat "$work/ngx.err")"
  ls -l "/proc/$worker/fd" | grep -q memfd && fail "the memfd is still open in the worker: $(ls -l "/proc/$worker/fd" | grep memfd)"
  [ "$(stat -c %U "$work/ngxdumps")" = "$(ps -o user= -p "$worker")" ] &&
    pass "the missing --out directory was made for the worker's user ($(stat -c %U "$work/ngxdumps"))" ||
    fail "--out directory: $(ls -ld "$work/ngxdumps" 2>&1)"
  codes=$(for _ in $(seq 200); do curl -s -o /dev/null -w '%{http_code}\n' "http://127.0.0.1:$nport/"; done | sort | uniq -c | tr -s ' ')
  dump=$("$qaudit" detach "$worker" --timeout 60 2>/dev/null)
  [ "$codes" = " 200 200" ] && pass "nginx worker: 200 requests answered 200 across the attach" ||
    fail "nginx replies: $codes"
  [ "$(dirname "$dump")" = "$work/ngxdumps" ] && [ "$(field "$dump" "d['totals']['allocs'] > 0")" = True ] &&
    pass "nginx worker counted after the attach ($(cat "$work/ngx.err" | grep -o 'paused [0-9.]* ms'))" ||
    fail "nginx worker dump: $dump"
  modules=$([ -f "$dump" ] && field "$dump" "' '.join(m['path'] for m in d['modules'] if 'qaudit' in m['path'] or '/fd/' in m['path'])")
  [ "$modules" = "$private/libqaudit-preload.so" ] && pass "the dump's module map names the preload's file: $modules" ||
    fail "the preload in the module map: '$modules' (want $private/libqaudit-preload.so)"
else
  fail "attach nginx worker ${worker:-none}: $(cat "$work/ngx.err" 2>/dev/null)"
fi
# Loaded from a memfd, the preload's name is a descriptor number: a process whose LD_PRELOAD
# holds every digit (a preload the loader could not find, as a typo leaves) is still attached,
# not taken for one started under the preload.
if command -v setpriv >/dev/null; then
  # (setpriv runs the fixture itself: env, run as nobody, could not enter a private build
  # directory such as make mutants' scratch copy)
  LD_PRELOAD=/nonexistent/0123456789.so setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$target" hooks >"$work/digits.out" 2>/dev/null &
  launched=$!
  pids+=("$launched")
  wait_for "$work/digits.out" ready || fail "the fixture with LD_PRELOAD digits did not start"
  if "$qaudit" attach "$launched" --out "$work/digits/" --preload "$private/libqaudit-preload.so" 2>"$work/digits.err"; then
    pass "attached from memory beside an LD_PRELOAD holding every digit"
    "$qaudit" detach "$launched" >/dev/null 2>&1
  else
    fail "attach with LD_PRELOAD digits: $(cat "$work/digits.err")"
  fi
fi

# ---- refusals: exit 2, one line, the process as it was ----
# refused NAME PID [ARGS...]: attach must exit 2 with one line and leave no preload behind.
refused() {
  local name=$1 pid=$2
  shift 2
  local had=no
  has_preload "$pid" && had=yes
  "$@" "$pid" >"$work/out" 2>"$work/err"
  local rc=$? lines
  lines=$(wc -l <"$work/err")
  local now=no
  has_preload "$pid" && now=yes
  if [ $rc -eq 2 ] && [ "$lines" -eq 1 ] && [ "$had" = "$now" ] && kill -0 "$pid" 2>/dev/null; then
    pass "refused, $name: $(cat "$work/err")"
  else
    fail "$name: exit $rc, $lines lines, preload before $had after $now: $(cat "$work/err")"
  fi
}
"$qaudit" attach "$rk" --out "$work/rk/" 2>/dev/null
refused "attached twice" "$rk" "$qaudit" attach
"$qaudit" detach "$rk" >/dev/null 2>&1
refused "--out in a directory that does not exist" "$rk" "$qaudit" attach --out "$work/no-such-dir/d-%p.json"
grep -q "no-such-dir.*does not exist" "$work/err" && [ ! -e "$work/no-such-dir" ] ||
  fail "--out in a missing directory: $(cat "$work/err")"
LD_PRELOAD=$(dirname "$qaudit")/../lib/libqaudit-preload.so QAUDIT_OUT="$work/pre-%p.json" sleep 60 &
pre=$!
pids+=("$pre")
for _ in $(seq 100); do has_preload "$pre" && break; sleep 0.05; done
refused "already under the preload" "$pre" "$qaudit" attach
launch "$work/static.out" "$static"
refused "statically linked" "$launched" "$qaudit" attach
sleep 60 &
other=$!
pids+=("$other")
if command -v setpriv >/dev/null && [ "$(id -u)" = 0 ]; then
  refused "another user's process" "$other" setpriv --reuid=65534 --regid=65534 --clear-groups \
    "$qaudit" attach
  grep -q "belongs to user 0" "$work/err" || fail "another user's process, for another reason: $(cat "$work/err")"
  launch "$work/undumpable.out" setpriv --reuid=65534 --regid=65534 --clear-groups "$target" undumpable
  refused "not dumpable, as its own user (ptrace permission)" "$launched" setpriv --reuid=65534 \
    --regid=65534 --clear-groups "$qaudit" attach
  grep -q "ptrace permission denied" "$work/err" || fail "not dumpable, for another reason: $(cat "$work/err")"
  # Its user cannot read the preload and memfd_create fails there: one line says who could not
  # load what, and what to do.
  launch "$work/no-memfd.out" setpriv --reuid=65534 --regid=65534 --clear-groups "$target" no-memfd
  refused "the preload unreadable to the process's user, no memfd" "$launched" "$qaudit" attach \
    --seccomp-ok --preload "$private/libqaudit-preload.so"
  grep -q "user nobody (uid 65534) cannot load $private/libqaudit-preload.so.*Permission denied.*make install" "$work/err" ||
    fail "the unreadable preload's line does not say who, what and what to do: $(cat "$work/err")"
else
  fail "cannot test another user's process: not root or no setpriv"
fi
kill -STOP "$other"
refused "a stopped process" "$other" "$qaudit" attach
launch "$work/sc.out" "$target" seccomp
sc=$launched
refused "under a seccomp filter (without --seccomp-ok)" "$sc" "$qaudit" attach
# Told it may, the attach goes ahead: the filter kills at the calls of the writer thread's own
# descriptor table, which the preload sees the filter and leaves alone.
mkdir "$work/sc"
if "$qaudit" attach "$sc" --seccomp-ok --out "$work/sc/" --stacks off 2>"$work/sc.err"; then
  sleep 0.5
  dump=$("$qaudit" detach "$sc" 2>/dev/null)
  mallocs=$([ -f "$dump" ] && field "$dump" "d['totals']['calls']['malloc']")
  kill -0 "$sc" 2>/dev/null && [ "${mallocs:-0}" -gt 0 ] &&
    pass "attached with --seccomp-ok under a filter that kills at close_range and pidfd_open: alive, $mallocs mallocs" ||
    fail "--seccomp-ok: alive $(kill -0 "$sc" 2>/dev/null && echo yes || echo no), dump '$dump', mallocs '$mallocs'"
else
  fail "attach --seccomp-ok: $(cat "$work/sc.err")"
fi
kill -CONT "$other"
launch "$work/vfork.out" "$target" vfork
# The vfork child (it sleeps 60 s, holding the test's stderr: ctest waited for it) is killed at
# the end too; it is there once the parent waits in vfork.
for _ in $(seq 600); do vchild=$(pgrep -P "$launched") && break; sleep 0.1; done
[ -n "${vchild:-}" ] && pids+=("$vchild")
refused "a thread in vfork (uninterruptible)" "$launched" "$qaudit" attach
"$qaudit" attach 999999999 2>"$work/err"
[ $? -eq 2 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && pass "refused, no such process: $(cat "$work/err")" ||
  fail "no such process: $(cat "$work/err")"
scope=/proc/sys/kernel/yama/ptrace_scope
[ -f $scope ] || echo "note: no Yama on this kernel ($scope absent): ptrace_scope cannot be set here; refused ptrace is tested as another user"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
