#!/usr/bin/env bash
# End-to-end tests of qaudit run, snapshot, report and compare, through the command as users call
# it. Usage: e2e.sh QAUDIT BIN_DIR SOURCE_DIR BUILD_DIR. Servers bind 127.0.0.1 on a free port; loads are
# bounded in count.
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3") build=$(realpath "$4")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"

# expect_status N WHAT COMMAND...: runs COMMAND, its stderr in $work/err, and checks its status.
expect_status() {
  local want=$1 what=$2
  shift 2
  "$@" >"$work/out" 2>"$work/err"
  local got=$?
  if [ "$got" -eq "$want" ]; then pass "$what (exit $got)"; else
    fail "$what: exit $got, wanted $want; stderr: $(head -c 400 "$work/err")"
  fi
}

# one_line_error WHAT: the last command said what went wrong in exactly one line.
one_line_error() {
  if [ "$(wc -l <"$work/err")" -eq 1 ]; then pass "$1: one line"; else
    fail "$1: wanted one line on stderr, got: $(cat "$work/err")"
  fi
}

json_check() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

cd "$work" || exit 2

echo "--- qaudit run"
expect_status 0 "run returns the program's status" "$qaudit" run -- "$bin/fixture_exact_counts"
grep -q "qaudit run: dump .*qaudit-[0-9]*.json (exit)" "$work/err" || fail "run names its dump: $(cat "$work/err")"
[ "$(grep -c '^qaudit run:' "$work/err")" -eq 5 ] && head -1 "$work/err" | grep -q "^qaudit run: pid [0-9]*: " &&
  tail -1 "$work/err" | grep -q "^qaudit run: next: qaudit report " ||
  fail "run prints the pid, then where the dump is, what it holds and what to run next: $(cat "$work/err")"
json_check "$(ls "$work"/qaudit-*.json | head -n 1)" \
  "d['config']['stacks'] == 'always'" &&
  pass "run without --stacks takes a stack for every allocation" || fail "run's default stacks"
expect_status 7 "run passes a non-zero status through" "$qaudit" run --out "$work/st-%p.json" -- sh -c 'exit 7'
expect_status 127 "run of a missing program" "$qaudit" run --out "$work/x-%p.json" -- /nonexistent/program
expect_status 2 "run with a bad --stacks" "$qaudit" run --stacks sometimes -- true
one_line_error "run with a bad --stacks"
expect_status 2 "run with no command" "$qaudit" run --stacks off
expect_status 2 "run with a missing --preload" "$qaudit" run --preload /nonexistent.so -- true
one_line_error "run with a missing --preload"
# A signal sent to qaudit reaches the program: it ends by it (its dump says so), and qaudit
# returns 128 + 15. Sent once both have their handlers, not after a sleep.
"$qaudit" run --out "$work/lr-%p.json" -- "$bin/fixture_long_running" "$work/never" 2>"$work/run-err" &
runner=$!
pids+=("$runner")
child=$(program_of "$runner")
[ -n "$child" ] || fail "qaudit run's program did not start within 60 s"
kill -TERM "$runner"
wait "$runner"
status=$?
[ "$status" -eq 143 ] && pass "SIGTERM passes through (exit 143)" || fail "SIGTERM: exit $status, wanted 143"
json_check "$work/lr-$child.json" "d['reason'] == 'fatal_signal' and d['process']['end_signal'] == 'SIGTERM'" &&
  pass "the program ended by the SIGTERM sent to qaudit" || fail "the program's end: $(head -c 300 "$work/lr-$child.json")"

echo "--- qaudit snapshot"
"$qaudit" run --out "$work/snap-%p-%n.json" -- "$bin/fixture_long_running" "$work/stop" 2>"$work/run-err" &
runner=$!
pids+=("$runner")
child=$(program_of "$runner")
expect_status 0 "snapshot of a running process" "$qaudit" snapshot "$child" --timeout 10
snap=$(cat "$work/out")
[ -f "$snap" ] && json_check "$snap" "d['reason']=='snapshot' and d['process']['pid']==$child" &&
  pass "snapshot path $snap is a complete dump on request" || fail "snapshot printed '$snap'"
