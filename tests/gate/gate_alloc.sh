#!/usr/bin/env bash
# The allocation gate (issue 42) on real regressions: ringkv run under qaudit run with a bounded
# load on 127.0.0.1 (load.py, a free port), its dumps written as a baseline, then the planted
# regressions of server/CMakeLists.txt (one more allocation per request, a leak on DEL, a
# temporary in DEL's loop) and the ring queue instead of the inline one, each run the same way
# and gated: the gate fails naming the right site; the same build under a longer load passes.
# Then the edges: a figure exactly at the tolerance and one past, no dumps, a struct-only
# baseline, n/a rules, dumps of another program, unreadable ones, GitHub and JUnit output, and
# both halves in one file and one command.
# usage: gate_alloc.sh QAUDIT BIN_DIR REGRESS_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") regress=$(realpath "$3") src=$(realpath "$4")
work=$(mktemp -d)
runner=
cleanup() {
  [ -n "$runner" ] && kill -9 "$runner" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# run NAME BINARY CONNECTIONS CYCLES [QAUDIT RUN OPTIONS...]: BINARY, copied as NAME/ringkv (the
# program of every run is ringkv, as a CI job's build is), under qaudit run with the load;
# its dumps in $work/NAME/dumps, the requests sent in $work/NAME/requests.
run() {
  local name=$1 binary=$2 connections=$3 cycles=$4
  shift 4
  mkdir -p "$work/$name/dumps"
  cp "$binary" "$work/$name/ringkv"
  # --hash-seed 1: every run's keys reach the same shards, so its allocations repeat (loosen).
  "$qaudit" run --out "$work/$name/dumps/d-%p-%n.json" "$@" -- "$work/$name/ringkv" --port 0 \
    --threads 1 --hash-seed 1 >"$work/$name/log" 2>&1 &
  runner=$!
  local port=
  for _ in $(seq 300); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/$name/log")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { fail "$name: ringkv did not start: $(cat "$work/$name/log")"; return 1; }
  python3 "$src/tests/gate/load.py" "$port" "$connections" "$cycles" >"$work/$name/requests" ||
    fail "$name: the load"
  kill -TERM "$runner"
  wait "$runner"
  runner=
}

# gate EXPECTED WHAT ARGS...: qaudit gate ARGS, its output in $work/out and $work/err.
gate() {
  local expected=$1 what=$2
  shift 2
  "$qaudit" gate "$@" >"$work/out" 2>"$work/err"
  local status=$?
  [ "$status" -eq "$expected" ] && pass "$what (exit $status)" ||
    fail "$what: exit $status, not $expected: $(cat "$work/out" "$work/err")"
}

# says WHAT PATTERN: the gate's output (both streams) holds an extended regex.
says() {
  grep -q -E -- "$2" "$work/out" "$work/err" && pass "$1" || fail "$1: no /$2/ in: $(cat "$work/out" "$work/err")"
}

echo "--- the baseline: ringkv, 4 connections of 150 cycles"
run base "$bin/ringkv" 4 150 || exit 1
per=$(cat "$work/base/requests")
gate 0 "write the allocation rules" --write-baseline "$work/base.json" --dump "$work/base/dumps" \
  --binary "$work/base/ringkv" --per "$per"
python3 - "$work/base.json" <<'PY' && pass "the baseline holds sites, totals and the queue audit" || fail "baseline content: $(head -c 1500 "$work/base.json")"
import json, sys
a = json.load(open(sys.argv[1]))["allocations"]
assert a["program"] == "ringkv" and a["per"] > 0 and a["stacks"] == "exact", a
assert any(s["where"].startswith("entry_new (store.c:") for s in a["sites"].values()), list(a["sites"])
assert set(a["totals"]) >= {"allocs", "bytes", "temporary", "peak_live_bytes", "live_blocks"}
assert a["queue"]["allocs_per_connection"]["1"] == 0, a["queue"]
assert a["queue"]["depth_one_no_alloc"] == "pass", a["queue"]
t = a["totals"]
low, high = t["peak_live_bytes_range"]  # two threads: the peak known within 64 KiB either side
assert low == max(0, t["peak_live_bytes"] - 65536) and high == t["peak_live_bytes"] + 65536, t
PY
gate 0 "the run it was written from passes" --baseline "$work/base.json" --dump "$work/base/dumps" \
  --binary "$work/base/ringkv" --per "$per"

# loosen FILE: the tolerances a CI job gives the figures of ringkv that vary (the rule's own, per
# figure, in the file). With --hash-seed 1, five runs of 4 connections of 150 cycles gave the
# same figures to the allocation (840 allocations, 376 temporaries, 225 of rehash_start), save
# peak live bytes, 70,680 to 79,656 (and 50,520 to 85,504 over loads of 80 to 300 cycles): the
# interposer publishes each thread's live bytes in 64 KiB batches, so with two threads (main and
# worker) the peak is exact only to within 64 KiB (precision.peak_live_bytes_within) and which
# batch lands at the peak follows the threads' timing: the baseline keeps the peak's range and the
# gate compares ranges (checked below), so the peak needs no tolerance. Temporaries are not run-dependent
# but load-dependent: per request 0.209 under 4x150, 0.286 under 6x300 (+37%: the longer load
# keeps more shards at their first table, where DEL frees SET's entry before anything else
# allocates), so 40% for the same build under a longer load. Without the seed they varied by
# 25% between runs of one load (36 and 45 of 160 SETs).
loosen() {
  python3 - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
a = doc["allocations"]
a["totals"]["tolerance"] = {"temporary": "40%"}
for key, site in a["sites"].items():
    if key.startswith("entry_new;"):
        site["tolerance"] = {"temporary": "40%"}
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY
}
loosen "$work/base.json"

# The peak's range: the run's own lowest peak exactly at the baseline's highest holds, a byte
# past it breaks (no tolerance: the ranges carry the batching's uncertainty). A peak under 64 KiB
# has 0 as its lowest, so the baseline's highest is then 0 or -1.
peak_edge() {
  python3 - "$work/base.json" "$work/$1.json" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
t = doc["allocations"]["totals"]
low = t["peak_live_bytes_range"][0]
t["peak_live_bytes_range"] = [low - 10, low - int(sys.argv[3])]
t["peak_live_bytes"] = low - 5
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
}
peak_edge peak-at 0
gate 0 "the run's lowest peak exactly at the baseline's highest" --baseline "$work/peak-at.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv" --per "$per"
peak_edge peak-past 1
gate 1 "one byte past the baseline's peak range" --baseline "$work/peak-past.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv" --per "$per"
says "the peak rule names both ranges" "^run: totals.peak_live_bytes .*\(ranges [-0-9.e+]+-[-0-9.e+]+ -> [-0-9.e+]+-[-0-9.e+]+\)"

echo "--- --hash-seed: two runs of one load allocate alike"
run again "$bin/ringkv" 4 150 || exit 1
gate 0 "the second run's rules" --write-baseline "$work/again.json" --dump "$work/again/dumps" \
  --binary "$work/again/ringkv" --per "$(cat "$work/again/requests")"
python3 - "$work/base.json" "$work/again.json" <<'PY' && pass "the same allocations, temporaries and sites" || fail "runs differ"
import json, sys
a, b = (json.load(open(p))["allocations"] for p in sys.argv[1:3])
for k in ("allocs", "bytes", "temporary", "live_blocks"):
    assert a["totals"][k] == b["totals"][k], (k, a["totals"][k], b["totals"][k])
pick = lambda s: {k: (v["allocs"], v["temporary"]) for k, v in s.items()}
assert pick(a["sites"]) == pick(b["sites"]), (pick(a["sites"]), pick(b["sites"]))
PY

echo "--- the same build under a longer load passes"
run long "$bin/ringkv" 6 300 || exit 1
gate 0 "the same build, 6 connections of 300 cycles, --tolerance 5%" --baseline "$work/base.json" \
  --dump "$work/long/dumps" --binary "$work/long/ringkv" --per "$(cat "$work/long/requests")" \
  --tolerance 5%
says "nothing broke" "^qaudit gate: 0 allocation rules broken, [0-9]+ checked, 0 n/a$"

run short "$bin/ringkv" 4 80 || exit 1
gate 0 "the same build, 4 connections of 80 cycles: costs paid once grow per unit, not in all" \
  --baseline "$work/base.json" --dump "$work/short/dumps" --binary "$work/short/ringkv" \
  --per "$(cat "$work/short/requests")" --tolerance 5%

# regression NAME BINARY SITE-REGEX RULE-REGEX: the build's run fails the gate with a line that
# names the site and the rule, and the command that accepts the change.
regression() {
  run "$1" "$2" 4 150 || return
  gate 1 "$1: the gate fails" --baseline "$work/base.json" --dump "$work/$1/dumps" \
    --binary "$work/$1/ringkv" --per "$(cat "$work/$1/requests")" --tolerance 5%
  says "$1: names the site and the rule" "^$3.*: $4 "
  says "$1: the command that accepts it" "^to accept this change: qaudit gate --write-baseline $work/base.json --dump $work/$1/dumps --binary $work/$1/ringkv --per [0-9]+$"
  # The run's totals move with the regression (extra_alloc's and loop_temp's allocations are
  # temporaries: totals.temporary breaks too); no other site may break.
  [ "$(grep -c -v -E "^(qaudit gate|to accept|  .*n/a|run: totals\.)" "$work/out")" -le 3 ] && pass "$1: no other rule broke" ||
    fail "$1: other rules broke: $(cat "$work/out")"
}
echo "--- one more allocation per request"
regression extra "$regress/ringkv-regress-extra_alloc" "command_execute \(commands.c:[0-9]+\)" \
  "new_site 0 -> 1 allocations per unit of work"
echo "--- a leak on DEL's path"
regression leak "$regress/ringkv-regress-leak" "entry_new \(store.c:[0-9]+\)" "live_blocks 0 -> 600"
echo "--- a temporary in DEL's loop"
regression loop "$regress/ringkv-regress-loop_temp" "cmd_del \(commands.c:[0-9]+\)" \
  "new_site 0 -> 0.333333 allocations"
grep -q "0.333333 temporary" "$work/out" && pass "loop: the new site's allocations are temporaries" ||
  fail "loop: temporaries: $(cat "$work/out")"
echo "--- the ring queue instead of the inline one"
regression ring "$bin/ringkv-ring" "queue" "queue.allocs_per_connection.1 0 -> 1"
says "ring: the depth-one check broke" "^queue: queue.depth_one_no_alloc pass -> fail"

echo "--- GitHub annotations and JUnit"
gate 1 "ring, --format github --junit" --baseline "$work/base.json" --dump "$work/ring/dumps" \
  --binary "$work/ring/ringkv" --per "$(cat "$work/ring/requests")" --format github \
  --junit "$work/junit.xml"
says "an error annotation per broken rule" "^::error title=qaudit gate \(queue.allocs_per_connection.1\)::queue: "
says "the accept command as a notice" "^::notice title=qaudit gate::to accept this change: qaudit gate --write-baseline "
python3 - "$work/junit.xml" <<'PY' && pass "JUnit: a failure for the depth-one rule" || fail "JUnit: $(cat "$work/junit.xml")"
import sys, xml.etree.ElementTree as ET
suite = ET.parse(sys.argv[1]).getroot()
names = {c.get("name"): c for c in suite.iter("testcase")}
assert names["queue.allocs_per_connection.1"].find("failure") is not None
assert int(suite.get("failures")) >= 2 and int(suite.get("tests")) > 10
PY
gate 1 "extra, --format github" --baseline "$work/base.json" --dump "$work/extra/dumps" \
  --binary "$work/extra/ringkv" --per "$(cat "$work/extra/requests")" --format github
says "the annotation is at the site's file and line" "^::error file=[^,]*server/src/commands.c,line=[0-9]+,title=qaudit gate \(new_site\)::command_execute "

echo "--- tolerance: exactly at it, and one past"
gate 0 "a baseline of the run's own figures, no --per" --write-baseline "$work/abs.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv"
allocs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['allocations']['totals']['allocs'])" "$work/abs.json")
# set_total FILE VALUE: the baseline's totals.allocs set to VALUE (a Python expression of N).
set_total() {
  python3 - "$work/abs.json" "$1" "$2" "$allocs" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
n = int(sys.argv[4])
doc["allocations"]["totals"]["allocs"] = eval(sys.argv[3])
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
}
set_total "$work/at.json" "n / 1.05"
gate 0 "run's allocations exactly 5% above the baseline, --tolerance 5%" --baseline "$work/at.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv" --tolerance 5%
set_total "$work/past.json" "(n - 1) / 1.05"
gate 1 "one allocation past 5%" --baseline "$work/past.json" --dump "$work/base/dumps" \
  --binary "$work/base/ringkv" --tolerance 5%
