#!/usr/bin/env bash
# qaudit diff (issue 21): two runs of fixtures/first_hour.c, the second with its loop fixed and half
# the small leaks, compared in text, Markdown, JSON and HTML against the counts the program wrote
# itself; a side given as a directory of dumps; the base run's binary gone and given with
# --base-binary; the pprof pair read by go tool pprof -diff_base; and two runs of
# fixtures/wrapped.c whose wrapper only one run recognises.
# usage: diff.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
cd "$work" || exit 2
mkdir -p "$work/old" "$work/new" "$work/twice"
# The base run from a copy of the binary that is gone by the time the diff reads it.
cp "$bin/fixture_first_hour" "$work/old/first_hour"
"$qaudit" run --out "$work/old/base.json" -- "$work/old/first_hour" "$work/base-truth.json" 2>/dev/null
rm "$work/old/first_hour"
"$qaudit" run --out "$work/new/new.json" -- "$bin/fixture_first_hour" "$work/new-truth.json" --fixed \
  --small 500 2>/dev/null
for i in 1 2; do
  "$qaudit" run --out "$work/twice/run-%p.json" -- "$bin/fixture_first_hour" "$work/t.json" 2>/dev/null
done

echo "--- JSON: each site's change, from the program's own counts"
"$qaudit" diff "$work/old/base.json" "$work/new/new.json" --base-binary "$bin/fixture_first_hour" \
  --format json -o "$work/diff.json" 2>"$work/err"
status=$?
[ "$status" -eq 0 ] && [ ! -s "$work/err" ] && pass "diff exits 0" || fail "diff: exit $status, $(cat "$work/err")"
python3 - "$work/diff.json" "$work/base-truth.json" "$work/new-truth.json" <<'EOF' && pass "every change is new minus base of the program's counts" || fail "changes"
import json, sys
d, base, new = (json.load(open(p)) for p in sys.argv[1:4])
assert d["format"] == "qaudit-diff/1" and d["sort"] == "bytes", d["format"]
sites = {s["where"].split(" ")[0]: s for s in d["sites"]}
for name in base:
    s = sites[name]
    assert s["status"] in ("changed", "same"), s
    for k, t in (("allocs", "allocs"), ("bytes", "bytes"), ("live_bytes", "live_bytes"),
                 ("live_blocks", "live_blocks"), ("temporary", "temporary")):
        assert s["change"][k] == new[name][t] - base[name][t], (name, k, s["change"][k])
        assert s["base"][k] == base[name][t] and s["new"][k] == new[name][t], (name, k, s)
# ranked by the change in bytes: the loop's first, the small leaks' next, the big leak unchanged
assert [s["where"].split(" ")[0] for s in d["sites"][:3]] == ["hot_loop", "small_leaks", "big_leak"], d["sites"][:3]
assert d["sites_changed"] == 2, d["sites_changed"]
t = d["totals"]["allocation_calls"]
assert t["change"] == t["new"] - t["base"] and t["change"] < -199000, t
EOF
python3 - "$work/diff.json" "$src/docs/report-schema.json" <<'EOF' && pass "qaudit-diff/1 matches the schema's \$defs/diff" || fail "diff schema"
import json, jsonschema, sys
schema = json.load(open(sys.argv[2]))
diff = dict(schema["$defs"]["diff"], **{"$defs": schema["$defs"]})
jsonschema.validate(json.load(open(sys.argv[1])), diff)
EOF
"$qaudit" diff "$work/old/base.json" "$work/new/new.json" --format json -o "$work/nobin.json" 2>/dev/null
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if not any(s['where'].startswith('hot_loop') and s['status'] == 'changed' for s in d['sites']) else 1)" "$work/nobin.json" &&
  pass "without --base-binary the gone binary's sites cannot match by function (so it is needed)" ||
  fail "the base run matched without its binary?"
