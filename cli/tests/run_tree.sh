#!/bin/bash
# qaudit run reaches the program's whole process tree, from the run to the report its last line
# (next:) gives (issue 39): a version manager's shim (its helpers' dumps beside the program's,
# --out holding the program's after its last exec, the report leading with the program), forked
# children under a pattern without %p, a daemon that outlives the run and one that also drops
# root (its dump in the fallback directory, taken in by the run's id), files beside the dumps
# that are no dumps, and report --run/--pid/--program narrowing the set down. Needs root (the
# dropped daemon). Nothing is left outside the test's directory: the fallback directory is its.
# usage: run_tree.sh QAUDIT TREE_PROGRAM SHIM
set -u
qaudit=$1 program=$2 shim=$3
[ "$(id -u)" -eq 0 ] || { echo "run_tree.sh needs root: its daemon drops to nobody"; exit 1; }
work=$(mktemp -d)
daemons=()
cleanup() {
  for p in "${daemons[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
chmod 755 "$work"
mkdir -m 1777 "$work/fallback"
export QAUDIT_FALLBACK_DIR=$work/fallback

# field DUMP EXPR: a Python expression over the JSON file d.
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
# next_report ERR OUT [ARGS...]: the command run's last line gives, run with ARGS; its exit status.
next_report() {
  local err=$1 out=$2 line
  shift 2
  line=$(tail -1 "$err")
  case $line in "qaudit run: next: qaudit report "*) ;; *) echo "no next line: $line" >"$out" && return 9 ;; esac
  eval "\"\$qaudit\" report ${line#qaudit run: next: qaudit report } \"\$@\"" >"$out" 2>"$out.err"
}
# wait_gone PID: up to 60 s for the process to end.
wait_gone() {
  for _ in $(seq 600); do [ -e "/proc/$1" ] || return 0; sleep 0.1; done
  return 1
}

echo "--- a shim (#!/usr/bin/env bash, helpers, exec env PROGRAM): --out holds the program's dump"
mkdir "$work/shim"
TREE_PROGRAM=$program "$qaudit" run --out "$work/shim/p.json" -- "$shim" work 20000 2>"$work/shim.err" >/dev/null
exe=$(field "$work/shim/p.json" "d['process']['exe']")
[ "$exe" = "$(readlink -f "$program")" ] && pass "p.json is the program's, after its last exec" ||
  fail "p.json is $exe's: $(cat "$work/shim.err")"
grep -qx "qaudit run: dump $work/shim/p.json (exit), the program's last image: $(readlink -f "$program")" "$work/shim.err" &&
  pass "run says the dump is the program's last image" || fail "dump line: $(grep 'dump ' "$work/shim.err")"
helpers=$(ls "$work/shim" | grep -c '^p\.[0-9].*json$')
started=$(sed -n 's/^qaudit run: \([0-9]*\) more dumps\? from the process.* it started.*, \([0-9]*\) from its images before its last exec;.*/\1+\2/p' "$work/shim.err")
[ -n "$started" ] && [ $((started)) -eq "$helpers" ] && pass "run counts the helpers' and the earlier images' dumps ($started)" ||
  fail "counted '$started' of $helpers: $(cat "$work/shim.err")"
tail -1 "$work/shim.err" | grep -qx "qaudit run: next: qaudit report $work/shim" &&
  pass "next: the directory (the run alone in it)" || fail "next: $(tail -1 "$work/shim.err")"
next_report "$work/shim.err" "$work/shim.txt" || fail "next report: $(cat "$work/shim.txt.err")"
summary=$(sed -n '/^What to look at first:/,/^Coverage/p' "$work/shim.txt" | tr -s ' \n' ' ')
first=$(echo "$summary" | sed 's/ - /\n/g' | sed -n 2p)
echo "$first" | grep -q "the items below are fixture_tree_program's" &&
  pass "the report leads with the program, the helpers named after it: ${first:0:100}..." ||
  fail "first item: $first"
echo "$summary" | grep -q "Largest leak: site #[0-9]*, program_own_leak" &&
  pass "its largest leak is the program's own, not a helper's" || fail "summary: $summary"
"$qaudit" report "$work/shim" --format json -o "$work/shim.json" 2>/dev/null
[ "$(field "$work/shim.json" "len(d['dumps'])")" -eq $((helpers + 1)) ] &&
  pass "the report holds every process of the tree ($((helpers + 1)) dumps)" ||
  fail "the report holds $(field "$work/shim.json" "len(d['dumps'])") dumps of $((helpers + 1))"

echo "--- forked children under --out FILE (no %p), with a log and another JSON file beside"
mkdir "$work/forks"
echo "a log line" >"$work/forks/p.out"
echo '{"not": "a dump"}' >"$work/forks/p.notes.json"
"$qaudit" run --out "$work/forks/p.json" -- "$program" fork 3 2>"$work/forks.err" >/dev/null
status=$?
[ "$status" -eq 0 ] && grep -q "^qaudit run: dump $work/forks/p.json (exit)$" "$work/forks.err" &&
  grep -q "^qaudit run: 3 more dumps from the processes it started" "$work/forks.err" &&
  pass "run: its own dump, 3 children's counted, the log and the other JSON passed over" ||
  fail "run (exit $status): $(cat "$work/forks.err")"
next_report "$work/forks.err" "$work/forks.json" --format json || fail "next report: $(cat "$work/forks.json.err")"
[ "$(field "$work/forks.json" "len(d['dumps'])")" -eq 4 ] && pass "next: reports the 4 processes" ||
  fail "next: $(tail -1 "$work/forks.err"): $(head -c 300 "$work/forks.json")"
