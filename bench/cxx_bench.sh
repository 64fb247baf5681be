#!/usr/bin/env bash
# qaudit layout against pahole on C++: libstdc++'s debug file (libstdc++6-12-dbg) and the builds
# of bench/cxx_projects.sh (leveldb, googletest, fmt from your sources; g++ 12 and clang++ 14;
# DWARF 4, 5, type units, split DWARF). For each binary, interleaved (qaudit text, qaudit JSON,
# pahole, then the next run): full dumps of every struct, class and union; then one type by name
# in qaudit's default mode (no index, every unit read, ODR conflicts seen) against pahole -C.
# Wall time from the shell's clock, or with MEASURE=cpu the CPU time perf stat counts
# (task-clock: less at the mercy of a shared machine's load), medians of RUNS; the ratios are
# pahole's time over qaudit's.
# usage: bench/cxx_bench.sh SRC OUT [RUNS]   (SRC, OUT as for cxx_projects.sh; RUNS default 5;
#        the build is $QAUDIT_BUILD, default build; $BINARIES, a file listing binaries already
#        built, one a line, replaces the build)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
src=$1
out=$2
runs=${3:-5}
qaudit=${QAUDIT_BUILD:-$top/build}/bin/qaudit
libstdcxx=/usr/lib/x86_64-linux-gnu/debug/libstdc++.so.6.0.30
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

binaries=()
[ -f "$libstdcxx" ] && binaries+=("$libstdcxx")
if [ -n "${BINARIES:-}" ]; then # a list of binaries already built (one per line) instead
  mapfile -t -O "${#binaries[@]}" binaries <"$BINARIES"
else
  mapfile -t -O "${#binaries[@]}" binaries < <("$top/bench/cxx_projects.sh" "$src" "$out")
fi

# The type looked up in each: qaudit's name, and pahole's (it names classes without scopes).
one_type() {
  case $1 in
  *libstdc++*) echo "std::_Rb_tree_node_base _Rb_tree_node_base" ;;
  *leveldb*) echo "leveldb::DBImpl DBImpl" ;;
  *gmock*) echo "testing::Expectation Expectation" ;;
  *gtest*) echo "testing::TestInfo TestInfo" ;;
  *format-test*) echo "fmt::v12::format_error format_error" ;;
  esac
}

median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# interleaved NAME=COMMAND... : RUNS rounds, each command once per round; prints "NAME median"
interleaved() {
  local names=() commands=()
  for spec in "$@"; do
    names+=("${spec%%=*}")
    commands+=("${spec#*=}")
  done
  for i in "${!names[@]}"; do : >"$work/${names[$i]}"; done
  for _ in $(seq "$runs"); do
    for i in "${!names[@]}"; do
      local start=$EPOCHREALTIME rc=0 prefix=""
      [ "${MEASURE:-wall}" = cpu ] && prefix="perf stat -x, -e task-clock -o '$work/cpu'"
      eval "$prefix ${commands[$i]}" >/dev/null 2>&1 || rc=$?
      local end=$EPOCHREALTIME
      if [ "$rc" != 0 ]; then # a run that failed is no time: the cell says how it ended
        echo "exit$rc" >"$work/${names[$i]}.failed"
        continue
      fi
      if [ "${MEASURE:-wall}" = cpu ]; then # task-clock in ms
        awk -F, '/task-clock/ { printf "%.4f\n", $1 / 1000 }' "$work/cpu" >>"$work/${names[$i]}"
      else
        awk -v a="$start" -v b="$end" 'BEGIN { printf "%.4f\n", b - a }' >>"$work/${names[$i]}"
      fi
    done
  done
  for i in "${!names[@]}"; do
    if [ -f "$work/${names[$i]}.failed" ]; then
      echo "${names[$i]} $(cat "$work/${names[$i]}.failed")"
      rm -f "$work/${names[$i]}.failed"
    else
      echo "${names[$i]} $(median <"$work/${names[$i]}")"
    fi
  done
}

echo "| binary | types | qaudit text s | qaudit JSON s | pahole s | pahole / qaudit text | pahole / qaudit JSON | qaudit --type s | pahole -C s | pahole -C / qaudit --type |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for b in "${binaries[@]}"; do
  label=$b
  [ "$b" = "$libstdcxx" ] && label="libstdc++.so.6.0.30 (libstdc++6-12-dbg)"
  [ "$b" != "$libstdcxx" ] && label="${b#"$out"/}"
  read -r ours theirs <<<"$(one_type "$b")"
  types=$("$qaudit" layout --format json "$b" 2>/dev/null |
    /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)["types"]))' || echo "exit 2")
  declare -A t=()
  while read -r name seconds; do t[$name]=$seconds; done < <(interleaved \
    "text=$qaudit layout '$b'" "json=$qaudit layout --format json '$b'" "pahole=pahole '$b'" \
    "type=$qaudit layout --type '$ours' '$b'" "pahole_c=pahole -C '$theirs' '$b'")
  awk -v l="$label" -v n="$types" -v q="${t[text]}" -v j="${t[json]}" -v p="${t[pahole]}" \
      -v o="${t[type]}" -v c="${t[pahole_c]}" '
    function num(v) { return v ~ /^exit/ ? v : sprintf("%.3f", v) }
    function ratio(a, b) { return a ~ /^exit/ || b ~ /^exit/ ? "n/a" : sprintf("%.2fx", a / b) }
    BEGIN {
      printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", l, n, num(q), num(j),
        num(p), ratio(p, q), ratio(p, j), num(o), num(c), ratio(c, o) }'
done
