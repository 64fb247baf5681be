#!/usr/bin/env bash
# A Go program built with cgo under qaudit run (fixtures/go_cgo): Go programs end with the
# exit_group system call, past exit() where the preload writes its last dump, so run says why
# there is none instead of blaming the preload; a snapshot taken while it runs holds its C
# allocations (101 at one site: a stack stops where Go called C, runtime.asmcgocall, so the
# loop's 100 and the kept block share it), and the report says its Go values live in the Go
# runtime's own heap. qaudit layout reads its DWARF (Go's linker writes what C compilers do not)
# and gives a struct's size and offsets as the Go compiler does.
# usage: go.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
cd "$work" || exit 2
program=$bin/fixture_go_cgo
[ -x "$program" ] || { echo "FAIL: $program was not built (the build needs go: scripts/deps.sh installs golang-go)"; exit 1; }

echo "--- its end leaves no dump, and run says why"
"$qaudit" run --out "$work/end-%p.json" -- "$program" >/dev/null 2>"$work/end.err"
status=$?
[ "$status" -eq 2 ] && pass "run exits 2: the run left no dump" || fail "run exited $status"
tail -1 "$work/end.err" | grep -q "^qaudit run: no dump at .* (a Go program ends with the exit_group system call, past exit() where the preload writes its last dump; qaudit snapshot PID or --interval S takes dumps while it runs)$" &&
  pass "run says a Go program ends past exit()" || fail "run: $(cat "$work/end.err")"
grep -q "preload says why" "$work/end.err" && fail "run blames the preload" || pass "run does not blame the preload"

echo "--- a snapshot while it runs holds its C allocations; the report names the Go heap"
mkfifo "$work/in"
"$qaudit" run --out "$work/go-%p-%n.json" -- "$program" wait <"$work/in" >"$work/go.out" 2>"$work/go.err" &
runner=$!
exec 3>"$work/in" # the program reads until this closes
for _ in $(seq 300); do grep -q ready "$work/go.out" && break; sleep 0.1; done # readiness, bounded
grep -q ready "$work/go.out" && pass "the program allocated and waits" || fail "no ready: $(cat "$work/go.err")"
"$qaudit" snapshot "$runner" >"$work/snap.out" 2>"$work/snap.err" && pass "snapshot of the run" || fail "snapshot: $(cat "$work/snap.err")"
exec 3>&-
wait "$runner"
grep -q "^qaudit run: the program's end is not in it: a Go program ends with the exit_group system call" "$work/go.err" &&
  pass "run says the snapshot is all there is" || fail "run: $(cat "$work/go.err")"
"$qaudit" report "$(cat "$work/snap.out")" --format json -o "$work/go.json" 2>/dev/null || fail "report"
python3 - "$work/go.json" <<'PY' && pass "100 C allocations at one site, the kept block live, the Go heap said" || fail "report: $(head -c 600 "$work/go.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["dumps"][0]["runtime"] == {"name": "the Go runtime", "objects": "Go values"}, d["dumps"][0]
assert any(s["allocs"] == 101 and s["live_bytes"] == 4096 for s in d["sites"]), [(s["where"], s["allocs"]) for s in d["sites"]]
assert any("runs the Go runtime: its Go values are not in these figures" in s for s in d["summary"]), d["summary"]
assert d["precision"]["counts"] == "partial", d["precision"]  # a snapshot, not the end
PY

echo "--- qaudit layout reads Go's DWARF, and agrees with the Go compiler"
"$program" layout >"$work/truth.json"
"$qaudit" layout "$program" --type main.conn --format json >"$work/layout.json" 2>"$work/layout.err" ||
  fail "layout: $(cat "$work/layout.err")"
python3 - "$work/layout.json" "$work/truth.json" <<'PY' && pass "main.conn: size and every offset as unsafe.Sizeof and Offsetof say" || fail "layout: $(head -c 600 "$work/layout.json")"
import json, sys
d, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
t = d["types"][0]
assert t["name"] == "main.conn" and t["size"] == truth["size"], (t["name"], t["size"], truth)
offsets = {m["name"]: m["offset"] for m in t["members"]}
assert offsets == truth["offsets"], (offsets, truth["offsets"])
PY
"$qaudit" layout "$program" >/dev/null 2>"$work/all.err" && pass "every unit of the binary reads (Go's and cgo's C)" ||
  fail "the whole binary: $(cat "$work/all.err")"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
