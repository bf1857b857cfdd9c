#!/usr/bin/env bash
# The test cluster's proof, as a person would check it (docs/KUBERNETES.md, "The test
# cluster"): both tiers of scripts/kube-cluster.sh started, used and stopped, with times, and
# the machine checked clean after each (a container of the host's own, running beside them,
# untouched).
#   kubelet tier:  node Ready; a Guaranteed pod from the local image bai/python:3.11-bookworm
#                  (imagePullPolicy Never, 500m / 512Mi, a memory emptyDir at /dev/shm, uid and
#                  gid 1000, no privilege escalation) Running; `kubectl exec`; its HTTP server
#                  reached from the host by pod IP; deleted.
#   API-only tier: a fake Node advertising nvidia.com/gpu: 2; a pod asking for one GPU is
#                  scheduled onto it.
# Needs `kube-cluster.sh build` done. Run as root. Exit 0: every check passed.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
cluster="$here/kube-cluster.sh"
image="${BAI_KUBE_SMOKE_IMAGE:-bai/python:3.11-bookworm}"
now_ms() { date +%s%3N; }
say() { echo "==> $*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# What a stopped cluster may not leave behind: a process, a container, a mount, its folder,
# pod logs, iptables chains, changed kernel settings.
sysctls="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes net/bridge/bridge-nf-call-iptables"
kernel_settings() { for s in $sysctls; do echo "$s=$(cat /proc/sys/$s 2>/dev/null)"; done; }
before_sysctl="$(kernel_settings)"
# A container of the host's own (no dockershim labels): the clusters must leave it alone.
bystander="bai-kube-smoke-bystander-$$"
docker run -d --name "$bystander" --network none --entrypoint sleep "$image" infinity >/dev/null
trap 'docker rm -f "$bystander" >/dev/null 2>&1 || true' EXIT
check_clean() {
  local dir="$1"
  [ ! -e "$dir" ] || fail "$dir is still there"
  ! pgrep -f -- "$dir/" >/dev/null || fail "a process of $dir runs still: $(pgrep -af -- "$dir/")"
  [ -z "$(docker ps -aq --filter label=io.kubernetes.docker.type)" ] || fail "dockershim containers remain: $(docker ps -a --filter label=io.kubernetes.docker.type)"
  ! grep -qF "$dir" /proc/self/mountinfo || fail "mounts remain under $dir"
  ! iptables-save 2>/dev/null | grep -q KUBE || fail "KUBE iptables chains appeared"
  [ "$(kernel_settings)" = "$before_sysctl" ] || fail "kernel settings changed: $(diff <(echo "$before_sysctl") <(kernel_settings))"
  [ -z "$(ls -A /var/log/pods 2>/dev/null)" ] || fail "pod logs remain in /var/log/pods"
  [ "$(docker inspect -f '{{.State.Running}} {{.RestartCount}}' "$bystander")" = "true 0" ] \
    || fail "the host's own container $bystander was disturbed"
  say "clean: no process, container, mount, folder, pod log, iptables chain or kernel setting left of $dir"
}

# ---- the kubelet tier
t=$(now_ms)
kubeconfig="$("$cluster" start)"
start_kubelet_ms=$(( $(now_ms) - t ))
dir="$(dirname "$kubeconfig")"
# shellcheck disable=SC1091
. "$dir/env"
trap '"$cluster" stop "$dir" >/dev/null 2>&1 || true; docker rm -f "$bystander" >/dev/null 2>&1 || true' EXIT
k() { "$KUBECTL" --kubeconfig "$KUBECONFIG" "$@"; }
say "kubelet tier started in ${start_kubelet_ms} ms ($dir)"
k version 2>/dev/null | sed 's/^/    /'
k get nodes -o wide | sed 's/^/    /'
[ "$(k get node "$BAI_KUBE_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ] \
  || fail "node not Ready"

k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: smoke, labels: {app: smoke}}
spec:
  restartPolicy: Never
  securityContext: {runAsUser: 1000, runAsGroup: 1000}
  containers:
  - name: main
    image: $image
    imagePullPolicy: Never
    command: [python3, -m, http.server, "8080"]
    workingDir: /tmp
    resources:
      requests: {cpu: 500m, memory: 512Mi}
      limits: {cpu: 500m, memory: 512Mi}
    securityContext: {allowPrivilegeEscalation: false}
    volumeMounts: [{name: shm, mountPath: /dev/shm}]
  volumes:
  - name: shm
    emptyDir: {medium: Memory}
