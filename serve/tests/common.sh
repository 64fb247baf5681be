# What serve's test scripts share (sourced, not run): their own pid namespace, the verdict
# helpers and a bounded wait. Each script keeps its own cleanup (what it started differs).

# Runs the calling script again in a pid namespace of its own when it can (root), so that its
# `qaudit serve` sees only its own processes: another test's, run at the same time by ctest -j,
# are neither scraped nor have their dumps moved; a killed test (ctest's timeout) takes the whole
# namespace with it. Where it cannot, the script runs as it is.
# usage: own_pid_namespace "$0" "$@"
own_pid_namespace() {
  if [ -z "${QAUDIT_SERVE_TEST_NS:-}" ] && unshare --pid --fork --mount-proc true 2>/dev/null; then
    QAUDIT_SERVE_TEST_NS=1 exec unshare --pid --fork --kill-child --mount-proc "$@"
  fi
}

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }

# need_tools TOOL...: each on PATH, or the test fails at once with one line.
need_tools() {
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "FAIL: $tool is missing: run scripts/deps.sh"; exit 1; }
  done
}

wait_for() { # wait_for TENTHS COMMAND...: until COMMAND succeeds
  local n=$1; shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
  return 1
}
