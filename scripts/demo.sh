#!/usr/bin/env bash
# make demo: what qaudit can show today, on ringkv, in about a minute, on 127.0.0.1 only.
# (The qaudit run/report/compare commands and the HTML report arrive with issue 6; until then the
# demo shows the pieces: queue benchmark, layouts and classes, the gate, a live interposer run.)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/build/bin
out=$top/build/demo
mkdir -p "$out"
rm -f "$out"/ringkv-*.json

section() { printf '\n=== %s ===\n\n' "$1"; }

section "1. The queue: inline ring vs the previous ring vs a std::deque-like deque"
"$bin/queue_bench" 3

section "2. The connection as the compiler laid it out, and its allocator classes"
"$bin/qaudit" layout --type connection --type rxq "$bin/ringkv"
"$bin/qaudit" classes 176 184 232

section "3. The CI gate against probe/baselines/ringkv.json, for each build"
for b in ringkv ringkv-ring ringkv-deque; do
  echo "--- $b"
  "$bin/qaudit" gate --baseline "$top/probe/baselines/ringkv.json" "$bin/$b" || true
done

section "4. ringkv under libqaudit-preload.so with redis-benchmark (pipeline 1, then 16)"
QAUDIT_OUT="$out/ringkv-%p-%n.json" LD_PRELOAD="$top/build/lib/libqaudit-preload.so" \
  "$bin/ringkv" --port 0 --threads 2 >"$out/ringkv.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 100); do grep -q listening "$out/ringkv.log" && break; sleep 0.05; done
port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out/ringkv.log")
cat "$out/ringkv.log"
redis-benchmark -p "$port" -t set,get -n 100000 -c 50 -d 1024 -P 1 -q | tr "\r" "\n" | grep "per second"
kill -USR2 "$pid" # a snapshot while it runs
redis-benchmark -p "$port" -t set,get -n 100000 -c 50 -d 1024 -P 16 -q | tr "\r" "\n" | grep "per second"
kill -TERM "$pid"
wait "$pid" || true
trap - EXIT
echo
echo "dumps (format qaudit-alloc/1, docs/dump-format.md):"
ls -1 "$out"/ringkv-*.json
last=$(ls -1 "$out"/ringkv-*.json | tail -1)
echo
echo "checks in the exit dump:"
grep -o '"name":"[a-z_0-9]*","passed":[a-z]*,"detail":"[^"]*"' "$last" | sed 's/^/  /'
echo
echo "depth histogram and allocations by depth:"
grep -o '"depth_histogram":\[[^]]*\]' "$last" | sed 's/^/  /'
grep -o '"allocs_by_depth":\[[^]]*\]' "$last" | sed 's/^/  /'
