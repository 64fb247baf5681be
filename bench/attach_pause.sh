#!/bin/bash
# qaudit attach/detach pause (issue 24): ringkv with 2 worker threads under redis-benchmark
# (-c 50 -P 16, 127.0.0.1), attached and detached ROUNDS times. The attach's pause is what
# `qaudit attach` prints (first thread seized to last one let go); detach stops no thread (the
# preload's writer thread restores the entries), its wall time is the command's.
# usage: bench/attach_pause.sh [BUILD_DIR] [ROUNDS]
set -u
build=${1:-build} rounds=${2:-10}
work=$(mktemp -d)
trap 'kill $rk $bench 2>/dev/null; rm -rf "$work"' EXIT
"$build/bin/ringkv" --port 0 --threads 2 >"$work/ringkv.out" 2>&1 &
rk=$!
for _ in $(seq 100); do grep -q listening "$work/ringkv.out" && break; sleep 0.1; done
port=$(grep -o '127.0.0.1:[0-9]*' "$work/ringkv.out" | cut -d: -f2)
redis-benchmark -h 127.0.0.1 -p "$port" -n 100000000 -c 50 -P 16 -t set,get -q >/dev/null 2>&1 &
bench=$!
sleep 1
for i in $(seq "$rounds"); do
  "$build/bin/qaudit" attach "$rk" --out "$work/" 2>"$work/a.err" || { cat "$work/a.err"; exit 1; }
  grep -o 'paused [0-9.]* ms, [0-9.]*' "$work/a.err" | tr -d ',' |
    awk '{print "attach_pause_ms", $2; print "attach_stop_ms", $4}'
  sleep 0.5
  start=$(date +%s%N)
  "$build/bin/qaudit" detach "$rk" >/dev/null 2>&1 || exit 1
  echo "detach_wall_ms $(( ($(date +%s%N) - start) / 1000000 ))"
done | awk '{v[$1]=v[$1] " " $2; print} END {for (k in v) print k ":" v[k]}'
