#!/usr/bin/env bash
# Session commit benchmark (issue "Environments that are real"), in the real Docker engine:
# a session with SIZE_MB MiB of random data written to its container's writable layer (in the
# Python prefix the `python` image lets its user write) is converted to an image with
# `bai session convert-to-image` (the request, the agent's commit with the base image's config
# and the catalogue's record, followed on the task's event stream to its end), against
# `docker commit` of the same container, same run; ROUNDS rounds each, alternating, medians.
#                                                                   goal ratio ≤ 1.1
# Then the pull of the `python` image by a fresh agent (a network namespace with its own
# engine; its first session's PULLING → PREPARED) against `docker pull` from the same
# registry (Debian's docker-registry) by another fresh engine, after a warm-up pull
# (tests/tests/registry.rs, bench_pull_against_docker_pull).            goal ratio ≤ 1.05
# It prints its table rows; they are kept in bench/results/80-images.md (bench/assemble.sh
# builds bench/RESULTS.md from bench/results/, so a number only in RESULTS.md is lost).
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
SIZE_MB="${SIZE_MB:-500}"
ROUNDS="${ROUNDS:-3}"
BIN="$PWD/target/release"
data="$(mktemp -d /var/tmp/bai-bench-images.XXXXXX)"
port=$((20000 + RANDOM % 20000))
BAI_DATA_DIR="$data" BAI_LISTEN="127.0.0.1:$port" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$data/out.log" 2>"$data/err.log" &
baid_pid=$!
owner=""
cleanup() {
  kill "$baid_pid" 2>/dev/null || true
  wait "$baid_pid" 2>/dev/null || true
  agent=$(grep -o 'agent-[0-9a-f]*' "$data/out.log" | head -1 || true)
  [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
  [ -n "$owner" ] && docker images -q --filter "label=ai.backend.customized-image.owner=$owner" | xargs -r docker rmi -f >/dev/null 2>&1
  docker rmi -f bai-bench/commit:baseline >/dev/null 2>&1 || true
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q "Stop with Ctrl-C" "$data/out.log" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC1091
. "$data/env-user.sh"
bai="$BIN/bai"
"$bai" start -t benchimg -r cpu=1 -r mem=1g python >/dev/null
"$bai" run -t benchimg -c "
import os
with open('/usr/local/lib/python3.11/dist-packages/bench.bin', 'wb') as f:
    for _ in range($SIZE_MB):
        f.write(os.urandom(1 << 20))
print('written')
" python >/dev/null
cid=$("$bai" session info benchimg | awk '/^container_id:/ {print $2}')
now() { date +%s.%N; }
bai_times=()
docker_times=()
for i in $(seq 1 "$ROUNDS"); do
  t0=$(now)
  docker commit "$cid" bai-bench/commit:baseline >/dev/null
  t1=$(now)
  docker rmi -f bai-bench/commit:baseline >/dev/null
  docker_times+=("$(echo "$t1 - $t0" | bc)")
  t0=$(now)
  "$bai" session convert-to-image benchimg bench-env >/dev/null 2>&1
  t1=$(now)
  bai_times+=("$(echo "$t1 - $t0" | bc)")
  echo "round $i: bai ${bai_times[-1]} s, docker commit ${docker_times[-1]} s" >&2
done
owner=$("$bai" images --customized --json | python3 -c 'import json,sys; i=json.load(sys.stdin)[0]; print(next(l["value"] for l in i["labels"] if l["key"]=="ai.backend.customized-image.owner"))')
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
b=$(median "${bai_times[@]}")
d=$(median "${docker_times[@]}")
ratio=$(echo "scale=3; $b / $d" | bc)
echo "| convert a session with $SIZE_MB MiB in its writable layer (\`bai session convert-to-image\`, to the task's end), median of $ROUNDS | $(printf '%.2f' "$b") s | \`docker commit\` of the same container $(printf '%.2f' "$d") s | ${ratio}× | ≤ 1.1× |"
cargo test -q --release -p bai-e2e --test registry -- --ignored --nocapture bench_pull_against_docker_pull 2>/dev/null | grep '^| pull'