expect_status 0 "a second snapshot" "$qaudit" snapshot "$child"
[ "$(cat "$work/out")" != "$snap" ] && pass "the second snapshot is a new file" || fail "same file twice"
touch "$work/stop"
wait "$runner"
sleep 60 &
plain=$!
pids+=("$plain")
expect_status 2 "snapshot of a process without the preload" "$qaudit" snapshot "$plain"
one_line_error "snapshot without the preload"
grep -q "does not have libqaudit-preload.so" "$work/err" || fail "snapshot says why"
kill "$plain"
expect_status 2 "snapshot of no process" "$qaudit" snapshot 999999999
expect_status 2 "snapshot without a pid" "$qaudit" snapshot

echo "--- qaudit report"
# Merging: the snapshot and the exit dump are one process (the snapshot is superseded); the
# forker's parent and child are two processes whose totals add.
dumps=("$work"/snap-*.json)
expect_status 0 "report of a snapshot and the exit dump" "$qaudit" report "${dumps[@]}" --format json -o "$work/merged.json"
json_check "$work/merged.json" "len(d['dumps'])==1 and d['superseded']==${#dumps[@]}-1" &&
  pass "an earlier snapshot is superseded" || fail "supersede: $(head -c 300 "$work/merged.json")"
"$qaudit" run --out "$work/fork-%p.json" -- "$bin/fixture_forker" 2>/dev/null
expect_status 0 "report of parent and child" "$qaudit" report "$work"/fork-*.json --format json -o "$work/fork.json"
json_check "$work/fork.json" "len(d['dumps'])==2 and d['totals']['calls']['malloc']>=350" &&
  pass "parent and child dumps merge (100 + 250 allocations at least)" || fail "fork merge"

# Symbolization against a fixture with known lines, one of them in an inlined function.
"$qaudit" run --stacks always --out "$work/sym.json" -- "$bin/fixture_symbols" 2>/dev/null
# --binary relative to the current directory, as users type it.
(cd "$bin" && "$qaudit" report "$work/sym.json" --binary fixture_symbols --format json -o "$work/sym-report.json") &&
  pass "report with symbols" || fail "report with symbols"
malloc_line=$(grep -n MARK_MALLOC "$src/reports/tests/fixtures/symbols.c" | cut -d: -f1)
call_line=$(grep -n MARK_CALL "$src/reports/tests/fixtures/symbols.c" | cut -d: -f1)
python3 - "$work/sym-report.json" "$malloc_line" "$call_line" <<'EOF' && pass "symbolized: make_block:$malloc_line inlined into outer_allocator:$call_line" || fail "symbolization"
import json, sys
d = json.load(open(sys.argv[1])); malloc_line, call_line = int(sys.argv[2]), int(sys.argv[3])
site = [s for s in d["sites"] if s["allocs"] == 5][0]
locs = site["frames"][0]["locations"]
assert [l["function"] for l in locs[:2]] == ["make_block", "outer_allocator"], locs
assert locs[0]["file"].endswith("symbols.c") and locs[0]["line"] == malloc_line, locs
assert locs[0]["inlined"] and not locs[1]["inlined"], locs
assert locs[1]["line"] == call_line, locs
assert site["frames"][1]["locations"][0]["function"] == "main", site["frames"][1]
EOF
json_check "$work/sym-report.json" "[s['frames'][0]['locations'][-1]['function'] for s in d['sites'] if s['allocs'] == 3] == ['mycrate::leak_one']" &&
  pass "a Rust v0 symbol is demangled (mycrate::leak_one, crate hash left out)" || fail "Rust v0 demangling"

# C++ names come out demangled (libstdc++'s operator new is _Znwm in its symbol table); --skip
# none keeps the operator new frames the default wrapper list folds away.
"$qaudit" run --stacks always --out "$work/cpp.json" -- "$bin/fixture_cpp_new" 2>/dev/null
"$qaudit" report "$work/cpp.json" --skip none --format json -o "$work/cpp-report.json" 2>/dev/null
json_check "$work/cpp-report.json" "any(l['function'] == 'operator new' for s in d['sites'] for f in s['frames'] for l in f['locations'])" &&
  pass "C++ symbols are demangled (operator new)" || fail "demangling"

# JSON against its schema; the HTML well-formed and holding its charts.
"$qaudit" run --stacks queue --out "$work/q.json" -- "$bin/fixture_queue_ring" depth9 2>/dev/null
"$qaudit" report "$work/q.json" --binary "$bin/fixture_queue_ring" --format json -o "$work/q-report.json"
python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
  "$work/q-report.json" "$src/docs/report-schema.json" && pass "report JSON matches docs/report-schema.json" || fail "schema"
