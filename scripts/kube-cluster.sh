#!/usr/bin/env bash
# A real single-node Kubernetes for the kubernetes backend's tests, built from Debian 12's
# `kubernetes` source package (upstream v1.20.2 with vendor/; no registry ships the server
# binaries and no image can be pulled here). See docs/KUBERNETES.md, "The test cluster".
#
#   kube-cluster.sh build                    builds and caches the binaries (once per machine)
#   kube-cluster.sh build-background         the same at the lowest CPU priority, in the
#                                            background (log /var/tmp/bai-kube-build.log); a
#                                            `build` meanwhile waits for it
#   kube-cluster.sh start [--no-kubelet] [DIR]
#                                            starts a cluster whose state lives in DIR (default
#                                            a new /var/tmp/bai-kube.XXXXXX); prints DIR/kubeconfig
#   kube-cluster.sh stop DIR                 stops it and removes everything it made, DIR too
#   kube-cluster.sh status DIR               says what runs (exit 0: all of it, and the API answers)
#
# `start` writes DIR/kubeconfig (admin, system:masters) and DIR/env (sourceable: KUBECONFIG,
# BAI_KUBE_SERVER, BAI_KUBE_NODE, BAI_KUBE_NODE_IP, BAI_KUBE_TIER, BAI_KUBE_PIDS, KUBECTL).
# `start` on a DIR whose cluster runs already only prints its kubeconfig.
# --no-kubelet: etcd, kube-apiserver, controller-manager and scheduler only (the "API server
# alone" tier: a test registers a fake Node itself). With a kubelet: dockershim on the running
# Docker engine, pods on the docker0 bridge, reachable from the host by pod IP. Only one
# kubelet cluster may run on a machine at a time (two dockershims would take each other's pod
# containers for orphans); API-only clusters can run side by side.
#
#   BAI_KUBE_CACHE   where the built binaries are kept (default /var/cache/bai-kube), one
#                    folder per source version, outside any checkout so that fresh clones on
#                    the same machine (CI) reuse them
set -euo pipefail

# The source package (Debian 12, bookworm-security) and the upstream version it holds.
src_version="1.20.5+really1.20.2-1.1+deb12u1"
kube_version="v1.20.2"
cache="${BAI_KUBE_CACHE:-/var/cache/bai-kube}/$src_version"
# This script's way of building (its patches): a cache built another way is built anew.
recipe=2
# The pod sandbox ("pause") image: built here from upstream's pause.c, since none can be pulled.
pause_image="bai-kube/pause:$kube_version"
server_bins=(kube-apiserver kube-controller-manager kube-scheduler kubelet)
# The Service CIDR. Nothing routes it here (no kube-proxy): tests never dial a ClusterIP.
service_cidr="10.96.0.0/16"
node_name="bai-kube-node"
# The machine-wide note of the running kubelet cluster (its DIR).
kubelet_lock="/run/bai-kube/kubelet-cluster"

say() { echo "==> $*" >&2; }
die() { echo "error: $*" >&2; exit 1; }
need_root() { [ "$(id -u)" = 0 ] || die "run as root (it installs packages, drives Docker and mounts)"; }
usage() { sed -n '6,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# ---------------------------------------------------------------------------------------------
# build

# The cache is whole when its stamp (written last) is there and every file it lists is.
cache_complete() {
  [ -f "$cache/stamp" ] && grep -qx "recipe: $recipe" "$cache/stamp" || return 1
  local f
  for f in "${server_bins[@]}" pause $(sed -n 's/^extra: //p' "$cache/stamp"); do
    [ -x "$cache/$f" ] || return 1
  done
}

# Debian packages this needs, installed when missing (one apt-get call for all).
apt_install() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} = 0 ] && return 0
  say "installing ${missing[*]} (Debian packages)"
  # Another apt run (the set-up beside a background build) is waited for, not failed on.
  apt-get -o DPkg::Lock::Timeout=600 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq "${missing[@]}" >/dev/null
}

