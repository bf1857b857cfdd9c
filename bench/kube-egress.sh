#!/usr/bin/env bash
# What `--network-policies node` costs on the Kubernetes backend, in one run on this machine:
# one manager, two Kubernetes agents on the same node in two resource groups: `open` (egress
# open, the agent enforces nothing) and `gated` (egress default, `--network-policies node`:
# each kernel pod waits at its gate until the agent has loaded its nftables table). Rounds
# alternate `bai run --rm -c 'print(1)'`: cold on `open`, cold on `gated`, and from
# `gated`'s warm pool (a pool pod under the pool's table, the session's loaded at the claim);
# wall time and create → RUNNING from the status history, ROUNDS each.
#   bench/kube-egress.sh      (release build and the python image first: make bench does both)
set -euo pipefail
cd "$(dirname "$0")/.."
export BAI_WARM_POOLS=off
ROUNDS="${ROUNDS:-10}"
BIN="$PWD/target/release"
NS="bai-bench-eg-$$"
work="$(mktemp -d /tmp/bai-kegress.XXXXXX)"
pids=()
started_cluster=
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [ -n "${KUBECONFIG:-}" ]; then
    kubectl delete namespace "$NS-open" "$NS-gated" --wait=false >/dev/null 2>&1 || true
  fi
  [ -n "$started_cluster" ] && scripts/kube-cluster.sh stop "$started_cluster" >/dev/null 2>&1 || true
  # The pools' shared kernels mount (the agent makes its kernels directory one).
  awk -v w="$work/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

running="$(cat /run/bai-kube/kubelet-cluster 2>/dev/null || true)"
if [ -n "$running" ] && [ -f "$running/kubeconfig" ]; then
  kdir="$running"
else
  kdir="$work/kube"
  scripts/kube-cluster.sh start "$kdir" >/dev/null
  started_cluster="$kdir"
fi
# shellcheck disable=SC1091
. "$kdir/env"
export KUBECONFIG

wait_line() { # FILE TEXT
  for _ in $(seq 1 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "timed out waiting for '$2' in $1" >&2; cat "$1" >&2; exit 1
}

mport=$((20000 + RANDOM % 10000)); aport=$((mport + 1))
mkdir -p "$work/m"
BAI_DATA_DIR="$work/m" BAI_LISTEN="127.0.0.1:$mport" BAI_AGENT_LISTEN="127.0.0.1:$aport" \
  BAI_NO_LOCAL_AGENT=true BAI_WARM_POOLS=on BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$work/m/out.log" 2>"$work/m/err.log" &
pids+=($!)
wait_line "$work/m/out.log" "Stop with Ctrl-C"
bai="$BIN/bai"
as_admin() { (set -a; . "$work/m/env-admin.sh"; "$bai" "$@"); }
as_user() { (set -a; . "$work/m/env-user.sh"; "$bai" "$@"); }
as_admin admin resource-group update default --egress open --warm-pool-auto 0 >/dev/null
as_admin admin resource-group create gated --public true --egress default --warm-pool-auto 0 >/dev/null

agent() { # NAME GROUP [FLAG…]
  local name="$1" group="$2"; shift 2
  mkdir -p "$work/$name"
  token="$(as_admin admin agent-token create --group "$group" | tr -d '[:space:]')"
  BAI_DATA_DIR="$work/$name" BAI_AGENT_TOKEN="$token" BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
    "$BIN/baid" agent --manager "127.0.0.1:$aport" --name "$name" --group "$group" --heartbeat 1s \
    --backend kubernetes --kubeconfig "$KUBECONFIG" --namespace "$NS-$group" "$@" \
    >"$work/$name/out.log" 2>&1 &
  local pid=$!
  pids+=($pid)
  for _ in $(seq 1 600); do
    as_admin agents 2>/dev/null | grep -q "$name.*alive" && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.2
  done
  echo "agent $name did not join" >&2; cat "$work/$name/out.log" >&2; exit 1
}
agent kube-open default
agent kube-gated gated --network-policies node
now() { date +%s.%N; }
run() { # NAME GROUP MEM
  as_user run --rm -q -t "$1" --scaling-group "$2" -r cpu=0.25 -r "mem=$3" -c 'print(1)' python >/dev/null
}

# Warm-up: each path's first run.
run warm-open default 255m
run warm-gated gated 255m

as_admin admin resource-group update gated --warm-pool "python,cpu=0.25,mem=256m,count=1" >/dev/null
# The gated agent's pool: one pod ready, and its hits at least CLAIMS (a report from before
# the last claim would still say ready).
claims=0
gated_pool() { as_admin agents 2>/dev/null | awk '/^kube-gated/ {on=1; print; next} /^[^ ]/ {on=0} on'; }
pool_ready() {
  for _ in $(seq 1 1200); do
    out=$(gated_pool)
    hits=$(echo "$out" | grep -o "[0-9]* hits" | head -1 | grep -o "[0-9]*" || true)
    echo "$out" | grep -q "1 of 1 ready" && [ "${hits:-0}" -ge "$claims" ] && return 0
    sleep 0.1
  done
  echo "the pool pod was not ready" >&2; as_admin agents >&2; cat "$work/kube-gated/out.log" >&2; exit 1
}
: >"$work/runs"
for i in $(seq 1 "$ROUNDS"); do
  t0=$(now); run "open-$i" default 255m; t1=$(now); echo "open $t0 $t1" >>"$work/runs"
  t0=$(now); run "gated-$i" gated 255m; t1=$(now); echo "gated $t0 $t1" >>"$work/runs"
  pool_ready
  t0=$(now); run "pool-$i" gated 256m; t1=$(now); echo "pool $t0 $t1" >>"$work/runs"
  claims=$((claims + 1))
done
: >"$work/history"
for i in $(seq 1 "$ROUNDS"); do
  for k in open gated pool; do
    { echo "== $k"; as_user session history "$k-$i" 2>/dev/null || true; } >>"$work/history"
  done
done
# The agent reports its hits with its next heartbeat: wait for the last claim's (it was read
# at once before, and the last hit was not counted yet: "9 hits of 10" while no pooled run
# had gone cold, p99 0.48 s).
pool_ready
hits=$(gated_pool | grep -o "[0-9]* hits" | head -1 || true)
loaded=$(grep -c "egress rules loaded" "$work/kube-gated/out.log" || true)
as_admin admin resource-group update gated --warm-pool "" >/dev/null

python3 - "$work" "$ROUNDS" "$BAI_KUBE_VERSION" "$hits" <<'PY' > bench/results/29b-kube-egress.md
import datetime, statistics, sys
work, rounds, version, hits = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4] or "?"
runs = {}
for l in open(f"{work}/runs"):
    k, a, b = l.split()
    runs.setdefault(k, []).append(float(b) - float(a))
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
starts, cur, seen = {k: [] for k in runs}, None, {}
def flush():
    if cur and "PENDING" in seen and "RUNNING" in seen:
        starts[cur].append(seen["RUNNING"] - seen["PENDING"])
