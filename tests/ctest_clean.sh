#!/usr/bin/env bash
# make test's ctest, and then no process of the tests left running: every test runs with a mark
# of this run in its environment (QAUDIT_TEST_RUN), which whatever it starts inherits; once ctest
# ends, a process still carrying the mark was left behind by a test (a fixture's child, a daemon).
# It is given 10 s to end, then named, killed, and the run fails. A process that rewrote its
# environment (a daemon's process title) is not seen: this catches what it can, never more.
# usage: ctest_clean.sh BUILD_DIR CTEST_ARGS...
set -uo pipefail
build=$1
shift
mark="qaudit-test-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
cd "$build" || exit 2
QAUDIT_TEST_RUN=$mark ctest "$@"
status=$?

# The pids whose environment holds the mark (this script's own is not marked).
marked() { grep -lzsx "QAUDIT_TEST_RUN=$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }

left=$(marked)
SECONDS=0
while [ -n "$left" ] && [ "$SECONDS" -lt 10 ]; do
  sleep 0.5
  left=$(marked)
done
[ -z "$left" ] && exit "$status"
echo "make test: processes left running after the tests (killed now):"
for pid in $left; do
  echo "  $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-120)"
done
# shellcheck disable=SC2086 # one pid per word
kill -9 $left 2>/dev/null
exit 1