# `apt-get source` needs deb-src entries (scripts/deb-src.sh writes them where apt has none).
ensure_kube_deb_src() {
  # shellcheck source=scripts/deb-src.sh
  . "$(dirname "${BASH_SOURCE[0]}")/deb-src.sh"
  ensure_deb_src kubernetes "$src_version" \
    || die "apt knows no source package kubernetes $src_version (is this Debian 12?)"
}

# A background build (`build-background`: its PID here) that still runs is waited for, then
# the cache is looked at as usual (whole, or built anew when that build failed).
bg_pid_file=/var/tmp/bai-kube-build.pid
bg_log=/var/tmp/bai-kube-build.log

wait_for_background_build() {
  local pid
  pid="$(cat "$bg_pid_file" 2>/dev/null)" || return 0
  [ -n "$pid" ] && [ "$pid" != "$$" ] || return 0
  if kill -0 "$pid" 2>/dev/null && grep -q kube-cluster "/proc/$pid/cmdline" 2>/dev/null; then
    say "kubernetes is being built in the background (log $bg_log); waiting for it"
    while kill -0 "$pid" 2>/dev/null; do sleep 2; done
  fi
}

cmd_build_background() {
  need_root
  if cache_complete; then return 0; fi
  setsid nohup nice -n 19 "$(readlink -f "$0")" build >"$bg_log" 2>&1 </dev/null &
  echo $! >"$bg_pid_file"
  say "building kubernetes in the background, at the lowest CPU priority (log $bg_log)"
}

