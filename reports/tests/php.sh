#!/usr/bin/env bash
# PHP under qaudit run: the Zend allocator serves every value from chunks it maps itself, so run
# sets USE_ZEND_ALLOC=0 (as it sets PYTHONMALLOC=malloc) and says so; the 100,000 strings the
# script builds are then counted at one site. A USE_ZEND_ALLOC the user set is kept and said, and
# with the Zend allocator the strings are not counted (the two-sided check).
# usage: php.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
cd "$work" || exit 2
php=/usr/bin/php
[ -x "$php" ] || { echo "FAIL: $php is not installed (scripts/deps.sh installs php-cli)"; exit 1; }
code='$a = []; for ($i = 0; $i < 100000; $i++) { $a[] = str_repeat("x", 20) . $i; } echo count($a), "\n";'

echo "--- qaudit run sets USE_ZEND_ALLOC=0: every value counted"
env -u USE_ZEND_ALLOC "$qaudit" run --out "$work/php.json" -- "$php" -r "$code" >"$work/out" 2>"$work/run.err"
grep -qx "100000" "$work/out" && pass "the script ran (100000 strings)" || fail "script: $(cat "$work/out")"
grep -q "^qaudit run: USE_ZEND_ALLOC=0, so that PHP's values reach malloc and are counted$" "$work/run.err" &&
  pass "run says it set USE_ZEND_ALLOC=0" || fail "run: $(cat "$work/run.err")"
"$qaudit" report "$work/php.json" --format json -o "$work/php-report.json" 2>/dev/null
python3 - "$work/php-report.json" <<'PY' && pass "the 100,000 strings are counted at one site" || fail "counted"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["totals"]["allocs"] >= 200000, d["totals"]["allocs"]  # each string, and its concatenation's operand
assert any(s["allocs"] >= 100000 for s in d["sites"]), "no site holds the 100,000 strings"
PY

echo "--- the user's USE_ZEND_ALLOC kept: the Zend allocator hides the values"
USE_ZEND_ALLOC=1 "$qaudit" run --out "$work/zend.json" -- "$php" -r "$code" >/dev/null 2>"$work/run.err"
grep -q "^qaudit run: USE_ZEND_ALLOC=1 kept as set; with the Zend allocator, PHP's values are not counted$" \
  "$work/run.err" && pass "run says it kept the user's USE_ZEND_ALLOC" || fail "run: $(cat "$work/run.err")"
"$qaudit" report "$work/zend.json" --format json -o "$work/zend-report.json" 2>/dev/null
python3 - "$work/zend-report.json" <<'PY' && pass "with the Zend allocator, fewer calls than strings reach malloc" || fail "zend"
import json, sys
d = json.load(open(sys.argv[1]))
assert 0 < d["totals"]["allocs"] < 100000, d["totals"]["allocs"]
PY
USE_ZEND_ALLOC=0 "$qaudit" run --out "$work/zero.json" -- "$php" -r 'echo 1;' >/dev/null 2>"$work/run.err"
grep -q "^qaudit run: USE_ZEND_ALLOC=0 kept as set: PHP's values reach malloc and are counted$" "$work/run.err" &&
  pass "a USE_ZEND_ALLOC=0 the user set is said to count the values" || fail "run: $(cat "$work/run.err")"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
