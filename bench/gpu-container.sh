#!/usr/bin/env bash
# gpu-container.sh: the GPU device check. bai's GPU sessions in real containers on a real
# NVIDIA GPU, with Debian's Docker engine and no NVIDIA container toolkit, on the lent GPU
# machine (root, driver, nvcc; no Docker, no network): one call of the device tool.
#
#   bench/gpu-container.sh pack   here: packs Debian's engine and bai's binaries into .gpu/
#                                 (ignored by git, named in the device tool's carry)
#   bench/gpu-container.sh run    there: the check, output and logs under $OUT
#   MOCK=1 bench/gpu-container.sh run   here: the same steps on the mock accelerator (a dry
#                                 run of the plumbing; it proves nothing about GPUs)
#
# The device tool's command line: `bash bench/gpu-container.sh run` with carry [".gpu"].
# What it proves, each as a `RESULT` line (bench/RESULTS.md, "GPUs in containers"):
#   1. dockerd starts (and with what), `baid up --gpu-mode discrete` finds the GPU;
#   2. a whole-GPU session runs CUDA work and sees the device, a session without a GPU
#      sees none;
#   3. `--gpu-mode fractional`: two 0.5 sessions at once, each stopped by CUDA's
#      out-of-memory error at its MPS cap;
#   4. GPU utilization in `bai session stats` while work runs, and the idle GPU session
#      reclaimed by the utilization checker (`idle-utilization`);
#   2b. (issue 56.2) `nvidia-smi` in a login shell, as the web terminal's tmux and an SSH
#      login start it, under an /etc/profile that resets PATH as Debian's does.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cmd=${1:-run}
carry=$repo/.gpu

if [ "$cmd" = pack ]; then
  set -e
  mkdir -p "$carry"
  grep -qx '/.gpu/' "$repo/.git/info/exclude" 2>/dev/null || echo '/.gpu/' >>"$repo/.git/info/exclude"
  if [ ! -s "$carry/docker.tar.xz" ]; then
    t=$(mktemp -d)
    cp /usr/sbin/dockerd /usr/bin/containerd /usr/bin/containerd-shim-runc-v2 /usr/sbin/runc \
      /usr/bin/tini-static /lib/x86_64-linux-gnu/libdevmapper.so.1.02.1 \
      /lib/x86_64-linux-gnu/libseccomp.so.2 "$t/"
    tar -C "$t" -cf - . | xz -T0 -6 >"$carry/docker.tar.xz"
    rm -rf "$t"
  fi
  t=$(mktemp -d)
  cp "$repo"/target/release/{baid,bai,bai-krunner} "$t/"
  tar -C "$t" -cf - . | xz -T0 -6 >"$carry/bai.tar.xz"
  rm -rf "$t"
  du -ch "$carry"/*.tar.xz
  exit 0
fi

OUT=${OUT:-/tmp/gpu-container-out}
mkdir -p "$OUT"
log=$OUT/gpu-container.log
exec > >(tee "$log") 2>&1
W=/tmp/bai-gpu
SOCK=$W/docker.sock
step() { echo; echo "=== $* ($(date +%T))"; }
result() { echo "RESULT $*"; }
IMAGE=bai/gpucheck:1

# Whatever an earlier run on this machine left: engines, managers, MPS.
cleanup() {
  pkill -x baid 2>/dev/null; sleep 1; pkill -9 -x baid 2>/dev/null
  for d in $W/d-*/mps/pipe; do
    [ -S "$d/control" ] && echo quit | CUDA_MPS_PIPE_DIRECTORY=$d timeout 5 nvidia-cuda-mps-control >/dev/null 2>&1
  done
  [ -f $W/dockerd.pid ] && kill "$(cat $W/dockerd.pid)" 2>/dev/null
  for _ in $(seq 1 20); do pgrep -x dockerd >/dev/null || break; sleep 0.5; done
  pkill -9 -x dockerd 2>/dev/null; pkill -9 -x containerd 2>/dev/null
}
cleanup
rm -rf $W; mkdir -p $W/bin $W/root

step "machine"
uname -r; nproc
if [ -z "${MOCK:-}" ]; then
  nvidia-smi -L; nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
fi

step "unpack Debian's Docker engine and bai"
tar -xJf "$carry/docker.tar.xz" -C $W/bin && tar -xJf "$carry/bai.tar.xz" -C $W/bin || {
  result "unpack: FAILED (run 'bench/gpu-container.sh pack' here first)"; exit 1; }
