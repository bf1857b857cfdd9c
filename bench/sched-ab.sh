#!/usr/bin/env bash
# The scheduler benchmark of this checkout against the same benchmark built from an earlier
# revision, alternating on the same machine (a change must not slow the scheduler down).
#   bench/sched-ab.sh REV      (REV: a commit, e.g. the last landed main)
# The earlier revision is built in a worktree of its own (AB_DIR, default /tmp/bai-ab-REV)
# with its own target dir. Median of ROUNDS alternating runs of each.
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?usage: bench/sched-ab.sh REV}"
ROUNDS="${ROUNDS:-5}"
SESSIONS="${SESSIONS:-10000}"
AGENTS="${AGENTS:-1000}"
dir="${AB_DIR:-/tmp/bai-ab-$rev}"
[ -d "$dir" ] || git worktree add --detach "$dir" "$rev" >/dev/null
(cd "$dir" && CARGO_TARGET_DIR="$dir/target" cargo build --profile release -q -p bai-manager --example sched_bench)
cargo build --profile release -q -p bai-manager --example sched_bench
old="$dir/target/release/examples/sched_bench"
new=target/release/examples/sched_bench
out=$(for _ in $(seq 1 "$ROUNDS"); do
  echo "old $("$old" "$SESSIONS" "$AGENTS")"
  echo "new $("$new" "$SESSIONS" "$AGENTS")"
done)
python3 - "$rev" "$ROUNDS" "$SESSIONS" "$AGENTS" "$(git rev-parse --short HEAD)" <<PY > bench/results/25-scheduler-ab.md
import json, statistics, sys, datetime, os
rev, rounds, sessions, agents, head = sys.argv[1:]
runs = {"old": [], "new": []}
for line in """$out""".splitlines():
    which, js = line.split(" ", 1)
    runs[which].append(json.loads(js)["placements_per_s"])
old, new = statistics.median(runs["old"]), statistics.median(runs["new"])
print("## Scheduler against an earlier revision (bench/sched-ab.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release builds), {rounds} alternating runs each,")
print(f"{sessions} sessions on {agents} dummy agents.")
print()
print("| revision | placements/s (median) | runs | ratio to the earlier revision |")
print("|---|---|---|---|")
print(f"| {rev} (earlier) | {old:,.0f} | {', '.join(f'{x:,}' for x in runs['old'])} | 1.00× |")
print(f"| {head} (this) | {new:,.0f} | {', '.join(f'{x:,}' for x in runs['new'])} | {new/old:.2f}× |")
PY
bench/assemble.sh
