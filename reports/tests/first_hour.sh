#!/usr/bin/env bash
# The first hour (issue 21): a newcomer's program (fixtures/first_hour.c: one 4 MiB leak, a thousand
# 40-byte leaks, a hot loop of temporary allocations) under qaudit run's defaults, reported in
# every format, each held against the counts the program wrote itself; and under sampled stacks,
# where the report must list the small leak or say that its blocks have no site and how to get it.
# usage: first_hour.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
program=$bin/fixture_first_hour
cd "$work" || exit 2

echo "--- qaudit run with its defaults"
"$qaudit" run -- "$program" "$work/truth.json" >"$work/run.out" 2>"$work/run.err"
status=$?
[ "$status" -eq 0 ] && pass "run exits with the program's status" || fail "run: exit $status: $(cat "$work/run.err")"
dump=$(ls "$work"/qaudit-*.json 2>/dev/null)
[ "$(echo "$dump" | wc -w)" -eq 1 ] && pass "one dump: $(basename "$dump")" || fail "dumps: $dump"
pid=$(basename "$dump" .json)
pid=${pid#qaudit-}
head -1 "$work/run.err" | grep -qx "qaudit run: pid $pid: $program" &&
  pass "run says the program's pid first" || fail "first line: $(head -1 "$work/run.err")"
tail -1 "$work/run.err" | grep -qx "qaudit run: next: qaudit report qaudit-$pid.json" &&
  pass "run ends with the command that reports it" || fail "last line: $(tail -1 "$work/run.err")"
! grep -qi "queue\|connection" "$work/run.err" && pass "no queue line for a program without hooks" ||
  fail "run speaks of queues: $(cat "$work/run.err")"
python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['config']['stacks'] != 'always')" "$dump" &&
  pass "the default stacks are always" || fail "default stacks"

echo "--- JSON: every figure the program's own"
"$qaudit" report "$dump" --format json -o "$work/report.json" || fail "report json"
python3 - "$work/report.json" "$work/truth.json" <<'EOF' && pass "each site's allocations, bytes, live bytes and blocks, temporaries exact" || fail "site figures"
import json, sys
d, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sites = {s["where"].split(" ")[0]: s for s in d["sites"]}
for name, t in truth.items():
    s = sites[name]
    assert s["precision"] == "exact", s
    for k in ("allocs", "bytes", "live_bytes", "live_blocks", "temporary"):
        assert s[k] == t[k], (name, k, s[k], t[k])
assert d["live"]["without_site"]["blocks"] == 0, d["live"]["without_site"]
assert not d["queue_audit"], "a program without hooks is no queue audit"
ids = [s["id"] for s in d["sites"]]
assert ids == sorted(ids) and [s["allocs"] for s in d["sites"]] == sorted((s["allocs"] for s in d["sites"]), reverse=True), ids
EOF
python3 - "$work/report.json" "$work/truth.json" <<'EOF' && pass "Live at exit lists every site with >= 1 % of the live bytes or >= 100 blocks" || fail "live sites"
import json, sys
d, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
listed = {d["sites"][s["id"] - 1]["where"].split(" ")[0] for s in d["live"]["sites"]}
live = d["live"]["bytes"]
for name, t in truth.items():
    if t["live_blocks"] >= 100 or t["live_bytes"] >= 0.01 * live:
        assert name in listed, (name, listed)
EOF
python3 - "$work/report.json" <<'EOF' && pass "summary: the largest leak first, then most blocks left, most allocations, most temporaries" || fail "summary: $(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary'])" "$work/report.json")"
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
assert s[0].startswith("Largest leak: site #") and "big_leak" in s[0] and "4.00 MiB in 1 block" in s[0], s
assert any(i.startswith("Most blocks still allocated") and "small_leaks" in i and "1,000 blocks" in i for i in s), s
assert any(i.startswith("Most allocations") and "hot_loop" in i and "200,000" in i for i in s), s
assert any(i.startswith("Most temporary allocations") and "hot_loop" in i for i in s), s
assert not any("heck" in i for i in s), "no checks in a program without hooks"
EOF

python3 -c "import json,jsonschema,sys; jsonschema.validate(json.load(open(sys.argv[1])), json.load(open(sys.argv[2])))" \
  "$work/report.json" "$src/docs/report-schema.json" && pass "the JSON matches docs/report-schema.json" || fail "schema"

