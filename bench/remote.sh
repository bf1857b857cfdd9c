#!/usr/bin/env bash
# Remote agents (issue "many machines"). Ratios against baselines measured in the same run.
#
# 1. create → RUNNING (`bai start`, which returns once the session runs) on a remote agent
#    (`baid agent` over the TLS link on loopback, the same Docker engine) vs on the
#    in-process agent, alternating, N rounds, median ratio.            goal ≤ 1.1×
# 2. 1,000 agents connected over the real transport (one load process holds them all:
#    crates/bai-link/examples/many_agents.rs), heartbeating every 10 s: the manager's CPU over
#    60 s and its RSS, vs the same manager before they joined.   goal CPU ≤ 5 %, RSS ≤ 200 MB
# 3. The scheduler benchmark with them connected: 10,000 PENDING sessions placed onto 1,000
#    agents that joined over the link (each its own TLS connection to the manager's agent
#    listener, heartbeating) vs onto 1,000 in-process dummy agents, same run
#    (crates/bai-manager/examples/sched_bench.rs --link), median of 3.
#                                                          goal: unchanged (≤ 1.1× the time)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
ROUNDS="${ROUNDS:-10}"
AGENTS="${AGENTS:-1000}"
BIN=target/release
[ -x target/release/examples/many_agents ] || cargo build --release -p bai-link --example many_agents
cargo build --profile release -q -p bai-manager --example sched_bench
data="$(mktemp -d /tmp/bai-bench.XXXXXX)"
mkdir -p "$data/agent"
port=$((20000 + RANDOM % 20000))
aport=$((port + 1))
ulimit -n 65536 2>/dev/null || true
BAI_DATA_DIR="$data" BAI_LISTEN="127.0.0.1:$port" BAI_AGENT_LISTEN="127.0.0.1:$aport" \
  BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn "$BIN/baid" up >"$data/out.log" 2>"$data/err.log" &
baid_pid=$!
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  kill "$baid_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  for a in $(grep -o 'agent-[0-9a-f]*' "$data/out.log" | head -1) bench-remote; do
    docker ps -aq --filter "label=ai.bai.agent=$a" | xargs -r docker rm -f >/dev/null
  done
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q "Stop with Ctrl-C" "$data/out.log" 2>/dev/null && break; sleep 0.1; done
local_agent=$(grep -o 'agent-[0-9a-f]*' "$data/out.log" | head -1)
# shellcheck disable=SC1091
. "$data/env-admin.sh"
bai="$BIN/bai"
token=$("$bai" admin agent-token create 2>/dev/null)
BAI_DATA_DIR="$data/agent" BAI_AGENT_TOKEN="$token" BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" agent --manager "127.0.0.1:$aport" --name bench-remote >"$data/agent.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do "$bai" agents | grep -q 'bench-remote .*alive' && break; sleep 0.1; done
now() { date +%s.%N; }
sub() { python3 -c "print(round($1 - $2, 3))"; }
median() { python3 -c 'import sys,statistics; print(round(statistics.median(float(x) for x in sys.argv[1:]), 4))' "$@"; }

echo "== 1. create → RUNNING, remote vs in-process ($ROUNDS rounds, alternating)"
start_on() { "$bai" start -q -t "$2" --assign-agent "$1" -r cpu=0.5 -r mem=256m python >/dev/null; }
start_on "$local_agent" warm-l; start_on bench-remote warm-r; "$bai" rm warm-l >/dev/null; "$bai" rm warm-r >/dev/null
loc=(); rem=()
for i in $(seq 1 "$ROUNDS"); do
  t0=$(now); start_on "$local_agent" "bl-$i"; t1=$(now); start_on bench-remote "br-$i"; t2=$(now)
  loc+=("$(sub $t1 $t0)"); rem+=("$(sub $t2 $t1)")
  "$bai" rm "bl-$i" >/dev/null; "$bai" rm "br-$i" >/dev/null
