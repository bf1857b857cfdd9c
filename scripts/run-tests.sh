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
# The tests' private PostgreSQL cluster (Debian's postgresql): the store's suite and the
# manager's run on it too, and the end-to-end tests start managers on it.
# Managers started by the tests keep no warm pools unless a test asks (BAI_WARM_POOLS=on):
# pool kernels are containers of their own, which tests that count an agent's containers
# would see, and refills are work beside the test on a 2-core machine.
export BAI_WARM_POOLS=off
BAI_TEST_POSTGRES="$(scripts/test-postgres.sh)" || exit 1
export BAI_TEST_POSTGRES
cargo test --profile "$profile" --workspace "${features[@]}" --lib --bins --tests --no-fail-fast -- --test-threads="$threads" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
# The same store and manager tests again on PostgreSQL (BAI_TEST_STORE: bai_store::testing),
# running the binaries the pass above built (a cargo call of its own would build them anew).
echo "==> the store's and the manager's tests on PostgreSQL"
cargo test --profile "$profile" --workspace "${features[@]}" --lib --tests --no-run --message-format=json 2>/dev/null \
  | python3 -c '
import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    crate = os.path.dirname(m.get("manifest_path", ""))
    if m.get("reason") == "compiler-artifact" and m.get("executable") and os.path.basename(crate) in ("bai-store", "bai-manager"):
        print(crate, m["executable"])
' >"$log.pg"
while read -r dir exe; do
  echo "     Running $exe on PostgreSQL"
  (cd "$dir" && BAI_TEST_STORE=postgres "$exe" --test-threads="$threads") 2>&1 | tee -a "$log"
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done <"$log.pg"
rm -f "$log.pg"
awk '/^test result:/ { for (i = 2; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1) } }
     END { printf "all tests: %d passed, %d failed\n", p, f }' "$log"
exit "$rc"