echo "--- text: fits the program and 100 columns"
"$qaudit" report "$dump" >"$work/report.txt" || fail "report text"
long=$(awk 'length($0) > 100' "$work/report.txt" | head -3)
[ -z "$long" ] && pass "every line within 100 columns" || fail "lines over 100 columns: $long"
for word in "queue" "Checks" "N/A" "connection" "Depth-one" "Wrappers folded"; do
  grep -q "$word" "$work/report.txt" && fail "the text says '$word'"
done
pass "no queue, checks or wrapper words for a plain program"
sed -n '/^By allocations/,/^By bytes/p' "$work/report.txt" | grep -o '^  #[0-9]*' | tr -d ' ' | tr '\n' ' ' |
  grep -qx '#1 #2 #3 ' && pass "site ids read in rank order (#1 #2 #3)" ||
  fail "ids by allocations: $(sed -n '/^By allocations/,/^By bytes/p' "$work/report.txt")"
grep -q "site #1: 200,000 allocations, 48.83 MiB$" "$work/report.txt" &&
  ! grep -Eq "[0-9]{5,} bytes" "$work/report.txt" && pass "bytes in one style (48.83 MiB, never 51200000 bytes)" ||
  fail "units: $(grep '^  site #' "$work/report.txt")"
grep -q "^Coverage: the sites account for all .* allocation calls and every byte requested" "$work/report.txt" &&
  pass "coverage: every allocation call" || fail "coverage: $(grep Coverage "$work/report.txt")"

"$qaudit" report "$dump" --top 1 >"$work/top1.txt"
sed -n '/^== Live at exit/,/^== Temporary/p' "$work/top1.txt" | grep -q "small_leaks (first_hour.c" &&
  pass "--top 1: Live at exit still lists the 1,000-block leak (>= 100 blocks)" ||
  fail "--top 1 left the small leak out: $(sed -n '/^== Live at exit/,/^== Temporary/p' "$work/top1.txt")"

echo "--- Markdown and HTML say the same"
"$qaudit" report "$dump" --format md -o "$work/report.md" || fail "report md"
grep -q '^\*\*What to look at first:\*\*$' "$work/report.md" && grep -q '^- Largest leak: site #.*big_leak' "$work/report.md" &&
  ! grep -q "queue allocs" "$work/report.md" && pass "Markdown: the summary on top, no queue column" || fail "Markdown"
"$qaudit" report "$dump" --format html -o "$work/report.html" || fail "report html"
python3 - "$work/report.html" <<'EOF' && pass "HTML: the banner leads with the largest leak; no queue column, no checks" || fail "HTML banner"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
banner = root.find(".//*[@id='summary']")
assert banner is not None and banner.get("class") == "verdict info", banner
items = ["".join(li.itertext()) for li in banner.iter("li")]
assert items[0].startswith("Largest leak") and "big_leak" in items[0], items
heads = ["".join(th.itertext()) for th in root.iter("th")]
assert "queue allocs" not in heads, heads
assert root.find(".//*[@id='checks']") is None
EOF

echo "--- pprof and folded stacks carry the same figures"
if command -v go >/dev/null; then
  "$qaudit" report "$dump" --format pprof -o "$work/heap.pb.gz" || fail "report pprof"
  go tool pprof -sample_index=inuse_objects -top "$work/heap.pb.gz" 2>/dev/null >"$work/inuse.txt"
  go tool pprof -sample_index=alloc_objects -top "$work/heap.pb.gz" 2>/dev/null >"$work/alloc.txt"
  grep -Eq '^ +1000 .*small_leaks$' "$work/inuse.txt" && grep -Eq '^ +200000 .*hot_loop$' "$work/alloc.txt" &&
    pass "go tool pprof: small_leaks 1000 in use, hot_loop 200000 allocated" ||
    fail "pprof: $(cat "$work/inuse.txt" "$work/alloc.txt")"
else
  fail "go tool pprof missing (scripts/deps.sh installs golang-go)"
fi
"$qaudit" report "$dump" --format folded --weight live -o "$work/live.folded" || fail "folded"
python3 - "$work/live.folded" "$work/truth.json" <<'EOF' && pass "folded --weight live: each leak's bytes" || fail "folded"
import json, sys
truth = json.load(open(sys.argv[2]))
live = {}
for line in open(sys.argv[1]):
    stack, count = line.rsplit(" ", 1)
    leaf = stack.split(";")[-1]
    live[leaf] = live.get(leaf, 0) + int(count)
assert live.get("big_leak") == truth["big_leak"]["live_bytes"], live
assert live.get("small_leaks") == truth["small_leaks"]["live_bytes"], live
EOF