says "the totals rule names the run" "^run: totals.allocs [0-9.e+]+ -> $allocs \(\+5\.[0-9]+%, tolerance 5%\)"
gate 1 "one past 5%: the file's tolerance alike" --baseline "$work/past.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv" --tolerance 4%
python3 - "$work/past.json" "$work/past-file.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["allocations"]["tolerance"] = "6%"
json.dump(doc, open(sys.argv[2], "w"))
PY
gate 0 "the file's own tolerance (6%) lets it through" --baseline "$work/past-file.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv"
python3 - "$work/past-file.json" "$work/past-rule.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc["allocations"]["totals"]["tolerance"] = "1%"
json.dump(doc, open(sys.argv[2], "w"))
PY
gate 1 "a rule's own tolerance (1%) wins over the file's" --baseline "$work/past-rule.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv"

echo "--- no tolerance for the queue at depth one"
gate 1 "ring against the baseline, --tolerance 1000%" --baseline "$work/base.json" \
  --dump "$work/ring/dumps" --binary "$work/ring/ringkv" --per "$(cat "$work/ring/requests")" \
  --tolerance 1000%
says "depth one still breaks" "^queue: queue.allocs_per_connection.1 0 -> 1 "
gate 0 "a baseline of the ring build itself" --write-baseline "$work/ring.json" \
  --dump "$work/ring/dumps" --binary "$work/ring/ringkv" --per "$(cat "$work/ring/requests")"
