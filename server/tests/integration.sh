#!/usr/bin/env bash
# Integration test for one ringkv binary and one I/O model, with real clients on 127.0.0.1:
# redis-cli round trips (binary, multi-buffer and spilled values), redis-benchmark at pipeline 1
# and 32 with the data read back, garbage on one connection during a benchmark, 1,000
# connections opened and closed, and a clean shutdown on SIGTERM.
# usage: integration.sh RINGKV_BINARY uring|epoll
set -euo pipefail
bin=$1 io=$2
. "$(dirname "$0")/lib.sh"
fail() { echo "FAIL ($io $(basename "$bin")): $*" >&2; exit 1; }

ulimit -n 4096 2>/dev/null || true
start_server 600 "$bin" --port 0 --threads 2 --io "$io" || fail "server did not start: $(cat "$work/log")"
grep -q "io=$io" "$work/log" || fail "asked for --io $io, got: $(cat "$work/log")"

rc() { timeout 20 redis-cli -p "$port" "$@"; }
expect() { # expect EXPECTED COMMAND...
  local want=$1 got
  shift
  got=$(rc "$@") || fail "redis-cli $* failed"
  [ "$got" = "$want" ] || fail "$*: want '$want', got '$got'"
}

# Round trips.
expect PONG ping
expect OK set greeting hello
expect hello get greeting
expect 1 exists greeting
expect 1 del greeting
expect 0 del greeting
expect "" get greeting
expect 1 incr counter
expect 2 incr counter
expect OK mset a 1 b 2 c 3
expect $'1\n2\n\n3' mget a b nokey c
expect "ERR unknown command 'nosuchcommand'" nosuchcommand
expect OK set ttl v PX 100000
expect "" set a x NX
expect 1 get a

# Binary values: NUL, CR and LF inside; one larger than a receive buffer; one that spills.
printf 'a\0b\r\nc\0\r\n' >"$work/binary"
head -c 20000 /dev/urandom >"$work/multi"
head -c 300000 /dev/urandom >"$work/spill"
for f in binary multi spill; do
  rc -x set "$f" <"$work/$f" >/dev/null
  rc --raw get "$f" | head -c -1 >"$work/$f.back"
  cmp -s "$work/$f" "$work/$f.back" || fail "value $f ($(stat -c %s "$work/$f") B) did not read back"
done

# Load at pipeline 1 and 32, then a sample read back: each key holds exactly the 1024-byte
# payload redis-benchmark wrote, the same bytes for every key.
bench() { timeout 120 redis-benchmark -p "$port" "$@" >"$work/bench" 2>&1 || fail "redis-benchmark $*: $(tail -3 "$work/bench")"; }
for pipeline in 1 32; do
  rc flushall >/dev/null
  bench -t set,get -n 100000 -c 50 -d 1024 -P "$pipeline" -r 10000 -q
  grep -qi "error" "$work/bench" && fail "benchmark -P $pipeline reported: $(grep -i error "$work/bench" | head -2)"
  [ "$(grep -c 'requests per second' "$work/bench")" -eq 2 ] || fail "benchmark -P $pipeline: $(cat "$work/bench")"
  first=
  for k in 000000000001 000000000777 000000004242 000000009999 000000000100 000000005000; do
    rc --raw get "key:$k" | head -c -1 >"$work/value"
    [ -s "$work/value" ] || continue
    [ "$(stat -c %s "$work/value")" -eq 1024 ] || fail "key:$k holds $(stat -c %s "$work/value") bytes"
    if [ -z "$first" ]; then first=$work/first; cp "$work/value" "$first"; fi
    cmp -s "$first" "$work/value" || fail "key:$k differs from the other keys"
  done
  [ -n "$first" ] || fail "no sampled key was written at -P $pipeline"
done

# Garbage on one connection while another runs a benchmark: the bad one gets a protocol error
# and is closed, the benchmark finishes clean, the data is intact.
rc -x set keep <"$work/spill" >/dev/null
timeout 120 redis-benchmark -p "$port" -t set,get -n 50000 -c 20 -d 64 -q >"$work/bench" 2>&1 &
load=$!
printf '*1\r\n$-5\r\nxx' | timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; cat >&3; cat <&3" >"$work/garbage" || true
grep -q "^-ERR Protocol error: invalid bulk length" "$work/garbage" || fail "garbage reply: $(od -c "$work/garbage" | head -2)"
head -c 70000 /dev/urandom | tr -d '\n*' | timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; cat >&3; cat <&3" >"$work/junk" 2>/dev/null || true
grep -q "^-ERR Protocol error" "$work/junk" || fail "binary junk reply: $(od -c "$work/junk" | head -2)"
wait $load || fail "benchmark beside garbage failed: $(tail -3 "$work/bench")"
[ "$(grep -c 'requests per second' "$work/bench")" -eq 2 ] || fail "benchmark beside garbage: $(cat "$work/bench")"
rc --raw get keep | head -c -1 | cmp -s "$work/spill" - || fail "stored value lost after garbage"

# 1,000 connections opened and closed: INFO shows them all gone.
bench -t ping -n 2000 -c 1000 -q
for _ in $(seq 100); do
  clients=$(rc info clients | tr -d '\r' | sed -n 's/^connected_clients://p')
  [ "$clients" = 1 ] && break
  sleep 0.05
done
[ "$clients" = 1 ] || fail "connected_clients is $clients after 1,000 connections closed"
total=$(rc info stats | tr -d '\r' | sed -n 's/^total_connections_received://p')
[ "$total" -ge 1000 ] || fail "total_connections_received is $total"

# Clean shutdown.
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=
[ "$status" -eq 0 ] || fail "exit status $status after SIGTERM: $(cat "$work/log")"
grep -q "ringkv: shut down" "$work/log" || fail "no shutdown line: $(cat "$work/log")"
echo "ok: $(basename "$bin") --io $io"