echo "--- sampled stacks: the small leak is listed, or its blocks are said to have no site"
for seed in 1 2 3 4 5 6 7 8; do
  QAUDIT_SEED=$seed "$qaudit" run --stacks sampled:65536b --out "$work/s-$seed.json" -- "$program" "$work/t.json" 2>/dev/null
  "$qaudit" report "$work/s-$seed.json" --format json -o "$work/s-$seed.report.json" &&
    "$qaudit" report "$work/s-$seed.json" >"$work/s-$seed.txt" || fail "sampled report, seed $seed"
done
python3 - "$work" "$program" <<'EOF' && pass "sampled (8 seeds): small_leaks listed, or its blocks without a site with the command that attributes them" || fail "sampled"
import json, sys
work, program = sys.argv[1], sys.argv[2]
for seed in range(1, 9):
    d = json.load(open(f"{work}/s-{seed}.report.json"))
    text = open(f"{work}/s-{seed}.txt").read().replace("\n", " ")
    listed = any(d["sites"][s["id"] - 1]["where"].startswith("small_leaks") for s in d["live"]["sites"])
    w = d["live"]["without_site"]
    said = w["blocks"] >= 1 and w["command"].startswith("qaudit run --stacks always -- " + program)
    assert listed or said, (seed, w)
    assert "qaudit run --stacks always -- " + program in text, seed  # the command, always said
EOF

echo "--- a program that starts others: run counts their dumps, and its command takes them all"
# next_report DIR ERR: runs the command run's last line gives (run's own dumps only) as JSON;
# prints how many processes the report holds.
next_report() {
  local line
  line=$(tail -1 "$2")
  case $line in "qaudit run: next: qaudit report "*) ;; *) echo "no next line: $line" >&2 && return 1 ;; esac
  (cd "$work" && eval "\"\$qaudit\" report ${line#qaudit run: next: qaudit report } --format json -o $1/r.json") &&
    python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['dumps']))" "$1/r.json"
}
# run_starting DIR ERR COMMAND...: a run into DIR; prints how many dumps it added.
run_starting() {
  local dir=$1 err=$2 before
  shift 2
  before=$(ls "$dir" | grep -c '^qaudit-[0-9].*json$')
  "$qaudit" run --out "$dir/" -- "$@" >/dev/null 2>"$err"
  echo $(($(ls "$dir" | grep -c '^qaudit-[0-9].*json$') - before))
}
mkdir "$work/family"
added=$(run_starting "$work/family" "$work/family1.err" bash -c 'for i in 1 2 3; do /bin/true; done')
grep -q "^qaudit run: $((added - 1)) more dumps from the processes it started" "$work/family1.err" &&
  pass "run counts the dumps of the processes the program started ($((added - 1)))" ||
  fail "other dumps: $added dumps, run said: $(cat "$work/family1.err")"
tail -1 "$work/family1.err" | grep -qx "qaudit run: next: qaudit report $work/family" &&
  pass "alone in its directory: the command is the directory" || fail "next: $(tail -1 "$work/family1.err")"
reported=$(next_report "$work/family" "$work/family1.err")
[ "$reported" = "$added" ] && pass "the command reports every dump of the run ($reported)" ||
  fail "the command reports $reported dumps of $added"
added=$(run_starting "$work/family" "$work/family2.err" bash -c '/bin/true; /bin/true')
reported=$(next_report "$work/family" "$work/family2.err")
run2=$(sed -n 's/^qaudit run: next: qaudit report .* --run \([0-9a-f]*\)$/\1/p' "$work/family2.err")
[ "$reported" = "$added" ] && [ -n "$run2" ] && grep -q "\"run_id\":\"$run2\"" "$work/family/qaudit-"*.json &&
  pass "beside another run's dumps: the directory narrowed to the run's id ($reported), none of the other's" ||
  fail "second run: the command reports $reported dumps of $added: $(tail -1 "$work/family2.err")"
added=$(run_starting "$work/family" "$work/family3.err" bash -c 'for i in 1 2 3 4 5 6 7 8 9; do /bin/true; done')
reported=$(next_report "$work/family" "$work/family3.err")
[ "$reported" = "$added" ] && tail -1 "$work/family3.err" | grep -q -- "--run " &&
  pass "many, beside others: picked by the run's id ($reported)" ||
  fail "third run: the command reports $reported dumps of $added: $(tail -1 "$work/family3.err")"