EOF
t=$(now_ms)
k wait --for=condition=Ready pod/smoke --timeout=120s >/dev/null || { k describe pod smoke; fail "pod not Ready"; }
running_ms=$(( $(now_ms) - t ))
say "pod Running in ${running_ms} ms after create; QoS $(k get pod smoke -o jsonpath='{.status.qosClass}')"
k get pod smoke -o wide | sed 's/^/    /'
out="$(k exec smoke -- python3 -c 'print(6*7)')"
[ "$out" = 42 ] || fail "exec printed '$out'"
say "kubectl exec: python3 -c 'print(6*7)' -> $out"
ids="$(k exec smoke -- id)"
[[ "$ids" == "uid=1000"*"gid=1000"* ]] || fail "runs as $ids"
shm="$(k exec smoke -- sh -c 'grep " /dev/shm " /proc/mounts')"
[[ "$shm" == tmpfs* ]] || fail "/dev/shm is not tmpfs: $shm"
nnp="$(k exec smoke -- grep NoNewPrivs /proc/self/status)"
[[ "$nnp" == *1 ]] || fail "no_new_privs not set: $nnp"
cid="$(docker ps -q --filter label=io.kubernetes.pod.name=smoke --filter label=io.kubernetes.container.name=main)"
limits="$(docker inspect -f '{{.HostConfig.Memory}} {{.HostConfig.NanoCpus}} {{.HostConfig.CpuQuota}}/{{.HostConfig.CpuPeriod}}' "$cid")"
say "in the pod: $ids; /dev/shm ${shm%% *}; $nnp; docker limits (memory nanocpus quota/period): $limits"
[[ "$limits" == 536870912* ]] || fail "memory limit not 512Mi: $limits"
ip="$(k get pod smoke -o jsonpath='{.status.podIP}')"
for _ in $(seq 1 50); do curl -fsS -o /dev/null --max-time 2 "http://$ip:8080/" && break; sleep 0.2; done
code="$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 "http://$ip:8080/")"
[ "$code" = 200 ] || fail "GET http://$ip:8080/ gave $code"
say "from the host: GET http://$ip:8080/ -> $code"
# python3 as PID 1 ignores SIGTERM: a plain delete waits the whole grace period (30 s).
t=$(now_ms)
k delete pod smoke --grace-period=1 --wait=true --timeout=60s >/dev/null
say "pod deleted (grace period 1 s) in $(( $(now_ms) - t )) ms"
[ -z "$(docker ps -aq --filter label=io.kubernetes.pod.name=smoke)" ] || say "(its containers are left for stop to remove)"
t=$(now_ms)
"$cluster" stop "$dir"
say "kubelet tier stopped in $(( $(now_ms) - t )) ms"
trap 'docker rm -f "$bystander" >/dev/null 2>&1 || true' EXIT
check_clean "$dir"

# ---- the API-only tier
t=$(now_ms)
kubeconfig="$("$cluster" start --no-kubelet)"
start_api_ms=$(( $(now_ms) - t ))
dir="$(dirname "$kubeconfig")"
# shellcheck disable=SC1091
. "$dir/env"
trap '"$cluster" stop "$dir" >/dev/null 2>&1 || true; docker rm -f "$bystander" >/dev/null 2>&1 || true' EXIT
say "API-only tier started in ${start_api_ms} ms ($dir)"
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata: {name: fake-gpu, labels: {kubernetes.io/hostname: fake-gpu}}
EOF
hb="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
k patch node fake-gpu --subresource=status --type=merge -p "{\"status\": {
  \"capacity\": {\"cpu\": \"8\", \"memory\": \"32Gi\", \"pods\": \"110\", \"nvidia.com/gpu\": \"2\"},
  \"allocatable\": {\"cpu\": \"8\", \"memory\": \"32Gi\", \"pods\": \"110\", \"nvidia.com/gpu\": \"2\"},
  \"conditions\": [{\"type\": \"Ready\", \"status\": \"True\", \"reason\": \"KubeletReady\",
                    \"lastHeartbeatTime\": \"$hb\", \"lastTransitionTime\": \"$hb\"}]}}" >/dev/null
say "fake node: allocatable nvidia.com/gpu = $(k get node fake-gpu -o jsonpath='{.status.allocatable.nvidia\.com/gpu}')"
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: gpu}
spec:
  containers:
  - name: main
    image: $image
    imagePullPolicy: Never
    resources:
      requests: {cpu: 500m, memory: 512Mi, nvidia.com/gpu: 1}
      limits: {cpu: 500m, memory: 512Mi, nvidia.com/gpu: 1}
EOF
t=$(now_ms)
node=""
for _ in $(seq 1 100); do
  node="$(k get pod gpu -o jsonpath='{.spec.nodeName}')"
  [ -n "$node" ] && break
  sleep 0.1
done
[ "$node" = fake-gpu ] || { k describe pod gpu; fail "the GPU pod was not scheduled to fake-gpu (node '$node')"; }
say "GPU pod scheduled to $node in $(( $(now_ms) - t )) ms"
# A third GPU does not fit: a second pod asking for two stays Pending.
k apply -f - >/dev/null <<EOF
apiVersion: v1
kind: Pod
metadata: {name: gpu2}
spec:
  containers:
  - name: main
    image: $image
    imagePullPolicy: Never
    resources: {limits: {nvidia.com/gpu: 2}}
EOF
sleep 2
reason="$(k get pod gpu2 -o jsonpath='{.status.conditions[?(@.type=="PodScheduled")].reason}')"
[ "$reason" = Unschedulable ] || fail "a pod asking for 2 more GPUs was not Unschedulable ($reason)"
say "a pod asking for 2 more GPUs: $reason ($(k get pod gpu2 -o jsonpath='{.status.conditions[0].message}'))"
t=$(now_ms)
"$cluster" stop "$dir"
say "API-only tier stopped in $(( $(now_ms) - t )) ms"
trap 'docker rm -f "$bystander" >/dev/null 2>&1 || true' EXIT
check_clean "$dir"
say "all checks passed; start: kubelet tier ${start_kubelet_ms} ms, API-only tier ${start_api_ms} ms; pod Running ${running_ms} ms"
