#!/usr/bin/env bash
# Builds the kernel runner statically linked (glibc's libc.a, a static PIE) and puts it at
# target/PROFILE/bai-krunner, where baid looks for it beside itself.
#
#   scripts/build-krunner.sh            (PROFILE: release unless set)
#
# The runner is the first program of every kernel, run from the agent's machine inside the
# kernel's image (Docker: bind-mounted; Kubernetes: copied in from the agent's image). Linked
# dynamically, it needs the image to have a glibc at least as new as the build machine's
# (Debian 12: 2.34 symbols), so images on Ubuntu 20.04 or Debian 11, Alpine (musl) or
# images with no C library could not start at all. Static, it loads nothing from the image.
#
# Cargo cannot link one package of a workspace statically: the flag is per target, and on
# the host's own target it would also apply to proc-macros, which cannot be static. So this
# is a second, small build for the host's triple by name (its own directory under target/),
# run after the workspace build (`make build`, scripts/run-tests.sh): a later plain
# `cargo build` puts the dynamic runner back (baid's agent then warns at start).
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-release}"
case "$profile" in dev | test) dir=debug ;; bench) dir=release ;; *) dir="$profile" ;; esac
triple="$(rustc -vV | sed -n 's/^host: //p')"
[ -n "$triple" ] || { echo "build-krunner.sh: rustc names no host triple" >&2; exit 1; }
RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
  cargo build --profile "$profile" -p bai-krunner --target "$triple" "$@"
built="target/$triple/$dir/bai-krunner"
mkdir -p "target/$dir"
# A new file, renamed over the old name: target/$dir/bai-krunner is cargo's hard link to its
# own copy in deps/, which writing through would change behind cargo's back.
cp "$built" "target/$dir/.bai-krunner.static"
mv -f "target/$dir/.bai-krunner.static" "target/$dir/bai-krunner"
# The SSH server for images without their own (cached: instant after the first build).
PROFILE="$profile" scripts/build-sshd.sh
