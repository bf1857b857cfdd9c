#!/usr/bin/env bash
# Builds the `python` kernel image locally: Debian bookworm (debootstrap) + Python 3.11,
# OpenSSH (server, client, sftp) and tmux for the intrinsic apps (sshd, web terminal),
# Open MPI and mpi4py for cluster sessions (`mpirun -H main1,sub1,…` over the kernels' ssh),
# Jupyter Notebook, JupyterLab and TensorBoard (PyPI) declared as apps by the service-ports label,
# imported with `docker import` and labelled for bai. No registry is needed.
#
#   images/python/build.sh [TAG]      (default TAG: bai/python:3.11-bookworm)
#
# The build is skipped when an image with the same recipe hash already exists.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-bai/python:3.11-bookworm}"
mirror="${BAI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
recipe_hash="$(sha256sum "$here/build.sh" | cut -c1-16)"

existing="$(docker image inspect -f '{{ index .Config.Labels "ai.bai.recipe" }}' "$tag" 2>/dev/null || true)"
if [ "$existing" = "$recipe_hash" ]; then
  echo "image $tag is up to date ($recipe_hash)"
  exit 0
fi

work="$(mktemp -d /var/tmp/bai-image.XXXXXX)"
trap 'rm -rf "$work"' EXIT
rootfs="$work/rootfs"
echo "debootstrap bookworm into $rootfs (mirror $mirror)"
debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates,procps,less,tini,openssh-server,openssh-client,openssh-sftp-server,tmux,openmpi-bin,python3-mpi4py \
  bookworm "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 || {
  tail -30 "$work/debootstrap.log" >&2
  exit 1
}

# The unprivileged user every session runs as; /home/work is replaced by a per-session
# scratch directory at run time, so its contents here only matter for `docker run` tests.
chroot "$rootfs" /usr/sbin/groupadd -g 1000 work
chroot "$rootfs" /usr/sbin/useradd -u 1000 -g 1000 -d /home/work -s /bin/bash -m work
chroot "$rootfs" ln -sf /usr/bin/python3 /usr/local/bin/python
# A Python prefix the work user may write outside /home/work: packages installed there
# (`pip install --target /usr/local/lib/python3.11/dist-packages …`, or plain files) live in
# the container's writable layer, so a session converted to an image keeps them.
install -d -o 1000 -g 1000 -m 0755 "$rootfs/usr/local/lib/python3.11/dist-packages"
# Jupyter Notebook and JupyterLab from PyPI, in their own virtual environment (started on
# demand by krunner when the user opens the app).
# The wheels are fetched by the host's pip (its index and certificates), for the image's
# CPython 3.11 on x86_64 glibc, then installed offline into the chroot.
wheels="$rootfs/tmp/wheels"
mkdir -p "$wheels"
hostpy=""
for c in python3 "$HOME/.pyenv/versions/3.13.0/bin/python3.13" python3.13 python3.11; do
  if command -v "$c" >/dev/null 2>&1 && "$c" -m pip --version >/dev/null 2>&1; then hostpy="$c"; break; fi
done
[ -n "$hostpy" ] || { echo "error: a host Python with pip is needed to fetch Jupyter's wheels" >&2; exit 1; }
"$hostpy" -m pip download -q --disable-pip-version-check --dest "$wheels" --only-binary=:all: \
  --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform any \
  "notebook>=7,<8" "jupyterlab>=4,<5" >"$work/pip.log" 2>&1 || { tail -30 "$work/pip.log" >&2; exit 1; }
chroot "$rootfs" /usr/bin/python3 -m venv /opt/jupyter
chroot "$rootfs" /usr/bin/env -u PIP_FIND_LINKS /opt/jupyter/bin/pip install -q --no-cache-dir \
  --disable-pip-version-check --no-index --find-links /tmp/wheels \
  "notebook>=7,<8" "jupyterlab>=4,<5" >>"$work/pip.log" 2>&1 || { tail -30 "$work/pip.log" >&2; exit 1; }
chroot "$rootfs" ln -sf /opt/jupyter/bin/jupyter /usr/local/bin/jupyter
# TensorBoard in a virtual environment of its own (its pins need not agree with Jupyter's).
"$hostpy" -m pip download -q --disable-pip-version-check --dest "$wheels" --only-binary=:all: \
  --python-version 3.11 --implementation cp --abi cp311 --platform manylinux_2_17_x86_64 \
  --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 --platform any \
  "tensorboard>=2.16,<3" >>"$work/pip.log" 2>&1 || { tail -30 "$work/pip.log" >&2; exit 1; }
chroot "$rootfs" /usr/bin/python3 -m venv /opt/tensorboard
chroot "$rootfs" /usr/bin/env -u PIP_FIND_LINKS /opt/tensorboard/bin/pip install -q --no-cache-dir \
  --disable-pip-version-check --no-index --find-links /tmp/wheels \
  "tensorboard>=2.16,<3" >>"$work/pip.log" 2>&1 || { tail -30 "$work/pip.log" >&2; exit 1; }
chroot "$rootfs" ln -sf /opt/tensorboard/bin/tensorboard /usr/local/bin/tensorboard
rm -rf "$wheels"
# Host keys made at package install would be shared by every session: krunner makes fresh
# ones per session (and runs sshd as the work user, so no privilege separation directory).
rm -f "$rootfs"/etc/ssh/ssh_host_*
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/usr/share/doc/* \
  "$rootfs"/usr/share/man/* "$rootfs"/usr/share/locale/*

tar -C "$rootfs" -c . | docker import \
  -c 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' \
  -c 'ENV LANG=C.UTF-8' \
  -c 'USER work' \
  -c 'WORKDIR /home/work' \
  -c 'CMD ["/usr/bin/python3"]' \
  -c "LABEL ai.bai.recipe=$recipe_hash" \
  -c 'LABEL ai.backend.kernelspec=1' \
  -c 'LABEL ai.backend.features="query batch uid-match"' \
  -c 'LABEL ai.backend.base-distro=debian12' \
  -c 'LABEL ai.backend.runtime-type=python' \
  -c 'LABEL ai.backend.runtime-path=/usr/bin/python3' \
  -c 'LABEL ai.backend.resource.min.cpu=1' \
  -c 'LABEL ai.backend.resource.min.mem=64m' \
  -c 'LABEL ai.backend.service-ports="jupyter:http:8091,jupyterlab:http:8092,tensorboard:http:8093"' \
  - "$tag" >/dev/null
echo "built $tag ($recipe_hash)"
