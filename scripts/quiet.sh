#!/usr/bin/env bash
# Runs one build step (cmake's configure or build) with its output in a log, and prints one line:
# what ran and where its log is; when the step fails, the log's errors (or its last lines) too.
# So that `make test` and `make demo` end on their verdict, not on 800 lines of compiler progress.
# VERBOSE=1 (as for CMake's makefiles) prints everything as it comes.
# usage: quiet.sh LOG WHAT COMMAND [ARGS...]
set -uo pipefail
log=$1 what=$2
shift 2
if [ -n "${VERBOSE:-}" ]; then
  exec "$@"
fi
mkdir -p "$(dirname "$log")"
"$@" >"$log" 2>&1
status=$?
if [ "$status" -eq 0 ]; then
  echo "$what: done ($(grep -c 'warning:' "$log") warnings; log: $log)"
  exit 0
fi
echo "$what: FAILED (exit $status; log: $log)"
if grep -q -E 'error:|undefined reference|Error [0-9]' "$log"; then
  grep -E -B2 -A6 'error:|undefined reference|Error [0-9]' "$log" | head -80
else
  tail -40 "$log"
fi
exit "$status"
