#!/usr/bin/env bash
# Fair share over a large account tree (issue 58): the scheduler pass at 10,000 pending ×
# 1,000 dummy agents with the group's scheduler `fairshare`, its sessions from 10 accounts in
# one project (the baseline, same run) against 10,000 users in 200 projects of 10 domains,
# each with a decayed usage of its own and some shares set (`sched_bench --tree`). SQLite
# and PostgreSQL, ROUNDS runs of each, alternating.   goal ≥ 10,000 placements/s, both
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-3}"
cargo build --profile release -q -p bai-manager --example sched_bench
BAI_TEST_POSTGRES="$(scripts/test-postgres.sh)"; export BAI_TEST_POSTGRES
out=$(for _ in $(seq 1 "$ROUNDS"); do
  for engine in "" --postgres; do
    target/release/examples/sched_bench 10000 1000 --fairshare $engine
    target/release/examples/sched_bench 10000 1000 --fairshare --tree $engine
  done
done)
echo "$out"
python3 - "$ROUNDS" <<PY > bench/results/22-scheduler-tree.md
import json, statistics, sys, datetime
rounds = sys.argv[1]
runs = [json.loads(l) for l in """$out""".splitlines() if l.strip().startswith("{")]
def med(engine, accounts, k):
    return statistics.median(r[k] for r in runs if r["engine"] == engine and r["accounts"] == accounts)
print("### Fair share over a large account tree (bench/sched-tree.sh)")
print()
print(f"{datetime.date.today()}, median of {rounds} runs of each, alternating: the fair-share pass over 10,000 pending sessions on 1,000 dummy agents, from 10 accounts in one project (baseline) against 10,000 users in 200 projects of 10 domains, each with a decayed usage and some shares set (\`sched_bench --fairshare --tree\`).")
print()
print("| engine | 10 accounts (baseline) | 10,000 accounts | ratio | goal |")
print("|---|---|---|---|---|")
for engine, name in [("sqlite", "SQLite"), ("postgres", "PostgreSQL")]:
    flat = med(engine, 10, "placements_per_s")
    tree = med(engine, 10000, "placements_per_s")
    goal = "≥ 10,000/s: met" if tree >= 10000 else "≥ 10,000/s: not met in this run"
    print(f"| {name} | {flat:,.0f} placements/s ({med(engine, 10, 'bai_s'):.3f} s) | **{tree:,.0f} placements/s** ({med(engine, 10000, 'bai_s'):.3f} s) | {tree / flat:.2f}× | {goal} |")
PY
cat bench/results/22-scheduler-tree.md
