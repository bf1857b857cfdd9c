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
# The tests' private PostgreSQL cluster (Debian's postgresql): the store's, the control
# plane's and the manager's suites run on it too, and the end-to-end tests start managers on
# it.
# Managers started by the tests keep no warm pools unless a test asks (BAI_WARM_POOLS=on):
# pool kernels are containers of their own, which tests that count an agent's containers
# would see, and refills are work beside the test on a 2-core machine.
export BAI_WARM_POOLS=off
BAI_TEST_POSTGRES="$(scripts/test-postgres.sh)" || exit 1
export BAI_TEST_POSTGRES
# The kernels' SSH server (scripts/build-sshd.sh: a minute the first time, then cached) is
# built beside the workspace, at the lowest priority; the runner's build below waits for it.
nice -n 19 env PROFILE="$profile" scripts/build-sshd.sh >"$log.sshd" 2>&1 &
# Build every test binary first (diagnostics as usual on stderr), then run them side by side
# in TEST_LANES lanes (scripts/test-lanes.py: the slowest first, each binary's output whole
# once it ends). The store's, the control plane's and the manager's binaries run a second
# time on PostgreSQL (BAI_TEST_STORE: bai_store::testing).
# `cargo build --bins --tests`, not `cargo test --no-run`: the latter builds a crate's binaries
# only where that crate has integration tests of its own (baid has none), and the end-to-end
# tests start target/$profile/baid. One build, one feature set: the binaries are built with the
# tests' dev-dependency features, so nothing is compiled twice.
cargo build --profile "$profile" --workspace "${features[@]}" --lib --bins --tests \
  --message-format=json-render-diagnostics >"$log.json" || { rm -f "$log.json"; exit 101; }
# The kernel runner linked statically, over the workspace build's dynamic one.
PROFILE="$profile" scripts/build-krunner.sh || { rm -f "$log.json"; exit 101; }
wait
cat "$log.sshd" >&2
rm -f "$log.sshd"
# The kernel images, built in the background since `make test` began (scripts/ensure-deps.sh).
scripts/build-images.sh --wait || { rm -f "$log.json"; exit 1; }
for bin in baid bai bai-krunner; do
  [ -x "target/$profile/$bin" ] || { echo "run-tests.sh: the build left no target/$profile/$bin" >&2; exit 101; }
done
python3 - "$log.json" >"$log.jobs" <<'PY'
import json, os, sys
for line in open(sys.argv[1], encoding="utf-8"):
    if not line.startswith("{"):
        continue
    m = json.loads(line)
    # Test harnesses only: the binaries themselves (bai, baid, bai-krunner) are built too, for
    # the integration tests, with profile.test false.
    if m.get("reason") != "compiler-artifact" or not m.get("executable"):
        continue
    if not m.get("profile", {}).get("test"):
        continue
    crate = os.path.dirname(m["manifest_path"])
    # path+file:///…/tests#bai-e2e@0.1.0, or path+file:///…/crates/bai-store#0.1.0
    tail = m["package_id"].rsplit("#", 1)[-1]
    package = tail.split("@")[0] if "@" in tail else os.path.basename(crate)
    t = m["target"]
    kind = "unittests" if t["kind"][0] in ("lib", "bin") else "tests"
    name = f"{package}/{t['name']}"
    label = f"{package} {kind} {t['name']}"
    print(f"{name}\t{label}\t{crate}\t{m['executable']}")
    if package in ("bai-store", "bai-control", "bai-manager"):
        print(f"{name}@pg\t{label} on PostgreSQL\t{crate}\t{m['executable']}\tBAI_TEST_STORE=postgres")
PY
rm -f "$log.json"
# The tests' Kubernetes (scripts/kube-cluster.sh, docs/KUBERNETES.md): built once per machine
# (cached outside the clone), one cluster with a kubelet on this Docker engine for all the
# tests (BAI_TEST_KUBECONFIG; each test works in a namespace of its own), stopped at the end.
# BAI_TEST_KUBE=off: none (its tests then start their own, one at a time per machine).
kube_dir=/var/tmp/bai-test-kube
if [ "${BAI_TEST_KUBE:-on}" = off ]; then
  echo "==> BAI_TEST_KUBE=off: no Kubernetes for all the tests" >&2
elif scripts/kube-cluster.sh build >&2 && scripts/kube-cluster.sh start "$kube_dir" >/dev/null; then
  export BAI_TEST_KUBECONFIG="$kube_dir/kubeconfig"
  trap 'scripts/kube-cluster.sh stop "$kube_dir" >/dev/null 2>&1; rm -f "$log"' EXIT
else
  echo "==> the tests' Kubernetes did not start (above); its tests start their own" >&2
fi
TEST_THREADS="$threads" python3 scripts/test-lanes.py <"$log.jobs" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
rm -f "$log.jobs"
awk '/^test result:/ { for (i = 2; i <= NF; i++) { if ($i ~ /^passed;?$/) p += $(i-1); if ($i ~ /^failed;?$/) f += $(i-1) } }
     END { printf "all tests: %d passed, %d failed\n", p, f }' "$log"
exit "$rc"