python3 - "$work/ring.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
q = doc["allocations"]["queue"]
assert q["allocs_per_connection"]["1"] == 1, q
q["allocs_per_connection"]["1"] = 0.99
q["tolerance"] = "50%"
json.dump(doc, open(sys.argv[1], "w"))
PY
gate 1 "depth one 0.99 -> 1, the queue's own tolerance 50% and --tolerance 50%" \
  --baseline "$work/ring.json" --dump "$work/ring/dumps" --binary "$work/ring/ringkv" \
  --per "$(cat "$work/ring/requests")" --tolerance 50%
says "says no tolerance was given it" "^queue: queue.allocs_per_connection.1 0.99 -> 1 \(\+1.01%, tolerance 0%\)$"

echo "--- sampled figures by their error ranges"
run sampled "$bin/ringkv" 4 150 --stacks sampled:8 || exit 1
sper=$(cat "$work/sampled/requests")
gate 0 "a sampled run's baseline" --write-baseline "$work/sampled.json" --dump "$work/sampled/dumps" \
  --binary "$work/sampled/ringkv" --per "$sper"
# ranged FILE OUT WHERE: the baseline's entry_new site made exact (no range), its allocations
# set to a point of the run's range: "inside" between the low bound and the estimate (the run's
# range reaches it: held), "below" under the low bound (broken).
ranged() {
  python3 - "$1" "$2" "$3" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
a = doc["allocations"]
a["stacks"] = "exact"
for key, site in a["sites"].items():
    low, high = site.pop("allocs_range", [site["allocs"]] * 2)
    site.pop("bytes_range", None)
    site["bytes"] = site["allocs"] = 1e9  # every other site far above the run
    if key.startswith("entry_new;"):
        est = json.load(open(sys.argv[1]))["allocations"]["sites"][key]["allocs"]
        assert low < est, (low, est)
        site["allocs"] = (low + est) / 2 if sys.argv[3] == "inside" else low / 1.5
        site["bytes"] = 1e9
for k in ("allocs", "bytes", "temporary", "peak_live_bytes", "live_blocks"):
    a["totals"][k] = 1e12
json.dump(doc, open(sys.argv[2], "w"), indent=2)
PY
}
ranged "$work/sampled.json" "$work/inside.json" inside
gate 0 "an estimate above the baseline, its range reaching it: held" --baseline "$work/inside.json" \
  --dump "$work/sampled/dumps" --binary "$work/sampled/ringkv" --per "$sper"
