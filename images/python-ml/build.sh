#!/usr/bin/env bash
# Builds the `python-ml` kernel image locally: the `python` image (bai/python:3.11-bookworm,
# with its sshd, tmux, Open MPI, Jupyter, JupyterLab and TensorBoard) plus Debian's PyTorch,
# NumPy, pandas, scikit-learn and Matplotlib, imported with `docker import` and labelled for
# bai like the `python` image (its apps, declared by the service-ports label, included).
# No registry is needed.
#
# PyTorch is Debian bookworm's python3-torch (1.13.1, a CPU build, linked against Debian's
# NumPy): PyPI's torch wheels for Linux bring CUDA libraries (gigabytes) and the CPU builds
# live on download.pytorch.org, which a machine with only Debian's and PyPI's mirrors cannot
# reach; the Debian packages also agree with each other's versions.
#
#   images/python-ml/build.sh [TAG]   (default TAG: bai/python-ml:3.11-bookworm)
#
# The base image is brought up to date first by images/python/build.sh (a no-op when it is).
# The build is skipped when an image with the same recipe hash (this script and the base
# image's recipe hash) already exists.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-bai/python-ml:3.11-bookworm}"
base="bai/python:3.11-bookworm"
packages=(python3-torch python3-numpy python3-pandas python3-sklearn python3-matplotlib)

# `for recipe in images/*/build.sh` runs python-ml before python in the C locale ('-' sorts
# before '/'), so the base recipe is run from here: a stale or missing base is built first.
"$here/../python/build.sh" "$base"
base_recipe="$(docker image inspect -f '{{ index .Config.Labels "ai.bai.recipe" }}' "$base" 2>/dev/null || true)"
if [ -z "$base_recipe" ]; then
  echo "error: the base image $base is missing (or has no ai.bai.recipe label); images/python/build.sh builds it" >&2
  exit 1
fi
recipe_hash="$({ cat "$here/build.sh"; echo "base $base_recipe"; } | sha256sum | cut -c1-16)"

existing="$(docker image inspect -f '{{ index .Config.Labels "ai.bai.recipe" }}' "$tag" 2>/dev/null || true)"
if [ "$existing" = "$recipe_hash" ]; then
  echo "image $tag is up to date ($recipe_hash)"
  exit 0
fi

work="$(mktemp -d /var/tmp/bai-image.XXXXXX)"
cid=""
cleanup() {
  if [ -n "$cid" ]; then docker rm -f "$cid" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
rootfs="$work/rootfs"
log="$work/build.log"
fail() { tail -30 "$log" >&2; echo "error: $1 (log above)" >&2; exit 1; }

echo "export $base ($base_recipe) into $rootfs"
cid="$(docker create "$base")"
mkdir "$rootfs"
docker export "$cid" | tar -C "$rootfs" --numeric-owner -xf -
docker rm "$cid" >/dev/null
cid=""
# What `docker create` adds to a container's filesystem, not part of the base image.
rm -f "$rootfs/.dockerenv" "$rootfs/dev/console"

# The host's DNS and (with BAI_DEBIAN_MIRROR) mirror while apt runs; the originals come back.
cp -a "$rootfs/etc/resolv.conf" "$work/resolv.conf.orig"
rm -f "$rootfs/etc/resolv.conf"
cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
cp -a "$rootfs/etc/apt/sources.list" "$work/sources.list.orig"
if [ -n "${BAI_DEBIAN_MIRROR:-}" ]; then
  echo "deb $BAI_DEBIAN_MIRROR bookworm main" >"$rootfs/etc/apt/sources.list"
fi
echo "apt-get install ${packages[*]} (log $log)"
apt_env=(/usr/bin/env DEBIAN_FRONTEND=noninteractive LANG=C.UTF-8 PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin)
chroot "$rootfs" "${apt_env[@]}" apt-get update >>"$log" 2>&1 || fail "apt-get update failed"
chroot "$rootfs" "${apt_env[@]}" apt-get install -y --no-install-recommends "${packages[@]}" >>"$log" 2>&1 \
  || fail "apt-get install failed"
chroot "$rootfs" /usr/bin/python3 -c 'import torch, numpy, pandas, sklearn, matplotlib' >>"$log" 2>&1 \
  || fail "the installed packages do not import"
rm -f "$rootfs/etc/resolv.conf" "$rootfs/etc/apt/sources.list"
mv "$work/resolv.conf.orig" "$rootfs/etc/resolv.conf"
mv "$work/sources.list.orig" "$rootfs/etc/apt/sources.list"

# Jupyter's kernel runs /opt/jupyter's Python (a virtual environment without the system's
# packages): these paths, appended after the environment's own, let notebooks import the
# Debian packages above and what the work user installs under /usr/local/lib/python3.11.
jupyter_site="$(echo "$rootfs"/opt/jupyter/lib/python3*/site-packages)"
[ -d "$jupyter_site" ] || { echo "error: $base has no /opt/jupyter virtual environment" >&2; exit 1; }
printf '%s\n' /usr/local/lib/python3.11/dist-packages /usr/lib/python3/dist-packages \
  >"$jupyter_site/bai-system-packages.pth"
chroot "$rootfs" /opt/jupyter/bin/python -c 'import torch, pandas, matplotlib' >>"$log" 2>&1 \
  || fail "Jupyter's Python does not import the packages"

rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

# The base image's labels (kernelspec, features, runtime, service-ports, …), with the memory
# PyTorch needs to import and run small models.
labels=()
while IFS= read -r kv; do
  k="${kv%%=*}"
  v="${kv#*=}"
  case "$k" in
    ai.backend.resource.min.mem) continue ;;
    ai.backend.*) ;;
    *) continue ;;
  esac
  v="${v//\\/\\\\}"
  v="${v//\"/\\\"}"
  labels+=(-c "LABEL $k=\"$v\"")
done < <(docker image inspect -f '{{ range $k, $v := .Config.Labels }}{{ $k }}={{ $v }}{{ "\n" }}{{ end }}' "$base")
[ ${#labels[@]} -gt 0 ] || { echo "error: $base has no ai.backend.* labels" >&2; exit 1; }
labels+=(-c 'LABEL ai.backend.resource.min.mem=256m')

tar -C "$rootfs" --numeric-owner -c . | docker import \
  -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'USER work' \
  -c 'WORKDIR /home/work' \
  -c 'CMD ["/usr/bin/python3"]' \
  -c "LABEL ai.bai.recipe=$recipe_hash" \
  "${labels[@]}" \
  - "$tag" >/dev/null
echo "built $tag ($recipe_hash)"
