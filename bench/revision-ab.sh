#!/usr/bin/env bash
# This checkout against an earlier revision, side by side on this machine (a change of
# structure must not cost the user anything):
#   1. `bai run --rm -q -c 'print(1)' python`, alternating between two managers (each its own
#      `baid up` with the Docker agent and its own data dir, both running): ROUNDS pairs,
#      median of each and of the pair-by-pair ratio;
#   2. each manager's idle RSS afterwards;
#   3. the release rebuild of `baid` after a change in the HTTP edge (`api/session.rs`
#      touched), each in its own tree.
#   bench/revision-ab.sh REV      (REV: e.g. the last landed main)
# The earlier revision is built in a worktree of its own (AB_DIR, default /tmp/bai-ab-REV)
# with its own target dir. Writes bench/results/26-manager-crates.md.
set -euo pipefail
cd "$(dirname "$0")/.."
rev="${1:?usage: bench/revision-ab.sh REV}"
ROUNDS="${ROUNDS:-15}"
dir="${AB_DIR:-/tmp/bai-ab-$rev}"
[ -d "$dir" ] || git worktree add --detach "$dir" "$rev" >/dev/null
build() { cargo build --profile release -q --workspace --bins --features baid/fault-points; }
(cd "$dir" && CARGO_TARGET_DIR="$dir/target" build)
build
head=$(git rev-parse --short HEAD)

pids=()
datas=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for d in "${datas[@]}"; do
    agent=$(grep -o 'agent-[0-9a-f]*' "$d/out.log" | head -1 || true)
    [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
    rm -rf "$d"
  done
}
trap cleanup EXIT

# Starts `baid up` of build BIN and waits until it serves; its pid and data dir are the last
# of `pids` and `datas`.
start() {
  local bin="$1" data port
  data="$(mktemp -d /tmp/bai-ab.XXXXXX)"
  port=$((20000 + RANDOM % 20000))
  BAI_DATA_DIR="$data" BAI_LISTEN="127.0.0.1:$port" BAI_AGENT_LISTEN=off \
    BAI_KRUNNER="$bin/bai-krunner" RUST_LOG=warn "$bin/baid" up >"$data/out.log" 2>"$data/err.log" &
  pids+=($!)
  datas+=("$data")
  for _ in $(seq 1 300); do grep -q "Stop with Ctrl-C" "$data/out.log" 2>/dev/null && break; sleep 0.1; done
}
start "$dir/target/release"
old_data="${datas[0]}" old_pid="${pids[0]}"
start target/release
new_data="${datas[1]}" new_pid="${pids[1]}"

# One `run -c` against the manager of DATA with the CLI of BIN; prints its wall seconds.
one() {
  local bin="$1" data="$2" t0 t1
  t0=$(date +%s.%N)
  (set +u; . "$data/env-user.sh"; "$bin/bai" run --rm -q -c 'print(1)' python >/dev/null)
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0, 4))"
}
one "$dir/target/release" "$old_data" >/dev/null
one target/release "$new_data" >/dev/null
old_t=()
new_t=()
for _ in $(seq 1 "$ROUNDS"); do
  old_t+=("$(one "$dir/target/release" "$old_data")")
  new_t+=("$(one target/release "$new_data")")
done
sleep 10
rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$1/status"; }
old_rss=$(rss "$old_pid")
new_rss=$(rss "$new_pid")
run_row=$(python3 - "${old_t[*]}" "${new_t[*]}" <<'PY'
import statistics, sys
old = [float(x) for x in sys.argv[1].split()]
new = [float(x) for x in sys.argv[2].split()]
pairs = [n / o for n, o in zip(new, old)]
print(f"{statistics.median(new):.3f} s vs {statistics.median(old):.3f} s; pair ratio median "
      f"{statistics.median(pairs):.3f}× (spread {min(pairs):.2f}–{max(pairs):.2f})")
PY
)

# The rebuild after a change in the HTTP edge, each tree on its own.
rebuild() {
  touch crates/bai-manager/src/api/session.rs
  local t0 t1
  t0=$(date +%s.%N)
  cargo build --profile release -q -p baid --features baid/fault-points
  t1=$(date +%s.%N)
  python3 -c "print(round($t1 - $t0))"
}
new_build=$(rebuild)
old_build=$(cd "$dir" && CARGO_TARGET_DIR="$dir/target" rebuild)

cat > bench/results/26-manager-crates.md <<MD
## The control plane's structure, against an earlier revision (bench/revision-ab.sh)

Latest run ($(date -u +%Y-%m-%d), $(nproc) cores; release builds with fault points):
\`$head\` (this code) against \`$rev\`, side by side on this machine, both \`baid up\` with the
Docker agent and running at the same time.

| what | this code vs $rev | how |
|---|---|---|
| \`bai run --rm -q -c 'print(1)' python\` | $run_row | $ROUNDS alternating pairs, whole-process wall time |
| \`baid up\` RSS at idle, after those runs | $new_rss MB vs $old_rss MB | VmRSS 10 s after the last run |
| release rebuild of \`baid\` after a change in the HTTP edge (\`api/session.rs\`) | $new_build s vs $old_build s | \`cargo build --profile release -p baid\` in each tree |

When the manager was split into crates (2026-11-27, against \`442e076\`, the manager in one
crate): \`run -c\` 0.991× and 1.004×, idle RSS 27.3 vs 26.5–26.9 MB, and the rebuild after a
change in the HTTP edge 64 s against 104 s (only \`bai-manager\` and \`baid\` rebuild; the
lifecycle, the scheduler, serving and the ground do not).
MD
bench/assemble.sh
cat bench/results/26-manager-crates.md