ranged "$work/sampled.json" "$work/below.json" below
gate 1 "the whole range above the baseline: broken" --baseline "$work/below.json" \
  --dump "$work/sampled/dumps" --binary "$work/sampled/ringkv" --per "$sper"
says "the line gives both ranges" "^entry_new \(store.c:[0-9]+\): allocs .* \(ranges [0-9.e+-]+-[0-9.e+-]+ -> [0-9.e+-]+-[0-9.e+-]+\)$"
says "sampled temporaries are n/a" "^  entry_new \(store.c:[0-9]+\): temporary n/a: sampled stacks give temporaries no error range"
gate 0 "the exact baseline against the sampled run of the same build, --tolerance 5%" \
  --baseline "$work/base.json" --dump "$work/sampled/dumps" --binary "$work/sampled/ringkv" \
  --per "$sper" --tolerance 5%

echo "--- n/a rules"
run off "$bin/ringkv" 4 150 --stacks off || exit 1
gate 0 "stacks off: the site rules are n/a, not passed" --baseline "$work/base.json" \
  --dump "$work/off/dumps" --binary "$work/off/ringkv" --per "$(cat "$work/off/requests")" \
  --tolerance 5%
says "the summary counts them" "^qaudit gate: 0 allocation rules broken, [0-9]+ checked, [1-9][0-9]* n/a$"
says "each says why" "^  entry_new \(store.c:[0-9]+\): allocs n/a: the dumps have no stacks"

