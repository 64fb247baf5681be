#!/usr/bin/env bash
# A C++ program with std containers (fixtures/cxx_containers.cpp), from qaudit run to the report
# its next: command names (issue 39): the summary's first leak is the program's (its leaked
# connections' deques), not libstdc++'s emergency exception pool, which is said apart as held by
# design; the summary and the top sites name the program's own frame (serve, with its file and
# line) and the container briefly (std::map<std::string, std::vector<int>>::operator[]), the full
# names one --long-names away and kept in JSON; without a leak, the summary names none.
# usage: cxx_where.sh QAUDIT FIXTURE SOURCE
set -uo pipefail
qaudit=$(realpath "$1") fixture=$(realpath "$2") source=$(realpath "$3")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
cd "$work" || exit 2
check() { # check WHAT PYTHON-EXPRESSION JSON-FILE: d is the report
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$3" &&
    pass "$1" || fail "$1"
}
base=$(basename "$source")
map_line=$(grep -n "serve: the map" "$source" | cut -d: -f1)
conn_line=$(grep -n "serve: the connection" "$source" | cut -d: -f1)

# run DIR [ARGS]: the fixture under qaudit run with ARGS, its dumps in DIR; $next: the dumps its
# next: command names.
run() {
  local dir=$1
  shift
  mkdir -p "$work/$dir"
  "$qaudit" run --out "$work/$dir/" -- "$fixture" "$@" >"$work/$dir.out" 2>"$work/$dir.err" ||
    fail "qaudit run $*: $(cat "$work/$dir.err")"
  next=$(sed -n 's/^qaudit run: next: qaudit report //p' "$work/$dir.err")
  [ -n "$next" ] || fail "no next: command: $(cat "$work/$dir.err")"
}
report() { # report OPTIONS...: the last run's next: command, with OPTIONS
  eval "\"\$qaudit\" report $next $*"
}
summary() { sed -n '/^What to look at first:/,/^[^ ]/p' "$1" | sed '$d'; }

echo "--- leaking connections"
run leak
report >"$work/leak.txt" || fail "the next: command failed"
summary "$work/leak.txt" >"$work/leak.summary"
cat "$work/leak.summary"
sed -n 2p "$work/leak.summary" | grep -q "Largest leak: site #[0-9]*, std::deque<int>::deque <- Conn::Conn" &&
  pass "the first leak is the program's: its connections' deques" ||
  fail "the first leak: $(sed -n 2p "$work/leak.summary")"
tr '\n' ' ' <"$work/leak.summary" | tr -s ' ' | grep -q "serve ($base:$conn_line)" &&
  pass "the summary names serve ($base:$conn_line)" || fail "no serve ($base:$conn_line) in the summary"
tr '\n' ' ' <"$work/leak.summary" | tr -s ' ' |
  grep -q "Most allocations: site #1, std::map<std::string, std::vector<int>>::operator\[\] <- serve ($base:$map_line)" &&
  pass "the map's site: the container briefly and the line that called it" ||
  fail "most allocations: $(grep -A1 'Most allocations' "$work/leak.summary")"
grep -q "Held by design, not leaks: 7[0-9].[0-9]* KiB in 2 blocks" "$work/leak.summary" &&
  pass "the emergency pool and stdout's buffer: held by design, said apart" ||
  fail "no held-by-design line in the summary"
grep -q "libstdc++.so.6+0x\|pool::pool" "$work/leak.summary" &&
  fail "the summary names libstdc++'s pool among what to look at" ||
  pass "the summary does not name libstdc++'s pool"
sed -n '/^== Top allocation sites/,/^By bytes/p' "$work/leak.txt" >"$work/leak.top"
tr '\n' ' ' <"$work/leak.top" | tr -s ' ' |
  grep -q "std::map<std::string, std::vector<int>>::operator\[\] <- serve ($base:$map_line)" &&
  pass "the top sites table names the map briefly and serve" || fail "top sites: $(cat "$work/leak.top")"
grep -q "__cxx11\|char_traits\|std::allocator<" "$work/leak.summary" "$work/leak.top" &&
  fail "long template names in the summary or the top sites" || pass "no long template names on top"
awk 'length > 100 {exit 1}' "$work/leak.txt" && pass "every line within 100 columns" ||
  fail "a line over 100 columns"

report --long-names >"$work/long.txt"
grep -q "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char>" "$work/long.txt" &&
  pass "--long-names: the full names" || fail "--long-names shows no full name"
report --format json -o "$work/leak.json"
check "JSON: where keeps the full names" \
  "any('std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >' in s['where'] and 'serve' in s['where'] for s in d['sites'])" "$work/leak.json"
check "JSON: the first live site not held by design is the deques'" \
  "[d['sites'][x['id'] - 1] for x in d['live']['sites'] if not x['held_by_design']][0]['where'].startswith('std::deque<int, std::allocator<int> >::deque <- Conn::Conn')" "$work/leak.json"
check "JSON: live.held_by_design holds libstdc++'s pool, its reason on its site" \
  "d['live']['held_by_design']['bytes'] >= 72704 and any('libstdc++' in (d['sites'][i - 1]['held_by_design'] or '') and d['sites'][i - 1]['live_bytes'] >= 70000 for i in d['live']['held_by_design']['sites'])" "$work/leak.json"
report --format html -o "$work/leak.html"
grep -q 'title="std::map&lt;std::__cxx11::basic_string' "$work/leak.html" &&
  pass "HTML: the full name in the where cell's title" || fail "HTML: no full name on hover"
# The flame graph's names (its JSON in the page): shortened as the text's, full with --long-names.
flame_names() { sed -n 's/.*id="flame-data">//p' "$1" | sed 's#</script>$##' |
  python3 -c 'import json,sys; print("\n".join(json.load(sys.stdin)["names"]))'; }
flame_names "$work/leak.html" >"$work/leak.flame"
grep -qx "std::map<std::string, std::vector<int>>::operator\[\]" "$work/leak.flame" &&
  ! grep -q "__cxx11\|char_traits" "$work/leak.flame" &&
  pass "HTML flame graph: C++ names shortened" ||
  fail "HTML flame graph names: $(grep -m3 'std::map\|__cxx11' "$work/leak.flame")"
report --format html --long-names -o "$work/long.html"
flame_names "$work/long.html" >"$work/long.flame"
grep -q "std::map<std::__cxx11::basic_string<char, std::char_traits<char>" "$work/long.flame" &&
  pass "HTML flame graph with --long-names: the full names" ||
  fail "HTML flame graph with --long-names: no full name"

echo "--- every connection freed"
run clean free
report >"$work/clean.txt" || fail "the next: command failed"
summary "$work/clean.txt" >"$work/clean.summary"
cat "$work/clean.summary"
grep -q "Largest leak" "$work/clean.summary" && fail "a leak named where there is none" ||
  pass "no leak named: the program frees all it keeps"
grep -q "Held by design, not leaks" "$work/clean.summary" && pass "the start-up blocks said apart" ||
  fail "no held-by-design line"
sed -n '/^== Live at exit/,/^== /p' "$work/clean.txt" >"$work/clean.live"
grep -q "^No other site holds live bytes" "$work/clean.live" &&
  ! grep -q "The sites below count" "$work/clean.live" &&
  pass "Live at exit: no word about the sites below when none is listed" ||
  fail "Live at exit: $(cat "$work/clean.live")"
[ "$failures" -eq 0 ] || exit 1
