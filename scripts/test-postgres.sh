#!/usr/bin/env bash
# Starts (or finds running) the tests' private PostgreSQL cluster: Debian's postgresql, its own
# data dir, socket dir and port, trust authentication on loopback only. Prints its URL, which
# the tests read as BAI_TEST_POSTGRES; every test makes a database of its own in it.
#   BAI_PG_DIR   where the cluster lives (default /var/tmp/bai-test-pg)
#   BAI_PG_PORT  its port (default 55432)
#   test-postgres.sh restart | stop   restarts the running cluster (every connection ends,
#                                     `-m fast`) or stops it (`-m immediate`)
set -euo pipefail
dir="${BAI_PG_DIR:-/var/tmp/bai-test-pg}"
port="${BAI_PG_PORT:-55432}"
# The newest installed server's programs (none: empty; `|| true` keeps `set -e` from ending
# the script when the glob matches nothing).
pg_bin() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true; }
bin=$(pg_bin)
if [ -z "$bin" ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "error: PostgreSQL is missing; run as root or apt-get install postgresql" >&2
    exit 1
  fi
  echo "==> installing postgresql (Debian package)" >&2
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
  bin=$(pg_bin)
  [ -n "$bin" ] || { echo "error: postgresql installed, but no server found in /usr/lib/postgresql" >&2; exit 1; }
  # The package starts a cluster of its own; the tests do not use it.
  (command -v pg_ctlcluster >/dev/null && pg_ctlcluster --skip-systemctl-redirect "$(basename "$(dirname "$bin")")" main stop) >/dev/null 2>&1 || true
fi
url="postgres://postgres@127.0.0.1:$port/postgres"
# PostgreSQL refuses to run as root: the cluster belongs to the postgres user.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
# The server outlives this script: it must not keep what the caller left open. Under
# `flock /work/cargo.lock …` that is the lock, which a server started there would hold (and
# every other build wait on) until the server stops.
close_inherited() {
  local fd
  for fd in $(ls /proc/$BASHPID/fd); do
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}
case "${1:-}" in
  restart)
    (close_inherited; as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 -m fast restart >/dev/null) \
      || { echo "error: the test PostgreSQL did not restart; see $dir/server.log" >&2; exit 1; }
    echo "$url"; exit 0 ;;
  stop) as_pg "$bin/pg_ctl" -D "$dir/data" -w -m immediate stop >/dev/null; exit ;;
  "") ;;
  *) echo "usage: $0 [restart|stop]" >&2; exit 2 ;;
esac
# Each test makes a database of its own; those of an earlier run go.
drop_old() {
  for db in $(as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -Atc \
      "SELECT datname FROM pg_database WHERE datname LIKE 'bai\_test\_%'" postgres 2>/dev/null); do
    as_pg "$bin/psql" -h 127.0.0.1 -p "$port" -U postgres -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" postgres >/dev/null 2>&1 || true
  done
}
if as_pg "$bin/pg_isready" -q -h 127.0.0.1 -p "$port" 2>/dev/null; then
  drop_old
  echo "$url"
  exit 0
fi
mkdir -p "$dir"
[ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
if [ ! -f "$dir/data/PG_VERSION" ]; then
  as_pg "$bin/initdb" -D "$dir/data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 \
    || { echo "error: initdb failed; see $dir/initdb.log" >&2; exit 1; }
fi
# Many tests open databases side by side: room for their connections. fsync off: a test
# cluster holds nothing worth a flush. random_page_cost 1.1: local SSD storage, as docs/HA.md
# advises (the default 4 prices an index walk for spinning disks).
(close_inherited; as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c random_page_cost=1.1" >/dev/null) \
  || { echo "error: the test PostgreSQL did not start; see $dir/server.log" >&2; tail -20 "$dir/server.log" >&2; exit 1; }
drop_old
echo "$url"
