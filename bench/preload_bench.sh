#!/usr/bin/env bash
# The interposer's cost, side by side on this machine: bench/malloc_bench natively, under
# libqaudit-preload.so in each stack mode, under heaptrack and under valgrind --tool=dhat; then
# ringkv under redis-benchmark with and without the preload. Medians of RUNS, ratios to native.
# usage: bench/preload_bench.sh [RUNS] [OPS]   (defaults 5 and 2000000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
ops=${2:-2000000}
bin=$top/build/bin
preload=$top/build/lib/libqaudit-preload.so
"$top/scripts/deps.sh" bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

# tool NAME WORKLOAD THREADS -> median ns per allocation
measure() {
  local name=$1 workload=$2 threads=$3
  for _ in $(seq "$runs"); do
    case $name in
      native) "$bin/malloc_bench" "$workload" "$threads" "$ops" ;;
      qaudit-*) QAUDIT_STACKS=${name#qaudit-} QAUDIT_OUT=$work/dump.json LD_PRELOAD=$preload \
                  "$bin/malloc_bench" "$workload" "$threads" "$ops" ;;
      heaptrack) heaptrack -o "$work/heaptrack" "$bin/malloc_bench" "$workload" "$threads" "$ops" \
                   2>/dev/null | grep -E '^[0-9.]+$'; rm -f "$work"/heaptrack* ;;
      dhat) valgrind --tool=dhat --dhat-out-file="$work/dhat.out" "$bin/malloc_bench" \
              "$workload" "$threads" "$ops" 2>/dev/null ;;
    esac
  done | median
}

tools="native qaudit-off qaudit-queue qaudit-sampled:64 qaudit-fp qaudit-always heaptrack dhat"
echo "## Interposer overhead: malloc_bench, $ops allocations per thread, median of $runs"
echo
echo "ns per allocation (per thread), and the ratio to native in brackets."
echo
printf '| workload | threads |'
for t in $tools; do printf ' %s |' "$t"; done
printf '\n|---|---|'
for _ in $tools; do printf -- '---|'; done
printf '\n'
for cell in "churn 1" "churn 2" "live10k 1"; do
  set -- $cell
  base=$(measure native "$1" "$2")
  printf '| %s | %s |' "$1" "$2"
  for t in $tools; do
    if [ "$t" = native ]; then value=$base; else value=$(measure "$t" "$1" "$2"); fi
    printf ' %s (%.2fx) |' "$value" "$(awk -v a="$value" -v b="$base" 'BEGIN{print a/b}')"
  done
  printf '\n'
done

echo
echo "## ringkv with and without the preload (QAUDIT_STACKS=queue)"
echo
echo "redis-benchmark -t set,get -d 1024 -c 50 -n 300000 -r 100000, one worker, median of $runs, A/B interleaved"
echo
echo "| -P | GET QPS native | GET QPS preload | ratio | SET QPS native | SET QPS preload | ratio |"
echo "|---|---|---|---|---|---|---|"
bench_once() { # bench_once PRELOAD(0|1) PIPELINE -> "set get"
  local log=$work/ringkv.log
  if [ "$1" = 1 ]; then
    QAUDIT_OUT=$work/ringkv-%p.json LD_PRELOAD=$preload "$bin/ringkv" --port 0 --threads 1 >"$log" &
  else
    "$bin/ringkv" --port 0 --threads 1 >"$log" &
  fi
  local pid=$!
  for _ in $(seq 100); do grep -q listening "$log" && break; sleep 0.05; done
  local port
  port=$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\).*/\1/p' "$log")
  redis-benchmark -p "$port" -t set,get -d 1024 -c 50 -n 300000 -r 100000 -P "$2" --csv 2>/dev/null |
    tr -d '"' | awk -F, '$1=="SET"{s=$2} $1=="GET"{g=$2} END{print s" "g}'
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
for pipeline in 1 16; do
  : >"$work/native"
  : >"$work/preload"
  for _ in $(seq "$runs"); do
    bench_once 0 "$pipeline" >>"$work/native"
    bench_once 1 "$pipeline" >>"$work/preload"
  done
  ns=$(awk '{print $1}' "$work/native" | median)
  ng=$(awk '{print $2}' "$work/native" | median)
  ps=$(awk '{print $1}' "$work/preload" | median)
  pg=$(awk '{print $2}' "$work/preload" | median)
  printf '| %s | %s | %s | %.3f | %s | %s | %.3f |\n' "$pipeline" "$ng" "$pg" \
    "$(awk -v a="$pg" -v b="$ng" 'BEGIN{print a/b}')" "$ns" "$ps" \
    "$(awk -v a="$ps" -v b="$ns" 'BEGIN{print a/b}')"
done
