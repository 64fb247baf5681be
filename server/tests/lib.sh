# Sourced by the ringkv test scripts: a scratch directory removed at exit (with the server, if it
# still runs), and start_server, which starts ringkv on a free port and learns the port.
work=$(mktemp -d)
server_pid=
cleanup() {
  [ -n "$server_pid" ] && kill -9 "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# start_server TENTHS COMMAND...: runs COMMAND (ringkv, possibly under valgrind) with its output
# in $work/log, waits up to TENTHS tenths of a second for the start line, sets server_pid and
# port. Fails when no port was printed.
start_server() {
  local tenths=$1
  shift
  "$@" >"$work/log" 2>&1 &
  server_pid=$!
  for _ in $(seq "$tenths"); do
    grep -q "listening on" "$work/log" && break
    sleep 0.1
  done
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/log")
  [ -n "$port" ]
}
