#!/usr/bin/env bash
# What a site's "where" says on the servers qaudit exists for (issue 39): Debian's nginx (a
# master and two workers as www-data, 300 requests) and PostgreSQL 15 (a postmaster as postgres,
# 40 pgbench transactions of a backend each), each under qaudit run, reported by the
# next: command. Their allocation wrappers are recognised from the stacks, not listed: nginx's
# ngx_alloc and ngx_memalign, PostgreSQL's palloc and MemoryContextAlloc and its allocator's
# call without a symbol (AllocSetAlloc is static) are named as wrappers and are no site's where;
# with --skip none they are the top sites' where again (what the rule changed).
# usage: servers_where.sh QAUDIT
set -uo pipefail
qaudit=$(realpath "$1")
# shellcheck source=harness.sh
. "$(dirname "$0")/harness.sh"
[ "$(id -u)" -eq 0 ] || { echo "needs root (nginx's workers and PostgreSQL run as their users): skipped"; exit 77; }
pg=/usr/lib/postgresql/15/bin
for p in /usr/sbin/nginx "$pg/postgres" "$pg/initdb" "$pg/pgbench" "$pg/pg_ctl" /usr/bin/curl; do
  [ -x "$p" ] || { echo "FAIL: $p is not installed (scripts/deps.sh)"; exit 1; }
done
chmod 755 "$work" # the servers' users reach their directories in it
cd "$work" || exit 2
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 300); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }
# wheres FILE N: the where of the top N sites by allocations of a JSON report, one a line.
wheres() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); [print(s['where']) for s in d['sites'][:int(sys.argv[2])]]" "$1" "$2"; }
# report_run DIR ERR OUT [OPTIONS]: the report the run's next: command names, as JSON into OUT.
report_run() {
  local next
  next=$(sed -n 's/^qaudit run: next: qaudit report //p' "$2")
  [ -n "$next" ] || { fail "no next: command: $(cat "$2")"; return 1; }
  (cd "$1" && eval "\"\$qaudit\" report $next ${*:4} --format json -o $3")
}

echo "--- nginx: a master and two workers as www-data"
port=$(free_port)
mkdir -p nginx/conf nginx/html nginx/logs nginx/out
chmod 1777 nginx/out nginx/logs
echo hello >nginx/html/index.html
head -c 30000 /dev/zero | tr '\0' x >nginx/html/page.html
cat >nginx/conf/nginx.conf <<CONF
user www-data;
worker_processes 2;
daemon off;
pid $work/nginx/logs/nginx.pid;
error_log $work/nginx/logs/error.log notice;
events { worker_connections 64; }
http {
  default_type text/plain;
  access_log $work/nginx/logs/access.log;
  server {
    listen 127.0.0.1:$port;
    root $work/nginx/html;
    location /api/ { return 200 "api \$uri \$args\n"; }
  }
}
CONF
chmod -R a+rX nginx
"$qaudit" run --out "$work/nginx/out/" -- /usr/sbin/nginx -c "$work/nginx/conf/nginx.conf" \
  >nginx.out 2>nginx.err &
runner=$!
if wait_port "$port"; then
  for i in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$port/page.html"
    curl -s -o /dev/null "http://127.0.0.1:$port/api/x?i=$i"
    curl -s -o /dev/null "http://127.0.0.1:$port/missing"
  done
else
  fail "nginx did not listen on $port: $(cat nginx.err)"
fi
/usr/sbin/nginx -c "$work/nginx/conf/nginx.conf" -s quit 2>/dev/null
wait "$runner"
runner=
report_run "$work" nginx.err "$work/nginx.json" && report_run "$work" nginx.err "$work/nginx-none.json" --skip none ||
  fail "the next: command failed"
wheres nginx.json 10 | sed 's/^/  /'
check_json() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1"; }
check_json nginx.json "{'ngx_alloc', 'ngx_memalign'} <= {w['function'] for w in d['wrappers_recognised']}" &&
  pass "nginx: ngx_alloc and ngx_memalign recognised as wrappers" || fail "nginx: wrappers $(check_json nginx.json 0; python3 -c "import json; print(json.load(open('nginx.json'))['wrappers_recognised'])")"
