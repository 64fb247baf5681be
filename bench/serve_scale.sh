#!/usr/bin/env bash
# How far `qaudit serve` scales (issue 43 item 4): for each N, N preloaded fixture_steady
# processes (each allocates and frees 4 KiB every millisecond, bounded by its own life and
# stopped at the end), one qaudit serve on loopback, and per N:
#   - one /metrics scrape's wall time (curl's time_total), SCRAPES scrapes 1.1 s apart (past
#     --min-interval, so each asks every process for a fresh dump): median and range;
#   - serve's CPU (user + system, /proc/PID/stat) over those scrapes, per scrape;
#   - serve's peak RSS (VmHWM) at the end;
#   - what a scrape costs each scraped process: the run time (schedstat, ns) of its writer
#     thread, which writes the dumps (main's own allocating is left out: under load it varies
#     more than a dump costs), over WINDOW s without a scrape,
#     then over WINDOW s scraped every 1.1 s; the difference per process per scrape.
# Serve counts every preloaded process on the host: the targets it served are printed (other
# users' preloaded processes would add to N).
# usage: bench/serve_scale.sh [BUILD_DIR] [N...]   (defaults: build, 1 10 50 100)
# env: SCRAPES (default 7), WINDOW (seconds, default 8)
set -u
build=$(realpath "${1:-build}")
shift
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1 10 50 100)
scrapes=${SCRAPES:-7} window=${WINDOW:-8}
for f in "$build/bin/qaudit" "$build/bin/fixture_steady" "$build/lib/libqaudit-preload.so"; do
  [ -f "$f" ] || { echo "serve_scale: $f is missing: build first" >&2; exit 2; }
done
work=$(mktemp -d)
procs=() serve=
stop_all() {
  [ -n "$serve" ] && kill -TERM "$serve" 2>/dev/null && wait "$serve" 2>/dev/null
  for p in "${procs[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  procs=() serve=
}
trap 'stop_all; rm -rf "$work"' EXIT

run_ns() { # the summed run time of the given pids' threads, in ns (schedstat: exact, not ticks)
  cat "$@" 2>/dev/null | awk '{sum += $1} END {printf "%.0f", sum}'
}
cpu_ticks() { # the summed utime + stime of the given pids (their ended threads too), in ticks
  local sum=0 t
  for p in "$@"; do
    t=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null | awk '{print $12 + $13}')
    sum=$((sum + ${t:-0}))
  done
  echo "$sum"
}
hz=$(getconf CLK_TCK)

echo "machine: $(nproc) cores, $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%5s %7s %22s %14s %9s %18s\n' N targets "scrape ms: median (range)" "serve CPU ms" "serve MB" "writer ms/scrape"
for n in "${counts[@]}"; do
  mkdir -p "$work/$n"
  for _ in $(seq "$n"); do
    QAUDIT_OUT=$work/$n/%p.json LD_PRELOAD=$build/lib/libqaudit-preload.so \
      "$build/bin/fixture_steady" 600000 malloc >/dev/null 2>&1 &
    procs+=("$!")
  done
  log=$work/serve-$n.log
  TMPDIR=$work "$build/bin/qaudit" serve --listen 127.0.0.1:0 --timeout 5000 \
    --max-targets 4096 >"$log" 2>&1 &
  serve=$!
  for _ in $(seq 100); do grep -q "listening on" "$log" && break; sleep 0.1; done
  url=http://127.0.0.1:$(sed -n 's/.*127\.0\.0\.1:\([0-9]*\) .*/\1/p' "$log")/metrics
  sleep 1
  curl -sf -o "$work/body" "$url" || { echo "serve_scale: no scrape at N=$n" >&2; exit 1; }
  targets=$(grep -c '^qaudit_scrape_success{.* 1$' "$work/body")
  tasks=() # after a first dump: each process's writer thread (its only thread but main) runs
  for p in "${procs[@]}"; do
    for t in "/proc/$p/task/"*; do [ "${t##*/}" = "$p" ] || tasks+=("$t/schedstat"); done
  done
  sleep 1.1
  # Without scraping, then scraped every second: the processes' CPU.
  t0=$(date +%s%N)
  quiet0=$(run_ns "${tasks[@]}")
  sleep "$window"
  quiet=$(($(run_ns "${tasks[@]}") - quiet0))
  quiet_ns=$(($(date +%s%N) - t0))
  t0=$(date +%s%N)
  busy0=$(run_ns "${tasks[@]}")
  serve0=$(cpu_ticks "$serve")
  : >"$work/times"
  end=$((SECONDS + window))
  taken=0
  while [ "$SECONDS" -lt "$end" ] || [ "$taken" -lt "$scrapes" ]; do
    curl -s -o /dev/null -w '%{time_total}\n' "$url" >>"$work/times"
    taken=$((taken + 1))
    sleep 1.1
  done
  busy=$(($(run_ns "${tasks[@]}") - busy0))
  serve_ticks=$(($(cpu_ticks "$serve") - serve0))
  busy_ns=$(($(date +%s%N) - t0))
  rss=$(sed -n 's/^VmHWM:\s*\([0-9]*\) kB/\1/p' "/proc/$serve/status")
  python3 - "$work/times" "$n" "$targets" "$serve_ticks" "$hz" "$rss" "$quiet" "$busy" \
    "$taken" "$quiet_ns" "$busy_ns" <<'EOF'
import statistics, sys
times = sorted(float(t) * 1000 for t in open(sys.argv[1]))
n, targets, serve_ticks, hz, rss, quiet, busy, taken, quiet_ns, busy_ns = map(float, sys.argv[2:])
ms = 1000 / hz
# The processes' CPU per second without and with scrapes; the extra per scrape and process.
quiet_per_s = quiet / 1e6 / (quiet_ns / 1e9)
busy_per_s = busy / 1e6 / (busy_ns / 1e9)
per_scrape = (busy_per_s - quiet_per_s) * (busy_ns / 1e9) / taken / n
print("%5d %7d %9.1f (%.1f-%.1f) %14.1f %9.1f %18.2f" % (
    n, targets, statistics.median(times), times[0], times[-1], serve_ticks * ms / taken,
    rss / 1024, per_scrape))
EOF
  stop_all
  rm -rf "${work:?}/$n"
done
echo "serve CPU: ticks of $((1000 / hz)) ms over $scrapes+ scrapes; the processes': schedstat (ns)"