# Many dumps (a build, a shell loop): the text lists 10 and counts the rest by program, and shows
# the timelines of the 10 processes whose live bytes rose highest; the JSON holds every one.
line=$(tail -1 "$work/family3.err")
(cd "$work" && eval "\"\$qaudit\" report ${line#qaudit run: next: qaudit report } -o $work/family/r.txt")
python3 - "$work/family/r.txt" "$added" "$work/family/r.json" <<'PY' && pass "$added dumps: 10 listed, the rest counted by program; 10 timelines, the highest" ||
import json, re, sys
text, added = open(sys.argv[1]).read(), int(sys.argv[2])
table = text.split("\n== ")[0]
# The table's rows: a pid right-aligned in its column (pids of 4 and 5 digits: 3 spaces or 2).
rows = [l for l in table.splitlines() if re.match(r"^ +\d+  ", l)]
more = re.search(r"^And (\d+) more dumps: (.*) \(the JSON report lists each\)\.$", table, re.M)
counted = sum(int(n.replace(",", "")) for n in re.findall(r" (\d[\d,]*)(?:,|$)", more.group(2))) if more else -1
timeline = text.split("== Memory over time")[1].split("\n== ")[0]
lines = re.findall(r"^pid \d+ \(", timeline, re.M)
unit = {"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30}
shown = [float(n.replace(",", "")) * unit[u]
         for n, u in re.findall(r"live bytes highest at ([\d.,]+) (B|KiB|MiB|GiB) ", " ".join(timeline.split()))]
json_peaks = sorted((t["peak_live"]["live_bytes"] for t in json.load(open(sys.argv[3]))["timeline"]), reverse=True)
tenth = json_peaks[9] if len(json_peaks) >= 10 else -1
ok = (len(rows) == 10 and more and int(more.group(1)) == added - 10 and counted == added - 10
      and f"The 10 processes whose live bytes rose highest, of {added}" in timeline and len(lines) == 10
      and len(shown) == 10 and abs(min(shown) - tenth) <= 0.005 * tenth + 1)
if not ok:
    print(f"rows {len(rows)}, more {more and more.group(0)}, counted {counted}, timelines {len(lines)}, "
          f"lowest shown {shown and min(shown)}, tenth highest in the JSON {tenth}")
sys.exit(0 if ok else 1)
PY
  fail "many dumps: see above ($work/family/r.txt)"
# The sleep outlives bash; bash says its pid ($!) before it exits, whatever sleep is doing
# (still in execve, or writing the preload's dump before it) when run looks.
"$qaudit" run --out "$work/family/" -- bash -c 'sleep 60 >/dev/null & echo $! >"$0"; exit 0' "$work/sleep.pid" \
  2>"$work/family4.err"
sleeper=$(cat "$work/sleep.pid")
survivor=$(sed -n 's/^qaudit run: a process it started is still running, pid \([0-9]*\): .*/\1/p' "$work/family4.err")
[ -n "$survivor" ] && [ "$survivor" = "$sleeper" ] &&
  pass "a process that outlives the program is named, with the snapshot that takes its dump now" ||
  fail "survivor: '$survivor', the sleep is $sleeper: $(cat "$work/family4.err")"
[ -z "$sleeper" ] || kill -KILL "$sleeper" # the run's own sleep; KILL: no dump to land after the cleanup
tail -1 "$work/family4.err" | grep -q "^qaudit run: next: " && pass "the next command stays the last line" ||
  fail "last line: $(tail -1 "$work/family4.err")"
# The program's own snapshot is not a dump "from the processes it started".
mkdir "$work/own" && mkfifo "$work/own/in"
"$qaudit" run --out "$work/own/b-%p-%n.json" -- bash -c 'read -r x' <"$work/own/in" 2>"$work/own.err" &
runner=$!
exec 4>"$work/own/in" # bash reads until this closes
for _ in $(seq 300); do grep -q "^qaudit run: pid " "$work/own.err" && break; sleep 0.1; done # readiness
"$qaudit" snapshot "$runner" >/dev/null 2>"$work/own-snap.err" || fail "snapshot: $(cat "$work/own-snap.err")"
exec 4>&-
wait "$runner"
! grep -q "more dump" "$work/own.err" && [ "$(ls "$work/own" | grep -c json)" -eq 2 ] &&
  tail -1 "$work/own.err" | grep -q "^qaudit run: next: qaudit report $work/own/b-[0-9]*-1.json$" &&
  pass "the program's own snapshot is not counted as another process's dump" || fail "own snapshot: $(cat "$work/own.err")"

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