! wheres nginx.json 10 | grep -q "^ngx_alloc\|^ngx_memalign" &&
  pass "nginx: no top site's where is ngx_alloc or ngx_memalign" || fail "nginx: $(wheres nginx.json 10 | tr '\n' '|')"
[ "$(wheres nginx-none.json 4 | grep -c '^ngx_alloc$\|^ngx_memalign$')" -ge 3 ] &&
  pass "nginx, --skip none: the wrappers are the top sites' where again" ||
  fail "nginx --skip none: $(wheres nginx-none.json 4 | tr '\n' '|')"

echo "--- PostgreSQL 15: a postmaster, pgbench's backends"
port=$(free_port)
mkdir -p pg/sock pg/out
chown postgres pg pg/sock && chmod 1777 pg/out
runuser -u postgres -- "$pg/initdb" -D "$work/pg/data" >pg-initdb.out 2>&1 || fail "initdb: $(tail -3 pg-initdb.out)"
runuser -u postgres -- "$qaudit" run --out "$work/pg/out/" -- "$pg/postgres" -D "$work/pg/data" \
  -p "$port" -k "$work/pg/sock" -c listen_addresses=127.0.0.1 -c fsync=off >pg.out 2>pg.err &
runner=$!
if wait_port "$port"; then
  # a query on the catalog, a backend each: the backends' work, not pgbench's 100,000 rows'
  echo "SELECT relname, relkind FROM pg_class ORDER BY relname;" >pg/query.sql
  chmod 644 pg/query.sql
  runuser -u postgres -- "$pg/pgbench" -h 127.0.0.1 -p "$port" -n -f "$work/pg/query.sql" -C -c 2 -t 20 \
    postgres >pgbench.out 2>&1 ||
    fail "pgbench: $(tail -3 pgbench.out)"
else
  fail "PostgreSQL did not listen on $port: $(cat pg.err)"
fi
runuser -u postgres -- "$pg/pg_ctl" -D "$work/pg/data" -m fast -w -t 60 stop >/dev/null 2>&1
wait "$runner"
runner=
report_run "$work" pg.err "$work/pg.json" && report_run "$work" pg.err "$work/pg-none.json" --skip none ||
  fail "the next: command failed"
wheres pg.json 26 | head -10 | sed 's/^/  /'
check_json pg.json "{'palloc', 'MemoryContextAlloc'} <= {w['function'] for w in d['wrappers_recognised']} and any(w['function'].startswith('postgres+0x') for w in d['wrappers_recognised'])" &&
  pass "PostgreSQL: palloc, MemoryContextAlloc and the allocator's call without a symbol recognised" ||
  fail "PostgreSQL: wrappers $(python3 -c "import json; print(json.load(open('pg.json'))['wrappers_recognised'])")"
check_json pg.json "not any(s['where'].split(' ')[0] in {w['function'] for w in d['wrappers_recognised']} for s in d['sites'][:26])" &&
  pass "PostgreSQL: none of the top 26 sites' where is a wrapper" || fail "PostgreSQL: $(wheres pg.json 26 | tr '\n' '|')"
python3 - pg.json pg-none.json <<'PY' && pass "PostgreSQL, --skip none: the wrappers are most top sites' where again" || fail "PostgreSQL --skip none: $(wheres pg-none.json 26 | tr '\n' '|')"
import fnmatch, json, sys
d = json.load(open(sys.argv[1]))
folded = {w["function"] for w in d["wrappers_recognised"]}
def wrapper(name):
    return name in folded or any(fnmatch.fnmatchcase(name, g) for g in d["skip"])
none = json.load(open(sys.argv[2]))["sites"][:26]
sys.exit(0 if sum(wrapper(s["where"].split(" ")[0]) for s in none) >= 13 else 1)
PY
[ "$failures" -eq 0 ] || exit 1