for line in open(f"{work}/history"):
    p = line.split()
    if not p:
        continue
    if p[0] == "==":
        flush(); cur, seen = p[1], {}
    elif len(p) == 2 and p[0].isupper():
        seen.setdefault(p[0], datetime.datetime.fromisoformat(p[1].replace("Z", "+00:00")).timestamp())
flush()
p50 = {k: statistics.median(v) for k, v in runs.items()}
s50 = {k: statistics.median(v) for k, v in starts.items() if v}
print(f"# `--network-policies node` on Kubernetes (bench/kube-egress.sh), {datetime.date.today()}, {rounds} rounds\n")
print(f"Kubernetes {version}, one node (kubelet on this machine's Docker engine), 2 cores; two agents "
      "of one manager on that node: `open` (egress open, nothing enforced) and `gated` (egress "
      "default, `--network-policies node`). Alternating rounds.\n")
print("| path | p50 s | p99 s | create → RUNNING p50 ms | p99 ms |")
print("|---|---|---|---|---|")
names = {"open": "`bai run --rm -c 'print(1)'`, cold, nothing enforced",
         "gated": "the same, cold, the pod's table loaded before the kernel starts",
         "pool": "the same, from the gated agent's warm pool (the session's table at the claim)"}
for k in ["open", "gated", "pool"]:
    xs = starts[k]
    c50 = f"{statistics.median(xs) * 1000:.0f}" if xs else "-"
    c99 = f"{pct(xs, 0.99) * 1000:.0f}" if xs else "-"
    print(f"| {names[k]} | {p50[k]:.2f} | {pct(runs[k], 0.99):.2f} | {c50} | {c99} |")
print(f"\n**Cold, gated / open: {p50['gated'] / p50['open']:.2f}×** (create → RUNNING "
      f"{s50['gated'] / s50['open']:.2f}×); **from the pool / cold, gated: {p50['pool'] / p50['gated']:.2f}×**; "
      f"the gated agent counted {hits} (of {rounds} pooled runs).")
print("\nWhere a gated cold start's extra time goes: the runner waits at its gate until the agent "
      "has loaded the pod's table, and the agent learns which process's namespace that is only "
      "when the kubelet reports the kernel's container running, at its next relist (about a "
      "second). A warm pool pays that before anyone asks.")
PY
cat bench/results/29b-kube-egress.md
