#!/usr/bin/env bash
# ringkv against redis-server (persistence off) under redis-benchmark -t set,get -d 1024, all on
# 127.0.0.1 in one run; then the three queue variants against each other in AB/BA/AB order.
# Prints Markdown tables. usage: bench/ringkv_bench.sh [SECONDS_PER_TEST] (default 5)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-5}
bin=$top/build/bin
"$top/scripts/deps.sh" bench
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
ulimit -n 4096 2>/dev/null || true

free_port() { # the kernel's pick, released at once (python3 when present, else a random high port)
  python3 - 2>/dev/null <<'PY' || echo $((20000 + RANDOM % 20000))
import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])
PY
}

start() { # start NAME: sets server_pid and port
  port=$(free_port)
  case $1 in
    redis) redis-server --bind 127.0.0.1 --port "$port" --save '' --appendonly no \
             --daemonize no --logfile "$work/redis.log" >/dev/null & ;;
    ringkv1) "$bin/ringkv" --port "$port" --threads 1 >"$work/log" & ;;
    ringkv2) "$bin/ringkv" --port "$port" --threads 2 >"$work/log" & ;;
    inline) "$bin/ringkv" --port "$port" --threads 1 >"$work/log" & ;;
    ring) "$bin/ringkv-ring" --port "$port" --threads 1 >"$work/log" & ;;
    deque) "$bin/ringkv-deque" --port "$port" --threads 1 >"$work/log" & ;;
  esac
  server_pid=$!
  for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && return; sleep 0.05; done
  echo "could not start $1" >&2
  exit 1
}

stop() {
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

# run CLIENTS PIPELINE N -> "set_rps set_p50 set_p99 get_rps get_p50 get_p99"
run() {
  redis-benchmark -p "$port" -t set,get -d 1024 -c "$1" -P "$2" -n "$3" -r 100000 --csv \
    2>/dev/null | tr -d '"' | awk -F, '$1=="SET"{s=$2" "$5" "$7} $1=="GET"{g=$2" "$5" "$7} END{print s" "g}'
}

# Requests for about $seconds per test at this cell, from a short calibration run.
size_for() {
  local rps
  rps=$(run "$1" "$2" 20000 | awk '{print ($1 < $4 ? $1 : $4)}')
  awk -v r="$rps" -v s="$seconds" 'BEGIN{n = int(r * s * 1.1); if (n < 20000) n = 20000; print n}'
}

median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

echo "## ringkv against redis-server"
echo
echo "redis-benchmark -t set,get -d 1024 -r 100000 -c C -P P -n N (N sized for >= ${seconds} s per test), median of 3 runs"
echo
echo "| server | -c | -P | SET QPS | SET p50 ms | SET p99 ms | GET QPS | GET p50 ms | GET p99 ms |"
echo "|---|---|---|---|---|---|---|---|---|"
for cell in "50 1" "50 16" "320 1" "320 16"; do
  set -- $cell
  start redis
  n=$(size_for "$1" "$2")
  stop
  for server in redis ringkv1 ringkv2; do
    start "$server"
    : >"$work/runs"
    for _ in 1 2 3; do run "$1" "$2" "$n" >>"$work/runs"; done
    stop
    row="| $server | $1 | $2 |"
    for col in 1 2 3 4 5 6; do row="$row $(awk -v c=$col '{print $c}' "$work/runs" | median) |"; done
    echo "$row"
  done
done

echo
echo "## Queue variants, paired (single worker, io_uring)"
echo
echo "Each pair runs A B B A A B; the change is B's QPS over A's in each adjacent A/B pair, median of the three."
echo
echo "| A | B | -c | -P | SET change | GET change |"
echo "|---|---|---|---|---|---|"
for cell in "50 1" "50 16"; do
  set -- $cell
  start inline
  n=$(size_for "$1" "$2")
  stop
  for other in ring deque; do
    : >"$work/pairs"
    for order in "inline $other" "$other inline" "inline $other"; do
      declare -A result=()
      for v in $order; do
        start "$v"
        result[$v]=$(run "$1" "$2" "$n")
        stop
      done
      awk -v a="${result[inline]}" -v b="${result[$other]}" 'BEGIN{split(a,x," "); split(b,y," "); printf "%.4f %.4f\n", y[1]/x[1]-1, y[4]/x[4]-1}' >>"$work/pairs"
    done
    set_change=$(awk '{print $1}' "$work/pairs" | median)
    get_change=$(awk '{print $2}' "$work/pairs" | median)
    printf '| inline | %s | %s | %s | %+.1f %% | %+.1f %% |\n' "$other" "$1" "$2" \
      "$(awk -v v="$set_change" 'BEGIN{print v*100}')" "$(awk -v v="$get_change" 'BEGIN{print v*100}')"
  done
done
