#!/usr/bin/env bash
# Scheduler benchmark (issue "Scheduler"): 10,000 PENDING sessions onto 1,000 dummy agents
# with DRF + dispersed, persisted in SQLite, through the manager's real scheduling pass.
# Baseline in the same run: the bare SQLite compare-and-set of the same 10,000 rows in one
# transaction. Median of ROUNDS runs.        goal ≥ 20,000 placements/s
# The same on PostgreSQL (issue 38; the tests' private cluster, scripts/test-postgres.sh, a
# new database per run), its baseline the bare compare-and-set there. goal ≥ 10,000/s
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-5}"
SESSIONS="${SESSIONS:-10000}"
AGENTS="${AGENTS:-1000}"
cargo build --profile release -q -p bai-manager --example sched_bench
BAI_TEST_POSTGRES="$(scripts/test-postgres.sh)"; export BAI_TEST_POSTGRES
out=$(for _ in $(seq 1 "$ROUNDS"); do
  target/release/examples/sched_bench "$SESSIONS" "$AGENTS"
  target/release/examples/sched_bench "$SESSIONS" "$AGENTS" --postgres
done)
echo "$out"
python3 - "$ROUNDS" "$SESSIONS" "$AGENTS" <<PY > bench/results/20-scheduler.md
import json, statistics, sys, datetime, os
rounds, sessions, agents = sys.argv[1:]
runs = [json.loads(l) for l in """$out""".splitlines() if l.strip().startswith("{")]
def med(engine, k):
    return statistics.median(r[k] for r in runs if r["engine"] == engine)
cores = os.cpu_count()
print("## Scheduler (bench/sched.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {cores} cores; release build), median of {rounds} runs of each engine, alternating. On PostgreSQL the store is fenced as a leading manager's is (the lease taken, every write transaction checking its term first).")
print()
print("| benchmark | bai | baseline (same run) | ratio | goal |")
print("|---|---|---|---|---|")
for engine, name, goal in [("sqlite", "SQLite", "≥ 20,000/s"), ("postgres", "PostgreSQL", "≥ 10,000/s")]:
    passes = max(r["passes"] for r in runs if r["engine"] == engine)
    print(f"| {sessions} PENDING → SCHEDULED on {agents} dummy agents, DRF + dispersed, {name} | "
          f"{med(engine, 'bai_s'):.3f} s, **{med(engine, 'placements_per_s'):,.0f} placements/s**, {passes} pass(es) | "
          f"bare {name} CAS of the same rows {med(engine, 'baseline_s'):.3f} s ({med(engine, 'baseline_per_s'):,.0f}/s) | "
          f"{med(engine, 'ratio'):.2f}× | {goal} |")
print()
print(f"PostgreSQL against SQLite, placements/s: {med('postgres', 'placements_per_s') / med('sqlite', 'placements_per_s'):.2f}×"
      " (the same pass; PostgreSQL here is a local cluster on the same machine, over TCP on loopback).")
print("The PostgreSQL baseline is the bare compare-and-set one row per statement, a round trip each;")
print("bai's pass writes its placements 512 to a statement (\`place_many_tx\`), so it beats that floor.")
print()
print("bai's time includes reading the queue and the agents from the store, the pipeline")
print("(validators, DRF, dispersed selection), and one transaction that writes every placement")
print("with its history record (sub-steps included) and its event. For scale (not measured here):")
print("Nomad's C1M placed about 3,750 containers/s on 5 servers, kube-scheduler's CI floor is")
print("680–810 pods/s at 5,000 nodes, Slurm documents about 500 jobs/s.")
PY
bench/assemble.sh
