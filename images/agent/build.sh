#!/usr/bin/env bash
# Builds the agent's image for the Kubernetes backend in the cluster
# (dist/kubernetes/agent.yaml) from already built release binaries:
#
#   images/agent/build.sh [TAG] [BINDIR]   (defaults: bai/agent:latest, target/release)
#
# BAI_AGENT_BASE names the base image (default debian:bookworm-slim; any glibc Debian 12+),
# pulled by `docker build` when the engine lacks it. Where no registry answers (bai's test
# machines), BAI_AGENT_BASE_FROM=IMAGE makes the base from a local IMAGE instead, once
# (`docker export | docker import`, tagged bai/agent-base:local, kept for the next build and
# made again only when IMAGE changes): a copy of its files without its labels, since the
# agent's image must not carry `ai.backend.kernelspec` (a Docker agent on the machine would
# offer it as a kernel image). The tests use bai/python:3.11-bookworm.
# The build installs nftables and iproute2 from the base's Debian mirror (`--network host`:
# the build reaches what this machine reaches).
# Push TAG to the cluster's registry, or load it on each node (`imagePullPolicy: IfNotPresent`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-bai/agent:latest}"
bindir="${2:-$here/../../target/release}"
base="${BAI_AGENT_BASE:-debian:bookworm-slim}"

for b in baid bai-krunner; do
  [ -x "$bindir/$b" ] || { echo "error: $bindir/$b is missing (make build)" >&2; exit 1; }
done

if [ -n "${BAI_AGENT_BASE_FROM:-}" ] && ! docker image inspect "$base" >/dev/null 2>&1; then
  src="$BAI_AGENT_BASE_FROM"
  src_id="$(docker image inspect -f '{{.Id}}' "$src" 2>/dev/null)" || {
    echo "error: BAI_AGENT_BASE_FROM=$src is not on this engine" >&2
    exit 1
  }
  base=bai/agent-base:local
  have="$(docker image inspect -f '{{ index .Config.Labels "ai.bai.flattened-from" }}' "$base" 2>/dev/null || true)"
  if [ "$have" != "$src_id" ]; then
    echo "making $base from $src" >&2
    c="$(docker create "$src")"
    trap 'docker rm -f "$c" >/dev/null 2>&1 || true' EXIT
    docker export "$c" | docker import --change "LABEL ai.bai.flattened-from=$src_id" \
      --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin' - "$base" >/dev/null
    docker rm -f "$c" >/dev/null
    trap - EXIT
  fi
fi

ctx="$(mktemp -d /var/tmp/bai-agent-image.XXXXXX)"
trap 'rm -rf "$ctx"' EXIT
cp "$here/Dockerfile" "$ctx/"
# Hard links where they can be (same file system): no copy of the 40 MB baid.
for b in baid bai-krunner bai-dropbear bai-sftp-server; do
  [ -e "$bindir/$b" ] || continue # the SSH server: where scripts/build-sshd.sh built it
  ln "$bindir/$b" "$ctx/$b" 2>/dev/null || cp "$bindir/$b" "$ctx/$b"
done
DOCKER_BUILDKIT=0 docker build -q --network host --build-arg "BASE=$base" -t "$tag" "$ctx" >"$ctx/build.log" 2>&1 || {
  cat "$ctx/build.log" >&2
  exit 1
}
echo "$tag"