echo "--- dumps that cannot be compared, and usage"
gate 2 "no --per where the baseline's figures are per unit" --baseline "$work/base.json" \
  --dump "$work/base/dumps" --binary "$work/base/ringkv"
says "says to give --per" "give --per N"
mkdir -p "$work/empty"
gate 2 "an empty directory of dumps" --baseline "$work/base.json" --dump "$work/empty" --per 10
[ "$(wc -l <"$work/err")" -eq 1 ] && pass "one line" || fail "lines: $(cat "$work/err")"
gate 2 "an unreadable dump" --baseline "$work/base.json" --dump "$work/missing.json" --per 10
echo "not json" >"$work/text.json"
gate 2 "a file that is no dump" --baseline "$work/base.json" --dump "$work/text.json" --per 10
"$qaudit" run --out "$work/other-%p.json" -- /bin/true 2>/dev/null
gate 2 "dumps of another program" --baseline "$work/base.json" --dump "$work"/other-*.json --per 10
says "names both programs" "the dumps are of true, .*'s allocation rules of ringkv"
[ "$(wc -l <"$work/err")" -eq 1 ] && pass "one line" || fail "lines: $(cat "$work/err")"

echo "--- a baseline of struct rules only, and both halves in one file"
cp "$src/probe/baselines/ringkv.json" "$work/structs.json"
gate 2 "struct rules only, with --dump: no allocation rules to check" --baseline "$work/structs.json" \
  --dump "$work/base/dumps" --per "$per" "$bin/ringkv"
