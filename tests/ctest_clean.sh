#!/usr/bin/env bash
# make test's ctest, and then no process of the tests left running: every test runs with a mark
# of this run in its environment (QAUDIT_TEST_RUN), which whatever it starts inherits; once ctest
# ends, a process still carrying the mark was left behind by a test (a fixture's child, a daemon).
# It is given 10 s to end, then named, killed, and the run fails. A process that rewrote its
# environment (a daemon's process title) is not seen: this catches what it can, never more.
# A dump that a test's process could not write where the test meant (a user it dropped to, a
# directory removed) goes to the preload's fallback directory, /tmp unless QAUDIT_FALLBACK_DIR
# says otherwise. Every test that drops a user sets its own; for any other, make test sets one
# of its own here (anyone may add to it, as to /tmp), and a file found there once ctest ends is a
# dump some test let escape: named, removed, and the run fails.
# usage: ctest_clean.sh BUILD_DIR CTEST_ARGS...
set -uo pipefail
build=$1
shift
mark="qaudit-test-$$-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')"
cd "$build" || exit 2
fallback=$(mktemp -d "${TMPDIR:-/tmp}/qaudit-test-fallback-XXXXXX") && chmod 1777 "$fallback" || exit 2
QAUDIT_TEST_RUN=$mark QAUDIT_FALLBACK_DIR=$fallback ctest "$@"
status=$?

# The pids whose environment holds the mark (this script's own is not marked).
marked() { grep -lzsx "QAUDIT_TEST_RUN=$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3; }

left=$(marked)
SECONDS=0
while [ -n "$left" ] && [ "$SECONDS" -lt 10 ]; do
  sleep 0.5
  left=$(marked)
done
if [ -n "$left" ]; then
  echo "make test: processes left running after the tests (killed now):"
  for pid in $left; do
    echo "  $pid: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | cut -c1-120)"
  done
  # shellcheck disable=SC2086 # one pid per word
  kill -9 $left 2>/dev/null
  status=1
fi

escaped=$(find "$fallback" -mindepth 1)
if [ -n "$escaped" ]; then
  echo "make test: dumps a test let escape into the fallback directory (removed now):"
  echo "$escaped" | sed 's/^/  /'
  status=1
fi
rm -rf "$fallback"
exit "$status"