cmd_build() {
  need_root
  wait_for_background_build
  if cache_complete; then
    say "kubernetes $kube_version is built already: $cache"
    ensure_pause_image
    return 0
  fi
  local t0=$SECONDS
  # A build cut short left no stamp: start that folder over.
  rm -rf "$cache"
  apt_install golang-go etcd-server dpkg-dev openssl gcc libc6-dev golang-github-modern-go-reflect2-dev
  ensure_kube_deb_src

  # Scratch (~1.8 GB at its peak) under /var/tmp, removed at the end whatever happens.
  local scratch
  scratch="$(mktemp -d /var/tmp/bai-kube-build.XXXXXX)"
  # shellcheck disable=SC2064
  trap "rm -rf '$scratch'" EXIT
  # apt downloads as _apt when it may write there (otherwise it warns and downloads as root).
  chown _apt "$scratch" 2>/dev/null || true

  say "fetching the source package kubernetes $src_version"
  (cd "$scratch" && apt-get source -qq "kubernetes=$src_version" >/dev/null 2>"$scratch/apt-source.log") \
    || { cat "$scratch/apt-source.log" >&2; die "apt-get source failed"; }
  local src
  src="$(find "$scratch" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -1)"
  [ -n "$src" ] && [ -f "$src/cmd/kubelet/kubelet.go" ] || die "no kubernetes tree unpacked in $scratch"

  # Patches for these machines (each checked, so that a changed source fails here, loudly):
  # - The VMs lack CAP_SYS_RESOURCE, so runc cannot set a negative oom_score_adj: dockershim's
  #   -998 for pod sandboxes and -997 for Guaranteed pods make every pod fail ("can't get final
  #   child's PID from pipe: EOF"). Both become 0.
  # - The kubelet sets vm.overcommit_memory=1, kernel.panic=10, kernel.panic_on_oops=1 (and
  #   two keyring limits) on the host when they differ; it only logs that now, the host's own
  #   settings stay.
  patch_line() { # file, sed expression, the pattern that must match afterwards
    sed -i "$2" "$src/$1"
    grep -q "$3" "$src/$1" || die "patching $1 failed: the source is not what this script knows"
  }
  patch_line pkg/kubelet/dockershim/docker_sandbox.go \
    's/^\(\s*defaultSandboxOOMAdj int = \)-998$/\10/' '^\s*defaultSandboxOOMAdj int = 0$'
  patch_line pkg/kubelet/qos/policy.go \
    's/^\(\s*guaranteedOOMScoreAdj int = \)-997$/\10/' '^\s*guaranteedOOMScoreAdj int = 0$'
  patch_line pkg/kubelet/cm/container_manager_linux.go \
    's/^\(\s*b := \)KernelTunableModify$/\1KernelTunableWarn/' '^\s*b := KernelTunableWarn$'
  # - vendor/ has github.com/modern-go/reflect2 1.0.1, which links to reflect.mapiterinit with
  #   its pre-Go-1.18 signature: built with Go 1.19, kube-apiserver dies of SIGSEGV
  #   (mapiternext, from json-iterator) within seconds. Debian's reflect2 1.0.2 (the upstream
  #   fix, same API) replaces it.
  local reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
  [ -f "$reflect2/go_above_118.go" ] || die "$reflect2 is not reflect2 >= 1.0.2"
  rm -rf "$src/vendor/github.com/modern-go/reflect2"
  cp -r "$reflect2" "$src/vendor/github.com/modern-go/reflect2"

  # Go 1.19 in module mode rejects this go.mod: build in GOPATH mode, the tree linked in as
  # k8s.io/kubernetes, offline (everything is in vendor/).
  export GOPATH="$scratch/gopath" GOCACHE="$scratch/gocache" GO111MODULE=off GOFLAGS="" \
    GOPROXY=off CGO_ENABLED=0
  mkdir -p "$GOPATH/src/k8s.io"
  ln -s "$src" "$GOPATH/src/k8s.io/kubernetes"
  cd "$GOPATH/src/k8s.io/kubernetes"

  # pkg/generated/openapi is generated at build time upstream (Makefile.generated_files,
  # gen_openapi): the vendored openapi-gen over every package tagged +k8s:openapi-gen=, the
  # staged repositories seen through vendor/ (code-generator's and sample-apiserver's left
  # out, as upstream does). Without it kube-apiserver does not compile.
  say "generating pkg/generated/openapi"
  nice -n 19 go build -o "$scratch/openapi-gen" ./vendor/k8s.io/kube-openapi/cmd/openapi-gen
  local dirs
  dirs="$(grep -RlE --include='*.go' '^// *\+k8s:openapi-gen=' pkg cmd plugin vendor \
            | xargs -n1 dirname | LC_ALL=C sort -u \
            | grep -v -e '^vendor/k8s.io/code-generator/' -e '^vendor/k8s.io/sample-apiserver/' \
            | sed 's|^|k8s.io/kubernetes/|' | paste -sd, -)"
  nice -n 19 "$scratch/openapi-gen" --logtostderr --v 1 -i "$dirs" \
    -p k8s.io/kubernetes/pkg/generated/openapi -O zz_generated.openapi \
    -h hack/boilerplate/boilerplate.generatego.txt -r "$scratch/openapi-violations.report" \
    >"$scratch/openapi-gen.log" 2>&1 \
    || { tail -30 "$scratch/openapi-gen.log" >&2; die "openapi-gen failed"; }
  [ -s pkg/generated/openapi/zz_generated.openapi.go ] || die "openapi-gen wrote nothing"

  # The version the binaries report (upstream sets these from git; there is none here).
  local ldflags="-s -w" p
  for p in k8s.io/kubernetes/vendor/k8s.io/component-base/version \
           k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
    ldflags+=" -X $p.gitVersion=$kube_version -X $p.gitMajor=1 -X $p.gitMinor=20"
    ldflags+=" -X $p.gitTreeState=clean -X $p.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  done
  local targets=() extra=() b
  for b in "${server_bins[@]}"; do targets+=("./cmd/$b"); done
  # kubectl only where the machine has none (these machines have a newer one).
  if ! command -v kubectl >/dev/null 2>&1; then targets+=(./cmd/kubectl); extra+=(kubectl); fi
  say "building ${targets[*]#./cmd/} (go $(go env GOVERSION), nice 19; 5 min on 2 idle cores, 15 on busy ones)"
  mkdir -p "$scratch/bin"
  nice -n 19 go build -ldflags "$ldflags" -o "$scratch/bin/" "${targets[@]}"

  # The pause image's one program, upstream's build/pause/linux/pause.c, static.
  say "building the pause program"
  nice -n 19 gcc -Os -Wall -Werror -static -DVERSION="$kube_version-bai" \
    -o "$scratch/bin/pause" build/pause/linux/pause.c

  mkdir -p "$cache"
  for b in "${server_bins[@]}" pause "${extra[@]}"; do install -m 0755 "$scratch/bin/$b" "$cache/$b"; done
  cd /
  # The stamp last: a cache without it is a cut build and is built anew.
  {
    echo "source: kubernetes $src_version"
    echo "version: $kube_version"
    echo "recipe: $recipe"
    echo "go: $(go env GOVERSION)"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) in $((SECONDS - t0)) s"
    for b in "${extra[@]}"; do echo "extra: $b"; done
  } >"$cache/stamp.tmp"
  mv "$cache/stamp.tmp" "$cache/stamp"
  ensure_pause_image
  rm -rf "$scratch"
  trap - EXIT
  say "built in $((SECONDS - t0)) s: $cache ($(du -sh "$cache" | cut -f1))"
}

