#!/usr/bin/env bash
# What each tool keeps per live block (issue 41, item 5): bench/live_blocks holds BLOCKS blocks of
# 32 bytes from 16 call paths and prints its own peak resident memory (VmHWM); a tool's cost per
# live block is its peak with BLOCKS blocks less its peak with none, less the same difference
# natively, over BLOCKS. heaptrack keeps its bookkeeping in another process (heaptrack_interpret,
# fed through a pipe): its peak is polled every 20 ms and added, the same difference taken.
# Medians of RUNS runs. usage: bench/live_memory.sh [BLOCKS] [RUNS]   (defaults 1000000 and 3)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
blocks=${1:-1000000}
runs=${2:-3}
bin=$top/build/bin
so=${PRELOAD:-$top/build/lib/libqaudit-preload.so}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

# peak KiB of the process (and of heaptrack's interpreter) for one MODE and N blocks
peak() {
  local mode=$1 n=$2
  case $mode in
  native) "$bin/live_blocks" "$n" | awk '{print $1}' ;;
  heaptrack)
    heaptrack -o "$work/ht" "$bin/live_blocks" "$n" >"$work/ht.out" 2>&1 &
    local launcher=$! interp=0 p v
    while kill -0 "$launcher" 2>/dev/null; do
      for p in $(pgrep -P "$launcher" -f heaptrack_interpret 2>/dev/null; pgrep -f "heaptrack_interpret" 2>/dev/null); do
        v=$(awk '/^VmHWM/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
        [[ -n $v && $v -gt $interp ]] && interp=$v
      done
      sleep 0.02
    done
    wait "$launcher" || true
    local own
    own=$(awk 'NF == 2 && $1 ~ /^[0-9]+$/ {print $1}' "$work/ht.out")
    rm -f "$work"/ht*
    echo $((own + interp))
    ;;
  *) env LD_PRELOAD="$so" QAUDIT_STACKS="$mode" QAUDIT_OUT="$work/d-%p.json" \
       "$bin/live_blocks" "$n" | awk '{print $1}'
     rm -f "$work"/d-*.json ;;
  esac
}

modes=(native off sampled:64 fp always heaptrack)
declare -A per
for mode in "${modes[@]}"; do
  : >"$work/$mode"
  for ((r = 0; r < runs; r++)); do
    echo $(($(peak "$mode" "$blocks") - $(peak "$mode" 0))) >>"$work/$mode"
  done
  per[$mode]=$(median <"$work/$mode")
done
echo "## Memory per live block: $blocks blocks of 32 B, 16 call paths, median of $runs ($(date -u +%Y-%m-%d))"
echo
echo "| tool | peak KiB with the blocks less without | over native, bytes per live block |"
echo "|---|---|---|"
for mode in "${modes[@]}"; do
  awk -v m="$mode" -v d="${per[$mode]}" -v nat="${per[native]}" -v n="$blocks" \
    'BEGIN { printf "| %s | %d | %s |\n", m, d, m == "native" ? "-" : sprintf("%.1f", (d - nat) * 1024 / n) }'
done
