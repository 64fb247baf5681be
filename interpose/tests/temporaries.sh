#!/usr/bin/env bash
# "Temporary allocations" by heaptrack's definition, against heaptrack on the same program
# (fixtures/temporaries.c, N rounds of known patterns): qaudit run, then the report its next:
# command names, gives the count heaptrack prints when its run ends (by address: a free right
# after the block's allocation, no allocation or free between; a realloc frees its old block);
# heaptrack_print counts N more, the pairs it matches by size and stack rather than address.
# usage: temporaries.sh QAUDIT FIXTURE
set -uo pipefail
qaudit=$(realpath "$1") fixture=$(realpath "$2")
if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
  echo "heaptrack is not installed (scripts/deps.sh installs it): skipped"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
rounds=1000
cd "$work" || exit 2

mkdir -p "$work/run"
"$qaudit" run --out "$work/run/" -- "$fixture" "$rounds" >run.out 2>run.err || fail "qaudit run: $(cat run.err)"
next=$(sed -n 's/^qaudit run: next: qaudit report //p' run.err)
[ -n "$next" ] || fail "qaudit run printed no next: command: $(cat run.err)"
# the command as qaudit printed it (a glob unquoted on purpose), with this build's qaudit
eval "\"\$qaudit\" report $next --format json -o $work/report.json" ||
  fail "the next: command failed: qaudit report $next"
ours=$(python3 -c "import json; print(json.load(open('$work/report.json'))['totals']['temporary'])")

heaptrack -o "$work/ht" "$fixture" "$rounds" >ht.out 2>&1 || fail "heaptrack: $(tail -3 ht.out)"
theirs=$(sed -n 's/^[[:space:]]*temporary allocations:[[:space:]]*\([0-9]*\).*/\1/p' ht.out)
printed=$(heaptrack_print "$work"/ht.*zst 2>/dev/null | sed -n 's/^temporary memory allocations: \([0-9]*\).*/\1/p')
echo "qaudit: $ours; heaptrack's run: $theirs; heaptrack_print: $printed; rounds: $rounds"

[ -n "$theirs" ] && [ "$ours" = "$theirs" ] &&
  pass "qaudit counts the temporaries heaptrack's run counts ($ours)" ||
  fail "qaudit counts $ours temporaries, heaptrack's run $theirs"
[ "$ours" -ge $((4 * rounds)) ] && [ "$ours" -le $((4 * rounds + 8)) ] &&
  pass "4 a round, as the program makes them" || fail "$ours temporaries for $rounds rounds of 4"
[ -n "$printed" ] && [ "$((printed - theirs))" -eq "$rounds" ] &&
  pass "heaptrack_print counts one more a round (by size and stack), as the report says" ||
  fail "heaptrack_print $printed against heaptrack's run $theirs: not $rounds more"
[ "$failures" -eq 0 ] || exit 1
