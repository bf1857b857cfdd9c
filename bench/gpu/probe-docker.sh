#!/usr/bin/env bash
# probe-docker.sh: the first half of the GPU device check, with plain Docker and no bai.
# On the lent GPU machine (root, driver, nvcc; no Docker, no network): what the machine
# offers a container engine, whether Debian's dockerd starts there (and with what), and
# whether a container given only the device nodes and the driver's libraries (no NVIDIA
# container toolkit) runs CUDA, sees no GPU without them, and is held to an MPS memory cap.
# Usage: bench/gpu/probe-docker.sh DOCKER_TAR_XZ   (output under $OUT, default /tmp/gpu-out)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/gpu-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/probe.log") 2>&1
step() { echo; echo "=== $* ($(date +%T))"; }
W=/tmp/bai-gpu; rm -rf $W; mkdir -p $W/dk $W/root
step machine
uname -a; cat /etc/os-release | head -2; nproc; free -g | head -2
mount | grep -E 'cgroup|overlay| / |/tmp|/var' ; grep -E 'overlay|tmpfs|ext4|xfs|btrfs' /proc/filesystems | tr '\n' ' '; echo
cat /sys/fs/cgroup/cgroup.controllers 2>&1; cat /sys/fs/cgroup/cgroup.subtree_control 2>&1
ls -la /dev/nvidia* 2>&1; ls /dev/nvidia-caps 2>&1
cat /proc/driver/nvidia/version 2>&1; ls /proc/driver/nvidia/gpus 2>&1
nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,driver_version,compute_mode --format=csv
which nvidia-smi nvidia-cuda-mps-control nvidia-cuda-mps-server nvcc python3 curl ip iptables nft tar xz ldconfig
ldconfig -p | grep -Ei 'libcuda|nvidia' | head -40
ls -la /usr/local/nvidia /usr/local/nvidia/lib64 2>&1 | head -60
ip -br link; ip -br addr
(zcat /proc/config.gz 2>/dev/null || cat /boot/config-$(uname -r) 2>/dev/null) | grep -E '^CONFIG_(BRIDGE|VETH|OVERLAY_FS|NETFILTER|NF_NAT|NF_TABLES|IP_NF_IPTABLES|CGROUP_BPF|BPF_SYSCALL|USER_NS|SECCOMP)=' | tr '\n' ' '; echo
lsmod 2>/dev/null | head -30
python3 -c 'import torch,sys; print(sys.executable, torch.__version__, torch.__file__)' 2>&1 | tail -1

