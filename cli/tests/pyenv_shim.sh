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

"$qaudit" run --out "$work/p.json" -- "$shim" -c 'x = [str(i) for i in range(100000)]' \
  2>"$work/run.err" >/dev/null || fail "run: $(cat "$work/run.err")"
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
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