"$qaudit" diff "$work/old/base.json" "$work/new/new.json" --sort temporary --format json -o "$work/bytemp.json"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d['sort']=='temporary' and d['sites'][0]['change']['temporary'] < -199000 else 1)" "$work/bytemp.json" &&
  pass "--sort temporary ranks by that change" || fail "--sort temporary"

echo "--- a side given as a directory of dumps"
"$qaudit" diff "$work/old/base.json" "$work/twice" --base-binary "$bin/fixture_first_hour" --format json \
  -o "$work/dir.json" || fail "diff against a directory"
python3 - "$work/dir.json" "$work/base-truth.json" <<'EOF' && pass "a directory's two dumps merge: each figure doubles" || fail "directory side"
import json, sys
d, base = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert len(d["new"]["dumps"]) == 2, d["new"]
for s in d["sites"]:
    name = s["where"].split(" ")[0]
    if name in base:
        assert s["change"]["allocs"] == base[name]["allocs"], (name, s["change"])
EOF
"$qaudit" diff "$work/old/base.json" "$work/twice/run-*.json" --base-binary "$bin/fixture_first_hour" \
  --format json -o "$work/glob.json" && cmp -s <(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals'])" "$work/glob.json") \
  <(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['totals'])" "$work/dir.json") &&
  pass "a quoted glob gives the same set" || fail "glob side"

echo "--- text, Markdown, HTML"
"$qaudit" diff "$work/old/base.json" "$work/new/new.json" --base-binary "$bin/fixture_first_hour" >"$work/diff.txt"
long=$(awk 'length($0) > 100' "$work/diff.txt" | head -3)
[ -z "$long" ] && pass "text within 100 columns" || fail "long lines: $long"
grep -Eq '^  #1 +changed +-199,999 +-48\.83 MiB +0 B +-199,999 +hot_loop \(first_hour\.c:[0-9]+\)$' "$work/diff.txt" &&
  pass "text: the loop's change first, with its sign and units" || fail "text: $(sed -n '/== Sites/,/Before/p' "$work/diff.txt")"
grep -q "^  - Bytes allocated: site #1, hot_loop" "$work/diff.txt" && pass "text: what changed most, on top" ||
  fail "summary: $(sed -n '/What changed/,/==/p' "$work/diff.txt")"
"$qaudit" diff "$work/old/base.json" "$work/new/new.json" --base-binary "$bin/fixture_first_hour" --format md >"$work/diff.md"
grep -q '^| #1 | changed | -199,999 | -48.83 MiB | 0 B | -199,999 | hot_loop' "$work/diff.md" &&
  pass "Markdown: the same row" || fail "Markdown: $(grep '^| #' "$work/diff.md")"
"$qaudit" diff "$work/old/base.json" "$work/new/new.json" --base-binary "$bin/fixture_first_hour" --format html \
  -o "$work/diff.html"
python3 - "$work/diff.html" <<'EOF' && pass "HTML: well-formed, the sites as cards with where, the summary as its banner" || fail "HTML"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.find(".//*[@id='summary']") is not None
table = [t for t in root.iter("table") if t.get("class") == "cards"]
assert table, "no cards table"
where = ["".join(td.itertext()) for td in table[0].iter("td") if td.get("class") == "where"]
assert where[0].startswith("hot_loop"), where
EOF

echo "--- live figures say when they were taken"
grep -Eq '^  live bytes at exit +' "$work/diff.txt" && grep -q "^  - Live bytes at exit: site" "$work/diff.txt" &&
  pass "two runs' exit dumps: live bytes at exit" || fail "exit: $(sed -n '/== Totals/,/^$/p' "$work/diff.txt")"
# Two snapshots of one running program: what they hold is live at the snapshot, not at exit.
mkdir "$work/snaps" && mkfifo "$work/snaps/in"
"$qaudit" run --out "$work/snaps/s-%p-%n.json" -- bash -c 'read -r x' <"$work/snaps/in" 2>"$work/snaps.err" &
runner=$!
exec 4>"$work/snaps/in" # bash reads until this closes
for _ in $(seq 300); do grep -q "^qaudit run: pid " "$work/snaps.err" && break; sleep 0.1; done # readiness
for i in 1 2; do "$qaudit" snapshot "$runner" >"$work/snap$i.out" 2>"$work/snap.err" || fail "snapshot: $(cat "$work/snap.err")"; done
exec 4>&-
wait "$runner"
"$qaudit" diff "$(cat "$work/snap1.out")" "$(cat "$work/snap2.out")" >"$work/snaps.txt" 2>&1
grep -Eq '^  live bytes at the snapshot +' "$work/snaps.txt" && grep -Eq '^  live blocks at the snapshot +' "$work/snaps.txt" &&
  ! grep -q "at exit" "$work/snaps.txt" && pass "two snapshots: live bytes at the snapshot, nothing said at exit" ||
  fail "snapshots: $(cat "$work/snaps.txt")"
exit_dump=$(sed -n 's/^qaudit run: dump \(.*\) (exit)$/\1/p' "$work/snaps.err")
"$qaudit" diff "$(cat "$work/snap1.out")" "$exit_dump" >"$work/mixed.txt" 2>&1
grep -Eq '^  live bytes at exit or at the last snapshot +' "$work/mixed.txt" &&
  pass "a snapshot beside an exit dump: live bytes at exit or at the last snapshot" || fail "mixed: $(cat "$work/mixed.txt")"

echo "--- the pprof pair, read by go tool pprof -diff_base"
if command -v go >/dev/null; then
  "$qaudit" diff "$work/old/base.json" "$work/new/new.json" --base-binary "$bin/fixture_first_hour" \
    --format pprof -o "$work/pair" >"$work/pair.out" || fail "pprof pair"
  grep -qx "go tool pprof -diff_base $work/pair/base.pb.gz $work/pair/new.pb.gz" "$work/pair.out" &&
    pass "diff prints the command" || fail "command: $(cat "$work/pair.out")"
  go tool pprof -sample_index=alloc_objects -top -diff_base "$work/pair/base.pb.gz" "$work/pair/new.pb.gz" \
    2>/dev/null >"$work/top.txt"
  go tool pprof -sample_index=inuse_objects -top -diff_base "$work/pair/base.pb.gz" "$work/pair/new.pb.gz" \
    2>/dev/null >"$work/inuse.txt"
  grep -Eq '^ +-199999 .* hot_loop$' "$work/top.txt" && grep -Eq '^ +-500 .* small_leaks$' "$work/inuse.txt" &&
    pass "go tool pprof -diff_base: hot_loop -199999 allocations, small_leaks -500 blocks in use" ||
    fail "pprof -diff_base: $(cat "$work/top.txt" "$work/inuse.txt")"
else
  fail "go tool pprof missing (scripts/deps.sh installs golang-go)"
fi

echo "--- a wrapper recognised in one run only: its callers' sites still match"
"$qaudit" run --out "$work/wrapped4.json" -- "$bin/fixture_wrapped" 4 >/dev/null 2>&1
"$qaudit" run --out "$work/wrapped3.json" -- "$bin/fixture_wrapped" 3 >/dev/null 2>&1
"$qaudit" diff "$work/wrapped3.json" "$work/wrapped4.json" --format json -o "$work/wrapped.json" 2>/dev/null
python3 - "$work/wrapped.json" <<'EOF' && pass "xx_alloc folded in both runs: parse, accept_one and respond match" || fail "wrapped: $(python3 -c "import json,sys; print([(s['status'], s['where']) for s in json.load(open(sys.argv[1]))['sites']][:8])" "$work/wrapped.json")"
import json, sys
d = json.load(open(sys.argv[1]))
status = {s["where"].split(" ")[0]: s["status"] for s in d["sites"]}
assert all(status.get(f) in ("same", "changed") for f in ("parse", "accept_one", "respond")), status
assert status.get("log_line") == "new" and "xx_alloc" not in status, status
EOF

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
