#!/usr/bin/env bash
# test_pprof: `qaudit report --format pprof` read back by Debian's `go tool pprof` (golang-go,
# scripts/deps.sh), and `--format folded`, against qaudit's own text and JSON reports and, for the
# tests' own program, against the counts it writes of itself (check_pprof.py): an exact dump and
# dumps sampled by count and by bytes of that program, a program with an inlined call, and python3 (a program this repo did not write). Then
# the build ids: read from the module files when a dump has none, and said when a file is gone.
# usage: pprof.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
command -v go >/dev/null || { echo "FAIL: go is missing: run scripts/deps.sh (golang-go)"; exit 1; }
# go tool pprof offline, its caches in the scratch directory.
export HOME=$work/home GOCACHE=$work/gocache GOPATH=$work/gopath GOPROXY=off GOFLAGS=
mkdir -p "$HOME"
cd "$work" || exit 2

checked() { # checked NAME DUMP [TRUTH]
  /usr/bin/python3 "$src/reports/tests/check_pprof.py" "$qaudit" "$2" "$work" "$1" ${3:+"$3"} ||
    failures=$((failures + 1))
}

for mode in always sampled:16 sampled:8192b; do
  name=known-${mode//:/_}
  "$qaudit" run --stacks "$mode" --out "$work/$name.json" -- "$bin/fixture_known_sites" 7 \
    "$work/truth-$name.json" 20000 2>/dev/null || fail "run $mode"
  checked "$name" "$work/$name.json" "$work/truth-$name.json"
done

"$qaudit" run --stacks always --out "$work/symbols.json" -- "$bin/fixture_symbols" 2>/dev/null ||
  fail "run fixture_symbols"
checked symbols "$work/symbols.json"
go tool pprof -symbolize=none -raw "$work/symbols.pb.gz" >"$work/symbols.raw"
# The inlined call is one location of two lines, the inlined function first.
grep -A1 -E '^ +[0-9]+: 0x[0-9a-f]+ M=1 make_block ' "$work/symbols.raw" | tail -1 | grep -q outer_allocator &&
  pass "inlined make_block and outer_allocator are one location, innermost first" ||
  fail "inline frames: $(sed -n '/^Locations/,/^Mappings/p' "$work/symbols.raw")"

# Wrappers fold as in the text report: with both functions of the frame skipped, main allocates.
"$qaudit" report "$work/symbols.json" --skip make_block --skip outer_allocator --format pprof \
  -o "$work/skip.pb.gz"
go tool pprof -symbolize=none -traces -sample_index=alloc_objects "$work/skip.pb.gz" |
  grep -qE '^ +5 +main$' && pass "--skip folds the wrapper frame: main is the leaf" ||
  fail "--skip: $(go tool pprof -symbolize=none -traces "$work/skip.pb.gz" | tail -8)"
"$qaudit" report "$work/symbols.json" --skip make_block --skip outer_allocator --format folded |
  grep -qx '_start;__libc_start_main;__libc_start_call_main;main 5' &&
  pass "--skip folds the wrapper frame in folded stacks too" || fail "--skip in folded"

"$qaudit" run --stacks always --out "$work/python.json" -- /usr/bin/python3 -c \
  'x = [str(i) for i in range(10000)]' 2>/dev/null || fail "run python3"
checked python3 "$work/python.json"

echo "--- build ids"
# A dump without build ids: they are read from the files; one whose file is gone: said.
/usr/bin/python3 - "$work/symbols.json" "$work/no-ids.json" "$work/gone.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
for m in d["modules"]:
    m["build_id"] = ""
json.dump(d, open(sys.argv[2], "w"))
for m in d["modules"]:
    if m["path"].endswith("fixture_symbols"):
        m["path"] = "/nonexistent/fixture_symbols"
d["process"]["exe"] = "/nonexistent/fixture_symbols"
json.dump(d, open(sys.argv[3], "w"))
EOF
want=$(/usr/bin/python3 -c 'import json,sys; print([m["build_id"] for m in json.load(open(sys.argv[1]))["modules"] if m["path"].endswith("fixture_symbols")][0])' "$work/symbols.json")
"$qaudit" report "$work/no-ids.json" --format pprof -o "$work/no-ids.pb.gz" 2>/dev/null
go tool pprof -symbolize=none -raw "$work/no-ids.pb.gz" | grep -A1 '^Mappings' | grep -q " $want " &&
  pass "a dump without build ids: the main mapping has the file's ($want)" ||
  fail "build id from the file: $(go tool pprof -symbolize=none -raw "$work/no-ids.pb.gz" | grep -A3 '^Mappings')"
"$qaudit" report "$work/gone.json" --format pprof -o "$work/gone.pb.gz" 2>"$work/gone.err"
grep -q "/nonexistent/fixture_symbols is gone" "$work/gone.err" &&
  pass "a module file that is gone: said on stderr" || fail "gone file on stderr: $(cat "$work/gone.err")"
go tool pprof -symbolize=none -comments "$work/gone.pb.gz" 2>/dev/null | grep -q "fixture_symbols is gone" &&
  pass "a module file that is gone: said in the profile's comments" ||
  fail "gone file in comments: $(go tool pprof -symbolize=none -comments "$work/gone.pb.gz" 2>&1)"

echo "--- usage"
"$qaudit" report "$work/symbols.json" --format text --weight bytes >/dev/null 2>&1
[ $? -eq 2 ] && pass "--weight without --format folded: exit 2" || fail "--weight with text"
"$qaudit" report "$work/symbols.json" --format folded --weight nothing >/dev/null 2>&1
[ $? -eq 2 ] && pass "--weight nothing: exit 2" || fail "--weight nothing"

[ "$failures" -eq 0 ] && echo "test_pprof: all passed" || echo "test_pprof: $failures failed"
[ "$failures" -eq 0 ]
