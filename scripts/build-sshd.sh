#!/usr/bin/env bash
# Builds the SSH server kernels use in images that have none of their own, and puts it at
# target/PROFILE/bai-dropbear and target/PROFILE/bai-sftp-server, beside the runner, where
# the agent finds them:
#
#   scripts/build-sshd.sh            (PROFILE: release unless set; run by build-krunner.sh)
#
# Dropbear and OpenSSH's sftp-server from Debian's source packages, linked statically
# against musl (Debian's musl-tools), so they run in any image, as the runner does, and read
# /etc/passwd themselves. Dropbear is built with scripts/sshd/localoptions.h (its host keys
# made at the first connection in the kernel's run directory, no password logins, sftp
# from /opt/bai/bin/sftp-server) and scripts/sshd/dropbear-bai.patch (bai's own: a key in
# the kernel's /opt/bai/run/authorized_keys or cluster_authorized_keys also opens it, as
# the image's OpenSSH is configured; with -e the session's PATH stays).
#
# Built once and kept under BAI_SSHD_CACHE (default /var/cache/bai-sshd), by a key of these
# recipe files: about a minute the first time. Where it cannot be built (no source
# package), it says so and exits 0: images without sshd then have no SSH app, as before.
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-release}"
case "$profile" in dev | test) dir=debug ;; bench) dir=release ;; *) dir="$profile" ;; esac
recipe=scripts/sshd
key="$(cat "$0" "$recipe/localoptions.h" "$recipe/dropbear-bai.patch" | sha256sum | cut -c1-16)"
cache="${BAI_SSHD_CACHE:-/var/cache/bai-sshd}/$key"

give_up() {
  echo "build-sshd.sh: $*; kernels of images without sshd will have no SSH app" >&2
  exit 0
}

build() {
  local need=()
  command -v musl-gcc >/dev/null || need+=(musl-tools)
  command -v autoreconf >/dev/null || need+=(autoconf automake)
  command -v dpkg-source >/dev/null || need+=(dpkg-dev)
  command -v patch >/dev/null || need+=(patch)
  if [ ${#need[@]} -gt 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
      "${need[@]}" >/dev/null || give_up "cannot install ${need[*]}"
  fi
  # shellcheck source=scripts/deb-src.sh
  . scripts/deb-src.sh
  { ensure_deb_src dropbear && ensure_deb_src openssh; } 2>/dev/null ||
    give_up "apt knows no source package dropbear or openssh"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "building the kernels' SSH server (Dropbear, sftp-server; kept in $cache)" >&2
  (cd "$work" && apt-get source -q dropbear openssh >"$work/source.log" 2>&1) ||
    { tail -3 "$work/source.log" >&2; give_up "apt-get source dropbear openssh failed"; }

  local db
  db="$(find "$work" -maxdepth 1 -type d -name 'dropbear-*' | head -1)"
  [ -n "$db" ] || give_up "no dropbear source"
  cp "$recipe/localoptions.h" "$db/"
  patch -d "$db" -p1 -s <"$recipe/dropbear-bai.patch" || give_up "the patch does not apply"
  (cd "$db" &&
    CC=musl-gcc ./configure -q --enable-static --disable-zlib --disable-pam \
      --disable-lastlog --disable-utmp --disable-utmpx --disable-wtmp --disable-wtmpx \
      --disable-loginfunc --disable-pututline --disable-pututxline >"$work/db.log" 2>&1 &&
    make -j"$(nproc)" PROGRAMS=dropbear STATIC=1 >>"$work/db.log" 2>&1) ||
    { tail -5 "$work/db.log" >&2; give_up "Dropbear did not build"; }

  local os
  os="$(find "$work" -maxdepth 1 -type d -name 'openssh-*' | head -1)"
  [ -n "$os" ] || give_up "no openssh source"
  (cd "$os" && autoreconf -fi >"$work/os.log" 2>&1 &&
    CC=musl-gcc LDFLAGS=-static ./configure -q --without-openssl --without-zlib \
      --without-pam --without-selinux --without-libedit --without-kerberos5 --without-ldns \
      --without-security-key-builtin --disable-lastlog --disable-utmp --disable-utmpx \
      --disable-wtmp --disable-wtmpx >>"$work/os.log" 2>&1 &&
    make -j"$(nproc)" sftp-server >>"$work/os.log" 2>&1) ||
    { tail -5 "$work/os.log" >&2; give_up "sftp-server did not build"; }

  mkdir -p "$cache.new"
  install -m 755 -s "$db/dropbear" "$cache.new/dropbear"
  install -m 755 -s "$os/sftp-server" "$cache.new/sftp-server"
  rm -rf "$cache"
  mv "$cache.new" "$cache"
}

built() { [ -x "$cache/dropbear" ] && [ -x "$cache/sftp-server" ]; }
if ! built; then
  mkdir -p "$(dirname "$cache")" 2>/dev/null && [ -w "$(dirname "$cache")" ] ||
    give_up "cannot write $(dirname "$cache") (BAI_SSHD_CACHE)"
  # One build at a time (scripts/run-tests.sh starts one beside the workspace's build; the
  # runner's build then waits for it and finds it done).
  exec 9>"$(dirname "$cache")/.build.lock"
  flock 9
  built || build
fi
mkdir -p "target/$dir"
for b in dropbear sftp-server; do
  cp "$cache/$b" "target/$dir/.bai-$b.new"
  mv -f "target/$dir/.bai-$b.new" "target/$dir/bai-$b"
done
