#!/usr/bin/env bash
# qaudit layout against pahole and against a bare libdw walk over every DIE (bench/dwarf_walk,
# the floor), side by side in one run, on large real binaries with DWARF from Debian packages:
# python3.11-dbg (the interpreter built with -g), the detached debug files of libc6-dbg,
# valgrind-dbg and libstdc++6-12-dbg (C++, -O0 -g3), and the kernel's vmlinux from
# linux-image-*-cloud-amd64-dbg when installed (590 MB, 2,172 units, no index). Then one struct
# by name: without an index (every unit read, ODR conflicts seen), with --first (pahole -C's way),
# with .gdb_index and with .debug_names (gdb-add-index on copies). Wall time and peak RSS,
# medians of RUNS (vmlinux: at most 3); then agreement with pahole (bench/layout_agreement.py).
# usage: bench/layout_bench.sh [RUNS]   (default 5; the build is $QAUDIT_BUILD, default build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
bin=${QAUDIT_BUILD:-$top/build}/bin
"$top/scripts/deps.sh" bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

debug_file() { # the detached debug file of an installed binary, by its build id
  local id
  id=$(readelf -n "$1" 2>/dev/null | awk '/Build ID/ { print $3 }')
  echo "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug"
}
vmlinux=$(ls -S /usr/lib/debug/boot/vmlinux-*-cloud-amd64 2>/dev/null | head -1 || true)
libstdcxx=/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
targets=(/usr/bin/python3.11d "$(debug_file /lib/x86_64-linux-gnu/libc.so.6)"
         "$(debug_file /usr/libexec/valgrind/memcheck-amd64-linux)" "$libstdcxx")
labels=("python3.11d" "libc.so.6 (libc6-dbg)" "memcheck-amd64-linux (valgrind-dbg)"
        "libstdc++.so.6.0.30 (libstdc++6-12-dbg, C++)")
if [ -n "$vmlinux" ]; then
  targets+=("$vmlinux")
  labels+=("$(basename "$vmlinux") (linux-image-cloud-amd64-dbg)")
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# measure N COMMAND... -> "seconds KiB", medians of N runs. Wall time from the shell's clock (GNU
# time rounds to 10 ms), peak RSS from GNU time.
measure() {
  local n=$1
  shift
  : >"$work/times"
  for _ in $(seq "$n"); do
    local start=$EPOCHREALTIME
    /usr/bin/time -o "$work/one" -f "%M" "$@" >/dev/null 2>&1 || true
    local end=$EPOCHREALTIME
    echo "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f", b - a }') $(tail -1 "$work/one")" >>"$work/times"
  done
  echo "$(cut -d' ' -f1 "$work/times" | median) $(cut -d' ' -f2 "$work/times" | median)"
}

echo "Full dumps of every struct, class and union:"
echo
echo "| binary | DWARF | structs | qaudit s | pahole s | libdw walk s | pahole / qaudit | qaudit / walk | qaudit RSS MiB | pahole RSS MiB | walk RSS MiB | pahole RSS / qaudit |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for i in "${!targets[@]}"; do
  t=${targets[$i]}
  n=$runs
  [ "$t" = "$vmlinux" ] && [ "$n" -gt 3 ] && n=3
  read -r qs qm <<<"$(measure "$n" "$bin/qaudit" layout "$t")"
  read -r ps pm <<<"$(measure "$n" pahole "$t")"
  read -r ws wm <<<"$(measure "$n" "$bin/dwarf_walk" "$t")"
  info=$(readelf -S -W "$t" 2>/dev/null | sed -n 's/.*\] \.debug_info *[A-Z]* *[0-9a-f]* *[0-9a-f]* *\([0-9a-f]*\).*/\1/p')
  info="$(( 16#$info / 1048576 )) MiB"
  structs=$("$bin/qaudit" layout --format json "$t" | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["types"]))')
  awk -v n="${labels[$i]}" -v i="$info" -v s="$structs" -v qs="$qs" -v ps="$ps" -v ws="$ws" \
      -v qm="$qm" -v pm="$pm" -v wm="$wm" 'BEGIN {
    printf "| %s | %s | %d | %.3f | %.3f | %.3f | %.2fx | %.2fx | %.1f | %.1f | %.1f | %.1fx |\n",
      n, i, s, qs, ps, ws, ps / qs, qs / ws, qm / 1024, pm / 1024, wm / 1024, pm / qm }'