# The pause image is kept in the engine; imported again from the cached program when missing.
ensure_pause_image() {
  docker image inspect "$pause_image" >/dev/null 2>&1 && return 0
  [ -x "$cache/pause" ] || die "no cached pause program; run $0 build"
  say "importing $pause_image"
  tar -C "$cache" -cf - pause \
    | docker import --change 'ENTRYPOINT ["/pause"]' - "$pause_image" >/dev/null
}

# ---------------------------------------------------------------------------------------------
# start

# A TCP port nothing listens on at ADDR (the kernel's choice; free when checked).
free_port() {
  python3 -c 'import socket, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); print(s.getsockname()[1])' "$1"
}

# The pid in DIR/pids/NAME when that process runs still and is this cluster's (its command
# line names DIR: a reused pid is not taken for it).
live_pid() {
  local dir="$1" name="$2" pid
  pid="$(cat "$dir/pids/$name" 2>/dev/null)" || return 1
  [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$dir/" || return 1
  echo "$pid"
}

# Starts NAME (a program and its flags) in a session of its own, its output in DIR/logs/NAME.log.
launch() {
  local name="$1"; shift
  setsid "$@" </dev/null >"$dir/logs/$name.log" 2>&1 &
  echo $! >"$dir/pids/$name"
}

# Waits up to $2 seconds for the command after it to succeed; fails naming the log to read.
wait_for() {
  local what="$1" secs="$2"; shift 2

  for _ in $(seq 1 $((secs * 5))); do
    "$@" >/dev/null 2>&1 && return 0
    # A component that died is not waited for.
    local f
    for f in "$dir"/pids/*; do
      local n="${f##*/}"
      live_pid "$dir" "$n" >/dev/null || { tail -20 "$dir/logs/$n.log" >&2; echo "error: $n exited while waiting for $what (log $dir/logs/$n.log)" >&2; return 1; }
    done
    sleep 0.2
  done
  echo "error: $what not there after ${secs}s" >&2
  return 1
}

# openssl: a key (EC P-256) and a certificate signed by the cluster's CA.
#   issue NAME CN [O] [SANS] [serverAuth]
issue() {
  local name="$1" cn="$2" o="${3:-}" sans="${4:-}" usage="clientAuth"
  [ "${5:-}" = server ] && usage="serverAuth,clientAuth"
  local subj="/CN=$cn"
  [ -n "$o" ] && subj="/O=$o$subj"
  {
    echo "basicConstraints = CA:FALSE"
    echo "keyUsage = critical, digitalSignature, keyEncipherment"
    echo "extendedKeyUsage = $usage"
    [ -n "$sans" ] && echo "subjectAltName = $sans"
  } >"$pki/$name.ext"
  openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$pki/$name.key" -out "$pki/$name.csr" -subj "$subj" 2>/dev/null
  openssl x509 -req -in "$pki/$name.csr" -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -CAcreateserial \
    -days 3650 -extfile "$pki/$name.ext" -out "$pki/$name.crt" 2>/dev/null
  rm -f "$pki/$name.csr" "$pki/$name.ext"
}

