#!/usr/bin/env bash
# Issue 22's determinism check: `make test` twice at once (each ctest -j on this machine's cores),
# each in its own clone of HEAD, for ROUNDS rounds. A round passes when both runs exit 0, no test
# was skipped (no_skips.sh) and both trees are left clean; the first round that does not stops it.
# A line per round goes to stdout and to DIR/rounds.log; each run's output stays in DIR.
# usage: tests/rounds.sh ROUNDS [DIR]   (DIR default: a new mkdtemp directory, kept)
set -uo pipefail
rounds=${1:?usage: rounds.sh ROUNDS [DIR]}
dir=${2:-$(mktemp -d /tmp/qaudit-rounds-XXXXXX)}
source=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel) || exit 2
head=$(git -C "$source" rev-parse --short HEAD) || exit 2
mkdir -p "$dir" || exit 2
for side in a b; do
  rm -rf "${dir:?}/$side" && git clone -q "$source" "$dir/$side" || exit 2
done

# verdict SIDE ROUND: "a: 75 of 75" or "a: FAILED (...)", and the status.
verdict() {
  local side=$1 round=$2 tree="$dir/$1" why=""
  [ "$(cat "$dir/round$round-$side.rc")" = 0 ] || why="make test exit $(cat "$dir/round$round-$side.rc")"
  "$tree/tests/no_skips.sh" "$tree/build/ctest-junit.xml" >/dev/null 2>&1 || why="$why skips"
  [ -z "$(git -C "$tree" status --porcelain)" ] || why="$why tree not clean"
  local passed
  passed=$(grep -o 'tests passed, [0-9]* tests failed out of [0-9]*' "$dir/round$round-$side.log" | tail -1)
  if [ -n "$why" ]; then
    echo "$side: FAILED ($why; $passed)"
    return 1
  fi
  echo "$side: ${passed##* } passed"
}

for round in $(seq "$rounds"); do
  started=$(date +%s)
  for side in a b; do
    (cd "$dir/$side" && make test >"$dir/round$round-$side.log" 2>&1; echo $? >"$dir/round$round-$side.rc") &
  done
  wait
  line="round $round of $rounds, $head, $(($(date +%s) - started)) s"
  status=0
  for side in a b; do
    line="$line; $(verdict "$side" "$round")" || status=1
  done
  echo "$line" | tee -a "$dir/rounds.log"
  [ "$status" -eq 0 ] || { echo "rounds: round $round failed; its output is in $dir" >&2; exit 1; }
done
echo "rounds: $rounds of $rounds passed ($dir)"
