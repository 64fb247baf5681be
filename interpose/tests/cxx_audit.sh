#!/usr/bin/env bash
# The seed's audit in C++ (issue 20), through the command as users call it:
#  1. qaudit/hooks.h compiles unchanged from C (C99..C17) and C++ (C++11..C++20) with gcc, g++,
#     clang and clang++ under -Wall -Wextra -Werror -pedantic, and declares the one weak symbol
#     qaudit_hook with C linkage (a mangled name would never bind to the preload's);
#  2. qaudit layout --type Connection (a using-alias of the connection template's instance): the
#     inline ring queue 32 B at offset 96 of a 184 B connection, in every allocator's 192 B
#     class; the std::deque one 80 B, the connection 232 B;
#  3. qaudit run: 100 connections each (80 that stay at depth one, 20 with bursts to 8), the
#     depth-one check passing for the ring and failing for the deque;
#  4. qaudit compare of the two builds with their dumps: the seed's table.
# usage: cxx_audit.sh QAUDIT RING_BINARY DEQUE_BINARY HOOKS_INCLUDE_DIR
set -uo pipefail
qaudit=$(realpath "$1") ring=$(realpath "$2") deque=$(realpath "$3") include=$(realpath "$4")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
# json FILE EXPRESSION: EXPRESSION (Python, on d) holds for the JSON in FILE.
json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }

echo "--- qaudit/hooks.h from C and C++"
cat >"$work/use.c" <<'EOF'
#include <qaudit/hooks.h>
static int connection, queue;
int main(void)
{
    qaudit_conn_open(&connection, &queue);
    qaudit_emit(QAUDIT_QUEUE_PUSH, NULL, &queue, NULL, 1, 1, 0);
    qaudit_conn_close(&connection, &queue);
    return 0;
}
EOF
cp "$work/use.c" "$work/use.cpp"
for compiler in gcc clang g++ clang++; do
  case $compiler in
    *++) source=$work/use.cpp dialects="c++11 c++14 c++17 c++20" ;;
    *) source=$work/use.c dialects="c99 c11 c17" ;;
  esac
  for dialect in $dialects; do
    object=$work/use-$compiler-$dialect.o
    if ! "$compiler" -std="$dialect" -Wall -Wextra -Werror -pedantic -I "$include" -c "$source" \
      -o "$object" 2>"$work/err"; then
      fail "$compiler -std=$dialect: $(head -c 300 "$work/err")"
    elif [ "$(nm "$object" | grep -c ' w qaudit_hook$')" -ne 1 ] || nm "$object" | grep -q ' w _Z'; then
      fail "$compiler -std=$dialect: qaudit_hook is not the one weak C symbol: $(nm "$object" | grep ' w ')"
    else
      pass "$compiler -std=$dialect: compiles, declares the weak C symbol qaudit_hook"
    fi
  done
done

echo "--- qaudit layout --type Connection"
# layout_of BINARY SIZE QUEUE_SIZE CLASSES: the alias names one type of that size, its queue at 96,
# the allocators' classes for it CLASSES (a Python set).
layout_of() {
  if ! "$qaudit" layout --format json --type Connection "$1" >"$work/layout.json" 2>"$work/err"; then
    fail "layout --type Connection of $(basename "$1"): $(cat "$work/err")"
    return
  fi
  json "$work/layout.json" "len(d['types']) == 1 and d['types'][0]['size'] == $2 and \
    [(m['offset'], m['size']) for m in d['types'][0]['members'] if m['name'] == 'queue'] == [(96, $3)]" &&
    pass "$(basename "$1"): Connection $2 B, queue $3 B at offset 96" ||
    fail "$(basename "$1"): $(head -c 600 "$work/layout.json")"
  json "$work/layout.json" "set(d['types'][0]['classes'].values()) == $4" &&
    pass "$(basename "$1"): the allocators' classes are $4 B" ||
    fail "$(basename "$1"): classes $(python3 -c "import json; print(json.load(open('$work/layout.json'))['types'][0]['classes'])")"
}
layout_of "$ring" 184 32 "{192}"
"$qaudit" layout --type Connection "$ring" # the text, for the log
layout_of "$deque" 232 80 "{240, 256}"

echo "--- qaudit run"
# run_of BINARY NAME STATUS: a run's dump says STATUS for depth_one_no_alloc, 100 connections.
run_of() {
  if ! "$qaudit" run --out "$work/$2-%p.json" -- "$1" 100 300 >"$work/out" 2>"$work/err"; then
    fail "run $2: $(cat "$work/err")"
    return
  fi
  grep '^qaudit run:' "$work/err"
  local dump
  dump=$(ls "$work/$2"-*.json | head -n 1)
  cp "$dump" "$work/$2.json"
  json "$dump" "[c['status'] for c in d['checks'] if c['name'] == 'depth_one_no_alloc'] == ['$3'] \
    and [c['status'] for c in d['checks'] if c['name'] == 'conservation'] == ['pass'] \
    and d['queues']['connections']['opened'] == 100" &&
    pass "run $2: 100 connections, depth_one_no_alloc $3, conservation pass" ||
    fail "run $2: checks $(python3 -c "import json; d=json.load(open('$dump')); print(d['checks'], d['queues'].get('connections'))")"
  grep -q "^qaudit run: depth_one_no_alloc $(echo "$3" | tr a-z A-Z), .*; 100 connections$" "$work/err" &&
    pass "run $2 says so" || fail "run $2 says: $(grep '^qaudit run:' "$work/err")"
}
run_of "$ring" ring pass
run_of "$deque" deque fail

echo "--- qaudit compare"
if "$qaudit" compare "$ring" --dump "$work/ring.json" "$deque" --dump "$work/deque.json" \
  --connection Connection --format json >"$work/compare.json" 2>"$work/err"; then
  json "$work/compare.json" "[(r['queue_object'], r['connection_object'], r['classes']['glibc']) \
    for r in d['builds']] == [(32, 184, 192), (80, 232, 240)] \
    and d['builds'][0]['allocs_per_connection_at_depth_one'] == 0 \
    and d['builds'][1]['allocs_per_connection_at_depth_one'] > 0 \
    and [r['depth_one_connections'] for r in d['builds']] == [80, 80]" &&
    pass "compare: queue 32 / 80 B, connection 184 / 232 B, no allocation at depth one only for the ring" ||
    fail "compare: $(cat "$work/compare.json")"
  "$qaudit" compare "$ring" --dump "$work/ring.json" "$deque" --dump "$work/deque.json" \
    --connection Connection
else
  fail "compare: $(cat "$work/err")"
fi

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
