#!/usr/bin/env bash
# End-to-end tests of reports that say how far they can be trusted (issue 13), on the tests' own
# program with known per-site counts and a planted leak (fixtures/known_sites.c), and on Debian's
# redis-server: stacks off, sampled by count and by bytes (40 seeds each), always, fp without
# frame pointers; wrappers folded; a stripped binary; a dump given twice.
# usage: known_sites.sh QAUDIT BIN_DIR SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") bin=$(realpath "$2") src=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
check() { # check WHAT PYTHON-EXPRESSION JSON-FILE: d is the report
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$3" &&
    pass "$1" || fail "$1"
}
program=$bin/fixture_known_sites
cd "$work" || exit 2

# run MODE SEED [PROGRAM]: the program under qaudit run, its dump and truth named after both;
# SEED is also the sampler's (QAUDIT_SEED), so that every run can be reproduced.
run() {
  local name=${1//:/_}
  QAUDIT_SEED=$2 "$qaudit" run --stacks "$1" --out "$work/dump-$name-$2.json" -- "${3:-$program}" "$2" \
    "$work/truth-$name-$2.json" 2>/dev/null || fail "run $1 seed $2"
}

# leak_first_in_text FILE: the first row of "Live at exit" is the leak's.
leak_first_in_text() {
  awk '/^== Live at exit/ {s=1} s && /^  ----/ {getline; print; exit}' "$1" | grep -q leak_record
}

echo "--- always: exact figures, the leak first"
run always 1
"$qaudit" report "$work/dump-always-1.json" --format json -o "$work/always.json"
status=$?
[ "$status" -eq 0 ] && pass "no hooks: report exits 0" || fail "no hooks: report exit $status"
python3 - "$work/always.json" "$work/truth-always-1.json" <<'EOF' && pass "always: every site exact and equal to the program's own count" || fail "always: per-site figures"
import json, sys
d, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
sites = {s["where"].split(" ")[0]: s for s in d["sites"]}
for name, t in truth.items():
    s = sites[name]
    assert s["precision"] == "exact", s
    assert (s["allocs"], s["bytes"], s["live_bytes"]) == (t["allocs"], t["bytes"], t["live_bytes"]), (name, s, t)
    assert s["temporary"] == t["temporary"], ("temporary", name, s, t)
    assert s["range"]["allocs"] == [t["allocs"], t["allocs"]]
assert d["precision"]["counts"] == "exact", d["precision"]
assert d["coverage"]["allocs_share"] >= 0.999, d["coverage"]
EOF
check "always: the leak ranks first in live at exit (JSON)" \
  "d['live']['at'] == 'exit' and d['sites'][d['live']['sites'][0]['id'] - 1]['where'].startswith('leak_record')" "$work/always.json"
check "no hooks: every check n/a, none passed (JSON)" \
  "[c['status'] for c in d['checks']] == ['n/a'] * 3 and not any(c['passed'] for c in d['checks']) and d['passed']" "$work/always.json"
"$qaudit" report "$work/dump-always-1.json" >"$work/always.txt"
leak_first_in_text "$work/always.txt" && pass "always: the leak ranks first in live at exit (text)" ||
  fail "always: live at exit in text: $(sed -n '/Live at exit/,+6p' "$work/always.txt")"
! grep -q "== Checks" "$work/always.txt" && ! grep -q "PASS\|N/A" "$work/always.txt" &&
  pass "no hooks: the text shows no checks (none could apply) and says PASS nowhere" || fail "no hooks: text checks"
"$qaudit" report "$work/dump-always-1.json" --format html -o "$work/always.html"
grep -q "Every check passed" "$work/always.html" && fail "no hooks: green HTML banner" ||
  pass "no hooks: no green 'Every check passed' banner"

echo "--- off: no sites, and the report says so"
run off 1
"$qaudit" report "$work/dump-off-1.json" --format json -o "$work/off.json" && pass "off: exit 0" || fail "off: exit"
check "off: coverage 0 of every allocation" \
  "d['sites'] == [] and d['coverage']['site_allocs'] == 0 and d['coverage']['allocs_total'] > 60000" "$work/off.json"
"$qaudit" report "$work/dump-off-1.json" | tr '\n' ' ' |
  grep -q "Coverage: with stacks 'off' none of the [0-9,]* allocation calls have a site" &&
  pass "off: the text says no allocation has a site" || fail "off: coverage line"

echo "--- sampled by count (sampled:16) and by bytes (sampled:8192b), 40 seeds each"
for mode in sampled:16 sampled:8192b; do
  name=${mode//:/_}
  for seed in $(seq 1 40); do
    run "$mode" "$seed"
    "$qaudit" report "$work/dump-$name-$seed.json" --format json -o "$work/report-$name-$seed.json" ||
      fail "report $mode seed $seed"
  done
  python3 "$src/reports/tests/check_estimates.py" "$name" "$work" 40 || failures=$((failures + 1))
done
python3 - "$work" <<'EOF' && pass "sampled:8192b: the leak ranks first in live at exit in all 40 runs" || fail "sampled: leak ranking"
import json, sys
for seed in range(1, 41):
    d = json.load(open(f"{sys.argv[1]}/report-sampled_8192b-{seed}.json"))
    first = d["sites"][d["live"]["sites"][0]["id"] - 1]
    assert first["where"].startswith("leak_record") and first["precision"] == "estimated", (seed, first)
EOF
python3 - "$work" <<'EOF' && pass "sampled: temporary shares per site as the program made them, in all 80 runs" || fail "sampled: temporary shares"
import json, sys
for name in ("sampled_16", "sampled_8192b"):
    for seed in range(1, 41):
        d = json.load(open(f"{sys.argv[1]}/report-{name}-{seed}.json"))
        share = {s["where"].split(" ")[0]: s["temporary"] / s["allocs"] for s in d["sites"] if s["allocs"]}
        truth = json.load(open(f"{sys.argv[1]}/truth-{name}-{seed}.json"))
        assert share["parse_token"] == 1, (name, seed, share)
        for site in ("cache_entry", "grow_buffer", "leak_record"):
            # none, or the one block freed at exit before any other allocation
            assert share[site] < 0.01 if truth[site]["temporary"] else share[site] == 0, (name, seed, site, share)
        assert d["dumps"][0]["sampling"]["intervals"] in ("geometric", "exponential"), d["dumps"][0]
EOF
"$qaudit" report "$work/dump-sampled_16-1.json" >"$work/sampled.txt"
grep -qE "sampled:16([? ]|$)" "$work/sampled.txt" && grep -q "~" "$work/sampled.txt" &&
  ! grep -q "Exact" "$work/sampled.txt" && pass "sampled: the text gives the rate, '~' estimates, no 'Exact'" ||
  fail "sampled: text"

echo "--- fp without frame pointers: shallow stacks said"
"$qaudit" run --stacks fp --out "$work/nofp.json" -- "$bin/fixture_known_sites_nofp" 1 "$work/nofp-truth.json" 2>/dev/null
"$qaudit" report "$work/nofp.json" >"$work/nofp.txt"
tr '\n' ' ' <"$work/nofp.txt" | grep -q "Stacks are shallow.*run with --stacks always" &&
  pass "fp: the report says stacks are shallow and suggests --stacks always" || fail "fp: no shallow-stack warning"

echo "--- a dump given twice, or a copy, counts once"
cp "$work/dump-always-1.json" "$work/copy.json"
"$qaudit" report "$work/dump-always-1.json" "$work/dump-always-1.json" "$work/copy.json" --format json -o "$work/twice.json"
check "the same dump three times is one process" \
  "len(d['dumps']) == 1 and d['duplicates'] == 2 and d['totals']['allocs'] == json.load(open('$work/always.json'))['totals']['allocs']" "$work/twice.json"

echo "--- --binary: a stripped binary, its debug file, no matching struct"
mkdir -p "$work/strip/away"
cp "$program" "$work/strip/prog"
(cd "$work/strip" && objcopy --only-keep-debug prog prog.debug && strip -g prog &&
  objcopy --add-gnu-debuglink=prog.debug prog) || fail "objcopy"
"$qaudit" run --stacks always --out "$work/strip.json" -- "$work/strip/prog" 1 "$work/strip-truth.json" 2>/dev/null
"$qaudit" report "$work/strip.json" --binary "$work/strip/prog" --format json -o "$work/strip-linked.json"
check "stripped, debug file by .gnu_debuglink: symbols, and the structs it could show" \
  "any(s['where'].startswith('leak_record (known_sites.c') for s in d['sites']) and d['layouts'] == [] and 'truth (48 B' in d['layout_note']" "$work/strip-linked.json"
mv "$work/strip/prog.debug" "$work/strip/away/"
"$qaudit" report "$work/strip.json" --binary "$work/strip/prog" >"$work/strip.txt" 2>"$work/strip.err"
status=$?
[ "$status" -eq 0 ] && grep -q "No struct layouts: .* has no DWARF, and no debug file was found" "$work/strip.txt" &&
  [ ! -s "$work/strip.err" ] && pass "stripped, no debug file: exit 0, the report says why" ||
  fail "stripped without debug file: exit $status, $(cat "$work/strip.err")"
"$qaudit" report "$work/strip.json" --binary "$work/strip/prog" --debug-file "$work/strip/away/prog.debug" \
  --format json -o "$work/strip-given.json"
check "--debug-file: symbols again" \
  "any(s['where'].startswith('leak_record (known_sites.c') for s in d['sites'])" "$work/strip-given.json"

echo "--- redis-server (Debian's): wrappers fold away"
if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
  sock=$work/redis.sock
  "$qaudit" run --stacks always --out "$work/redis.json" -- redis-server --port 0 --unixsocket "$sock" \
    --save "" --appendonly no >"$work/redis.log" 2>&1 &
  runner=$!
  for _ in $(seq 1200); do [ -S "$sock" ] && break; sleep 0.05; done # 60 s at most
  timeout 60 redis-benchmark -s "$sock" -t set,get,lpush -n 5000 -c 4 -q >/dev/null 2>&1
  redis-cli -s "$sock" shutdown nosave >/dev/null 2>&1
  wait "$runner"
  runner=
  "$qaudit" report "$work/redis.json" --binary /usr/bin/redis-server --format json -o "$work/redis-report.json"
  status=$?
  [ "$status" -eq 0 ] && pass "redis: --binary on the stripped redis-server exits 0" || fail "redis: exit $status"
  check "redis: no top site is a zmalloc wrapper; the layout note says why there is none" \
    "not any(s['where'].startswith('z') and 'malloc' in s['where'] for s in sorted(d['sites'], key=lambda s: -s['allocs'])[:20]) and 'No struct layouts' in d['layout_note'] and d['skip'][0] == 'zmalloc*'" "$work/redis-report.json"
  "$qaudit" report "$work/redis.json" --skip none --format json -o "$work/redis-none.json"
  check "redis --skip none: the top site is zmalloc again" \
    "sorted(d['sites'], key=lambda s: -s['allocs'])[0]['where'].startswith('zmalloc') and d['skip'] == []" "$work/redis-none.json"
  "$qaudit" report "$work/redis.json" | grep -q "^Wrappers folded into their callers at [1-9]" &&
    pass "redis: the header says wrappers were folded" || fail "redis: header"
else
  fail "redis-server or redis-benchmark missing (scripts/deps.sh installs them)"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