done
[ -z "$vmlinux" ] && echo && echo "(no vmlinux: apt-get install linux-image-cloud-amd64-dbg adds it, 1.8 GB)"
echo

# One struct by name. stats TARGET ARGS... -> what --stats says of the units read.
stats() {
  local t=$1
  shift
  "$bin/qaudit" layout --stats "$@" "$t" 2>&1 >/dev/null | sed -n 's/.*: read \(.*\), [0-9]* types$/\1/p'
}
row() { # LABEL TARGET TYPE [qaudit args...]
  local label=$1 t=$2 type=$3
  shift 3
  read -r s m <<<"$(measure "$runs" "$bin/qaudit" layout "$@" --type "$type" "$t")"
  printf "| %s | %.4f | %.1f | %s |\n" "$label" "$s" "$(awk -v m="$m" 'BEGIN { print m / 1024 }')" \
    "$(stats "$t" "$@" --type "$type")"
}
pahole_row() { # TARGET TYPE
  read -r s m <<<"$(measure "$runs" pahole -F dwarf -C "$2" "$1")"
  printf "| pahole -F dwarf -C %s | %.4f | %.1f | - |\n" "$2" "$s" "$(awk -v m="$m" 'BEGIN { print m / 1024 }')"
}
cp /usr/bin/python3.11d "$work/python-gdb-index"
gdb-add-index "$work/python-gdb-index" >/dev/null 2>&1
cp /usr/bin/python3.11d "$work/python-debug-names"
gdb-add-index -dwarf-5 "$work/python-debug-names" >/dev/null 2>&1
cp "$libstdcxx" "$work/libstdcxx-debug-names"
gdb-add-index -dwarf-5 "$work/libstdcxx-debug-names" >/dev/null 2>&1
echo "One struct by name (medians of $runs):"
echo
echo "| lookup | seconds | RSS MiB | units read |"
echo "| --- | --- | --- | --- |"
if [ -n "$vmlinux" ]; then
  pahole_row "$vmlinux" task_struct
  row "vmlinux, no index: every unit (ODR conflicts seen)" "$vmlinux" task_struct
  row "vmlinux, no index, --first (as pahole -C)" "$vmlinux" task_struct --first
fi
pahole_row /usr/bin/python3.11d _typeobject
row "python3.11d, no index" /usr/bin/python3.11d _typeobject
row "python3.11d, --first" /usr/bin/python3.11d _typeobject --first
row "python3.11d, .gdb_index" "$work/python-gdb-index" _typeobject
row "python3.11d, .debug_names" "$work/python-debug-names" _typeobject
pahole_row "$libstdcxx" _Rb_tree_node_base
row "libstdc++, no index" "$libstdcxx" 'std::_Rb_tree_node_base'
row "libstdc++, .debug_names" "$work/libstdcxx-debug-names" 'std::_Rb_tree_node_base'
echo

for i in "${!targets[@]}"; do
  t=${targets[$i]}
  [ "$t" = "$libstdcxx" ] && continue # C++: pahole names classes without their namespaces
  echo "agreement on ${labels[$i]}:"
  "$bin/qaudit" layout --format json "$t" >"$work/q.json"
  pahole "$t" >"$work/p.txt" 2>/dev/null || true
  /usr/bin/python3 "$top/bench/layout_agreement.py" "$work/q.json" "$work/p.txt" | sed 's/^/  /'
done