expect_status 1 "report exits 1 when a check failed (ring at depth one)" "$qaudit" report "$work/q.json" --binary "$bin/fixture_queue_ring" --format html -o "$work/q.html"
python3 - "$work/q.html" <<'EOF' && pass "HTML is well-formed, self-contained, with its charts" || fail "HTML"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
svg = "{http://www.w3.org/2000/svg}svg"
charts = [e for e in root.iter(svg) if "chart" in e.get("class", "").split()]
timelines = [e for e in charts if "timeline" in e.get("class", "").split()]
layouts = [e for e in root.iter(svg) if e.get("class") == "layout"]
text = open(sys.argv[1]).read()
# depth histogram, per connection, size classes; the sites as a flame graph; no memory chart:
# the run is shorter than two timeline periods (its line says so instead)
assert len(charts) - len(timelines) >= 3, len(charts)
assert not timelines and "less than two periods" in text, "an empty memory chart"
assert len(layouts) == 2, len(layouts)  # connection and rxq
assert root.find(".//canvas[@id='flame-canvas']") is not None, "no flame graph"
# Scripts are inline by design: none comes from elsewhere, and nothing points outside the file.
assert all(e.get("src") is None for e in root.iter("script")), "external script"
assert not any(e.get("src") or e.get("href") for e in root.iter() if e.tag in ("link", "img", "iframe"))
assert "http://" not in text.replace("http://www.w3.org/2000/svg", ""), "external reference"
assert "https://" not in text, "external reference"
EOF

# Layouts from a qaudit-layout/1 file instead of the binary; a bad file is an input error.
"$qaudit" layout --format json "$bin/fixture_queue_ring" >"$work/layout.json"
expect_status 1 "report with --layout FILE" "$qaudit" report "$work/q.json" --layout "$work/layout.json" --format json -o "$work/ql.json"
json_check "$work/ql.json" "[(t['name'], t['size']) for t in d['layouts']] == [('connection', 32), ('rxq', 24)]" &&
  pass "--layout FILE gives the connection and rxq layouts" || fail "--layout: $(head -c 300 "$work/ql.json")"
echo '{"format": "qaudit-layout/9", "types": []}' >"$work/bad-layout.json"
expect_status 2 "a layout file of another format" "$qaudit" report "$work/q.json" --layout "$work/bad-layout.json"
one_line_error "a layout file of another format"

# Markdown golden test: a committed dump, frames left raw so the output is the same everywhere;
# the golden file's figures held to what the fixture does, by its own rules, gdb and glibc.
(cd "$src" && "$qaudit" report docs/examples/dump-ring-depth9.json --no-symbols --format md) >"$work/golden.md"
diff -u "$src/reports/tests/golden/dump-ring-depth9.md" "$work/golden.md" >"$work/golden.diff" &&
  pass "Markdown matches reports/tests/golden/dump-ring-depth9.md" || fail "Markdown golden: $(head -40 "$work/golden.diff")"
python3 "$src/reports/tests/golden_truth.py" "$src/reports/tests/golden/dump-ring-depth9.md" \
  "$bin/fixture_queue_ring" >"$work/golden-truth.txt" &&
  pass "the golden Markdown's figures are what fixture_queue_ring depth9 does (golden_truth.py)" ||
  fail "golden figures: $(grep FAIL "$work/golden-truth.txt")"

echo "--- report: bad input"
head -c 700 "$work/q.json" >"$work/truncated.json"
expect_status 2 "a truncated dump" "$qaudit" report "$work/truncated.json"
one_line_error "a truncated dump"
sed 's/qaudit-alloc\/1/qaudit-alloc\/9/' "$work/q.json" >"$work/v9.json"
printf '{"format":"qaudit-all\\\n' >"$work/escape.json" # jansson quotes the newline in its error
expect_status 2 "a bad escape before a newline" "$qaudit" report "$work/escape.json"
one_line_error "a bad escape before a newline (the fuzzer's crash-2806e226)"
expect_status 2 "another format version" "$qaudit" report "$work/v9.json"
grep -q "qaudit-alloc/9" "$work/err" || fail "the version is named"
expect_status 2 "a missing binary" "$qaudit" report "$work/q.json" --binary /nonexistent/ringkv
one_line_error "a missing binary"
mkfifo "$work/fifo"
expect_status 2 "a FIFO as the dump (no hang)" timeout 10 "$qaudit" report "$work/fifo"
expect_status 2 "a FIFO as --binary (no hang)" timeout 10 "$qaudit" report "$work/q.json" --binary "$work/fifo"
expect_status 2 "a FIFO as the layout binary (no hang)" timeout 10 "$qaudit" layout "$work/fifo"
expect_status 2 "a missing dump" "$qaudit" report "$work/none.json"
expect_status 2 "a bad --format" "$qaudit" report "$work/q.json" --format pdf
"$qaudit" report "$work/q.json" --binary "$bin/fixture_queue_inline" >/dev/null 2>"$work/err"
grep -q "cannot be trusted" "$work/err" && pass "another build's binary: a warning on its frames" || fail "build id warning: $(cat "$work/err")"
expect_status 2 "a layout type the binary lacks" "$qaudit" report "$work/q.json" --binary "$bin/fixture_queue_ring" --type no_such_struct

