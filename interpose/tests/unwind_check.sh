#!/usr/bin/env bash
# The `always` stacks walked by the cached unwind rules are the libraries' stacks, frame for frame
# (QAUDIT_UNWIND_CHECK=1 walks each both ways: docs/design.md, "Stacks in always mode"), on the
# C++ fixtures (operator new, containers, the connection template, exceptions' unwinder beside
# ours), threads, a plugin dlopened and dlclosed, a fork, and Python and node (an interpreter's
# deep stacks, a JIT's frames that no rule covers). The foreign programs and the servers are
# checked by the *_unwind_check entries of test_foreign and test_servers.
# usage: unwind_check.sh PRELOAD BIN_DIR LIB_DIR
set -uo pipefail
preload=$(realpath "$1") bin=$(realpath "$2") lib=$(realpath "$3")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# check NAME COMMAND...: run under the check; every dump compared stacks, none differed.
check() {
  local name=$1 dir=$work/$1
  shift
  mkdir -p "$dir"
  env LD_PRELOAD="$preload" QAUDIT_STACKS=always QAUDIT_UNWIND_CHECK=1 \
    QAUDIT_OUT="$dir/d-%p.json" "$@" >"$dir/out" 2>"$dir/err"
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "FAIL: $name exited $status: $(head -c 300 "$dir/err")"
    failures=$((failures + 1))
    return
  fi
  if ! python3 - "$dir" "$name" <<'EOF'; then
import glob, json, sys
compared = differed = library = 0
dumps = sorted(glob.glob(sys.argv[1] + "/d-*.json"))
for path in dumps:
    check = json.load(open(path))["precision"].get("unwind_check")
    if check is None:
        sys.exit(f"{path}: no precision.unwind_check")
    compared += check["stacks_compared"]
    differed += check["stacks_differed"]
    library += check["stacks_by_library"]
print(f"{sys.argv[2]}: {len(dumps)} dumps, {compared} stacks compared, {differed} differed, "
      f"{library} left to the libraries")
sys.exit(0 if dumps and compared > 0 and differed == 0 else 1)
EOF
    echo "FAIL: $name: $(grep -m3 'unwind check' "$dir/err")"
    failures=$((failures + 1))
  fi
}

check cpp_new "$bin/fixture_cpp_new"
check cxx_containers "$bin/fixture_cxx_containers"
check cxx_server_ring "$bin/fixture_cxx_server_ring" 40 60
check cxx_server_deque "$bin/fixture_cxx_server_deque" 40 60
check threads "$bin/fixture_threads" 4 20000
check dlopener "$bin/fixture_dlopener" "$lib/libfixture_plugin.so"
check forker "$bin/fixture_forker"
check python3 python3 -c 'import json, re; print(len(json.dumps([re.sub("a", "b", str(i)) for i in range(20000)])))'
check node node -e 'let a = []; for (let i = 0; i < 20000; i++) a.push(JSON.stringify({i})); console.log(a.length)'
[ "$failures" -eq 0 ] && echo "all agree" && exit 0
exit 1
