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

# catches PID SIGNUM: PID has a handler for the signal (bit SIGNUM - 1 of its SigCgt mask).
catches() {
  local mask
  mask=$(awk '/^SigCgt:/ {print $2}' "/proc/$1/status" 2>/dev/null)
  [ -n "$mask" ] && (((16#$mask >> ($2 - 1)) & 1))
}

# program_of RUNNER: the pid of the program `qaudit run` (pid RUNNER) started, once both catch
# SIGTERM (qaudit's forwarding, the preload's final dump: both in place before the program's
# main), so that a signal or a snapshot can be sent; empty when that takes over 60 s.
program_of() {
  local child
  for _ in $(seq 1200); do
    child=$(pgrep -P "$1" || true)
    if [ -n "$child" ] && catches "$1" 15 && catches "$child" 15; then
      echo "$child"
      return
    fi
    sleep 0.05
  done
}
