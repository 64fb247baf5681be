#!/usr/bin/env bash
# Fork cost under the interposer (issue 19, point 6): bench/fork_cost (FORKS times: fork, a child
# that makes ten allocations and exits, wait) natively and under `qaudit run --stacks queue` (the
# preload's own defaults, what QAUDIT_STACKS unset gives), with a parent holding no live blocks
# and one holding 2,000 (what a server's master holds and every child inherits). Interleaved
# rounds; medians of microseconds per fork (wall), of CPU milliseconds and page faults per fork
# (`perf stat`: task-clock and page-faults, parent and children) and of each round's own ratios
# to native.
# The row `native+file` runs the same children natively, each also creating one 4 KiB file in
# the directory the dumps go to (fork_cost's DIR): what one file per process costs on that file
# system by itself, the floor of any tool that leaves a dump per process.
# PRELOADS="NAME=PATH ..." compares preload builds (A/B) in the same rounds; by default this
# tree's build/lib/libqaudit-preload.so. Each run's dumps go to a directory of its own, removed
# only at the end (ext4 makes a file created just after many were deleted slower to create).
# STACKS=MODE runs the preload in another stack mode (default queue, the preload's own default;
# `always` is what `qaudit run` uses when --stacks is not given).
# usage: bench/fork_bench.sh [RUNS] [FORKS]   (defaults 7 and 1000)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-7}
forks=${2:-1000}
bin=$top/build/bin
preloads=${PRELOADS:-this=$top/build/lib/libqaudit-preload.so}
stacks=${STACKS:-queue}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

# one PRELOAD LIVE RUN -> "microseconds-per-fork faults-per-fork cpu-ms-per-fork"; the dumps counted into
# $work/dumps-NAME-LIVE
one() {
  local name=$1 so=$2 live=$3 out=$work/out-$1-$3-$4 stat=$work/stat
  mkdir "$out"
  local cmd=("$bin/fork_cost" "$forks" "$live")
  case $name in
  native) ;;
  native+file) cmd+=("$out") ;;
  *) cmd=("$bin/qaudit" run --preload "$so" --stacks "$stacks" --out "$out/d-%p.json" -- "${cmd[@]}") ;;
  esac
  local us
  us=$(perf stat -x, -e page-faults,task-clock -o "$stat" -- "${cmd[@]}" 2>/dev/null)
  echo "$us $(awk -F, -v n="$forks" '/page-faults/ {printf "%.1f", $1 / n}' "$stat")" \
    "$(awk -F, -v n="$forks" '/task-clock/ {printf "%.3f", $1 / n}' "$stat")"
  case $name in native | native+file) ;; *) echo "$(ls "$out" | wc -l) $(du -sk "$out" | cut -f1)" >>"$work/dumps-$name-$live" ;; esac
}

names=(native native+file)
for p in $preloads; do names+=("${p%%=*}"); done
so_of() { for p in $preloads; do [ "${p%%=*}" = "$1" ] && echo "${p#*=}"; done; }

for live in 0 2000; do
  for r in $(seq "$runs"); do
    line=""
    for name in "${names[@]}"; do line="$line $(one "$name" "$(so_of "$name")" "$live" "$r")"; done
    echo "$line"
  done >"$work/rounds-$live"
done

echo "## Fork cost: fork_cost $forks forks, $runs interleaved rounds, --stacks $stacks ($(date -u +%Y-%m-%d))"
echo
echo "| parent's live blocks | build | us/fork, wall (median) | ratio to native (median of rounds) | ratio to native+file (median of rounds) | CPU ms/fork (median) | CPU ratio to native (median of rounds) | page faults/fork (median) | dumps per run | KiB of dumps per child |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for live in 0 2000; do
  r=$work/rounds-$live
  for i in "${!names[@]}"; do
    name=${names[$i]}
    us=$(awk -v c=$((3 * i + 1)) '{print $c}' "$r" | median)
    pf=$(awk -v c=$((3 * i + 2)) '{print $c}' "$r" | median)
    cpu=$(awk -v c=$((3 * i + 3)) '{print $c}' "$r" | median)
    ratio=$(awk -v c=$((3 * i + 1)) '{printf "%.3f\n", $c / $1}' "$r" | median)
    ratio_file=$(awk -v c=$((3 * i + 1)) '{printf "%.3f\n", $c / $4}' "$r" | median)
    cpu_ratio=$(awk -v c=$((3 * i + 3)) '{printf "%.3f\n", $c / $3}' "$r" | median)
    if [ "$name" = native ]; then
      echo "| $live | native | $us | 1 | - | $cpu | 1 | $pf | - | - |"
    elif [ "$name" = native+file ]; then
      echo "| $live | native+file | $us | $ratio | 1 | $cpu | $cpu_ratio | $pf | - | - |"
    else
      d=$work/dumps-$name-$live
      echo "| $live | $name | $us | $ratio | $ratio_file | $cpu | $cpu_ratio | $pf | $(awk '{print $1}' "$d" | median) | $(awk '{printf "%.1f\n", $2 / $1}' "$d" | median) |"
    fi
  done
done
