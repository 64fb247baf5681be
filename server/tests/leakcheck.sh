#!/usr/bin/env bash
# ringkv under valgrind memcheck for a short session (commands, a spilled value, a pipelined
# benchmark, a protocol error), then SIGTERM: every heap block must be freed and memcheck must
# report no error. usage: leakcheck.sh RINGKV_BINARY uring|epoll
set -euo pipefail
bin=$1 io=$2
. "$(dirname "$0")/lib.sh"
fail() { echo "FAIL (leakcheck $io): $*" >&2; exit 1; }

# valgrind 3.19 keeps its thread lock across io_uring_enter: a worker blocked there stops every
# other thread. So io_uring runs one worker here, and after SIGTERM a connection attempt wakes
# it (without valgrind the eventfd read queued on the ring does, as the integration test checks).
threads=2
[ "$io" = uring ] && threads=1
start_server 1200 valgrind --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
  --error-exitcode=3 --log-file="$work/valgrind" "$bin" --port 0 --threads "$threads" --io "$io" ||
  fail "server did not start: $(cat "$work/log" "$work/valgrind")"

rc() { timeout 30 redis-cli -p "$port" "$@"; }
rc set a 1 >/dev/null
[ "$(rc incr a)" = 2 ] || fail "INCR did not answer 2"
rc mset x 1 y 2 >/dev/null
rc client setname leakcheck >/dev/null
head -c 300000 /dev/urandom >"$work/big"
rc -x set big <"$work/big" >/dev/null
rc --raw get big | head -c -1 | cmp -s - "$work/big" || fail "spilled value did not read back"
timeout 120 redis-benchmark -p "$port" -t set,get -n 2000 -c 10 -P 16 -d 512 -q >"$work/bench" 2>&1
[ "$(grep -c 'requests per second' "$work/bench")" -eq 2 ] || fail "benchmark: $(cat "$work/bench")"
printf '*1\r\n$-5\r\n' | timeout 10 bash -c "exec 3<>/dev/tcp/127.0.0.1/$port; cat >&3; cat <&3" >/dev/null || true

kill -TERM "$server_pid"
for _ in $(seq 150); do
  kill -0 "$server_pid" 2>/dev/null || break
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null || true
  sleep 0.2
done
status=0
wait "$server_pid" || status=$?
server_pid=
[ "$status" -eq 0 ] || fail "exit status $status: $(tail -30 "$work/valgrind")"
grep -q "All heap blocks were freed" "$work/valgrind" ||
  fail "memory still allocated at exit: $(grep -A8 'HEAP SUMMARY' "$work/valgrind")"
echo "ok: no leak, no memcheck error ($io)"
