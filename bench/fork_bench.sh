#!/usr/bin/env bash
# Fork cost under the interposer (issue 19, point 6): bench/fork_cost (FORKS times: fork, a child
# that makes ten allocations and exits, wait) natively and under `qaudit run` in its default mode
# (sampled stacks), with a parent holding no live blocks and one holding 2,000 (what a server's
# master holds and every child inherits). Interleaved rounds; medians of microseconds per fork
# and the median over rounds of each round's own ratio to native.
# usage: bench/fork_bench.sh [RUNS] [FORKS]   (defaults 7 and 1000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-7}
forks=${2:-1000}
bin=$top/build/bin
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

# one MODE LIVE -> microseconds per fork, one run (its dumps counted into $work/dumps-MODE-LIVE)
one() {
  local mode=$1 live=$2 out=$work/out
  rm -rf "$out" && mkdir "$out"
  case $mode in
    native) "$bin/fork_cost" "$forks" "$live" ;;
    default) "$bin/qaudit" run --out "$out/d-%p.json" -- "$bin/fork_cost" "$forks" "$live" 2>/dev/null ;;
  esac
  if [ "$mode" != native ]; then
    echo "$(ls "$out" | wc -l) $(du -sk "$out" | cut -f1)" >>"$work/dumps-$mode-$live"
  fi
}

for live in 0 2000; do
  for _ in $(seq "$runs"); do
    n=$(one native "$live")
    q=$(one default "$live")
    echo "$n $q $(awk -v a="$q" -v b="$n" 'BEGIN{printf "%.3f", a / b}')"
  done >"$work/rounds-$live"
done

echo "## Fork cost: fork_cost $forks forks, $runs interleaved rounds ($(date -u +%Y-%m-%d))"
echo
echo "| parent's live blocks | native us/fork | qaudit run (default) us/fork | ratio (median of rounds) | dumps per run | KiB of dumps per child |"
echo "|---|---|---|---|---|---|"
for live in 0 2000; do
  r=$work/rounds-$live
  d=$work/dumps-default-$live
  files=$(awk '{print $1}' "$d" | median)
  kib=$(awk '{printf "%.1f\n", $2 / $1}' "$d" | median)
  echo "| $live | $(awk '{print $1}' "$r" | median) | $(awk '{print $2}' "$r" | median) | $(awk '{print $3}' "$r" | median) | $files | $kib |"
done