# A kubeconfig with the client certificate NAME embedded (kube-rs and kubectl read either).
kubeconfig() {
  local name="$1" user="$2" out="$3"
  cat >"$out" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: bai-kube
  cluster:
    server: $server
    certificate-authority-data: $(base64 -w0 "$pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 "$pki/$name.crt")
    client-key-data: $(base64 -w0 "$pki/$name.key")
contexts:
- name: bai-kube
  context: {cluster: bai-kube, user: $user}
current-context: bai-kube
EOF
  chmod 600 "$out"
}

api() { # GET a path of the API as admin
  curl -fsS --max-time 5 --cacert "$pki/ca.crt" --cert "$pki/admin.crt" --key "$pki/admin.key" "$server$1"
}

node_ready() {
  api "/api/v1/nodes/$node_name" | python3 -c 'import json, sys
n = json.load(sys.stdin)
sys.exit(0 if any(c["type"] == "Ready" and c["status"] == "True" for c in n.get("status", {}).get("conditions", [])) else 1)'
}

sa_ready() {
  api /api/v1/namespaces/default/serviceaccounts/default \
    | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin).get("secrets") else 1)'
}

cmd_start() {
  need_root
  local kubelet=1
  [ "${1:-}" = --no-kubelet ] && { kubelet=0; shift; }
  dir="${1:-}"
  [ $# -le 1 ] || usage
  cache_complete || die "kubernetes is not built here; run $0 build (~5 min, once per machine)"
  command -v etcd >/dev/null || die "etcd is missing; run $0 build"
  # One kubelet cluster per machine: refused before anything is made.
  if [ $kubelet = 1 ]; then
    local other
    other="$(cat "$kubelet_lock" 2>/dev/null || true)"
    if [ -n "$other" ] && [ "$other" != "$(cd "${dir:-/nonexistent}" 2>/dev/null && pwd)" ] \
       && live_pid "$other" kubelet >/dev/null; then
      die "a kubelet cluster runs already ($other): one per machine; stop it or use --no-kubelet"
    fi
  fi
  if [ -z "$dir" ]; then
    dir="$(mktemp -d /var/tmp/bai-kube.XXXXXX)"
  else
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    # Already running: say where (tests started by several binaries share one cluster).
    if [ -f "$dir/env" ] && cmd_status "$dir" >/dev/null 2>&1; then
      echo "$dir/kubeconfig"
      return 0
    fi
    [ -z "$(ls -A "$dir")" ] || die "$dir is not empty (stop that cluster first: $0 stop $dir)"
  fi
  # No other kubelet cluster runs (checked above), so a container dockershim made is a
  # stopped cluster's left-over (a pod deleted just before its cluster stopped is no longer
  # under that cluster's kubelet dir): a new kubelet refuses to start beside one ("no
  # PodSandbox found with Id …"). Removed now.
  if [ $kubelet = 1 ]; then
    docker ps -aq --filter label=io.kubernetes.docker.type | xargs -r docker rm -f >/dev/null 2>&1 || true
  fi
  local t0=$SECONDS
  # The mark `stop` looks for before it removes anything.
  echo "bai-kube $kube_version" >"$dir/.bai-kube"
  mkdir -p "$dir/pids" "$dir/logs"
  pki="$dir/pki"
  mkdir -p "$pki"
  # A failed start takes down what it started; DIR stays, with the logs.
  # shellcheck disable=SC2154
  trap 'rc=$?; if [ $rc != 0 ]; then echo "error: start failed; logs in $dir/logs" >&2; teardown "$dir" keep; fi' EXIT

  local node_ip=""
  if [ $kubelet = 1 ]; then
    mkdir -p "$(dirname "$kubelet_lock")"
    echo "$dir" >"$kubelet_lock"
    # The node's address may not be loopback: docker0's, where the pods are.
    node_ip="$(ip -4 -o addr show dev docker0 2>/dev/null | awk '{ split($4, a, "/"); print a[1]; exit }')"
    [ -n "$node_ip" ] || die "docker0 has no IPv4 address (is Docker running?)"
    ensure_pause_image
  fi

  local etcd_port etcd_peer api_port kubelet_port=""
  etcd_port="$(free_port 127.0.0.1)"
  etcd_peer="$(free_port 127.0.0.1)"
  api_port="$(free_port 127.0.0.1)"
  server="https://127.0.0.1:$api_port"

  # The CA and the certificates, one identity per component.
  openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
    -keyout "$pki/ca.key" -out "$pki/ca.crt" -days 3650 -subj "/CN=bai-kube-ca" 2>/dev/null
  issue apiserver kube-apiserver "" \
    "IP:127.0.0.1, IP:10.96.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc" server
  issue apiserver-kubelet-client kube-apiserver-kubelet-client system:masters
  issue admin admin system:masters
  issue controller-manager system:kube-controller-manager
  issue scheduler system:kube-scheduler
  # The service account tokens' key pair.
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/sa.key" 2>/dev/null
  openssl pkey -in "$pki/sa.key" -pubout -out "$pki/sa.pub" 2>/dev/null
  kubeconfig admin admin "$dir/kubeconfig"
  kubeconfig controller-manager system:kube-controller-manager "$dir/controller-manager.kubeconfig"
  kubeconfig scheduler system:kube-scheduler "$dir/scheduler.kubeconfig"

  # etcd on loopback, its data in DIR.
  launch etcd etcd --name bai-kube --data-dir "$dir/etcd" \
    --listen-client-urls "http://127.0.0.1:$etcd_port" --advertise-client-urls "http://127.0.0.1:$etcd_port" \
    --listen-peer-urls "http://127.0.0.1:$etcd_peer" --initial-advertise-peer-urls "http://127.0.0.1:$etcd_peer" \
    --initial-cluster "bai-kube=http://127.0.0.1:$etcd_peer" --log-level warn --logger zap
  wait_for etcd 30 curl -fsS --max-time 2 "http://127.0.0.1:$etcd_port/health"

  # The API server on loopback only. No endpoint reconciler: the `kubernetes` Service gets no
  # endpoints (nothing may dial a ClusterIP here anyway).
  launch kube-apiserver "$cache/kube-apiserver" \
    --etcd-servers "http://127.0.0.1:$etcd_port" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$api_port" --insecure-port 0 \
    --tls-cert-file "$pki/apiserver.crt" --tls-private-key-file "$pki/apiserver.key" \
    --client-ca-file "$pki/ca.crt" \
    --kubelet-client-certificate "$pki/apiserver-kubelet-client.crt" \
    --kubelet-client-key "$pki/apiserver-kubelet-client.key" \
    --kubelet-preferred-address-types InternalIP \
    --authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
    --service-cluster-ip-range "$service_cidr" \
    --service-account-key-file "$pki/sa.pub" --service-account-signing-key-file "$pki/sa.key" \
    --service-account-issuer https://kubernetes.default.svc \
    --endpoint-reconciler-type none --allow-privileged=true --profiling=false --v 1
  wait_for "the API server" 60 api /readyz
  say "API server ready on $server after $((SECONDS - t0)) s"

  launch kube-controller-manager "$cache/kube-controller-manager" \
    --kubeconfig "$dir/controller-manager.kubeconfig" --leader-elect=false --port 0 --secure-port 0 \
    --service-account-private-key-file "$pki/sa.key" --root-ca-file "$pki/ca.crt" \
    --use-service-account-credentials --profiling=false --v 1
  launch kube-scheduler "$cache/kube-scheduler" \
    --kubeconfig "$dir/scheduler.kubeconfig" --leader-elect=false --port 0 --secure-port 0 \
    --profiling=false --v 1

  if [ $kubelet = 1 ]; then
    kubelet_port="$(free_port "$node_ip")"
    issue kubelet "system:node:$node_name" system:nodes
    issue kubelet-serving "$node_name" "" "IP:$node_ip, DNS:$node_name" server
    kubeconfig kubelet "system:node:$node_name" "$dir/kubelet.kubeconfig"
    mkdir -p "$dir/kubelet" "$dir/dockershim" "$dir/volume-plugins"
    # dockershim drives the running engine and touches only containers with its own labels.
    # Kept off the host's own things: no QoS cgroups nor node-allocatable enforcement, no
    # iptables chains, no image GC (the engine's images are the host's), no eviction, no OOM
    # score changes, no hairpin settings; its sockets and state all in DIR. No network plugin:
    # pods on the docker bridge. Anonymous requests refused; the API server's client
    # certificate (from our CA) is let in.
    launch kubelet "$cache/kubelet" \
      --kubeconfig "$dir/kubelet.kubeconfig" --hostname-override "$node_name" \
      --node-ip "$node_ip" --address "$node_ip" --port "$kubelet_port" \
      --read-only-port 0 --healthz-port 0 \
      --root-dir "$dir/kubelet" --cert-dir "$dir/kubelet/pki" \
      --tls-cert-file "$pki/kubelet-serving.crt" --tls-private-key-file "$pki/kubelet-serving.key" \
      --anonymous-auth=false --client-ca-file "$pki/ca.crt" --authorization-mode AlwaysAllow \
      --container-runtime docker --docker-endpoint unix:///var/run/docker.sock \
      --container-runtime-endpoint "unix://$dir/dockershim.sock" \
      --experimental-dockershim-root-directory "$dir/dockershim" \
      --pod-infra-container-image "$pause_image" --network-plugin= \
      --volume-plugin-dir "$dir/volume-plugins" \
      --cgroups-per-qos=false --enforce-node-allocatable= --make-iptables-util-chains=false \
      --image-gc-high-threshold 100 --eviction-hard= --oom-score-adj 0 --hairpin-mode none \
      --node-status-update-frequency 1s --fail-swap-on=false --v 1
    wait_for "node $node_name Ready" 120 node_ready
  fi
  # The controllers make the default ServiceAccount and its token: until then a pod is
  # refused ("no API token found for service account default").
  wait_for "the default ServiceAccount's token" 60 sa_ready
  if [ $kubelet = 1 ]; then
    say "node $node_name ($node_ip) Ready after $((SECONDS - t0)) s"
  else
    say "API-only cluster ready after $((SECONDS - t0)) s"
  fi

  local kubectl pids="" n
  kubectl="$(command -v kubectl || echo "$cache/kubectl")"
  for n in "$dir"/pids/*; do pids+="${n##*/}=$(cat "$n") "; done
  {
    printf 'KUBECONFIG=%q\n' "$dir/kubeconfig"
    printf 'BAI_KUBE_DIR=%q\n' "$dir"
    printf 'BAI_KUBE_SERVER=%q\n' "$server"
    printf 'BAI_KUBE_TIER=%q\n' "$([ $kubelet = 1 ] && echo kubelet || echo apiserver)"
    printf 'BAI_KUBE_NODE=%q\n' "$([ $kubelet = 1 ] && echo "$node_name" || true)"
    printf 'BAI_KUBE_NODE_IP=%q\n' "$node_ip"
    printf 'BAI_KUBE_PIDS=%q\n' "${pids% }"
    printf 'BAI_KUBE_VERSION=%q\n' "$kube_version"
    printf 'KUBECTL=%q\n' "$kubectl"
    echo "export KUBECONFIG BAI_KUBE_DIR BAI_KUBE_SERVER BAI_KUBE_TIER BAI_KUBE_NODE BAI_KUBE_NODE_IP BAI_KUBE_PIDS BAI_KUBE_VERSION KUBECTL"
  } >"$dir/env"
  trap - EXIT
  echo "$dir/kubeconfig"
}