done
loc_med=$(median "${loc[@]}"); rem_med=$(median "${rem[@]}")
ratio1=$(python3 -c "print(f'{$rem_med/$loc_med:.2f}')")
echo "in-process: ${loc_med}s  remote: ${rem_med}s  ratio ${ratio1}x"

echo "== 2. $AGENTS agents connected"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$baid_pid/stat"; }
hz=$(getconf CLK_TCK)
measure() { # seconds → "cpu% rss_mb"
  local a b; a=$(cpu_ticks); sleep "$1"; b=$(cpu_ticks)
  python3 -c "print(f'{($b-$a)/$hz/$1*100:.2f}', $(awk '/VmRSS/ {print $2}' "/proc/$baid_pid/status")//1024)"
}
read -r cpu0 rss0 <<<"$(measure 30)"
target/release/examples/many_agents "127.0.0.1:$aport" "$token" "$AGENTS" 10000 >"$data/load.log" 2>&1 &
pids+=($!)
want=$((AGENTS + 2))
for _ in $(seq 1 600); do
  n=$("$bai" agents | grep -c ' alive' || true)
  [ "$n" -ge "$want" ] && break
  sleep 1
done
echo "alive agents: $n of $want"
sleep 15
read -r cpu1 rss1 <<<"$(measure 60)"
echo "manager with 2 agents: CPU ${cpu0}% RSS ${rss0} MB; with $n: CPU ${cpu1}% RSS ${rss1} MB"

echo "== 3. the scheduler with $AGENTS agents connected over the link"
kill "${pids[-1]}" 2>/dev/null || true
sched=$(for _ in 1 2 3; do target/release/examples/sched_bench 10000 "$AGENTS" --link; done)
echo "$sched"
read -r in_ps link_ps link_ratio < <(SCHED="$sched" python3 - <<'PY'
import json, os, statistics
runs = [json.loads(l) for l in os.environ["SCHED"].splitlines() if l.strip()]
med = lambda k: statistics.median(r[k] for r in runs)
print(f"{med('placements_per_s'):.0f} {med('link_placements_per_s'):.0f} {med('link_ratio'):.2f}")
PY
)

cat > bench/results/60-remote.md <<MD
## Remote agents (bench/remote.sh)

Latest run ($(date -u +%Y-%m-%d), $(nproc) cores; release build). The remote agent is a
\`baid agent\` on the same machine (TLS over loopback, the same Docker engine), so the ratio is
the link's own cost.

| benchmark | bai | baseline (same run) | ratio | goal |
|---|---|---|---|---|
| create → RUNNING on a remote agent (\`bai start --assign-agent\`), median of $ROUNDS | ${rem_med} s | on the in-process agent ${loc_med} s | ${ratio1}× | ≤ 1.1× |
| manager CPU with $n agents connected, heartbeat 10 s, over 60 s | ${cpu1} % of a core | with 2 agents ${cpu0} % | $(python3 -c "print(f'+{$cpu1-$cpu0:.2f} points')") | ≤ 5 % |
| manager RSS with $n agents connected | ${rss1} MB | with 2 agents ${rss0} MB | $(python3 -c "print(f'{$rss1/max($rss0,1):.2f}')")× | ≤ 200 MB |
| 10,000 PENDING → SCHEDULED (DRF + dispersed, SQLite) onto $AGENTS agents joined over the link (each its own TLS connection, heartbeat 10 s), median of 3 | ${link_ps} placements/s | onto $AGENTS in-process dummy agents ${in_ps}/s | ${link_ratio}× the time | unchanged (≤ 1.1×) |

Row 3 runs the manager's real scheduling pass (\`schedule_pass\`) in
\`crates/bai-manager/examples/sched_bench.rs --link\`: the load process's agents are gone
by then, and the benchmark's own agents dial its agent listener with a join token, as
\`baid agent\` does, and keep heartbeating while the pass runs.
MD
bench/assemble.sh
