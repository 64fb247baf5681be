#!/bin/sh
# libqaudit_probe.a exports only names that say they are probe's (issue 23): layout_ and probe_,
# and the gate_ and functions_ of its public headers (gate.h, functions.h). A helper no other
# file calls is static. usage: symbols.sh LIBRARY
set -eu
command -v nm >/dev/null 2>&1 || { echo "skipped: no nm"; exit 77; }
names=$(nm -g --defined-only "$1" | awk 'NF == 3 { print $3 }')
[ -n "$names" ] || { echo "FAIL: nm lists nothing $1 defines"; exit 1; }
# A sanitizer build adds its own (__odr_asan.NAME, __asan_*): the compiler's, not probe's.
bare=$(echo "$names" | grep -v -E '^(layout_|probe_|gate_|functions_|__odr_asan\.|__asan_|__ubsan_)' || true)
if [ -n "$bare" ]; then
  echo "FAIL: $1 exports names that are not prefixed:"
  echo "$bare"
  exit 1
fi
echo "ok: the $(echo "$names" | wc -l) names $1 exports are prefixed"
