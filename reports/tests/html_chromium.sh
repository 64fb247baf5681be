#!/usr/bin/env bash
# The HTML report in a real browser (issue 15): python3 (a program this repo did not write) runs
# under qaudit run with a snapshot half-way, and the report of both dumps is loaded in headless
# Chromium at 400 and 1400 px. Fails on a script error, a script that did not run to its end, a
# missing flame graph, a page wider than the window, or a sort, search or zoom that did nothing;
# and when the flame graph's frames and figures differ from the folded stacks'. Issue 21: on that
# page, on the first-hour program's and on a qaudit diff page, measured as a reader sees them:
# every site's where (function and file:line) whole and inside the window, no SVG text under
# 10 px, no site row taller than a card needs. Issue 39: the first screen (2000 px high, at 400
# and 1400 px wide) shows the top sites right after "What to look at first", on the python3 page
# and on a run's tree whose shell and sleep have almost no timeline points: their empty charts are
# not drawn, the steady process's chart is.
# usage: html_chromium.sh QAUDIT SOURCE_DIR
set -uo pipefail
qaudit=$(realpath "$1") src=$(realpath "$2")
bin=$(dirname "$qaudit")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
command -v chromium >/dev/null || { echo "FAIL: chromium is not installed (scripts/deps.sh)"; exit 1; }

# Half the blocks, a file saying so, a wait for the snapshot, the rest; most freed before exit.
program='
import os, sys, time
half, go = sys.argv[1], sys.argv[2]
keep = []
for i in range(40):
    keep.append(bytearray(100000 + 1000 * i))
    time.sleep(0.004)
    if i == 19:
        open(half, "w").close()
        while not os.path.exists(go):  # until the snapshot is taken, however long
            time.sleep(0.01)
del keep[:30]
time.sleep(0.05)
'
"$qaudit" run --stacks always --timeline 20 --out "$work/py-%p-%n.json" -- \
  /usr/bin/python3 -c "$program" "$work/half" "$work/go" 2>"$work/run.log" &
runner=$!
for _ in $(seq 6000); do [ -e "$work/half" ] && break; sleep 0.01; done
child=$(pgrep -P "$runner" || true)
[ -e "$work/half" ] && [ -n "$child" ] && "$qaudit" snapshot "$child" --timeout 60 >/dev/null ||
  fail "snapshot of python3"
