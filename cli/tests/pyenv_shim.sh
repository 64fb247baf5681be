#!/bin/bash
# A real version manager's shim: pyenv's python3 (bash, env, readlink, basename and some 70
# processes before python itself). qaudit run --out FILE holds python's dump, and the report the
# run's last line gives leads with python, not with the helpers' leaks (issue 39). Skipped (exit
# 77) where pyenv is not installed.
# usage: pyenv_shim.sh QAUDIT
set -u
qaudit=$1
shim=${PYENV_ROOT:-$HOME/.pyenv}/shims/python3
[ -x "$shim" ] || { echo "no pyenv shim at $shim: skipped"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$1"; }
export QAUDIT_FALLBACK_DIR=$work

# A program given on two lines, as `python3 -c` is often given (the table of dumps below keeps it
# on one row).
"$qaudit" run --out "$work/p.json" -- "$shim" -c 'y = 1
x = [str(i) for i in range(100000)]' 2>"$work/run.err" >/dev/null || fail "run: $(cat "$work/run.err")"
exe=$(field "$work/p.json" "d['process']['exe']")
case ${exe##*/} in python3*) pass "p.json is python's ($exe)" ;; *) fail "p.json is $exe's: $(cat "$work/run.err")" ;; esac
grep -q "^qaudit run: dump $work/p.json (exit), the program's last image: $exe$" "$work/run.err" &&
  pass "run says so" || fail "run: $(cat "$work/run.err")"
line=$(tail -1 "$work/run.err")
[ "$line" = "qaudit run: next: qaudit report $work" ] && pass "next: the directory" || fail "next: $line"
"$qaudit" report "$work" >"$work/r.txt" 2>"$work/r.err" || fail "report: $(cat "$work/r.err")"
summary=$(sed -n '/^What to look at first:/,/^Coverage/p' "$work/r.txt" | tr -s ' \n' ' ' | sed 's/ - /\n/g')
echo "$summary" | sed -n 2p | grep -q "the items below are python3[.0-9]*'s" &&
  pass "the report leads with python: $(echo "$summary" | sed -n 2p | cut -c1-90)..." ||
  fail "first item: $(echo "$summary" | sed -n 2p)"
leak=$(echo "$summary" | grep "^Largest leak")
[ -n "$leak" ] && ! echo "$leak" | grep -Eq "bash|hash_create|xmalloc|env\+|readlink|basename" &&
  pass "its largest leak is python's: ${leak:0:100}" || fail "leak: $leak"
# Every item of the summary is python's: blocks held by design, the share of its own calls, the
# debug symbols worth installing (bash ships none, and bash's frames are no user's work).
held=$(echo "$summary" | grep "^Held by design" | grep -o "in [0-9,]* blocks" | tr -dc 0-9)
python_live=$(field "$work/p.json" "d['totals']['live_blocks']")
[ -z "$held" ] || [ "$held" -le "$python_live" ] &&
  pass "held by design: python's blocks (${held:-none} of its $python_live live)" ||
  fail "held by design counts $held blocks, python holds $python_live live: $(echo "$summary" | grep "^Held")"
echo "$summary" | grep "^Most allocations" | grep -q "of python3[.0-9]*'s [0-9,]* allocation calls" &&
  pass "most allocations: a share of python's calls" ||
  fail "most allocations: $(echo "$summary" | grep "^Most allocations")"
echo "$summary" | grep -q "Frames in /usr/bin/bash\|bash-dbgsym" &&
  fail "the summary sends the user to bash's symbols" || pass "no hint about bash's symbols"
# The table of dumps: python's first, one line each (a -c script would wrap over five).
first=$(sed -n 4p "$work/r.txt")
echo "$first" | grep -q "^ *[0-9]*  python3 -c y = 1 x = \[str(i) fo.*  $work/p.json  *exit" &&
  pass "the table's first dump is python's: $first" || fail "the table's first row: $first"
rows=$(sed -n '4,/^[^ ]/p' "$work/r.txt" | grep -c "^ *[0-9][0-9]*  ")
table=$(sed -n '4,/^[^ ]/p' "$work/r.txt" | sed '$d' | wc -l)
[ "$rows" -eq "$table" ] && pass "one line per dump ($rows)" || fail "$rows dumps on $table lines"
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