echo "--- qaudit compare"
# Each build under a short depth-one load; the table must tell the story of the change.
for v in ringkv ringkv-ring ringkv-deque; do
  "$qaudit" run --out "$work/cmp-$v.json" -- "$bin/$v" --port 0 --threads 1 >"$work/$v.log" 2>&1 &
  runner=$!
  pids+=("$runner")
  port=
  for _ in $(seq 1200); do # until ringkv prints the port it was given (60 s at most)
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/$v.log")
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { fail "$v did not start: $(cat "$work/$v.log")"; continue; }
  timeout 60 redis-benchmark -h 127.0.0.1 -p "$port" -t set,get -n 2000 -c 10 -P 1 -q >/dev/null
  kill -TERM "$runner"
  wait "$runner"
done
expect_status 0 "compare three builds" "$qaudit" compare "$bin/ringkv" --dump "$work/cmp-ringkv.json" \
  "$bin/ringkv-ring" --dump "$work/cmp-ringkv-ring.json" "$bin/ringkv-deque" --dump "$work/cmp-ringkv-deque.json" --format json
cp "$work/out" "$work/compare.json"
python3 - "$work/compare.json" <<'EOF' && pass "compare: inline 32/184 none, ring 24/176 one 96 B array, deque 80/232 chunks" || fail "compare: $(cat "$work/compare.json")"
import json, sys
b = {x["version"]: x for x in json.load(open(sys.argv[1]))["builds"]}
i, r, d = b["ringkv"], b["ringkv-ring"], b["ringkv-deque"]
assert (i["queue_object"], i["connection_object"]) == (32, 184)
assert (r["queue_object"], r["connection_object"]) == (24, 176)
assert (d["queue_object"], d["connection_object"]) == (80, 232)
assert i["allocs_per_connection_at_depth_one"] == 0 and i["extra_heap_bytes_at_depth_one"] == 0
assert r["allocs_per_connection_at_depth_one"] == 1 and r["extra_heap_bytes_at_depth_one"] == 96
assert d["allocs_per_connection_at_depth_one"] >= 2 and d["extra_heap_bytes_at_depth_one"] > 512
assert all(x["classes"]["glibc"] >= 192 and x["classes"]["mimalloc"] >= 192 for x in b.values())
EOF
expect_status 0 "compare without dumps" "$qaudit" compare "$bin/ringkv" "$bin/ringkv-ring" --format md
grep -q "(no dump)" "$work/out" || fail "compare says a row has no dump"
expect_status 2 "compare with --dump first" "$qaudit" compare --dump x.json "$bin/ringkv"
expect_status 2 "compare of a binary without the struct" "$qaudit" compare "$bin/fixture_exact_counts"
one_line_error "compare of a binary without the struct"

echo "--- cmake --install"
cmake --install "$build" --prefix "$work/prefix" >/dev/null || fail "cmake --install"
"$work/prefix/bin/qaudit" run --out "$work/installed.json" -- "$bin/fixture_exact_counts" 2>"$work/err" &&
  [ -f "$work/installed.json" ] && pass "the installed qaudit finds its installed preload" ||
  fail "installed run: $(cat "$work/err")"
printf '#include <qaudit/hooks.h>\nint main(void) { return QAUDIT_HOOKS_ABI == 1 ? 0 : 1; }\n' >"$work/server.c"
cc $(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags qaudit-hooks) \
  -o "$work/server" "$work/server.c" && "$work/server" &&
  pass "pkg-config qaudit-hooks finds the installed hooks.h" || fail "pkg-config qaudit-hooks"

for c in run snapshot report compare layout classes gate; do
  "$qaudit" "$c" --help >/dev/null 2>&1 || fail "qaudit $c --help"
done
pass "every subcommand has --help"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
