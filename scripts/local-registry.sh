#!/usr/bin/env bash
# A registry for one machine (make up REGISTRY=1): Debian's docker-registry on loopback,
# its images under $BAI_DATA_DIR/registry (default ~/.local/share/bai/registry). Installs the
# package when missing, starts it unless something answers there already, and prints the
# address for BAI_REGISTRY.
set -euo pipefail
addr="${BAI_LOCAL_REGISTRY_ADDR:-127.0.0.1:5000}"
data="${BAI_DATA_DIR:-$HOME/.local/share/bai}/registry"
if curl -fsS -o /dev/null "http://$addr/v2/" 2>/dev/null; then
  echo "$addr"
  exit 0
fi
if ! command -v docker-registry >/dev/null 2>&1; then
  echo "==> installing Debian's docker-registry" >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q docker-registry >&2
fi
mkdir -p "$data"
cat > "$data/config.yml" <<YML
version: 0.1
log:
  level: warn
storage:
  filesystem:
    rootdirectory: $data/data
  delete:
    enabled: true
http:
  addr: $addr
YML
nohup docker-registry serve "$data/config.yml" >"$data/registry.log" 2>&1 &
for _ in $(seq 1 300); do
  if curl -fsS -o /dev/null "http://$addr/v2/" 2>/dev/null; then
    echo "==> registry on $addr (images in $data/data, log $data/registry.log)" >&2
    echo "$addr"
    exit 0
  fi
  sleep 0.2
done
echo "error: the registry did not answer on $addr; see $data/registry.log" >&2
exit 1
