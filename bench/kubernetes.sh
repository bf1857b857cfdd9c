#!/usr/bin/env bash
# The Kubernetes backend against Kubernetes itself and against the Docker backend, in one run
# on this machine (issue 57, "What done means"):
# 1. `bai run --rm -q -c 'print(1)' python` on a manager whose only agent is
#    `baid agent --backend kubernetes`, against a pod of the same image made and deleted
#    directly through the API server (create → watch until Succeeded → read its log →
#    delete, grace 0 → watch until gone; bench/kube-pod.py), alternating, ROUNDS each;
# 2. create → RUNNING (the session's status history) on that Kubernetes agent and on a
#    Docker agent (`baid up`'s own, warm pools off) of the same machine, p50 and p99;
# 3. BURST sessions at once on the Kubernetes group: all RUNNING, the agent's RSS then, all
#    removed, and nothing of bai left in the namespace;
# 4. the warm pool on Kubernetes: `bai run --rm -c 'print(1)'` of a pooled shape (a pool pod
#    ready before each), the same with a data folder (mounted into the pool pod at the
#    claim), and the same with a shape no pool holds, alternating, ROUNDS each, and their
#    create → RUNNING.
# The cluster is scripts/kube-cluster.sh's (started here unless one runs already).
#   bench/kubernetes.sh       (release build and the python image first: make bench does both)
set -euo pipefail
cd "$(dirname "$0")/.."
export BAI_WARM_POOLS=off
ROUNDS="${ROUNDS:-10}"
BURST="${BURST:-20}"
BIN="$PWD/target/release"
IMAGE=bai/python:3.11-bookworm
NS="bai-bench-$$"
work="$(mktemp -d /tmp/bai-kbench.XXXXXX)"
pids=()
started_cluster=
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -n "${KUBECONFIG:-}" ] && kubectl delete namespace "$NS" --wait=false >/dev/null 2>&1 || true
  [ -n "$started_cluster" ] && scripts/kube-cluster.sh stop "$started_cluster" >/dev/null 2>&1 || true
  docker ps -aq --filter "label=ai.bai.agent" --filter "name=bai-" | xargs -r docker rm -f >/dev/null 2>&1 || true
  # The pools' shared kernels mount and staging place (and any folder a claim mounted).
  awk -v w="$work/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The cluster.
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

# A manager with no agent of its own, and the Kubernetes agent.
mport=$((20000 + RANDOM % 10000)); aport=$((mport + 1))
mkdir -p "$work/m" "$work/a"
# Data folders on a storage host the node mounts at the same path (as NFS would be).
mkdir -p "$work/nfs"
storage="nfs:shared=$work/nfs"
BAI_DATA_DIR="$work/m" BAI_LISTEN="127.0.0.1:$mport" BAI_AGENT_LISTEN="127.0.0.1:$aport" \
  BAI_STORAGE_HOSTS="$storage" BAI_DEFAULT_STORAGE_HOST=nfs:shared \
  BAI_NO_LOCAL_AGENT=true BAI_WARM_POOLS=on BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$work/m/out.log" 2>"$work/m/err.log" &
pids+=($!)
wait_line "$work/m/out.log" "Stop with Ctrl-C"
bai="$BIN/bai"
as_admin() { (set -a; . "$work/m/env-admin.sh"; "$bai" "$@"); }
# Pools on, but none until part 4 (the automatic mode off).
as_admin admin resource-group update default --egress open --warm-pool-auto 0 >/dev/null
token="$(as_admin admin agent-token create | tr -d '[:space:]')"
BAI_DATA_DIR="$work/a" BAI_AGENT_TOKEN="$token" BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" agent --manager "127.0.0.1:$aport" --name kube-bench --heartbeat 1s \
  --backend kubernetes --kubeconfig "$KUBECONFIG" --namespace "$NS" --storage-host "$storage" \
  >"$work/a/out.log" 2>&1 &
kagent=$!
pids+=($kagent)
for _ in $(seq 1 600); do
  as_admin agents 2>/dev/null | grep -q "kube-bench.*alive" && break
  sleep 0.2
done
as_admin agents | grep -q "kube-bench.*alive" || { echo "the agent did not join" >&2; cat "$work/a/out.log" >&2; exit 1; }

# The Docker backend: `baid up`'s own agent on this machine's engine.
dport=$((mport + 2))
mkdir -p "$work/d"
BAI_DATA_DIR="$work/d" BAI_LISTEN="127.0.0.1:$dport" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$work/d/out.log" 2>"$work/d/err.log" &
pids+=($!)
wait_line "$work/d/out.log" "Stop with Ctrl-C"
on_k8s() { (set -a; . "$work/m/env-user.sh"; "$bai" "$@"); }
on_docker() { (set -a; . "$work/d/env-user.sh"; "$bai" "$@"); }
now() { date +%s.%N; }

