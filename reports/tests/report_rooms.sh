#!/bin/sh
# libqaudit_reports.a keeps its rooms (issue 40, docs/design.md "Reports' rooms"): every call
# between its objects runs from a room to one below it (render and gate > content > document,
# reading > base; document and reading do not call each other), and every name it exports says
# it is the reports': report_, or declared in a public header (INCLUDE, reports/include/reports), which the
# command calls. A room is a folder of SRC (reports/src); an object is named after its source.
# usage: report_rooms.sh LIBRARY SRC INCLUDE
set -eu
command -v nm >/dev/null 2>&1 || { echo "skipped: no nm"; exit 77; }
lib=$1 src=$2 include=$3
common=$src/../../common/include/common
[ -d "$include" ] && [ -d "$src/base" ] || { echo "FAIL: no reports sources in $src"; exit 1; }
fail=0

# ---- exports: report_ or public ---------------------------------------------------------------
names=$(nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }')
[ -n "$names" ] || { echo "FAIL: nm lists nothing $lib defines"; exit 1; }
# A sanitizer build adds its own (__odr_asan.NAME, __asan_*): the compiler's, not the reports'.
others=$(echo "$names" | grep -v -E '^(report_|__odr_asan\.|__asan_|__ubsan_)' || true)
for name in $others; do
  # declared in a public header: the name, then its parameter list (or an extern object)
  # or in common/'s (the dump keys' one table, a weak object every reader includes)
  if ! cat "$include"/*.h "$common"/*.h | tr -s ' \n' ' ' | grep -q -E "[ *]$name ?(\(|\[|;|=)"; then
    echo "FAIL: $lib exports $name, neither report_ nor declared in $include or $common"
    fail=1
  fi
done

# ---- calls run down ---------------------------------------------------------------------------
# The rank of each room: a call may go to a room of lower rank, or inside its own room.
rank() {
  case $1 in
  base) echo 0 ;;
  reading | document) echo 1 ;;
  content) echo 2 ;;
  render | gate) echo 3 ;;
  *) echo "FAIL: $1 is no room of the reports library" >&2; echo 9 ;;
  esac
}
rooms=$(mktemp)
trap 'rm -f "$rooms"' EXIT
for dir in "$src"/*/; do
  room=$(basename "$dir")
  for c in "$dir"*.c; do echo "$(basename "$c").o $room $(rank "$room")"; done
done >"$rooms"
# nm -A: "LIBRARY:OBJECT: ... TYPE NAME"; the defining object of each name, then each use.
calls=$(nm -A "$lib" 2>/dev/null | awk -v rooms="$rooms" '
  BEGIN { while ((getline line < rooms) > 0) { split(line, f, " "); room[f[1]] = f[2]; rk[f[1]] = f[3] } }
  { n = split($1, p, ":"); obj = p[n - 1]; type = $(NF - 1); name = $NF
    if (type == "U") { use[obj, name] = 1; users[name] = users[name] " " obj }
    else if (type ~ /^[TDBR]$/) def[name] = obj }
  END { for (name in users) { if (!(name in def)) continue
          to = def[name]; k = split(users[name], u, " ")
          for (i = 1; i <= k; i++) { from = u[i]
            if (!(from in room) || !(to in room)) { print "unknown " from " " to " " name; continue }
            if (room[from] == room[to]) continue
            if (rk[to] >= rk[from]) print room[from] "/" from " -> " room[to] "/" to ": " name } } }')
if [ -n "$calls" ]; then
  echo "FAIL: calls that do not run down from a room to one below it (or objects of no room):"
  echo "$calls" | sort
  fail=1
fi
[ "$fail" -eq 0 ] || exit 1
echo "ok: the $(echo "$names" | wc -l) names $lib exports are report_ or public, and" \
  "$(wc -l <"$rooms") objects in $(ls -d "$src"/*/ | wc -l) rooms call only down"
