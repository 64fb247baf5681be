#!/usr/bin/env bash
# pgbench -C (a new connection, so a forked backend, per transaction) against Debian's
# PostgreSQL 15, natively and with the server under `qaudit run --stacks queue` (the preload's
# own defaults, what QAUDIT_STACKS unset gives) and `--stacks always` (qaudit run's default)
# (issue 19, point 6). One cluster (initdb natively, pgbench -i, scale 1); each round starts the
# server once per mode, runs `pgbench -C -c 2 -t TRANSACTIONS` (the client natively), stops it
# (fast). Medians of TPS and of each round's ratio to native; the dumps a run wrote (files,
# total) and the size of one backend's dump (median over backends).
# PRELOADS="NAME=PATH ..." compares preload builds (A/B) in the same rounds; by default this
# tree's build/lib/libqaudit-preload.so.
# Runs as root (the server as postgres). usage: bench/pgbench_bench.sh [RUNS] [TRANSACTIONS]
# (defaults 5 and 100)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
transactions=${2:-100}
pg=/usr/lib/postgresql/15/bin
qaudit=$top/build/bin/qaudit
preloads=${PRELOADS:-this=$top/build/lib/libqaudit-preload.so}
work=$(mktemp -d)
chmod 755 "$work"
trap '$pg/pg_ctl -D "$work/data" -m immediate stop >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
as_pg() { runuser -u postgres -- "$@"; }
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir "$work/sock" && chown postgres "$work/sock" "$work"
as_pg "$pg/initdb" -D "$work/data" -A trust -U postgres -N >/dev/null
options="-p $port -k $work/sock -c listen_addresses=127.0.0.1"

median() { sort -g | awk '{v[NR]=$1} END{print v[int((NR+1)/2)]}'; }

# start MODE OUT: pg_ctl start natively, or under qaudit run with preload NAME and stacks STACKS
# (MODE is NAME:STACKS; dumps into OUT)
start() {
  local mode=$1 out=$2
  local ctl=("$pg/pg_ctl" -D "$work/data" -l "$work/pg.log" -w -o "$options" start)
  if [ "$mode" = native ]; then
    as_pg "${ctl[@]}"
  else
    as_pg "$qaudit" run --preload "$(so_of "${mode%%:*}")" --stacks "${mode#*:}" \
      --out "$out/d-%p.json" -- "${ctl[@]}"
  fi >/dev/null 2>&1
}
so_of() { for p in $preloads; do [ "${p%%=*}" = "$1" ] && echo "${p#*=}"; done; }

# one MODE -> "TPS FILES KIB BACKEND_KIB" for one run
one() {
  local mode=$1 out=$work/out-${1/:/-}
  rm -rf "$out" && mkdir "$out" && chown postgres "$out"
  start "$mode" "$out"
  local tps
  tps=$(as_pg "$pg/pgbench" -h 127.0.0.1 -p "$port" -U postgres -C -c 2 -t "$transactions" \
          postgres 2>/dev/null | awk '/^tps/ {print $3}')
  as_pg "$pg/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null
  if [ "$mode" = native ]; then
    echo "$tps 0 0 0"
    return
  fi
  # A backend's dump: its title (argv) names the TCP client, "... 127.0.0.1(PORT) ...".
  local backend
  backend=$(python3 - "$out" <<'PY'
import json, os, sys, statistics
sizes = []
for name in os.listdir(sys.argv[1]):
    path = os.path.join(sys.argv[1], name)
    if not name.endswith(".json"):
        continue
    argv = json.load(open(path)).get("process", {}).get("argv", [])
    if argv and "127.0.0.1(" in argv[0]:
        sizes.append(os.path.getsize(path) / 1024)
print("%.1f" % statistics.median(sizes) if sizes else "n/a")
PY
)
  echo "$tps $(ls "$out" | wc -l) $(du -sk "$out" | cut -f1) $backend"
}

as_pg "$pg/pg_ctl" -D "$work/data" -l "$work/pg.log" -w -o "$options" start >/dev/null
as_pg "$pg/pgbench" -i -q -h "$work/sock" -p "$port" -U postgres postgres >/dev/null 2>&1
as_pg "$pg/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null

modes=(native)
for p in $preloads; do modes+=("${p%%=*}:queue" "${p%%=*}:always"); done
for _ in $(seq "$runs"); do
  line=""
  for mode in "${modes[@]}"; do line="$line $(one "$mode")"; done
  echo "$line"
done >"$work/rounds"
# columns: 4 per mode, in the order of modes: tps files KiB backend-KiB

echo "## pgbench -C against PostgreSQL 15: -c 2 -t $transactions, $runs interleaved rounds ($(date -u +%Y-%m-%d))"
echo
echo "| server | TPS (median) | ratio to native (median of rounds) | dumps per run | MiB of dumps per run | one backend's dump, KiB (median) |"
echo "|---|---|---|---|---|---|"
col() { awk -v c="$1" '{print $c}' "$work/rounds" | median; }
ratio() { awk -v c="$1" '{printf "%.3f\n", $c / $1}' "$work/rounds" | median; }
echo "| native | $(col 1) | 1 | - | - | - |"
for i in "${!modes[@]}"; do
  [ "$i" = 0 ] && continue
  c=$((4 * i + 1))
  echo "| ${modes[$i]%%:*}: qaudit run --stacks ${modes[$i]#*:} | $(col $c) | $(ratio $c) | $(col $((c + 1))) | $(awk -v c=$((c + 2)) '{printf "%.1f\n", $c / 1024}' "$work/rounds" | median) | $(col $((c + 3))) |"
done