# ---------------------------------------------------------------------------------------------
# stop

# The pod UIDs this cluster's kubelet knew (its pods folders).
cluster_pod_uids() { ls "$1/kubelet/pods" 2>/dev/null || true; }

# Whether a process runs (a zombie, waiting for init to reap it, does not).
alive() {
  local state
  state="$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" && [ -n "$state" ] && [ "$state" != Z ]
}

# Kills the components (kubelet first, etcd last), removes this cluster's pod containers, its
# mounts and pod logs; with `keep`, DIR itself stays.
teardown() {
  local dir="$1" keep="${2:-}" n pid
  for n in kubelet kube-scheduler kube-controller-manager kube-apiserver etcd; do
    pid="$(live_pid "$dir" "$n")" || continue
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do alive "$pid" || break; sleep 0.1; done
    alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
  done
  # The containers dockershim made for this cluster's pods (label io.kubernetes.docker.type;
  # its pod UID one of this kubelet's): sandboxes and app containers.
  local uids
  uids="$(cluster_pod_uids "$dir")"
  if [ -n "$uids" ] && command -v docker >/dev/null; then
    local ids
    ids="$(docker ps -aq --filter label=io.kubernetes.docker.type | xargs -r docker inspect \
             -f '{{.Id}} {{index .Config.Labels "io.kubernetes.pod.uid"}}' 2>/dev/null \
           | grep -F -w -f <(echo "$uids") | awk '{ print $1 }' || true)"
    [ -n "$ids" ] && docker rm -f $ids >/dev/null 2>&1 || true
    # The kubelet's pod log links (fixed paths under /var/log).
    local u
    for u in $uids; do
      rm -rf /var/log/pods/*_"$u"
      find /var/log/containers -maxdepth 1 -xtype l -lname "/var/log/pods/*_$u/*" -delete 2>/dev/null || true
    done
  fi
  if [ -n "$uids" ] || [ -d "$dir/kubelet" ]; then
    rmdir /var/log/pods /var/log/containers 2>/dev/null || true
  fi
  # The kubelet's mounts under DIR (secrets, emptyDirs, its root dir made rshared), deepest
  # first.
  local m
  for m in $(awk -v d="$dir/" 'index($5, d) == 1 || $5 == substr(d, 1, length(d) - 1) { print $5 }' /proc/self/mountinfo | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2-); do
    umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "warning: cannot unmount $m" >&2
  done
  if [ "$(cat "$kubelet_lock" 2>/dev/null || true)" = "$dir" ]; then
    rm -f "$kubelet_lock"
    rmdir "$(dirname "$kubelet_lock")" 2>/dev/null || true
  fi
  if [ "$keep" != keep ]; then
    if grep -q "$dir" /proc/self/mountinfo; then
      echo "error: mounts remain under $dir; not removing it" >&2
      return 1
    fi
    rm -rf --one-file-system "$dir"
  fi
}

cmd_stop() {
  need_root
  [ $# = 1 ] || usage
  local dir
  dir="$(cd "$1" 2>/dev/null && pwd)" || die "no such folder: $1"
  [ -f "$dir/.bai-kube" ] || die "$dir is not a bai-kube cluster's folder (no .bai-kube mark)"
  teardown "$dir"
  say "stopped and removed $dir"
}

# ---------------------------------------------------------------------------------------------
# status

cmd_status() {
  [ $# = 1 ] || usage
  local dir ok=0 n pid
  dir="$(cd "$1" 2>/dev/null && pwd)" || die "no such folder: $1"
  [ -f "$dir/env" ] || die "$dir holds no started cluster (no env)"
  # shellcheck disable=SC1091
  (
    . "$dir/env"
    pki="$dir/pki" server="$BAI_KUBE_SERVER"
    for n in "$dir"/pids/*; do
      n="${n##*/}"
      if pid="$(live_pid "$dir" "$n")"; then echo "$n: running (pid $pid)"; else echo "$n: NOT running"; ok=1; fi
    done
    if api /readyz >/dev/null 2>&1; then echo "api: $BAI_KUBE_SERVER ready"; else echo "api: $BAI_KUBE_SERVER NOT answering"; ok=1; fi
    if [ -n "$BAI_KUBE_NODE" ]; then
      if node_name="$BAI_KUBE_NODE" node_ready; then echo "node: $BAI_KUBE_NODE Ready"; else echo "node: $BAI_KUBE_NODE NOT Ready"; ok=1; fi
    fi
    echo "kubeconfig: $KUBECONFIG"
    exit $ok
  )
}

case "${1:-}" in
  build) shift; cmd_build "$@" ;;
  build-background) shift; cmd_build_background "$@" ;;
  start) shift; cmd_start "$@" ;;
  stop) shift; cmd_stop "$@" ;;
  status) shift; cmd_status "$@" ;;
  *) usage ;;
esac
