#!/usr/bin/env bash
# Failover (issue 38): two managers on one PostgreSQL database, each with its own dummy agents
# (no containers). The leader is killed with SIGKILL; the time from the kill until a session
# created through the other manager's address is RUNNING (its next scheduling pass committed,
# on the new leader). The killed one is started again and stands by; the roles swap; ROUNDS
# rounds, p50 and max (goal: max ≤ 10 s).
# Baseline in the same run: one manager on SQLite, killed the same way and started again at
# once (what a single manager with an instant supervisor gives), the same measure.
#
#   bench/failover.sh       (after make build-test)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
ROUNDS="${ROUNDS:-20}"
BIN=target/release
cluster="$(scripts/test-postgres.sh)"
dbname="bai_failover_$$"
psql "$cluster" -qc "CREATE DATABASE $dbname" >/dev/null
url="${cluster%/*}/$dbname"
dirs=(); pids=()
for i in 0 1 2; do dirs+=("$(mktemp -d /tmp/bai-failover.XXXXXX)"); pids+=(""); done
base=$((20000 + RANDOM % 20000))
ports=("$base" "$((base + 1))" "$((base + 2))")
start() { # INDEX [DATABASE]
  local i=$1
  env BAI_DATA_DIR="${dirs[$i]}" BAI_LISTEN="127.0.0.1:${ports[$i]}" BAI_AGENT_LISTEN=off \
    BAI_NO_DOCKER=true BAI_DUMMY_AGENTS=2 BAI_APP_PORTS="3$((i + 1))000-3$((i + 1))009" \
    RUST_LOG=warn ${2:+BAI_DATABASE=$2} setsid "$BIN/baid" up >"${dirs[$i]}/out.log" 2>>"${dirs[$i]}/err.log" &
  pids[i]=$!
}
wait_line() { # INDEX TEXT
  for _ in $(seq 1 600); do grep -q "$2" "${dirs[$1]}/out.log" 2>/dev/null && return; sleep 0.05; done
  echo "manager $1 never printed: $2" >&2; cat "${dirs[$1]}/err.log" >&2; exit 1
}
cleanup() {
  for p in "${pids[@]}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for d in "${dirs[@]}"; do rm -rf "$d"; done
  psql "$cluster" -qc "DROP DATABASE IF EXISTS $dbname WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT
now() { date +%s.%N; }
# Creates session NAME through manager INDEX's address (503s while none leads) and waits
# until it runs; accounts from ENVFILE.
create_running() { # ENVFILE INDEX NAME
  ( set -a; . "$1"; BACKEND_ENDPOINT="http://127.0.0.1:${ports[$2]}"
    until "$BIN/bai" start -t "$3" python >/dev/null 2>&1; do sleep 0.02; done
    until "$BIN/bai" session info --json "$3" 2>/dev/null | grep -q '"status": *"RUNNING"'; do sleep 0.02; done )
}

# Two managers on PostgreSQL: 0 leads, 1 stands by.
start 0 "$url"; wait_line 0 "Stop with Ctrl-C"
start 1 "$url"; wait_line 1 "bai stands by"
env0="${dirs[0]}/env-user.sh"
leader=0; standby=1
ha=()
for r in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  kill -9 "${pids[$leader]}"; wait "${pids[$leader]}" 2>/dev/null || true
  create_running "$env0" "$standby" "fo-$r"
  t1=$(now)
  ha+=("$(python3 -c "print(round($t1 - $t0, 3))")")
  start "$leader" "$url"; wait_line "$leader" "bai stands by"
  t=$leader; leader=$standby; standby=$t
done

# The baseline: one manager on SQLite, killed and started again at once.
start 2; wait_line 2 "Stop with Ctrl-C"
env2="${dirs[2]}/env-user.sh"
one=()
for r in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  kill -9 "${pids[2]}"; wait "${pids[2]}" 2>/dev/null || true
  start 2
  create_running "$env2" 2 "re-$r"
  t1=$(now)
  one+=("$(python3 -c "print(round($t1 - $t0, 3))")")
done

python3 - "$ROUNDS" "${ha[*]}" "${one[*]}" <<'PY' > bench/results/29-failover.md
import statistics, sys, datetime
rounds = sys.argv[1]
ha = [float(x) for x in sys.argv[2].split()]
one = [float(x) for x in sys.argv[3].split()]
def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
print(f"## Failover (bench/failover.sh, issue 38, {datetime.date.today()})")
print()
print("Two managers on one PostgreSQL database (the tests' cluster on loopback), each with two dummy")
print("agents of its own; the leader killed with SIGKILL, then a session created through the other")
print("manager's address until it is accepted and RUNNING: the new leader's first pass committed.")
print(f"The killed manager is started again and stands by; the roles swap; {rounds} rounds. The lease")
print("lasts 5 s from its last renewal (renewed every second), a standby claims every 0.5 s: the floor")
print("is about 4–5 s. Baseline, same run: one manager on SQLite killed the same way and started again")
print("at once, as an instant supervisor would.")
print()
print("| | p50 | max | goal |")
print("|---|---|---|---|")
print(f"| leader SIGKILL → a new session RUNNING through the standby | {statistics.median(ha):.2f} s | {max(ha):.2f} s | max ≤ 10 s |")
print(f"| baseline: one manager SIGKILL, started again at once → the same | {statistics.median(one):.2f} s | {max(one):.2f} s | |")
print()
print(f"Failover against a restart in place: {statistics.median(ha) / statistics.median(one):.1f}× (p50). A restart in place")
print("needs a supervisor that notices at once and a machine that is still there; the standby needs")
print("neither, and waits out the dead leader's lease, the price of never having two leaders.")
print()
print(f"Rounds (s): failover {' '.join(f'{x:.2f}' for x in ha)}; baseline {' '.join(f'{x:.2f}' for x in one)}.")
PY
cat bench/results/29-failover.md