touch "$work/go"
wait "$runner"
runner=
dumps=("$work"/py-*.json)
[ ${#dumps[@]} -eq 2 ] && pass "python3: a snapshot and the exit dump" || fail "dumps: ${dumps[*]}"

"$qaudit" report "${dumps[@]}" --format html -o "$work/report.html" 2>/dev/null
"$qaudit" report "${dumps[@]}" --format folded -o "$work/folded.txt" 2>/dev/null
size=$(stat -c %s "$work/report.html")
[ "$size" -gt 0 ] && pass "HTML report written ($size bytes)" || fail "no HTML report"

# attribute NAME: its value in the <body> line $body, empty when absent.
attribute() { sed -n "s/.* $1=\"\([^\"]*\)\".*/\1/p" <<<"$body"; }
# measured WHAT WIDTH: what $body says a reader sees: each where whole and in the window, SVG text
# of 10 px or more, rows no taller than a card of the site table needs (a row of empty space is
# what issue 21 saw of python's sites).
measured() {
  local rows hidden font tallest limit
  rows=$(attribute data-where-rows) hidden=$(attribute data-where-hidden)
  font=$(attribute data-min-font) tallest=$(attribute data-row-max)
  limit=$([ "$2" -lt 640 ] && echo 200 || echo 60)
  [ "${rows:-0}" -gt 0 ] && [ "$hidden" = 0 ] &&
    pass "$1: every site's where visible without scrolling sideways ($rows rows)" ||
    fail "$1: $hidden of $rows where cells cut or off the window: $body"
  [ "$font" = none ] || awk -v f="$font" 'BEGIN { exit !(f >= 10) }' &&
    pass "$1: chart text at least 10 px (smallest $font px)" || fail "$1: chart text of $font px"
  [ "${tallest:-0}" -le "$limit" ] && pass "$1: rows at most $limit px (tallest $tallest)" ||
    fail "$1: a row of $tallest px"
}
# first_screen WHAT: $body's first screen: the top sites' heading right after the banner, and
# the site table or the flame graph starting within the first 2000 px.
first_screen() {
  local sites flame first
  sites=$(attribute data-sites-top) flame=$(attribute data-flame-top)
  first=$sites
  { [ "${first:--1}" -lt 0 ] || { [ "${flame:--1}" -ge 0 ] && [ "$flame" -lt "$first" ]; }; } && first=$flame
  [ "$(attribute data-sites-next)" = 1 ] &&
    pass "$1: the top sites come right after what to look at first" ||
    fail "$1: the element after the banner is not the top sites: $body"
  [ "${first:--1}" -ge 0 ] && [ "$first" -lt 2000 ] &&
    pass "$1: the site table or flame graph starts at $first px, on the first screen" ||
    fail "$1: the site table starts at ${sites:-?} px, the flame graph at ${flame:-?} px"
}
for width in 400 1400; do
  body=$(timeout 120 "$src/scripts/chromium_page.sh" check "$width" "$work/report.html")
  [ -n "$body" ] || { fail "$width px: Chromium gave no page"; continue; }
  error=$(attribute data-error)
  [ -z "$error" ] && pass "$width px: no script error" || fail "$width px: script error: $error"
  [ "$(attribute data-ready)" = 1 ] && pass "$width px: the script ran to its end" ||
    fail "$width px: the script did not finish: $body"
  flame=$(attribute data-flame)
  [ "${flame:-0}" -gt 0 ] && pass "$width px: flame graph drawn ($flame frames)" ||
    fail "$width px: no flame graph drawn: $body"
  [ "$(attribute data-overflow)" = 0 ] &&
    pass "$width px: the page is no wider than the window ($(attribute data-scroll-width) px)" ||
    fail "$width px: horizontal overflow: $(attribute data-scroll-width) px in $(attribute data-width)"
  for what in sorted searched zoomed; do
    [ "$(attribute "data-$what")" = 1 ] && pass "$width px: $what" || fail "$width px: not $what: $body"
  done
  measured "$width px" "$width"
  first_screen "$width px"
done

# A run's tree: a shell that waits, a sleep, and a process in steady state (fixture_steady).
mkdir "$work/tree"
"$qaudit" run --timeline 20 --out "$work/tree/" -- /bin/sh -c \
  "'$bin/fixture_steady' 600 malloc >/dev/null & /bin/sleep 0.4; wait" 2>/dev/null
"$qaudit" report "$work"/tree/*.json --format html -o "$work/tree.html" 2>/dev/null
grep -q "No point from" "$work/tree.html" &&
  pass "tree: the processes without a chart say why they have few points" ||
  fail "tree: no process says why it has few points"
for width in 400 1400; do
  body=$(timeout 120 "$src/scripts/chromium_page.sh" check "$width" "$work/tree.html")
  [ -n "$body" ] || { fail "tree, $width px: Chromium gave no page"; continue; }
  [ "$(attribute data-empty-charts)" = 0 ] && [ "${timelines:=$(attribute data-timelines)}" -ge 1 ] &&
    pass "tree, $width px: $timelines memory charts drawn, none empty" ||
    fail "tree, $width px: $(attribute data-empty-charts) empty charts of $(attribute data-timelines): $body"
  timelines=
  first_screen "tree, $width px"
done

# The flame graph's frames are the folded stacks' frames, with the same allocations, and the
# timeline holds both dumps.
/usr/bin/python3 - "$work/report.html" "$work/folded.txt" <<'EOF' &&
import json, re, sys
html = open(sys.argv[1]).read()
data = json.loads(re.search(r'id="flame-data">(.*?)</script>', html, re.S).group(1))
nodes, names = data["nodes"], data["names"]
lines = [l.rsplit(" ", 1) for l in open(sys.argv[2]).read().splitlines()]
under = {}
for stack, count in lines:
    parts = stack.split(";")
    for k in range(1, len(parts) + 1):
        key = ";".join(parts[:k])
        under[key] = under.get(key, 0) + int(count)
path = []
for i in range(1, len(nodes) // 7):
    depth, name = nodes[7 * i], names[nodes[7 * i + 1]].replace(";", ":")
    path[depth - 1:] = [name]
    key = ";".join(path)
    assert under.get(key) == nodes[7 * i + 4], (key, under.get(key), nodes[7 * i + 4])
assert len(nodes) // 7 - 1 + data["left_out"] == len(under), (len(nodes) // 7 - 1, data["left_out"], len(under))
assert nodes[4] == sum(int(c) for _, c in lines)
assert html.count('<line class="dump"') >= 3, "two dumps and the legend's"
EOF
  pass "flame graph: the folded stacks' frames and allocations; the timeline marks both dumps" ||
  fail "flame graph and folded stacks differ"

# The first-hour program's report and a diff of two runs of it, measured the same way.
"$qaudit" run --out "$work/first.json" -- "$bin/fixture_first_hour" "$work/t.json" 2>/dev/null
"$qaudit" run --out "$work/fixed.json" -- "$bin/fixture_first_hour" "$work/t.json" --fixed 2>/dev/null
"$qaudit" report "$work/first.json" --format html -o "$work/first.html"
"$qaudit" diff "$work/first.json" "$work/fixed.json" --format html -o "$work/diff.html"
for page in first diff; do
  for width in 400 1400; do
    body=$(timeout 120 "$src/scripts/chromium_page.sh" check "$width" "$work/$page.html")
    [ -n "$body" ] || { fail "$page, $width px: Chromium gave no page"; continue; }
    [ -z "$(attribute data-error)" ] && [ "$(attribute data-overflow)" = 0 ] &&
      pass "$page, $width px: no script error, no page wider than the window" || fail "$page, $width px: $body"
    measured "$page, $width px" "$width"
    [ "$page" = diff ] || first_screen "$page, $width px"
  done
done

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