ln -sf tini-static $W/bin/docker-init
mkdir -p $W/lib && mv $W/bin/*.so* $W/lib/
export PATH=$W/bin:$PATH
export DOCKER_HOST=unix://$SOCK

step "1. dockerd"
start_dockerd() {
  rm -f $SOCK; echo "dockerd $*"
  LD_LIBRARY_PATH=$W/lib setsid dockerd -H unix://$SOCK --data-root /var/lib/bai-gpu-docker \
    --exec-root $W/exec --pidfile $W/dockerd.pid "$@" >$W/dockerd.log 2>&1 </dev/null &
  for _ in $(seq 1 60); do python3 $repo/bench/gpu/dk.py $SOCK info 2>/dev/null && return 0; sleep 0.5; done
  tail -5 $W/dockerd.log; cleanup; return 1
}
# No iptables there; a bridge of the engine's own works (probe-docker.sh, 2026-11-27).
if start_dockerd --iptables=false --ip6tables=false; then result "dockerd: starts with --iptables=false (own bridge, overlay2)"
elif start_dockerd --iptables=false --ip6tables=false --storage-driver=vfs; then result "dockerd: starts with --iptables=false --storage-driver=vfs"
else result "dockerd: does not start"; cp $W/dockerd.log "$OUT/"; exit 1; fi

step "kernel image: the host's Python and a CUDA probe in a root of their own"
R=$W/root
mkdir -p $R/usr/bin $R/usr/lib $R/etc $R/tmp $R/home/work $R/proc $R/sys $R/dev $R/opt/bai
ln -s usr/bin $R/bin; ln -s usr/lib $R/lib; mkdir -p $R/usr/lib64; ln -s usr/lib64 $R/lib64
if [ -z "${MOCK:-}" ]; then
  nvcc -O2 -cudart static -o $W/gpuprobe $repo/bench/gpu/gpuprobe.cu || result "nvcc: FAILED"
else
  printf '#!/bin/sh\necho "gpuprobe (MOCK) $*"; env | grep -E "MOCK_CUDA|CUDA_|NVIDIA" | sort\n[ "$1" = burn ] && sleep "$2"\n[ "$1" = list ] && [ -n "$BACKENDAI_MOCK_CUDA_DEVICES" ]\n' >$W/gpuprobe
  chmod +x $W/gpuprobe
fi
py=$(readlink -f /usr/bin/python3)
pyver=$($py -c 'import sys; print("python%d.%d" % sys.version_info[:2])')
for b in bash sh ls cat env id sleep nproc head tail grep sort tr wc $py $W/gpuprobe $W/bin/bai-krunner; do
  p=$(command -v $b || echo $b); [ -e "$p" ] || continue
  cp -L "$p" $R/usr/bin/; for l in $(ldd "$p" 2>/dev/null | grep -oE '/[^ ]+'); do
    mkdir -p "$R$(dirname "$l")"; cp -L --update=none "$l" "$R$l" 2>/dev/null || cp -Ln "$l" "$R$l"; done
done
# The glibc pieces libcuda and Python's modules open at run time.
for l in /lib/x86_64-linux-gnu/{libpthread.so.0,libdl.so.2,librt.so.1,libm.so.6,libz.so.1,libutil.so.1} \
         /usr/lib/x86_64-linux-gnu/{libz.so.1,libexpat.so.1,libffi.so.8}; do
  [ -e $l ] && mkdir -p "$R$(dirname $l)" && cp -L --update=none $l "$R$l" 2>/dev/null
done
ln -sf $(basename $py) $R/usr/bin/python3
cp -a /usr/lib/$pyver $R/usr/lib/ 2>/dev/null
rm -rf $R/usr/lib/$pyver/{test,site-packages,dist-packages,config-*}
# A login shell's /etc/profile as Debian's behaves for a user (issue 56.2): PATH set anew,
# then /etc/profile.d/*.sh, where the agent binds zz-bai-environ.sh (the kernel's own
# environment back, the driver's bin and LD_LIBRARY_PATH with it).
mkdir -p $R/etc/profile.d
printf 'PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/games:/usr/games\nexport PATH\nfor i in /etc/profile.d/*.sh; do [ -r "$i" ] && . "$i"; done\nunset i\n' >$R/etc/profile
printf 'root:x:0:0::/root:/bin/sh\nwork:x:1000:1000::/home/work:/bin/bash\n' >$R/etc/passwd
printf 'root:x:0:\nwork:x:1000:\n' >$R/etc/group
chmod 1777 $R/tmp; chown 1000:1000 $R/home/work
tar -C $R -cf $W/root.tar . && python3 $repo/bench/gpu/dk.py $SOCK import $W/root.tar $IMAGE \
  ai.backend.kernelspec=1 'ai.backend.features=batch uid-match' ai.backend.base-distro=ubuntu24.04 \
  ai.backend.runtime-type=python ai.backend.runtime-path=/usr/bin/python3 \
  ai.backend.resource.min.cpu=1 ai.backend.resource.min.mem=256m \
  && result "image: $IMAGE imported ($(du -sh $W/root.tar | cut -f1), $pyver)" || { result "image: FAILED"; exit 1; }

# PyTorch (step 5, if time allows): the same root plus the machine's own PyTorch install,
# made in the background while the other steps run.
TORCH_IMAGE=bai/gputorch:1
torch_image() {
  local venv=/opt/torch/.venv
  [ -x $venv/bin/python3 ] || { echo "no $venv"; return 1; }
  local base; base=$(dirname "$(dirname "$(readlink -f $venv/bin/python3)")")
  mkdir -p $R/opt/bai-check && cp $repo/bench/gpu/mm.py $R/opt/bai-check/
  local extra=(); [ "$base" != /usr ] && extra=(-C / "${base#/}")
  tar -cf $W/torch.tar -C $R . -C / opt/torch/.venv "${extra[@]}" 2>/dev/null
  python3 $repo/bench/gpu/dk.py $SOCK import $W/torch.tar $TORCH_IMAGE \
    ai.backend.kernelspec=1 'ai.backend.features=batch uid-match' ai.backend.runtime-type=python \
    ai.backend.runtime-path=/opt/torch/.venv/bin/python3 ai.backend.resource.min.cpu=1 \
    ai.backend.resource.min.mem=1g && echo "torch image: $(du -sh $W/torch.tar | cut -f1)"
  rm -f $W/torch.tar
}
if [ -z "${MOCK:-}" ]; then
  (timeout 240 bash -c "$(declare -f torch_image); W=$W R=$R SOCK=$SOCK repo=$repo TORCH_IMAGE=$TORCH_IMAGE torch_image" >$W/torch-image.log 2>&1; echo "exit $?" >>$W/torch-image.log) &
  torch_job=$!
fi

# baid up in MODE with data dir $W/d-MODE on port PORT; sources its user env.
baid_up() {
  local mode=$1 port=$2; shift 2
  local d=$W/d-$mode
  mkdir -p $d
  local gpu=(--gpu-mode "$mode")
  if [ -n "${MOCK:-}" ]; then
    printf 'slot_name = "cuda"\ndevice_plugin_name = "CUDADevice"\nallocation_mode = "%s"\n[[devices]]\nmother_uuid = "c59395cd-ac91-4cd3-a1b0-3d2568aa2d01"\nmodel_name = "MOCK H200"\nnuma_node = 0\nsubproc_count = 132\nmemory_size = "141G"\nis_mig_device = false\n' "$mode" >$W/mock.toml
    gpu=(--mock-accelerator $W/mock.toml)
  fi
  BAI_DATA_DIR=$d setsid baid up --listen 127.0.0.1:$port --agent-listen off \
    --monitor-interval-ms 1000 --reserved-mem-mb 2048 "${gpu[@]}" "$@" >$d/baid.log 2>&1 </dev/null &
  echo $! >$d/baid.pid
  for _ in $(seq 1 120); do [ -s $d/env-user.sh ] && bai --help >/dev/null && break; sleep 0.5; done
  # shellcheck disable=SC1090
  . $d/env-admin.sh 2>/dev/null
  for _ in $(seq 1 120); do bai agents 2>/dev/null | grep -q cuda && return 0; sleep 0.5; done
  tail -20 $d/baid.log; return 1
}
baid_down() {
  local d=$W/d-$1
  kill "$(cat $d/baid.pid)" 2>/dev/null
  for _ in $(seq 1 40); do kill -0 "$(cat $d/baid.pid)" 2>/dev/null || break; sleep 0.5; done
  grep -E 'NVIDIA|cuda|MPS|ERROR|WARN' $d/baid.log | head -20
  cp $d/baid.log "$OUT/baid-$1.log"
}
# The session's status and why it ended, from `bai session info`.
status_of() { bai session info "$1" 2>/dev/null | grep -iE '^ *(status|status info|status_info)' | tr -s ' ' | tr '\n' ' '; }

step "1. baid up --gpu-mode discrete"
if baid_up discrete 8190 --metrics-token gpucheck --idle-utilization window=15,grace=10,cuda_util=5; then
  bai agents; result "discrete: agent offers $(bai agents 2>/dev/null | grep -oE 'cuda\.[a-z]+[^ ]*' | head -1)"
else result "discrete: baid found no GPU"; baid_down discrete; cleanup; exit 1; fi
grep -E 'driver files|cuda devices' $W/d-discrete/baid.log | head -3

step "2. a whole-GPU session runs CUDA"
out=$(timeout 180 bai run --rm -r cpu=2 -r mem=4g -r cuda.device=1 \
  --exec 'nvidia-smi -L; gpuprobe list; gpuprobe fill 4096; echo "nodes: $(ls /dev | grep nvidia | tr "\n" " ")"; env | grep -E "^(CUDA|LD_LIBRARY|NVIDIA|PATH)" | sort; ls /usr/local/nvidia/lib64 | tr "\n" " "' $IMAGE 2>&1)
echo "$out"
dev=$(echo "$out" | grep -m1 '^device 0:' | cut -d: -f2- | sed 's/^ //')
[ -n "$dev" ] && result "whole GPU in a session: $dev" || result "whole GPU in a session: FAILED"
out=$(timeout 120 bai run --rm -r cpu=1 -r mem=1g --exec 'gpuprobe list; echo "nodes: $(ls /dev | grep -c nvidia)"' $IMAGE 2>&1)
echo "$out"
echo "$out" | grep -q '^devices: 0' && echo "$out" | grep -q 'nodes: 0' \
  && result "session without a GPU: sees no device, no nvidia node" || result "session without a GPU: UNEXPECTED"

if [ -n "${torch_job:-}" ]; then
  step "5. PyTorch: a bf16 matrix product in a session against the same on the bare machine"
  wait $torch_job; cat $W/torch-image.log
  if grep -q '^torch image' $W/torch-image.log; then
    # Made after the agent listed its images: have it read them again.
    bai admin image rescan >/dev/null 2>&1
    mm() { /opt/torch/.venv/bin/python3 $repo/bench/gpu/mm.py 2>&1 | grep '^mm:'; }
    smm() { timeout 180 bai run --rm -r cpu=4 -r mem=16g -r cuda.device=1 \
      --exec '/opt/torch/.venv/bin/python3 /opt/bai-check/mm.py' $TORCH_IMAGE 2>&1 | grep -E '^mm:|rror' | head -3; }
    b1=$(mm); s1=$(smm); s2=$(smm); b2=$(mm)
    echo "bare: $b1 / $b2; session: $s1 / $s2"
    tf() { echo "$1" | grep -oE '[0-9.]+ TFLOP' | cut -d' ' -f1; }
    ratio=$(python3 -c "import sys; b=[float(x) for x in sys.argv[1:3] if x]; s=[float(x) for x in sys.argv[3:5] if x]; print('%.3f' % (max(s)/max(b)) if b and s else 'n/a')" "$(tf "$b1")" "$(tf "$b2")" "$(tf "$s1")" "$(tf "$s2")")
    result "pytorch: session $(tf "$s1"), $(tf "$s2") vs bare $(tf "$b1"), $(tf "$b2") TFLOP/s; best session / best bare = $ratio"
  else
    result "pytorch: no image ($(tail -2 $W/torch-image.log | tr '\n' ' '))"
  fi
fi

step "2b. the GPU in a login shell (what the web terminal's tmux and an SSH login start)"
# Debian's /etc/profile resets PATH; bai's profile.d file gives the kernel's back.
if [ -z "${MOCK:-}" ]; then probe='nvidia-smi -L'; else probe='true'; fi
out=$(timeout 120 bai run --rm -r cpu=1 -r mem=1g -r cuda.device=1 \
  --exec "echo \"kernel PATH=\$PATH\"; bash -lc 'echo \"login PATH=\$PATH\"; echo \"login LD_LIBRARY_PATH=\$LD_LIBRARY_PATH\"; $probe'" $IMAGE 2>&1)
echo "$out"
kp=$(echo "$out" | grep -m1 '^kernel PATH=' | cut -d= -f2-)
lp=$(echo "$out" | grep -m1 '^login PATH=' | cut -d= -f2-)
if [ -n "$kp" ] && [ "$kp" = "$lp" ] && { [ -n "${MOCK:-}" ] || echo "$out" | grep -q '^GPU 0:'; }; then
  result "login shell: the kernel's PATH kept ($lp), '$probe' works there"
else
  result "login shell: FAILED (kernel PATH '$kp', login PATH '$lp')"
fi

step "4. utilization in session stats, then the idle checker"
bai start -t gpubusy -r cpu=1 -r mem=2g -r cuda.device=1 $IMAGE >/dev/null 2>&1
timeout 120 bai run -t gpubusy --exec 'gpuprobe burn 25' $IMAGE >$W/burn.out 2>&1 &
burn=$!
peak=0
for _ in $(seq 1 20); do
  sleep 2
  s=$(bai session stats gpubusy 2>/dev/null | tail -1)
  u=$(bai session stats gpubusy --json 2>/dev/null | python3 -c 'import sys,json
try:
  d=json.load(sys.stdin); xs=[x.get("cuda_util") for x in d.get("samples",d.get("items",[])) if x.get("cuda_util") is not None]
  print(int(max(xs)) if xs else 0)
except Exception: print(0)' 2>/dev/null)
  echo "stats: $s (cuda_util max so far ${u:-0})"; [ "${u:-0}" -gt "$peak" ] && peak=$u
  [ -z "${MOCK:-}" ] && nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ' '
  kill -0 $burn 2>/dev/null || break
done
wait $burn; cat $W/burn.out | tail -3
bai session stats gpubusy 2>/dev/null | tail -5
[ "$peak" -gt 0 ] && result "utilization: cuda_util up to $peak % in bai session stats while burning" || result "utilization: none seen"
python3 -c 'import urllib.request as u; r=u.Request("http://127.0.0.1:8190/metrics", headers={"Authorization":"Bearer gpucheck"}); print("\n".join(l for l in u.urlopen(r).read().decode().splitlines() if "cuda" in l and not l.startswith("#"))[:1500])' 2>&1 | head -8
ended=""
for _ in $(seq 1 90); do
  st=$(status_of gpubusy)
  case "$st" in *TERMINATED*|*CANCELLED*|*ERROR*|"") ended=$st; break ;; esac
  sleep 1
done
echo "gpubusy: $ended"
bai session info gpubusy 2>&1 | head -20
echo "$ended" | grep -q 'idle-utilization' && result "idle GPU session: reclaimed with idle-utilization" || result "idle GPU session: $ended"
baid_down discrete

step "3. baid up --gpu-mode fractional: two 0.5 shares at once"
if baid_up fractional 8191; then
  bai agents; result "fractional: agent offers $(bai agents 2>/dev/null | grep -oE 'cuda\.[a-z]+[^ ]*' | head -1)"
  total=$(nvidia-smi --query-gpu=memory.total --format=csv,noheader,nounits 2>/dev/null | head -1)
  for n in a b; do
    timeout 240 bai run --rm -t share-$n -r cpu=2 -r mem=4g -r cuda.shares=0.5 \
      --exec 'env | grep CUDA_MPS; gpuprobe list; gpuprobe fill 512 20' $IMAGE >$W/share-$n.out 2>&1 &
    eval "pid_$n=$!"
  done
  # While both hold what they got: NVML's processes, and each session's own GPU memory.
  both=""
  for _ in $(seq 1 60); do
    grep -q '^fill:' $W/share-a.out 2>/dev/null && grep -q '^fill:' $W/share-b.out 2>/dev/null && both=1 && break
    sleep 1
  done
  sleep 3
  [ -z "${MOCK:-}" ] && nvidia-smi --query-compute-apps=pid,used_memory --format=csv
  for n in a b; do
    echo "stats of share-$n:"; bai session stats share-$n 2>/dev/null | head -4
    m=$(bai session stats share-$n --json 2>/dev/null | python3 -c 'import sys,json
d=json.load(sys.stdin); s=[x for x in d.get("samples",[]) if x.get("cuda_mem") is not None]
print("%.1f" % s[-1]["cuda_mem"] if s else "none")' 2>/dev/null)
    result "share $n while both hold: cuda_mem ${m:-none} % of its share in bai session stats"
  done
  [ -n "$both" ] && result "fractional: both sessions held their memory at the same time" || result "fractional: the two did not overlap"
  wait $pid_a; ra=$?; wait $pid_b; rb=$?
  for n in a b; do echo "--- share-$n"; cat $W/share-$n.out; done
  cap=$(( ${total:-0} / 2 ))
  for n in a b; do
    got=$(grep -oE 'fill: [0-9]+ MiB allocated, then [A-Za-z]+' $W/share-$n.out | head -1)
    result "share $n (cap ${cap} MiB): ${got:-no fill line}"
  done
  result "fractional: both sessions ended (bai run exit $ra and $rb)"
  echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$W/d-fractional/mps/pipe timeout 5 nvidia-cuda-mps-control
  tail -5 $W/d-fractional/mps/log/control.log 2>/dev/null
  tail -5 $W/d-fractional/mps/log/server.log 2>/dev/null
else
  result "fractional: baid did not start"; tail -20 $W/d-fractional/baid.log
fi
baid_down fractional

cleanup
cp $W/dockerd.log "$OUT/" 2>/dev/null
step "summary"
grep '^RESULT' "$log"