# Warm-up: the image on the node, each path's first run.
on_k8s run --rm -q -c 'print(1)' python >/dev/null
on_docker run --rm -q -c 'print(1)' python >/dev/null
python3 bench/kube-pod.py "$kdir" "$NS" "$IMAGE" warm >/dev/null

: >"$work/runs"
for i in $(seq 1 "$ROUNDS"); do
  t0=$(now); on_k8s run --rm -q -t "kube-$i" -c 'print(1)' python >/dev/null; t1=$(now)
  echo "bai-k8s $t0 $t1" >>"$work/runs"
  t0=$(now); python3 bench/kube-pod.py "$kdir" "$NS" "$IMAGE" "direct-$i" >/dev/null; t1=$(now)
  echo "pod-api $t0 $t1" >>"$work/runs"
  t0=$(now); on_docker run --rm -q -t "dock-$i" -c 'print(1)' python >/dev/null; t1=$(now)
  echo "bai-docker $t0 $t1" >>"$work/runs"
done
: >"$work/history"
for i in $(seq 1 "$ROUNDS"); do
  { echo "== k8s"; on_k8s session history "kube-$i" 2>/dev/null || true; } >>"$work/history"
  { echo "== docker"; on_docker session history "dock-$i" 2>/dev/null || true; } >>"$work/history"
done

# BURST sessions at once.
t0=$(now)
starts=()
for i in $(seq 1 "$BURST"); do
  on_k8s start -q -t "burst-$i" -r cpu=0.05 -r mem=96m python >/dev/null 2>>"$work/burst.err" &
  starts+=($!)
done
wait_all_started() {
  for _ in $(seq 1 1800); do
    n=$(on_k8s ps --all 2>/dev/null | grep -c "burst-.*RUNNING" || true)
    [ "$n" -ge "$BURST" ] && return 0
    sleep 0.5
  done
  return 1
}
# The `bai start`s first (not `wait` alone: the managers and the agent are jobs too).
for p in "${starts[@]}"; do wait "$p" || true; done
burst_ok=yes
wait_all_started || burst_ok="no ($(on_k8s ps --all 2>/dev/null | grep -c 'burst-.*RUNNING' || true) of $BURST RUNNING)"
t1=$(now)
# A session runs once its runner answers; the kubelet reports its pod Running at its next
# relist (within a second or so): wait for that report before counting.
pods_running=0
for _ in $(seq 1 120); do
  pods_running=$(kubectl get pods -n "$NS" -l app.kubernetes.io/managed-by=bai --no-headers 2>/dev/null | grep -c Running || true)
  [ "$pods_running" -ge "$BURST" ] && break
  sleep 0.5
done
rss_kb=$(awk '/VmRSS/ {print $2}' "/proc/$kagent/status")
for i in $(seq 1 "$BURST"); do on_k8s rm "burst-$i" >/dev/null 2>&1 || true; done
left=-1
for _ in $(seq 1 600); do
  left=$(kubectl get pods,services,configmaps,secrets,pvc -n "$NS" -l app.kubernetes.io/managed-by=bai --no-headers 2>/dev/null | wc -l)
  [ "$left" -eq 0 ] && break
  sleep 0.5
done
t2=$(now)
echo "burst $BURST $burst_ok $pods_running $rss_kb $left $t0 $t1 $t2" >"$work/burst"

# The warm pool: a pooled shape against one no pool holds.
as_admin admin resource-group update default --warm-pool "python,cpu=0.25,mem=256m,count=1" >/dev/null
on_k8s vfolder create data >/dev/null
# Ready again after the last claim: one report that counts every claim so far and a ready
# pod (a report from before the claim would still say ready).
claims=0
pool_ready() {
  for _ in $(seq 1 1200); do
    out=$(as_admin agents 2>/dev/null)
    hits=$(echo "$out" | grep -o "[0-9]* hits" | head -1 | grep -o "[0-9]*" || true)
    echo "$out" | grep -q "1 of 1 ready" && [ "${hits:-0}" -ge "$claims" ] && return 0
    sleep 0.1
  done
  echo "the pool pod was not ready" >&2; cat "$work/a/out.log" >&2; exit 1
}
for i in $(seq 1 "$ROUNDS"); do
  pool_ready
  t0=$(now); on_k8s run --rm -q -t "pool-$i" -r cpu=0.25 -r mem=256m -c 'print(1)' python >/dev/null; t1=$(now)
  echo "pool-hit $t0 $t1" >>"$work/runs"
  claims=$((claims + 1))
  pool_ready
  t0=$(now); on_k8s run --rm -q -t "folder-$i" -r cpu=0.25 -r mem=256m -m data -c 'print(1)' python >/dev/null; t1=$(now)
  echo "pool-folder $t0 $t1" >>"$work/runs"
  claims=$((claims + 1))
  pool_ready
  t0=$(now); on_k8s run --rm -q -t "cold-$i" -r cpu=0.25 -r mem=255m -c 'print(1)' python >/dev/null; t1=$(now)
  echo "pool-cold $t0 $t1" >>"$work/runs"
