#!/usr/bin/env bash
# `make chaos`: the full runs of docs/RELIABILITY.md's promises, bounded in time, on loopback
# and this machine's own Docker engine only. `make test` runs each once, smaller; this runs
# the crash-and-retry test and every crash point RUNS times (default 20), 500 creates in bursts of 50, the
# authorization matrix, the confinement test, schemathesis with 40 examples per operation
# and a million seeded inputs per fuzz target, and prints one figure line per promise.
set -uo pipefail
cd "$(dirname "$0")/.."
runs="${RUNS:-20}"
profile="${PROFILE:-release}"
features=(--features "${FEATURES:-baid/fault-points}")
cargo build --profile "$profile" --workspace "${features[@]}" --bins --tests >/dev/null || exit 1
PROFILE="$profile" scripts/build-krunner.sh >/dev/null || exit 1
scripts/build-images.sh --wait || exit 1
# The test binaries run target/$profile/baid as built above, fault points included.
t() { cargo test --profile "$profile" -p "$1" --test "$2" -- --test-threads=1 --nocapture "${@:3}" 2>&1; }

ok=0
for i in $(seq 1 "$runs"); do
  if t bai-e2e reliability a_create_cut_off | grep -q "test result: ok. 1 passed"; then ok=$((ok + 1)); fi
done
echo "crash during create, retried: $runs runs, $runs manager SIGKILLs (+$runs during clientSessionToken), $((runs - ok)) failed (a failure is a session lost or doubled)"

# SIGKILL at every fault point (each status change, the scheduler pass, the agent's steps).
BAI_CRASH_RUNS="$runs" t bai-e2e crash_points | grep -oE "CRASH.*|test result.*"
# The same inside a `baid agent` process, restarted while its manager runs on.
BAI_CRASH_RUNS="$runs" t bai-e2e agent_crash_points | grep -oE "CRASH.*|test result.*"

BAI_BURST_TOTAL=500 BAI_BURST_SIZE=50 t bai-e2e reliability bursts_of_creates | grep -oE "BURST.*|test result.*"
t bai-manager authz_matrix | grep -E "test result"
t bai-e2e confinement | grep -E "test result"
# schemathesis, 40 examples per operation and role, a random seed.
ST_MAX_EXAMPLES="${ST_MAX_EXAMPLES:-40}" ST_TIMEOUT="${ST_TIMEOUT:-1800}" scripts/schemathesis.sh 2>/dev/null | grep -E "^schemathesis: "
# The fuzz targets, seeded mutations on stable (make fuzz runs them under libFuzzer).
BAI_FUZZ_RUNS="${BAI_FUZZ_RUNS:-1000000}" t bai-fuzz bounded | grep -E "mutations|test result"
