#!/usr/bin/env bash
# A manager on PostgreSQL against one on SQLite (issue 38): `bai run --rm -c 'print(1)' python`
# on each, alternating, N rounds, median ratio (goal ≤ 1.1×), and each manager's idle RSS.
# PostgreSQL is the tests' private cluster (scripts/test-postgres.sh), a new database.
#
#   bench/postgres.sh       (after make build-test)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
ROUNDS="${ROUNDS:-20}"
BIN=target/release
cluster="$(scripts/test-postgres.sh)"
dbname="bai_bench_$$"
psql "$cluster" -qc "CREATE DATABASE $dbname" >/dev/null
url="${cluster%/*}/$dbname"
lite="$(mktemp -d /tmp/bai-bench-lite.XXXXXX)"
pg="$(mktemp -d /tmp/bai-bench-pg.XXXXXX)"
lport=$((20000 + RANDOM % 20000)); pport=$((lport + 1))
start() { # DIR PORT [DATABASE]
  env BAI_DATA_DIR="$1" BAI_LISTEN="127.0.0.1:$2" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" \
    RUST_LOG=warn ${3:+BAI_DATABASE=$3} setsid "$BIN/baid" up >"$1/out.log" 2>"$1/err.log" &
  echo $!
}
lpid=$(start "$lite" "$lport"); ppid=$(start "$pg" "$pport" "$url")
cleanup() {
  kill "$lpid" "$ppid" 2>/dev/null || true
  wait "$lpid" "$ppid" 2>/dev/null || true
  for d in "$lite" "$pg"; do
    agent=$(grep -o 'agent-[0-9a-f]*' "$d/out.log" | head -1 || true)
    [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
    rm -rf "$d"
  done
  psql "$cluster" -qc "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
for d in "$lite" "$pg"; do
  for _ in $(seq 1 300); do grep -q "Stop with Ctrl-C" "$d/out.log" 2>/dev/null && break; sleep 0.1; done
done
now() { date +%s.%N; }
sub() { python3 -c "print(round($1 - $2, 4))"; }
median() { python3 -c 'import sys,statistics; print(round(statistics.median(float(x) for x in sys.argv[1:]), 4))' "$@"; }
run_on() { (set -a; . "$1/env-user.sh"; "$BIN/bai" run --rm -q -c 'print(1)' python >/dev/null); }
run_on "$lite"; run_on "$pg"   # warm-up
lt=(); pt=()
for _ in $(seq 1 "$ROUNDS"); do
  t0=$(now); run_on "$lite"; t1=$(now); run_on "$pg"; t2=$(now)
  lt+=("$(sub "$t1" "$t0")"); pt+=("$(sub "$t2" "$t1")")
done
lmed=$(median "${lt[@]}"); pmed=$(median "${pt[@]}")
ratio=$(python3 -c "print(f'{$pmed/$lmed:.2f}')")
rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status"; }
sleep 2
echo "bai run --rm -c, median of $ROUNDS: SQLite ${lmed}s  PostgreSQL ${pmed}s  ratio ${ratio}x (goal <= 1.1x)"
echo "idle RSS after the runs: SQLite manager $(rss "$lpid") MB  PostgreSQL manager $(rss "$ppid") MB"
