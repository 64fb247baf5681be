#!/usr/bin/env bash
# qaudit report on a dump with many sites: ringkv runs under `qaudit run --stacks always` with a
# short load for real return addresses, then a dump with SITES distinct stacks is made from them
# (each stack a random walk over the real frames) and reported, medians of RUNS, per format.
# usage: bench/report_bench.sh [SITES] [RUNS]   (defaults 50000 and 5)
# Formats: json, text, html, and the profile exports pprof and folded.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
sites=${1:-50000}
runs=${2:-5}
bin=${QAUDIT_BIN:-$top/build/bin} # QAUDIT_BIN: another build's bin/
work=$(mktemp -d)
trap 'kill "${runner:-0}" 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin/qaudit" run --stacks always --out "$work/real.json" -- "$bin/ringkv" --port 0 --threads 1 \
  >"$work/log" 2>&1 &
runner=$!
for _ in $(seq 100); do
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/log")
  [ -n "$port" ] && break
  sleep 0.05
done
redis-benchmark -h 127.0.0.1 -p "$port" -t set,get -n 20000 -c 10 -d 1024 -P 4 -q >/dev/null
kill -TERM "$runner"
wait "$runner" || true

python3 - "$work/real.json" "$work/big.json" "$sites" <<'PY'
import json, random, sys
d = json.load(open(sys.argv[1]))
frames = sorted({f for s in d["sites"] for f in s["frames"]})
random.seed(1)
seen, out = set(), []
while len(out) < int(sys.argv[3]):
    stack = tuple(random.choice(frames) for _ in range(random.randint(4, 12)))
    if stack in seen:
        continue
    seen.add(stack)
    n = random.randint(1, 1000)
    out.append({"id": len(out) + 1, "frames": list(stack), "allocs": n, "frees": n,
                "bytes": 64 * n, "live_bytes": 0, "peak_live_bytes": 64, "never_written_bytes": 0,
                "queue_allocs": 0})
d["sites"] = out
json.dump(d, open(sys.argv[2], "w"))
print(f"{len(out)} sites over {len(frames)} distinct return addresses", file=sys.stderr)
PY

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
echo "| format | seconds (median of $runs) |"
echo "| --- | --- |"
for format in json text html pprof folded; do
  : >"$work/times"
  for _ in $(seq "$runs"); do
    start=$EPOCHREALTIME
    "$bin/qaudit" report "$work/big.json" --format "$format" -o "$work/out" 2>/dev/null || true
    end=$EPOCHREALTIME
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }' >>"$work/times"
  done
  echo "| $format | $(median <"$work/times") |"
done