done
for i in $(seq 1 "$ROUNDS"); do
  { echo "== pool"; on_k8s session history "pool-$i" 2>/dev/null || true; } >>"$work/history"
  { echo "== folder"; on_k8s session history "folder-$i" 2>/dev/null || true; } >>"$work/history"
  { echo "== cold"; on_k8s session history "cold-$i" 2>/dev/null || true; } >>"$work/history"
done
hits=$(as_admin agents 2>/dev/null | grep -o "[0-9]* hits" | head -1 || true)
as_admin admin resource-group update default --warm-pool "" >/dev/null
echo "$hits" >"$work/hits"

python3 - "$work" "$ROUNDS" "$BAI_KUBE_VERSION" <<'PY' > bench/results/29-kubernetes.md
import datetime, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
runs = {}
for l in open(f"{work}/runs"):
    k, a, b = l.split()
    runs.setdefault(k, []).append(float(b) - float(a))
def pct(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
p50 = {k: statistics.median(v) for k, v in runs.items()}
# create → RUNNING from the status history.
starts, cur, seen = {"k8s": [], "docker": [], "pool": [], "folder": [], "cold": []}, None, {}
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
b = open(f"{work}/burst").read().split()
n, ok, pods, rss_kb, left = b[1], b[2], b[3], int(b[4]), b[5]
t0, t1, t2 = map(float, b[-3:])
print(f"# The Kubernetes backend (bench/kubernetes.sh), {datetime.date.today()}, {rounds} rounds\n")
print(f"Kubernetes {sys.argv[3]}, one node (kubelet on this machine's Docker engine, dockershim), 2 cores.\n")
print("| path | p50 s | p99 s |")
print("|---|---|---|")
names = {"bai-k8s": "`bai run --rm -c 'print(1)'`, Kubernetes backend",
         "pod-api": "the same image as a pod through the API (create, wait, log, delete)",
         "bai-docker": "`bai run --rm -c 'print(1)'`, Docker backend"}
for k in ["bai-k8s", "pod-api", "bai-docker"]:
    print(f"| {names[k]} | {p50[k]:.2f} | {pct(runs[k], 0.99):.2f} |")
print(f"\n**bai on Kubernetes / a pod through the API: {p50['bai-k8s'] / p50['pod-api']:.2f}×** (p50; goal ≤ 1.2×). "
      f"bai on Kubernetes / bai on Docker: {p50['bai-k8s'] / p50['bai-docker']:.2f}×.\n")
print("create → RUNNING (status history, PENDING to RUNNING):\n")
print("| backend | n | p50 ms | p99 ms |")
print("|---|---|---|---|")
for k in ["k8s", "docker"]:
    xs = starts[k]
    if xs:
        print(f"| {k} | {len(xs)} | {statistics.median(xs) * 1000:.0f} | {pct(xs, 0.99) * 1000:.0f} |")
hits = open(f"{work}/hits").read().strip() or "?"
print("\nThe warm pool on Kubernetes (a pool of one pod, `python,cpu=0.25,mem=256m`, ready before "
      "each pooled run; the runs with a data folder (`-m data`) take it too, the folder mounted "
      "at the claim; the cold runs ask for 255m, a shape no pool holds):\n")
print("| path | p50 s | p99 s | create → RUNNING p50 ms | p99 ms |")
print("|---|---|---|---|---|")
for k, h, name in [("pool-hit", "pool", "`bai run --rm -c 'print(1)'`, from the pool"),
                   ("pool-folder", "folder", "`bai run --rm -m data -c 'print(1)'`, from the pool"),
                   ("pool-cold", "cold", "`bai run --rm -c 'print(1)'`, cold")]:
    xs = starts[h]
    c50 = f"{statistics.median(xs) * 1000:.0f}" if xs else "-"
    c99 = f"{pct(xs, 0.99) * 1000:.0f}" if xs else "-"
    print(f"| {name} | {p50[k]:.2f} | {pct(runs[k], 0.99):.2f} | {c50} | {c99} |")
print(f"\n**From the pool / cold: {p50['pool-hit'] / p50['pool-cold']:.2f}×**, with a data folder "
      f"{p50['pool-folder'] / p50['pool-cold']:.2f}× (p50 of the whole run); the agent counted {hits} "
      f"(of {2 * rounds} pooled runs).")
print(f"\n{n} sessions at once on the Kubernetes group (cpu 0.05, mem 96m each): all RUNNING: {ok}, "
      f"pods the kubelet then reports Running: {pods}, in {t1 - t0:.1f} s; the agent's RSS with them: {rss_kb / 1024:.1f} MiB; "
      f"after `bai rm` of all: objects of bai left in the namespace: {left} ({t2 - t1:.1f} s).")
PY
cat bench/results/29-kubernetes.md
