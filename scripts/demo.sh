#!/usr/bin/env bash
# make demo: the whole audit of the inline-queue change on ringkv, on 127.0.0.1 only: ringkv
# under `qaudit run` (its default stacks: every allocation's) with redis-benchmark at pipeline 1
# then 16, a snapshot while it runs, the text report, the HTML report (with screenshots at 400 and
# 1400 px beside it when chromium is installed), the gate, and the compare table of the three
# builds. Everything it writes goes under build/: the clone is left as it was found.
# QAUDIT_BIN: another build's bin/.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=${QAUDIT_BIN:-$top/build/bin}
out=$bin/../demo
qaudit=$bin/qaudit
rm -rf "$out"
mkdir -p "$out"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

section() { printf '\n=== %s ===\n\n' "$1"; }

# start_ringkv NAME BINARY [QAUDIT RUN OPTIONS...]: ringkv under qaudit run on a free port;
# sets runner (qaudit's pid), server (ringkv's pid) and port.
start_ringkv() {
  local name=$1 binary=$2
  shift 2
  "$qaudit" run --out "$out/$name-%p-%n.json" "$@" -- "$binary" --port 0 --threads 2 \
    >"$out/$name.log" 2>&1 &
  runner=$!
  pids+=("$runner")
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$out/$name.log")
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { cat "$out/$name.log"; exit 1; }
  server=$(pgrep -P "$runner")
}

# load N PIPELINE: SET and GET of 1 KiB values; at pipeline 16 a batch spans several receive
# buffers, so queues get deeper than one.
load() {
  redis-benchmark -h 127.0.0.1 -p "$port" -t set,get -n "$1" -c 50 -d 1024 -P "$2" -q |
    tr '\r' '\n' | grep 'per second' | sed 's/^/  /'
}

stop_ringkv() {
  kill -TERM "$runner"
  wait "$runner" || true
  sed -n '/^qaudit run: dump/,$p' "$out/$1.log"
}

section "1. ringkv (inline queue) under qaudit run, redis-benchmark at pipeline 1, then 16"
start_ringkv ringkv "$bin/ringkv"
grep -m1 "listening" "$out/ringkv.log"
echo "pipeline 1 (depth one):"
load 100000 1
echo "snapshot while it runs: $("$qaudit" snapshot "$server")"
echo "pipeline 16 (deeper queues):"
load 100000 16
stop_ringkv ringkv

section "2. The allocation report (text)"
dumps=("$out"/ringkv-*.json)
"$qaudit" report "${dumps[@]}" --binary "$bin/ringkv" --top 5 || true

section "3. The HTML report"
"$qaudit" report "${dumps[@]}" --binary "$bin/ringkv" --format html -o "$out/report.html" || true
echo "wrote $out/report.html"
if command -v chromium >/dev/null; then
  for width in 400 1400; do
    "$top/scripts/chromium_page.sh" shot "$width" 2400 "$out/report.html" "$out/report-$width.png"
  done
  echo "screenshots: $out/report-400.png, $out/report-1400.png (headless Chromium)"
else
  echo "no screenshots: chromium is not installed (scripts/deps.sh installs it)"
fi

section "4. The CI gate against probe/baselines/ringkv.json, for each build"
for b in ringkv ringkv-ring ringkv-deque; do
  echo "--- $b"
  "$qaudit" gate --baseline "$top/probe/baselines/ringkv.json" "$bin/$b" || true
done

section "5. The three builds side by side, each under a short depth-one load"
compare_args=()
for b in ringkv ringkv-ring ringkv-deque; do
  start_ringkv "cmp-$b" "$bin/$b" --stacks off
  load 20000 1 >/dev/null
  kill -TERM "$runner"
  wait "$runner" || true
  compare_args+=("$bin/$b" --dump "$(ls "$out"/cmp-"$b"-*.json | tail -1)")
done
"$qaudit" compare "${compare_args[@]}"
echo
echo "HTML report: $out/report.html"
