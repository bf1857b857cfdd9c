#!/usr/bin/env bash
# Fair share over weeks (issue 58, "What done means", first bullet): a simulation of the
# scheduler pass (bai_sched::pipeline::schedule) on a simulated clock, not of agents.
# 4 dummy agents × 8 GPUs, three projects with shares 2:1:1 keeping the group saturated with
# mixed sessions (1–8 GPUs, limits 10 minutes to a day) for DAYS simulated days; the same
# trace under FIFO, DRF and fairshare in the same run. Goals over the second half (week 2):
# each project's GPU-hours within ±5 % of its share, GPU utilization ≥ 95 % while work waits,
# 8-GPU heads start no later than their reservation.
set -euo pipefail
cd "$(dirname "$0")/.."
DAYS="${DAYS:-14}"
SEED="${SEED:-58}"
cargo run --profile release -q -p bai-sched --example fairshare_trace -- "$DAYS" "$SEED"