"$qaudit" diff "$work/forks" "$work/forks" >"$work/forks-diff.txt" 2>&1 &&
  pass "diff DIR DIR takes the same dumps" || fail "diff: $(head -3 "$work/forks-diff.txt")"
child=$(field "$work/forks.json" "[x['pid'] for x in d['dumps'] if x['forked_from']][0]")
"$qaudit" report "$work/forks" --pid "$child" --format json -o "$work/pid.json" 2>/dev/null &&
  [ "$(field "$work/pid.json" "[x['pid'] for x in d['dumps']]")" = "[$child]" ] &&
  pass "report --pid $child: that process alone" || fail "--pid: $(field "$work/pid.json" "d['dumps']")"
"$qaudit" report "$work/forks" --program 'fixture_tree_*' --format json -o "$work/prog.json" 2>/dev/null &&
  [ "$(field "$work/prog.json" "len(d['dumps'])")" -eq 4 ] && pass "report --program 'fixture_tree_*': the 4" ||
  fail "--program"
for narrow in "--pid 1" "--program nginx" "--run 0000"; do
  # shellcheck disable=SC2086 # the option and its value
  "$qaudit" report "$work/forks" $narrow >/dev/null 2>"$work/narrow.err"
  status=$?
  [ "$status" -eq 2 ] && [ "$(wc -l <"$work/narrow.err")" -eq 1 ] &&
    grep -q "^qaudit report: no dump matches $narrow among the 4 read (their " "$work/narrow.err" &&
    pass "report $narrow: exit 2, one line: $(cat "$work/narrow.err")" ||
    fail "report $narrow: exit $status: $(cat "$work/narrow.err")"
done

echo "--- a daemon that outlives the run, and one that also drops root"
for kind in daemon daemon-drop; do
  mkdir "$work/$kind" # root's, 0755: nobody cannot write in it
  "$qaudit" run --out "$work/$kind/" -- "$program" "$kind" "$work/$kind.stop" 2>"$work/$kind.err" >/dev/null
  survivor=$(sed -n 's/^qaudit run: a process it started is still running, pid \([0-9]*\): .*/\1/p' "$work/$kind.err")
  [ -n "$survivor" ] && daemons+=("$survivor")
  tail -1 "$work/$kind.err" | grep -qx "qaudit run: next: qaudit report $work/$kind" &&
    pass "$kind: named ($survivor); next: the directory, where its dump will be" ||
    fail "$kind: $(cat "$work/$kind.err")"
  touch "$work/$kind.stop"
  wait_gone "$survivor" || fail "$kind $survivor did not end"
  next_report "$work/$kind.err" "$work/$kind.json" --format json || fail "next report: $(cat "$work/$kind.json.err")"
  pids=$(field "$work/$kind.json" "sorted(x['pid'] for x in d['dumps'])")
  case $pids in *"$survivor"*) pass "$kind: the next command's report holds the daemon's dump ($pids)" ;;
    *) fail "$kind: the report holds $pids, not $survivor: $(cat "$work/$kind.json.err")" ;; esac
  top=$(field "$work/$kind.json" "[(s['allocs'], [l['function'] for f in s['frames'] for l in f['locations']]) for s in d['sites']][0]")
  case $top in "(3000, "*daemon_work*) pass "$kind: its work is the report's first site: ${top:0:60}..." ;;
    *) fail "$kind: the first site is $top" ;; esac
done
ls "$work/daemon-drop" | grep -q fallback && fail "the dropped daemon wrote beside the run's dumps"
taken=$(ls "$work/fallback")
[ -n "$taken" ] && grep -q "^qaudit report: 1 dump of run [0-9a-f]* taken in from $work/fallback (a process of the run that could not write beside the others" "$work/daemon-drop.json.err" &&
  pass "the dropped daemon's dump ($taken) taken in from the fallback directory by the run's id" ||
  fail "fallback '$taken': $(cat "$work/daemon-drop.json.err")"
"$qaudit" report "$work/daemon-drop/"*.json 2>/dev/null | grep -q "more dump of run .* is in $work/fallback" &&
  pass "the dump named alone: the fallback's named, not counted" || fail "files given: no note of the fallback"

echo "--- an attached process whose dump directory went away: its dump in QAUDIT_FALLBACK_DIR"
# qaudit attach passes its own QAUDIT_FALLBACK_DIR on, as run does: a test that sets one leaves
# nothing in /tmp (make test sets one for every test: tests/ctest_clean.sh).
mkdir "$work/attached" "$work/gone"
"$program" wait "$work/attached.stop" >"$work/attached.out" &
waiter=$!
daemons+=("$waiter")
for _ in $(seq 600); do grep -q ready "$work/attached.out" && break; sleep 0.1; done
if "$qaudit" attach "$waiter" --out "$work/gone/" 2>"$work/attach.err"; then
  rmdir "$work/gone"
  touch "$work/attached.stop"
  wait "$waiter"
  landed=$(ls "$work/fallback" | grep -c "^qaudit-fallback-qaudit-$waiter\.json$")
  strayed=$(ls /tmp | grep -c "^qaudit-fallback-qaudit-$waiter\.json$")
  rm -f "/tmp/qaudit-fallback-qaudit-$waiter.json"
  [ "$landed" -eq 1 ] && [ "$strayed" -eq 0 ] && pass "its dump in the test's fallback directory, none in /tmp" ||
    fail "attached: $landed in $work/fallback, $strayed in /tmp"
else
  fail "attach $waiter: $(cat "$work/attach.err")"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
