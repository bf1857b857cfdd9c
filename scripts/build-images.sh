#!/usr/bin/env bash
# Builds the kernel images (images/*/build.sh; each is quick when its image is up to date).
#
#   build-images.sh               builds them all now (`python` first: `python-ml` is made from it)
#   build-images.sh --background  the same in the background (log /var/tmp/bai-images.log), so
#                                 that `make test` builds the workspace meanwhile: the images
#                                 wait on the network and the disk, the build on the CPUs
#   build-images.sh --wait        waits for a background build; exits non-zero with its log's
#                                 tail when it failed, and builds them now when none ran
#
# --ml-later (with no other flag, for `make up`): `python-ml` (PyTorch and friends, a few
# minutes) is built in the background unless it exists; bai lists it once it does.
set -euo pipefail
cd "$(dirname "$0")/.."
log=/var/tmp/bai-images.log
status=/var/tmp/bai-images.status
pid_file=/var/tmp/bai-images.pid

build_all() {
  local ml_later=$1 recipe
  images/python/build.sh
  for recipe in images/*/build.sh; do
    case "$recipe" in
      images/python/build.sh) ;;
      # Not a kernel image: the agent's, from built binaries (docs/KUBERNETES.md).
      images/agent/build.sh) ;;
      images/python-ml/build.sh)
        if [ "$ml_later" = 0 ] || docker image inspect bai/python-ml:3.11-bookworm >/dev/null 2>&1; then
          "$recipe"
        else
          local ml_log=/var/tmp/bai-image-python-ml.log
          echo "==> building the python-ml image in the background (a few minutes; log $ml_log);"
          echo "    it appears in \`bai images\` and the launcher when it is done"
          setsid nohup "$recipe" >"$ml_log" 2>&1 </dev/null &
        fi
        ;;
      *) "$recipe" ;;
    esac
  done
}

case "${1:-}" in
  "") build_all 0 ;;
  --ml-later) build_all 1 ;;
  --background)
    rm -f "$status"
    echo "==> building the kernel images in the background (log $log)"
    nohup bash -c '"$1" && rc=0 || rc=$?; echo "$rc" >"$2"' _ "$(readlink -f "$0")" "$status" \
      >"$log" 2>&1 </dev/null &
    echo $! >"$pid_file"
    ;;
  --wait)
    # Done when the status is written; still going while its process lives; otherwise none
    # ran here (or it was killed): then they are built now.
    while [ ! -f "$status" ]; do
      pid=$(cat "$pid_file" 2>/dev/null || true)
      if [ -z "$pid" ] || ! kill -0 "$pid" 2>/dev/null; then
        [ -f "$status" ] && break
        echo "==> no background build of the kernel images: building them now" >&2
        build_all 0 >&2
        exit 0
      fi
      sleep 2
    done
    rc=$(cat "$status")
    rm -f "$pid_file"
    if [ "$rc" != 0 ]; then
      echo "error: the kernel images' build failed (exit $rc); the end of $log:" >&2
      tail -40 "$log" >&2
      exit 1
    fi
    echo "==> the kernel images are built (log $log)" >&2
    ;;
  *) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
