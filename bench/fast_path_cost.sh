#!/bin/sh
# Instructions per malloc/free pair on the preload's paths, by callgrind (exact: the machine's
# load does not move them). Each preload and mode runs `malloc_bench churn 1 N` at N = 100,000
# and 300,000; the difference of the two totals over 200,000 is the loop's cost per pair, with
# start-up, the thread's creation and the exit dump cancelled out. QAUDIT_TIMELINE=off: the
# writer thread's points (every 100 ms of a run that callgrind makes 50 times longer) are not the
# fast path, and with them the totals moved by about one instruction a pair from run to run.
# usage: bench/fast_path_cost.sh BIN_DIR NAME=PRELOAD... (MODES="off sampled:64" by default;
# "native" as a PRELOAD runs without one). Prints one line per preload and mode.
set -eu
bin=$1
shift
modes=${MODES:-off sampled:64}
scratch=$(mktemp -d "${TMPDIR:-/tmp}/fast-path-cost.XXXXXX")
trap 'rm -rf "$scratch"' EXIT

# Total instructions (callgrind's "summary:" line) of one run.
total() { # preload mode ops
    ops=$3
    rm -f "$scratch"/cg.*
    if [ "$1" = native ]; then
        set -- env
    else
        set -- env LD_PRELOAD="$1" QAUDIT_STACKS="$2" QAUDIT_OUT="$scratch/d-%p.json" \
            QAUDIT_TIMELINE=off
    fi
    valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$scratch/cg.%p" \
        "$@" "$bin/malloc_bench" churn 1 "$ops" >/dev/null 2>&1
    # env's own file is the one without malloc_bench's command line
    grep -l "^cmd: .*malloc_bench" "$scratch"/cg.* | xargs sed -n 's/^summary: //p'
}

for spec in "$@"; do
    name=${spec%%=*}
    preload=${spec#*=}
    for mode in $modes; do
        [ "$preload" = native ] && [ "$mode" != "${modes%% *}" ] && continue
        low=$(total "$preload" "$mode" 100000)
        high=$(total "$preload" "$mode" 300000)
        echo "$name $mode $(echo "scale=1; ($high - $low) / 200000" | bc)"
    done
done
