#!/usr/bin/env bash
# Builds the agent's image for the Kubernetes backend in the cluster
# (dist/kubernetes/agent.yaml) from already built release binaries:
#
#   images/agent/build.sh [TAG] [BINDIR]   (defaults: bai/agent:latest, target/release)
#
# BAI_AGENT_BASE names the base image (default debian:bookworm-slim; any glibc Debian 12+).
# No registry is needed when the base is on the local engine. Where it is not and
# bai/python:3.11-bookworm is (bai's own test machines, which reach no image registry), a
# base without that image's kernel labels is made from it once (`docker export | docker
# import`, tagged bai/agent-base:bookworm, kept for the next build): the agent's image must not
# carry `ai.backend.kernelspec`, or Docker agents on the machine would offer it as a kernel.
# Push TAG to the cluster's registry, or load it on each node (`imagePullPolicy: IfNotPresent`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tag="${1:-bai/agent:latest}"
bindir="${2:-$here/../../target/release}"
base="${BAI_AGENT_BASE:-debian:bookworm-slim}"

for b in baid bai-krunner; do
  [ -x "$bindir/$b" ] || { echo "error: $bindir/$b is missing (cargo build --release --bins)" >&2; exit 1; }
done

if ! docker image inspect "$base" >/dev/null 2>&1; then
  src=bai/python:3.11-bookworm
  src_id="$(docker image inspect -f '{{.Id}}' "$src" 2>/dev/null)" || {
    echo "error: the base image $base is not on this engine (pull it, or set BAI_AGENT_BASE)" >&2
    exit 1
  }
  base=bai/agent-base:bookworm
  have="$(docker image inspect -f '{{ index .Config.Labels "ai.bai.flattened-from" }}' "$base" 2>/dev/null || true)"
  if [ "$have" != "$src_id" ]; then
    echo "making $base from $src (once per machine)" >&2
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
for b in baid bai-krunner; do
  ln "$bindir/$b" "$ctx/$b" 2>/dev/null || cp "$bindir/$b" "$ctx/$b"
done
DOCKER_BUILDKIT=0 docker build -q --build-arg "BASE=$base" -t "$tag" "$ctx" >"$ctx/build.log" 2>&1 || {
  cat "$ctx/build.log" >&2
  exit 1
}
echo "$tag"