step "dockerd: unpack Debian's engine"
tar -xJf "$1" -C $W/dk || exit 1
ln -sf tini-static $W/dk/docker-init; mkdir -p $W/dk/lib; mv $W/dk/*.so* $W/dk/lib/
export PATH=$W/dk:$PATH LD_LIBRARY_PATH=$W/dk/lib
ldd $W/dk/dockerd | grep 'not found'; ldd $W/dk/runc | grep 'not found'
SOCK=$W/docker.sock
start_dockerd() {
  rm -f $SOCK; echo "dockerd $*"
  setsid dockerd -H unix://$SOCK --data-root /var/lib/bai-gpu-docker --exec-root $W/exec \
    --pidfile $W/dockerd.pid "$@" > $W/dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do python3 $here/dk.py $SOCK info 2>/dev/null && return 0; sleep 0.5; done
  tail -15 $W/dockerd.log; kill "$(cat $W/dockerd.pid 2>/dev/null)" 2>/dev/null; pkill -x containerd; sleep 1; return 1
}
if start_dockerd --iptables=false --ip6tables=false; then mode="bridge, --iptables=false"
elif start_dockerd --iptables=false --ip6tables=false --bridge=none; then mode="--bridge=none"
elif start_dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=vfs; then mode="--bridge=none, vfs"
else echo "RESULT dockerd: does not start"; exit 1; fi
echo "RESULT dockerd: starts with $mode"
grep -iE 'level=(warn|error)' $W/dockerd.log | head -15
python3 $here/dk.py $SOCK netcreate probe-bridge && echo "RESULT bridge network: yes" || echo "RESULT bridge network: no"

step "image: gpuprobe built with nvcc, imported as a root of its own"
nvcc -O2 -cudart static -o $W/gpuprobe $here/gpuprobe.cu || echo "RESULT nvcc failed"
R=$W/root; mkdir -p $R/bin $R/usr/bin $R/etc $R/tmp $R/home/work $R/proc $R/sys $R/dev
for b in /bin/bash /bin/ls /bin/cat /usr/bin/env /usr/bin/id /usr/bin/sleep $W/gpuprobe $(command -v nvidia-smi) $(readlink -f /usr/local/nvidia/lib64/libcuda.so.1) $(readlink -f /usr/local/nvidia/lib64/libnvidia-ml.so.1); do
  cp -L $b $R/usr/bin/; for l in $(ldd $b | grep -oE '/[^ ]+'); do mkdir -p $R$(dirname $l); cp -L --update=none $l $R$l; done
done
ln -sf /usr/bin/bash $R/bin/sh; echo "work:x:1000:1000::/home/work:/bin/sh" > $R/etc/passwd; echo "root:x:0:0::/root:/bin/sh" >> $R/etc/passwd
chmod 1777 $R/tmp; tar -C $R -cf $W/root.tar . && python3 $here/dk.py $SOCK import $W/root.tar bai-gpuprobe:1 && echo "RESULT image: imported ($(du -sh $W/root.tar | cut -f1))"

step "driver files for the container"
libs=(); for n in libcuda.so.1 libnvidia-ml.so.1 libnvidia-ptxjitcompiler.so.1 libnvidia-nvvm.so.4 libnvidia-gpucomp.so libcudadebugger.so.1; do
  p=$(ldconfig -p | awk -v n=$n '$1==n && /x86-64/ {print $NF; exit}')
  [ -z "$p" ] && p=$(ls /usr/local/nvidia/lib64/$n* /usr/lib/x86_64-linux-gnu/$n* 2>/dev/null | head -1)
  [ -n "$p" ] && libs+=("$(readlink -f $p):/usr/local/nvidia/lib64/$n:ro") && echo "$n -> $(readlink -f $p)"
done
for n in nvidia-smi; do p=$(command -v $n) && libs+=("$(readlink -f $p):/usr/local/nvidia/bin/$n:ro"); done
devs=(); for d in /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools /dev/nvidia[0-9]*; do [ -e $d ] && devs+=("$d"); done
echo "devices: ${devs[*]}"
binds_json=$(printf '%s\n' "${libs[@]}" | python3 -c 'import sys,json; print(json.dumps([l.strip() for l in sys.stdin if l.strip()]))')
devs_json=$(printf '%s\n' "${devs[@]}" | python3 -c 'import sys,json; print(json.dumps([{"PathOnHost":d.strip(),"PathInContainer":d.strip(),"CgroupPermissions":"rwm"} for d in sys.stdin if d.strip()]))')
ENV='"LD_LIBRARY_PATH=/usr/local/nvidia/lib64","PATH=/usr/local/nvidia/bin:/usr/bin:/bin"'
run() { # NAME EXTRA_HOSTCONFIG_JSON ENV_JSON_ITEMS CMD...
  local name=$1 hc=$2 env=$3; shift 3
  local cmd; cmd=$(python3 -c 'import sys,json; print(json.dumps(sys.argv[1:]))' "$@")
  step "$name"
  timeout ${T:-90} python3 $here/dk.py $SOCK run "{\"Image\":\"bai-gpuprobe:1\",\"User\":\"1000:1000\",\"Env\":[$ENV$env],\"Cmd\":$cmd,\"HostConfig\":{\"NetworkMode\":\"none\",\"CapDrop\":[\"ALL\"],\"SecurityOpt\":[\"no-new-privileges\"],\"Binds\":$binds_json$hc}}"
}
run "no devices: sees no GPU" "" "" gpuprobe list; [ $? = 3 ] && echo "RESULT no-gpu container: sees no device" || echo "RESULT no-gpu container: UNEXPECTED"
run "whole GPU: nvidia-smi" ",\"Devices\":$devs_json" "" nvidia-smi -L && echo "RESULT nvidia-smi in container: ok" || echo "RESULT nvidia-smi in container: FAILED"
run "whole GPU: CUDA" ",\"Devices\":$devs_json" "" gpuprobe list && echo "RESULT cuda in container: ok" || echo "RESULT cuda in container: FAILED"

step "MPS: control daemon as root, clients uid 1000 in containers"
mkdir -p $W/mps/pipe $W/mps/log; chmod 755 $W/mps $W/mps/pipe $W/mps/log
CUDA_MPS_PIPE_DIRECTORY=$W/mps/pipe CUDA_MPS_LOG_DIRECTORY=$W/mps/log nvidia-cuda-mps-control -d && echo "mps daemon up"
sleep 1; ls -la $W/mps/pipe
total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits | head -1); half=$((total/2))
MPSENV=",\"CUDA_MPS_PIPE_DIRECTORY=/opt/bai/mps/pipe\",\"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=${half}M\",\"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=50\""
MPSHC=",\"Devices\":$devs_json,\"IpcMode\":\"host\",\"Binds\":$(echo $binds_json | sed "s#]\$#,\"$W/mps/pipe:/opt/bai/mps/pipe:rw\"]#")"
run "MPS 0.5 share: fill (cap ${half} MiB)" "$MPSHC" "$MPSENV" gpuprobe fill 1024 && echo "RESULT mps fill ipc=host: see above"
T=40 run "MPS without host IPC" "${MPSHC/\"IpcMode\":\"host\",/}" "$MPSENV" gpuprobe fill 4096; echo "RESULT mps without ipc=host: exit $?"
echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$W/mps/pipe nvidia-cuda-mps-control
tail -20 $W/mps/log/control.log; tail -20 $W/mps/log/server.log 2>/dev/null
echo quit | CUDA_MPS_PIPE_DIRECTORY=$W/mps/pipe nvidia-cuda-mps-control
step done; grep '^RESULT' "$OUT/probe.log"