says "says how to write them" "holds no allocation rules \(write them: qaudit gate --write-baseline"
"$qaudit" gate --baseline "$work/structs.json" "$bin/ringkv" >"$work/plain.out" 2>&1
"$qaudit" gate --baseline "$src/probe/baselines/ringkv.json" "$bin/ringkv" >"$work/plain-src.out" 2>&1
cmp -s "$work/plain.out" "$work/plain-src.out" && pass "struct only: the gate says what it said" ||
  fail "struct only differs"
cp "$work/structs.json" "$work/both.json"
gate 0 "allocation rules written beside the struct rules" --write-baseline "$work/both.json" \
  --dump "$work/base/dumps" --per "$per" "$work/base/ringkv"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['types']['connection']['size'] == 184 and 'allocations' in d" "$work/both.json" &&
  pass "one file holds both halves" || fail "both.json: $(head -c 600 "$work/both.json")"
loosen "$work/both.json"
gate 0 "written again over the same file" --write-baseline "$work/both.json" \
  --dump "$work/base/dumps" --per "$per" "$work/base/ringkv"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['allocations']['totals']['tolerance']['temporary'] == '40%' and d['types']['rxq']['size'] == 32" "$work/both.json" &&
  pass "writing again keeps the rules' own tolerances and the struct rules" || fail "both.json again: $(head -c 900 "$work/both.json")"
sed -n '/"allocations"/,$p' "$work/both.json" >"$work/alloc-before"
gate 0 "the struct half writes the same file again" --write-baseline "$work/both.json" \
  --type connection "$bin/ringkv"
sed -n '/"allocations"/,$p' "$work/both.json" | cmp -s - "$work/alloc-before" &&
  pass "the struct half keeps the allocation rules' figures as written (10 digits)" ||
  fail "allocation rules rewritten: $(diff "$work/alloc-before" <(sed -n '/"allocations"/,$p' "$work/both.json") | head -5)"
gate 0 "one command for both halves: --dump DIR BINARY" --baseline "$work/both.json" \
  --dump "$work/long/dumps" --per "$(cat "$work/long/requests")" --tolerance 5% "$work/long/ringkv"
says "the struct half's summary" "^qaudit gate: 0 rules broken, [0-9]+ checked, 2 types$"
says "the allocation half's summary" "^qaudit gate: 0 allocation rules broken"
gate 1 "both halves: ringkv-deque breaks the struct half" --baseline "$work/both.json" \
  --dump "$work/long/dumps" --per "$(cat "$work/long/requests")" --binary "$work/long/ringkv" \
  "$bin/ringkv-deque"
says "the struct rule" "^struct connection: size"
gate 1 "both halves: the ring build breaks both" --baseline "$work/both.json" \
  --dump "$work/ring/dumps" --per "$(cat "$work/ring/requests")" --binary "$work/ring/ringkv" \
  "$bin/ringkv-ring" --junit "$work/both.xml"
says "the queue rule too" "^queue: queue.allocs_per_connection.1 0 -> 1 "
grep -q 'classname="connection"' "$work/both.xml" && grep -q 'name="queue.allocs_per_connection.1"' "$work/both.xml" &&
  pass "one JUnit file for both halves" || fail "both.xml: $(cat "$work/both.xml")"
gate 0 "the struct half without --dump: as before" --baseline "$work/both.json" "$bin/ringkv"
says "notes the allocation rules it did not check" "allocation rules were not checked: give the run's dumps with --dump DUMP"

[ "$failures" -eq 0 ] && echo "all passed" || echo "$failures failed"
[ "$failures" -eq 0 ]
