#!/usr/bin/env bash
# Preemption (issue 58, "What done means", second bullet): a simulation of the scheduler pass
# (bai_sched::pipeline::schedule) on a simulated clock, not of agents. 4 agents × 8 GPUs full
# of preemptible batch work started with --requeue; URGENT urgent sessions (priority 80,
# 1–8 GPUs) arrive one every 30 simulated minutes into the full group, which preempts by
# priority with a 60 s grace and runs a pass every 10 s. Goals: each urgent session starts
# within its grace plus one pass; victims no more than it needed (no victim that could have
# been spared); 0 flaps; 0 lost requeued sessions.
set -euo pipefail
cd "$(dirname "$0")/.."
URGENT="${URGENT:-100}"
SEED="${SEED:-58}"
cargo run --profile release -q -p bai-sched --example preemption_trace -- "$URGENT" "$SEED"
