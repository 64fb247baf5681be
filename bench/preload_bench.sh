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

# run_tool NAME WORKLOAD THREADS -> ns per allocation, one run
run_tool() {
  local name=$1 workload=$2 threads=$3
  case $name in
    native) "$bin/malloc_bench" "$workload" "$threads" "$ops" ;;
    floor-*) LD_PRELOAD=$top/build/lib/libqaudit-$name.so \
               "$bin/malloc_bench" "$workload" "$threads" "$ops" ;;
    qaudit-*) QAUDIT_STACKS=${name#qaudit-} QAUDIT_OUT=$work/dump.json LD_PRELOAD=$preload \
                "$bin/malloc_bench" "$workload" "$threads" "$ops" ;;
    heaptrack) heaptrack -o "$work/heaptrack" "$bin/malloc_bench" "$workload" "$threads" "$ops" \
                 2>/dev/null | grep -E '^[0-9.]+$'; rm -f "$work"/heaptrack* ;;
    dhat) valgrind --tool=dhat --dhat-out-file="$work/dhat.out" "$bin/malloc_bench" \
            "$workload" "$threads" "$ops" 2>/dev/null ;;
  esac
}

# This VM's speed drifts by tens of percent within a minute, so every round runs every tool
# once, and a ratio is the median of the rounds' own ratios, not a ratio of medians taken at
# different times.
# floor-count and floor-usable (bench/floor_preload.c) are what any interposer pays here: one
# thread-local counter per call, and that plus the two malloc_usable_size calls exact usable and
# live bytes need.
tools="native floor-count floor-usable qaudit-off qaudit-queue qaudit-sampled:64 qaudit-fp qaudit-always heaptrack dhat"
cells="churn:1 churn:2 live10k:1"
for cell in $cells; do
  for _ in $(seq "$runs"); do
    for t in $tools; do
      value=$(run_tool "$t" "${cell%:*}" "${cell#*:}" || true)
      if [ -z "$value" ]; then
        echo "preload_bench: $t printed no time for $cell (it failed)" >&2
        exit 1
      fi
      printf '%s ' "$value"
    done
    printf '\n'
  done >"$work/rounds-$cell"
done

column_of() { # column_of TOOL -> its column number in a rounds file
  local i=1
  for t in $tools; do
    [ "$t" = "$1" ] && { echo "$i"; return; }
    i=$((i + 1))
  done
}
value() { awk -v c="$(column_of "$2")" '{print $c}' "$work/rounds-$1" | median; }
ratio() { # ratio CELL A B -> median over rounds of A/B
  awk -v a="$(column_of "$2")" -v b="$(column_of "$3")" '{printf "%.4f\n", $a / $b}' \
    "$work/rounds-$1" | median
}

echo "## Interposer overhead: malloc_bench, $ops allocations per thread, $runs interleaved rounds"
echo
echo "Median ns per allocation (per thread); in brackets the median over rounds of the ratio to"
echo "native in the same round."
echo
printf '| workload | threads |'
for t in $tools; do printf ' %s |' "$t"; done
printf '\n|---|---|'
for _ in $tools; do printf -- '---|'; done
printf '\n'
for cell in $cells; do
  printf '| %s | %s |' "${cell%:*}" "${cell#*:}"
  for t in $tools; do
    printf ' %s (%.2fx) |' "$(value "$cell" "$t")" "$(ratio "$cell" "$t" native)"
  done
  printf '\n'
done

met() { awk -v v="$1" -v op="$2" -v limit="$3" \
          'BEGIN{ok = op == "<=" ? v <= limit : v >= limit; print ok ? "yes" : "**no**"}'; }
echo
echo "Against the targets of issue 4 (medians of per-round ratios):"
echo
echo "| target | measured | met? |"
echo "| --- | --- | --- |"
for cell in $cells; do
  r=$(printf "%.2f" "$(ratio "$cell" qaudit-off native)")
  echo "| counting (\`off\`) within 1.25x of native, $cell | ${r}x | $(met "$r" "<=" 1.25) |"
done
for cell in churn:1 churn:2; do
  r=$(printf "%.2f" "$(ratio "$cell" heaptrack qaudit-always)")
  want=$([ "$cell" = churn:1 ] && echo 2.5 || echo 5)
  echo "| \`always\` at least ${want}x faster than heaptrack, $cell | ${r}x | $(met "$r" ">=" "$want") |"
done
for cell in $cells; do
  r=$(printf "%.2f" "$(ratio "$cell" qaudit-fp native)")
  echo "| \`fp\` within 2x of native, $cell | ${r}x | $(met "$r" "<=" 2) |"
done

echo
echo "## ringkv with and without the preload (QAUDIT_STACKS=queue)"
echo
echo "redis-benchmark -t set,get -d 1024 -c 50 -n 300000 (1500000 at -P 16) -r 100000, one worker,"
echo "median of $runs, A/B interleaved; a ratio is the median of the rounds' own ratios, and in"
echo "brackets the lowest and highest of those"
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
  # -P 16 runs five times the requests, so that a test lasts seconds, not half of one.
  redis-benchmark -p "$port" -t set,get -d 1024 -c 50 -n $((300000 * ($2 > 1 ? 5 : 1))) \
    -r 100000 -P "$2" --csv 2>/dev/null |
    tr -d '"' | awk -F, '$1=="SET"{s=$2} $1=="GET"{g=$2} END{print s" "g}'
  kill "$pid"
  wait "$pid" 2>/dev/null || true
}
round_ratios() { # round_ratios COLUMN -> "median (lowest-highest)" of preload/native per round
  paste -d' ' "$work/native" "$work/preload" |
    awk -v c="$1" '{print $(c + 2) / $c}' | sort -g |
    awk '{v[NR]=$1} END{printf "%.3f (%.2f-%.2f)", v[int((NR+1)/2)], v[1], v[NR]}'
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
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$pipeline" "$ng" "$pg" \
    "$(round_ratios 2)" "$ns" "$ps" "$(round_ratios 1)"
done
