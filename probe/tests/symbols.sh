#!/bin/sh
# libqaudit_probe.a exports only names that say they are probe's (issues 23 and 40): probe_ for
# what its folders share, and the layout_, gate_ and functions_ names of its public headers
# (INCLUDE, probe/include/probe), which the command and the reports call. A helper no other file
# calls is static. usage: symbols.sh LIBRARY INCLUDE
set -eu
command -v nm >/dev/null 2>&1 || { echo "skipped: no nm"; exit 77; }
[ -d "$2" ] || { echo "FAIL: no public headers in $2"; exit 1; }
names=$(nm -g --defined-only "$1" | awk 'NF == 3 { print $3 }')
[ -n "$names" ] || { echo "FAIL: nm lists nothing $1 defines"; exit 1; }
# A sanitizer build adds its own (__odr_asan.NAME, __asan_*): the compiler's, not probe's.
others=$(echo "$names" | grep -v -E '^(probe_|__odr_asan\.|__asan_|__ubsan_)' || true)
bare=""
for name in $others; do
  # declared in a public header: the name, then its parameter list
  if ! cat "$2"/*.h | tr -s ' \n' ' ' | grep -q -E "[ *]$name ?\("; then
    bare="$bare$name
"
  fi
done
if [ -n "$bare" ]; then
  echo "FAIL: $1 exports names that are neither probe_ nor declared in $2:"
  printf '%s' "$bare"
  exit 1
fi
echo "ok: the $(echo "$names" | wc -l) names $1 exports are probe_ or public ($(echo "$others" | wc -w))"
