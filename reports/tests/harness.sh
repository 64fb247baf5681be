# shellcheck shell=bash
# Sourced by the reports' shell tests: a scratch directory $work, removed on exit with the
# processes in $runner and pids killed; fail and pass count into $failures.
work=$(mktemp -d)
runner=
pids=()
cleanup() {
  for p in $runner "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
pass() { echo "ok: $*"; }
