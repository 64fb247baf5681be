#!/usr/bin/env bash
# qaudit layout against pahole and against a bare libdw walk over every DIE (bench/dwarf_walk,
# the floor), on large real binaries with DWARF from Debian packages: python3.11-dbg (the
# interpreter built with -g), and the detached debug files of libc6-dbg and valgrind-dbg.
# Full dumps of every struct; wall time and peak RSS, medians of RUNS; then agreement with
# pahole (bench/layout_agreement.py). usage: bench/layout_bench.sh [RUNS]   (default 5)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
bin=$top/build/bin
"$top/scripts/deps.sh" bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

debug_file() { # the detached debug file of an installed binary, by its build id
  local id
  id=$(readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }')
  echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}
targets=(/usr/bin/python3.11d "$(debug_file /lib/x86_64-linux-gnu/libc.so.6)"
         "$(debug_file /usr/libexec/valgrind/memcheck-amd64-linux)")
labels=("python3.11d" "libc.so.6 (libc6-dbg)" "memcheck-amd64-linux (valgrind-dbg)")

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure NAME TARGET -> "seconds KiB", medians of $runs
measure() {
  local name=$1 target=$2
  : >"$work/times"
  for _ in $(seq "$runs"); do
    case $name in
      qaudit) cmd=("$bin/qaudit" layout "$target") ;;
      pahole) cmd=(pahole "$target") ;;
      walk) cmd=("$bin/dwarf_walk" "$target") ;;
    esac
    # Wall time from the shell's clock (GNU time rounds to 10 ms), peak RSS from GNU time.
    local start=$EPOCHREALTIME
    /usr/bin/time -o "$work/one" -f "%M" "${cmd[@]}" >/dev/null 2>&1 || true
    local end=$EPOCHREALTIME
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $(cat "$work/one")" >>"$work/times"
  done
  echo "$(cut -d' ' -f1 "$work/times" | median) $(cut -d' ' -f2 "$work/times" | median)"
}

echo "| binary | DWARF | structs | qaudit s | pahole s | libdw walk s | pahole / qaudit | qaudit / walk | qaudit RSS MiB | pahole RSS MiB | walk RSS MiB |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  read -r qs qm <<<"$(measure qaudit "$t")"
  read -r ps pm <<<"$(measure pahole "$t")"
  read -r ws wm <<<"$(measure walk "$t")"
  info=$(readelf -S -W "$t" 2>/dev/null | sed -n 's/.*\.debug_info *[A-Z]* *[0-9a-f]* *[0-9a-f]* *\([0-9a-f]*\).*/\1/p')
  info="$(( 16#$info / 1048576 )) MiB"
  structs=$("$bin/qaudit" layout --format json "$t" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["types"]))')
  awk -v n="${labels[$i]}" -v i="$info" -v s="$structs" -v qs="$qs" -v ps="$ps" -v ws="$ws" \
      -v qm="$qm" -v pm="$pm" -v wm="$wm" 'BEGIN {
    printf "| %s | %s | %d | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.1f | %.1f | %.1f |\n",
      n, i, s, qs, ps, ws, ps / qs, qs / ws, qm / 1024, pm / 1024, wm / 1024 }'
done
echo
# One struct by name: with a .gdb_index (gdb-add-index on a copy) only the unit that defines it
# is read; without, every unit is.
cp /usr/bin/python3.11d "$work/python-indexed"
gdb-add-index "$work/python-indexed" >/dev/null 2>&1
lookup() {
  : >"$work/times"
  for _ in $(seq "$runs"); do
    local start=$EPOCHREALTIME
    "$bin/qaudit" layout --type _typeobject "$1" >/dev/null
    local end=$EPOCHREALTIME
    awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", b - a }' >>"$work/times"
  done
  median <"$work/times"
}
echo "| one struct (--type _typeobject, i.e. PyTypeObject) on python3.11d | seconds | units read |"
echo "| --- | --- | --- |"
echo "| without an index | $(lookup /usr/bin/python3.11d) | $("$bin/qaudit" layout --stats --type _typeobject /usr/bin/python3.11d 2>&1 >/dev/null | sed 's/.*read \([0-9]* of [0-9]*\).*/\1/') |"
echo "| with .gdb_index | $(lookup "$work/python-indexed") | $("$bin/qaudit" layout --stats --type _typeobject "$work/python-indexed" 2>&1 >/dev/null | sed 's/.*read \([0-9]* of [0-9]*\).*/\1/') |"
echo

for i in "${!targets[@]}"; do
  t=${targets[$i]}
  echo "agreement on ${labels[$i]}:"
  "$bin/qaudit" layout --format json "$t" >"$work/q.json"
  pahole "$t" >"$work/p.txt" 2>/dev/null || true
  python3 "$top/bench/layout_agreement.py" "$work/q.json" "$work/p.txt" | sed 's/^/  /'
done
