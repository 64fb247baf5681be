#!/usr/bin/env bash
# Interpreters honest (issue 21): Debian's python3 under qaudit run has its objects counted
# (PYTHONMALLOC=malloc, said by run, recorded in the dump and said by the report); with pymalloc
# kept, the report says its small objects are missing (likely missing where the dump does not say); frames of python3.11 without symbols name python3.11-dbg.
# usage: python.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
cd "$work" || exit 2
python=/usr/bin/python3 # Debian's, whatever PATH holds (pyenv shims)
[ -x "$python" ] || { echo "FAIL: $python is not installed"; exit 1; }
code='x = [str(i) * 3 for i in range(100000)]'

echo "--- qaudit run sets PYTHONMALLOC=malloc: every object counted"
env -u PYTHONMALLOC "$qaudit" run --out "$work/py.json" -- "$python" -c "$code" 2>"$work/run.err"
grep -q "^qaudit run: PYTHONMALLOC=malloc, so that Python's objects reach malloc and are counted$" "$work/run.err" &&
  pass "run says it set PYTHONMALLOC=malloc" || fail "run: $(cat "$work/run.err")"
"$qaudit" report "$work/py.json" --format json -o "$work/py-report.json" 2>/dev/null
python3 - "$work/py-report.json" <<'EOF' && pass "the report says Python's objects are counted, and they are (100,000 strings at one site)" || fail "counted"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["dumps"][0]["python"]
assert p and p["objects_counted"] and p["pythonmalloc"] == "malloc", p
assert d["totals"]["allocs"] > 300000, d["totals"]["allocs"]  # str(i) and str(i) * 3, and the ints' strings
assert any(s["allocs"] >= 100000 for s in d["sites"]), "no site holds the 100,000 strings"
assert any("is Python: its objects are counted" in s for s in d["summary"]), d["summary"]
assert any("is Python: its objects are counted" in n for n in d["precision"]["notes"]), d["precision"]["notes"]
assert d["precision"]["counts"] == "exact", d["precision"]
EOF

echo "--- pymalloc kept: the report says what it hides"
PYTHONMALLOC=pymalloc "$qaudit" run --out "$work/pym.json" -- "$python" -c "$code" 2>"$work/run.err"
grep -q "PYTHONMALLOC=pymalloc kept as set" "$work/run.err" && pass "run says it kept the user's PYTHONMALLOC" ||
  fail "run: $(cat "$work/run.err")"
"$qaudit" report "$work/pym.json" --format json -o "$work/pym-report.json" 2>/dev/null
"$qaudit" report "$work/pym.json" >"$work/pym.txt" 2>/dev/null
python3 - "$work/pym-report.json" <<'EOF' && pass "pymalloc: objects not counted, counts partial, said on top" || fail "pymalloc"
import json, sys
d = json.load(open(sys.argv[1]))
p = d["dumps"][0]["python"]
assert p["objects_counted"] is False and p["pythonmalloc"] == "pymalloc", p
assert d["totals"]["allocs"] < 100000, d["totals"]["allocs"]  # the strings never reached malloc
assert d["precision"]["counts"] == "partial", d["precision"]
assert any("not counted (it ran with PYTHONMALLOC=pymalloc" in s for s in d["summary"]), d["summary"]
EOF
tr '\n' ' ' <"$work/pym.txt" | grep -q "Python's own allocator (pymalloc, its default)" &&
  pass "text: pymalloc named under Precision" || fail "text: $(sed -n '/== Precision/,$p' "$work/pym.txt")"

echo "--- a dump that does not say PYTHONMALLOC: read from the sizes"
env -u PYTHONMALLOC QAUDIT_OUT="$work/bare.json" LD_PRELOAD="$bin/../lib/libqaudit-preload.so" \
  "$python" -c "$code"
"$qaudit" report "$work/bare.json" --format json -o "$work/bare-report.json" 2>/dev/null
python3 - "$work/bare.json" "$work/bare-report.json" <<'EOF' && pass "no PYTHONMALLOC in the dump: pymalloc inferred from the sizes, said as likely" || fail "inferred"
import json, sys
dump, d = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert "pythonmalloc" not in dump["process"], dump["process"]
p = d["dumps"][0]["python"]
assert p["objects_counted"] is False and p["pythonmalloc"] is None, p
assert any("likely not counted (pymalloc)" in s for s in d["summary"]), d["summary"]
EOF

echo "--- frames without symbols name Debian's debug package"
module=$(readlink -f "$python")
if dpkg -s "$(basename "$module")-dbg" >/dev/null 2>&1; then
  echo "skip: $(basename "$module")-dbg is installed here, so python's frames have their names"
else
  python3 - "$work/py-report.json" "$module" <<'EOF' && pass "$(basename "$module")'s frames name $(basename "$module")-dbg" || fail "debug package"
import json, os, sys
d, module = json.load(open(sys.argv[1])), sys.argv[2]
want = os.path.basename(module) + "-dbg"
m = [m for m in d["modules"] if os.path.realpath(m["path"]) == module]
assert m and m[0]["frames_without_symbols"] > 0 and m[0]["debug_package"] == want, m
assert any("apt-get install " + want in s for s in d["summary"]), d["summary"]
EOF
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
