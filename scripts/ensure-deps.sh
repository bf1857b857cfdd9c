#!/usr/bin/env bash
# Installs and starts what bai needs on a fresh Debian 12 machine, skipping what is there:
# Debian's docker.io and debootstrap, node/npm, musl and autotools (the kernels' SSH server),
# chromium and the OpenSSH client, a running Docker engine, and the kernel images.
set -euo pipefail
cd "$(dirname "$0")/.."

need_pkgs=()
command -v dockerd >/dev/null 2>&1 || need_pkgs+=(docker.io)
command -v debootstrap >/dev/null 2>&1 || need_pkgs+=(debootstrap)
# nftables: the agent's egress rules on its kernel bridges (docker/egress).
command -v nft >/dev/null 2>&1 || need_pkgs+=(nftables)
# The web UI is built with node/npm. With --test: Debian's chromium for the UI's end-to-end
# tests, the OpenSSH client (ssh, scp, sftp) for the apps tests, iproute2/util-linux for the
# multi-machine tests and docker-registry for images that travel between them.
command -v npm >/dev/null 2>&1 || need_pkgs+=(nodejs npm)
# musl, autotools and dpkg-dev: the SSH server for images without their own, built from
# Debian's dropbear and openssh sources (scripts/build-sshd.sh).
command -v musl-gcc >/dev/null 2>&1 || need_pkgs+=(musl-tools)
command -v autoreconf >/dev/null 2>&1 || need_pkgs+=(autoconf automake)
command -v dpkg-source >/dev/null 2>&1 || need_pkgs+=(dpkg-dev)
command -v patch >/dev/null 2>&1 || need_pkgs+=(patch)
if [ "${1:-}" = "--test" ]; then
  command -v chromium >/dev/null 2>&1 || need_pkgs+=(chromium)
  command -v ssh >/dev/null 2>&1 || need_pkgs+=(openssh-client)
  command -v ip >/dev/null 2>&1 || need_pkgs+=(iproute2)
  command -v nsenter >/dev/null 2>&1 || need_pkgs+=(util-linux)
  # Debian's registry (distribution) for the images-travel tests.
  command -v docker-registry >/dev/null 2>&1 || need_pkgs+=(docker-registry)
  # A statically linked busybox: a kernel image with no C library (tests/tests/images.rs).
  dpkg -s busybox-static >/dev/null 2>&1 || need_pkgs+=(busybox-static)
  # OpenLDAP's server and tools for the directory login tests (tests/tests/ldap.rs starts its
  # own slapd on a loopback port; the package's daemon is neither configured nor started).
  [ -x /usr/sbin/slapd ] || need_pkgs+=(slapd)
  command -v ldapsearch >/dev/null 2>&1 || need_pkgs+=(ldap-utils)
  # Samba's Active Directory domain controller for the AD login test
  # (tests/tests/ldap/active_directory.rs provisions a domain of its own in a temp dir and
  # starts it on a loopback address; the package's daemons are neither configured nor
  # started).
  [ -x /usr/sbin/samba ] && [ -d /usr/share/samba/setup/ad-schema ] ||
    need_pkgs+=(samba-ad-dc samba-ad-provision)
fi
if [ ${#need_pkgs[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "error: missing ${need_pkgs[*]}; run as root or install them with apt-get" >&2
    exit 1
  fi
  echo "==> installing ${need_pkgs[*]} (Debian packages)"
  apt-get update -qq
  made_policy=
  if [[ " ${need_pkgs[*]} " == *" slapd "* || " ${need_pkgs[*]} " == *" samba-ad-dc "* ]]; then
    # No directory of slapd's own (dc=nodomain), and no daemon started by a postinst.
    echo "slapd slapd/no_configuration boolean true" | debconf-set-selections
    if [ ! -e /usr/sbin/policy-rc.d ]; then
      printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
      chmod +x /usr/sbin/policy-rc.d
      made_policy=1
      trap 'rm -f /usr/sbin/policy-rc.d' EXIT
    fi
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_pkgs[@]}" >/dev/null
  if [ -n "$made_policy" ]; then rm -f /usr/sbin/policy-rc.d; trap - EXIT; fi
fi

# The OpenID provider of the OIDC login tests (tests/tests/oidc.rs): the `oidc-provider` npm
# package, from its committed lock file (the test also runs this when it is missing).
if [ "${1:-}" = "--test" ] && [ ! -f tests/oidc-provider/node_modules/oidc-provider/package.json ]; then
  echo "==> installing the test OpenID provider (npm ci in tests/oidc-provider)"
  (cd tests/oidc-provider && npm ci --no-audit --no-fund >/dev/null)
fi

if ! docker info >/dev/null 2>&1; then
  echo "==> starting the Docker engine"
  mkdir -p /var/log
  setsid dockerd >/var/log/bai-dockerd.log 2>&1 < /dev/null &
  for _ in $(seq 1 60); do
    docker info >/dev/null 2>&1 && break
    sleep 0.5
  done
  docker info >/dev/null 2>&1 || { echo "error: dockerd did not start; see /var/log/bai-dockerd.log" >&2; tail -20 /var/log/bai-dockerd.log >&2; exit 1; }
fi

# The tests' Kubernetes (scripts/run-tests.sh starts it) is built once per machine: on a new
# one, its build (~4 min of both cores) runs in the background at the lowest CPU priority
# from here, beside the image builds below and the rest of `make test`'s set-up, which wait
# on the network and the disk; run-tests.sh's own `build` waits for it.
if [ "${1:-}" = "--test" ] && [ "${BAI_TEST_KUBE:-on}" != off ]; then
  scripts/kube-cluster.sh build-background || echo "==> (the tests' Kubernetes is built later, by scripts/run-tests.sh)"
fi

# The kernel images (scripts/build-images.sh). For `make test` they are built in the
# background while the workspace builds (they wait on the network and the disk, the build on
# the CPUs); scripts/run-tests.sh waits for them before the tests. For `make up`, `python-ml`
# (PyTorch and friends, a few minutes) is built in the background; bai lists it once it exists.
if [ "${1:-}" = "--test" ]; then
  scripts/build-images.sh --background
else
  scripts/build-images.sh --ml-later
fi
