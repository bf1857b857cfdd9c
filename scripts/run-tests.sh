#!/usr/bin/env bash
# Runs every test of the workspace (all binaries, also after a failure) and ends with one
# summary line for all test binaries.
set -uo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-release}"
threads="${TEST_THREADS:-2}"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# FEATURES: the test build's (make test: baid/fault-points, for the crash tests).
features=()
[ -n "${FEATURES:-}" ] && features=(--features "$FEATURES")
cargo test --profile "$profile" --workspace "${features[@]}" --lib --bins --tests --no-fail-fast -- --test-threads="$threads" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
awk '/^test result:/ { for (i = 2; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1) } }
     END { printf "all tests: %d passed, %d failed\n", p, f }' "$log"
exit "$rc"
