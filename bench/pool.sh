#!/usr/bin/env bash
# Warm pools (issue 40): sessions claimed from a pool against the same sessions started cold
# and against `docker run --rm`, in one run. Two managers side by side on the local engine:
# one whose agent keeps POOL kernels of the default shape (cpu 1, mem 1g, shm 64m), one with
# no pools. Each round, alternating: `bai run --rm -c 'print(1)' python` on each (the pool's
# only once its pool is full again, so every pool run is a claim) and `docker run --rm` of
# the same image. Measured: create → RUNNING from the session's status history (PENDING to
# RUNNING, the manager's clock), and the whole CLI run. Then 20 sessions at once on a pool
# of 20 against 20 × `docker run -d`, and what an idle pool of 10 costs (baid's and the pool
# containers' memory and CPU against none).
# Then `bai start` → the Jupyter URL that `bai open` prints answering 200, from the pool
# (which pre-starts Jupyter) and cold.
# Then the miss path under refill: three `bai start` back to back on a pool of one (the second
# and third come while it refills), against three without pools.
#   bench/pool.sh      (after make build-test; ROUNDS=20 POOL=2 BURST=20 IDLE=10 JROUNDS=10 MROUNDS=5)
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS="${ROUNDS:-20}"
POOL="${POOL:-2}"
BURST="${BURST:-20}"
IDLE="${IDLE:-10}"
JROUNDS="${JROUNDS:-10}"
MROUNDS="${MROUNDS:-5}"
BIN=target/release
IMAGE=bai/python:3.11-bookworm
SHAPE="$IMAGE,cpu=1,mem=1g,shm=64m"
# The burst's and the idle pool's shape: 20 of them fit 2 cores.
SMALL="$IMAGE,cpu=0.1,mem=256m,shm=64m"
# The miss path's shape: three sessions and the pool's next kernel fit 2 cores (three of
# SHAPE would not: the third would wait for room).
ROW="$IMAGE,cpu=0.25,mem=256m,shm=64m"
dirs=(); pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for d in "${dirs[@]}"; do
    agent=$(grep -o 'agent-[0-9a-f]*' "$d/out.log" 2>/dev/null | head -1 || true)
    [ -n "$agent" ] && { docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null 2>&1 || true; }
    # The pools' shared kernels mount (and any folder of a claim), deepest first.
    awk -v d="$d" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
    rm -rf "$d"
  done
  docker ps -aq --filter label=ai.bai.bench=pool | xargs -r docker rm -f >/dev/null 2>&1 || true
  docker network rm "$NOICC" >/dev/null 2>&1 || true
}
trap cleanup EXIT
# The baseline on the same kind of bridge as bai's kernels: user-defined, no traffic between
# containers (`bai-kernels`, crates/bai-agent/src/docker/isolation.rs).
NOICC=bai-bench-noicc
docker network rm "$NOICC" >/dev/null 2>&1 || true
docker network create -o com.docker.network.bridge.enable_icc=false "$NOICC" >/dev/null
start() { # DIR PORT POOLS(on|off) WARM_POOL → pid
  env BAI_DATA_DIR="$1" BAI_LISTEN="127.0.0.1:$2" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" \
    RUST_LOG=warn BAI_WARM_POOLS="$3" BAI_WARM_POOL="$4" setsid "$BIN/baid" up >"$1/out.log" 2>"$1/err.log" &
  local pid=$!
  for _ in $(seq 1 600); do grep -q "Stop with Ctrl-C" "$1/out.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "Stop with Ctrl-C" "$1/out.log" || { cat "$1/err.log" >&2; exit 1; }
  echo "$pid"
}
on() { local d=$1; shift; (set -a; . "$d/env-user.sh"; "$@"); }
admin() { local d=$1; shift; (set -a; . "$d/env-admin.sh"; "$@"); }
now() { date +%s.%N; }
# Waits until the agent's pool holds N (or more) ready kernels (as `bai agents` reports it).
full() { # DIR N
  for _ in $(seq 1 1200); do
    # At least N: a burst of starts lets the pool keep more than its count for a while.
    admin "$1" "$BIN/bai" agents | grep -o " [0-9]* of $2 ready" | awk -v n="$2" '$1 >= n {ok=1} END {exit !ok}' && return 0
    sleep 0.1
  done
  echo "the pool never held $2 ready kernels:" >&2
  admin "$1" "$BIN/bai" agents >&2; tail -20 "$1/err.log" >&2; exit 1
}
# The gaps of a session's status history, in seconds: "running" (PENDING → RUNNING), and the
# steps of a run (call: PENDING → CREATING, claim: CREATING → RUNNING, code: RUNNING →
# TERMINATING, end: TERMINATING → TERMINATED), one "SIDE STEP SECONDS" line each.
steps() { # DIR NAME SIDE
  on "$1" "$BIN/bai" session history "$2" | python3 -c '
import sys, datetime
t = {}
for line in sys.stdin:
    p = line.split()
    if len(p) == 2 and p[0].isupper():
        t[p[0]] = datetime.datetime.fromisoformat(p[1].replace("Z", "+00:00")).timestamp()
side = sys.argv[1]
for name, a, b in [("running", "PENDING", "RUNNING"), ("call", "PENDING", "CREATING"),
                   ("claim", "CREATING", "RUNNING"), ("code", "RUNNING", "TERMINATING"),
                   ("end", "TERMINATING", "TERMINATED")]:
    if a in t and b in t:
        print(side, name, round(t[b] - t[a], 4))' "$3"
}
rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

pd="$(mktemp -d /tmp/bai-bench-pool.XXXXXX)"; cd_="$(mktemp -d /tmp/bai-bench-cold.XXXXXX)"
dirs+=("$pd" "$cd_")
pp=$(start "$pd" $((20000 + RANDOM % 10000)) on ""); pids+=("$pp")
admin "$pd" "$BIN/bai" admin resource-group update default --warm-pool "$SHAPE,count=$POOL" --warm-pool-auto 0 >/dev/null
cp=$(start "$cd_" $((30000 + RANDOM % 10000)) off ""); pids+=("$cp")
# Warm-up: the image's layers, each path's first run.
on "$cd_" "$BIN/bai" run --rm -q -c 'print(1)' python >/dev/null
docker run --rm "$IMAGE" python3 -c 'print(1)' >/dev/null
docker run --rm --network "$NOICC" "$IMAGE" python3 -c 'print(1)' >/dev/null
full "$pd" "$POOL"
on "$pd" "$BIN/bai" run --rm -q -c 'print(1)' python >/dev/null

out=$(mktemp)
for i in $(seq 1 "$ROUNDS"); do
  full "$pd" "$POOL"
  t0=$(now); on "$pd" "$BIN/bai" run --rm -q -t "pool-$i" -c 'print(1)' python >/dev/null; t1=$(now)
  echo "pool run $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
  steps "$pd" "pool-$i" pool >>"$out"
  # The pool's refill is over before the cold run starts: the new kernel's start, and the
  # Jupyter it pre-starts (a second or two of imports on one of this machine's two cores).
  full "$pd" "$POOL"; sleep 3
  t0=$(now); on "$cd_" "$BIN/bai" run --rm -q -t "cold-$i" -c 'print(1)' python >/dev/null; t1=$(now)
  echo "cold run $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
  steps "$cd_" "cold-$i" cold >>"$out"
  t0=$(now); docker run --rm "$IMAGE" python3 -c 'print(1)' >/dev/null; t1=$(now)
  echo "docker run $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
  t0=$(now); docker run --rm --network "$NOICC" "$IMAGE" python3 -c 'print(1)' >/dev/null; t1=$(now)
  echo "noicc run $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
done
# `bai start` → the Jupyter URL `bai open` prints answers 200 (the permit's redirect followed).
for i in $(seq 1 "$JROUNDS"); do
  for side in cold pool; do
    d=$pd; [ "$side" = cold ] && d=$cd_
    # A refill's container start and Jupyter imports are done before either side starts.
    full "$pd" "$POOL"; sleep 4
    t0=$(now)
    on "$d" "$BIN/bai" start -q -t "jup-$side-$i" python >/dev/null
    url=$(on "$d" "$BIN/bai" open "jup-$side-$i" jupyter)
    code=$(curl -sL -c /dev/null -o /dev/null -w '%{http_code}' "$url")
    t1=$(now)
    [ "$code" = 200 ] || { echo "jupyter answered $code from $side: $url" >&2; exit 1; }
    echo "$side jupyter $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
    on "$d" "$BIN/bai" rm "jup-$side-$i" >/dev/null
  done
done
hits=$(admin "$pd" "$BIN/bai" agents | grep -o '[0-9]* hits' | head -1)

# The miss path under refill: a pool of one kernel, and three `bai start` back to back (each
# as soon as the one before returned), then each session's Jupyter opened until it answers
# 200. The first takes the pool's kernel; the second comes while the pool makes its next
# kernel and takes that one when it is ready (bai-agent's pool/wait.rs); the third, while
# the pool makes another. Against the same three on the manager without pools. A row's time
# is its `bai start` plus its `bai open` → 200.
before=$(admin "$pd" "$BIN/bai" agents | grep -o '[0-9]* hits, [0-9]* misses' | head -1 || true)
admin "$pd" "$BIN/bai" admin resource-group update default --warm-pool "$ROW,count=1" >/dev/null
for i in $(seq 1 "$MROUNDS"); do
  for side in cold pool; do
    d=$pd; [ "$side" = cold ] && d=$cd_
    # Each round on a pool of exactly one: the pool is emptied and set again, which ends
    # what the last round's burst of starts added (pool::grow).
    admin "$pd" "$BIN/bai" admin resource-group update default --warm-pool "" >/dev/null
    for _ in $(seq 1 600); do admin "$pd" "$BIN/bai" agents | grep -q " warm pool " || break; sleep 0.1; done
    admin "$pd" "$BIN/bai" admin resource-group update default --warm-pool "$ROW,count=1" >/dev/null
    full "$pd" 1; sleep 4
    for k in 1 2 3; do
      t0=$(now)
      on "$d" "$BIN/bai" start -q -t "row-$side-$i-$k" -r cpu=0.25 -r mem=256m python >/dev/null
      t1=$(now)
      echo "$side start$k $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
    done
    for k in 1 2 3; do
      t0=$(now)
      url=$(on "$d" "$BIN/bai" open "row-$side-$i-$k" jupyter)
      code=$(curl -sL -c /dev/null -o /dev/null -w '%{http_code}' "$url")
      t1=$(now)
      [ "$code" = 200 ] || { echo "jupyter answered $code from $side: $url" >&2; exit 1; }
      echo "$side open$k $(python3 -c "print(round($t1 - $t0, 4))")" >>"$out"
    done
    for k in 1 2 3; do on "$d" "$BIN/bai" rm "row-$side-$i-$k" >/dev/null; done
  done
done
after=$(admin "$pd" "$BIN/bai" agents | grep -o '[0-9]* hits, [0-9]* misses' | head -1 || true)
rowhits="$before before the three-start rows, $after after"

# 20 at once on a pool of 20, against 20 × docker run -d (each until all run).
admin "$pd" "$BIN/bai" admin resource-group update default --warm-pool "$SMALL,count=$BURST" >/dev/null
full "$pd" "$BURST"
t0=$(now)
for i in $(seq 1 "$BURST"); do
  on "$pd" "$BIN/bai" run -q -t "burst-$i" -r cpu=0.1 -r mem=256m -c 'print(1)' --enqueue-only python >/dev/null 2>&1 &
done
wait
for _ in $(seq 1 3000); do
  n=$(on "$pd" "$BIN/bai" ps -s RUNNING --limit 100 2>/dev/null | grep -c ' RUNNING ' || true)
  [ "$n" -ge "$BURST" ] && break
  sleep 0.05
done
t1=$(now); burst_bai=$(python3 -c "print(round($t1 - $t0, 3))")
t0=$(now)
for i in $(seq 1 "$BURST"); do
  docker run -d --label ai.bai.bench=pool --cpus 0.1 --memory 256m "$IMAGE" sleep 600 >/dev/null &
done
wait
t1=$(now); burst_docker=$(python3 -c "print(round($t1 - $t0, 3))")
for i in $(seq 1 "$BURST"); do on "$pd" "$BIN/bai" rm "burst-$i" >/dev/null 2>&1 || true; done
docker ps -aq --filter label=ai.bai.bench=pool | xargs -r docker rm -f >/dev/null

# An idle pool of IDLE against none: baid's RSS and CPU, the pool containers' memory.
admin "$pd" "$BIN/bai" admin resource-group update default --warm-pool "$SMALL,count=$IDLE" >/dev/null
full "$pd" "$IDLE"
sleep 5
t_p=$(cpu_ticks "$pp"); t_c=$(cpu_ticks "$cp"); sleep 20
cpu_pool=$(( $(cpu_ticks "$pp") - t_p )); cpu_none=$(( $(cpu_ticks "$cp") - t_c ))
rss_pool=$(rss "$pp"); rss_none=$(rss "$cp")
agent=$(grep -o 'agent-[0-9a-f]*' "$pd/out.log" | head -1)
pool_mem=$(docker stats --no-stream --format '{{.MemUsage}}' $(docker ps -q --filter "label=ai.bai.agent=$agent" --filter name=bai-pool-) \
  | awk '{v=$1; if (v ~ /GiB/) {sub("GiB","",v); v*=1024} else if (v ~ /MiB/) {sub("MiB","",v)} else if (v ~ /KiB/) {sub("KiB","",v); v/=1024}; s+=v} END {printf "%.0f", s}')

python3 - "$out" "$ROUNDS" "$POOL" "$BURST" "$burst_bai" "$burst_docker" "$IDLE" "$rss_pool" "$rss_none" "$cpu_pool" "$cpu_none" "$pool_mem" "$hits" "$rowhits" <<'PY' > bench/results/13-pool.md
import sys, statistics, datetime, os, collections
(path, rounds, pool, burst, burst_bai, burst_docker, idle, rss_pool, rss_none, cpu_pool, cpu_none,
 pool_mem, hits, rowhits) = sys.argv[1:]
v = collections.defaultdict(list)
for line in open(path):
    a, b, x = line.split()
    v[(a, b)].append(float(x))
def p(xs, q):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]
med = lambda k: statistics.median(v[k])
print("## Warm pools (bench/pool.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release build). Two managers side by side on the")
print(f"local engine: one whose agent keeps {pool} kernels of the default shape (cpu 1, mem 1g, shm 64m) started,")
print(f"one without pools; {rounds} rounds alternating (the pool's runs each start on a full pool: {hits}).")
print()
print("| benchmark | bai | baseline (same run) | ratio | goal |")
print("|---|---|---|---|---|")
pr, cr = v[("pool", "running")], v[("cold", "running")]
print(f"| create → RUNNING from the pool, p50 | {p(pr, .5)*1000:.0f} ms | cold {p(cr, .5)*1000:.0f} ms | {p(pr, .5)/p(cr, .5):.2f}× | p50 ≤ 100 ms |")
print(f"| create → RUNNING from the pool, p99 | {p(pr, .99)*1000:.0f} ms | cold {p(cr, .99)*1000:.0f} ms | {p(pr, .99)/p(cr, .99):.2f}× | |")
d = med(("docker", "run"))
print(f"| `bai run --rm -c 'print(1)' python` from the pool, median | {med(('pool', 'run')):.3f} s | `docker run --rm` {d:.3f} s | {med(('pool', 'run'))/d:.2f}× | ≤ 0.5× |")
n = med(("noicc", "run"))
print(f"| `bai run --rm -c 'print(1)' python` cold, median | {med(('cold', 'run')):.3f} s | `docker run --rm` {d:.3f} s | {med(('cold', 'run'))/d:.2f}× | |")
print(f"| `bai run --rm -c 'print(1)' python` cold, median | {med(('cold', 'run')):.3f} s | `docker run --rm` on a bridge like bai's (user-defined, no traffic between containers) {n:.3f} s | {med(('cold', 'run'))/n:.2f}× | ≤ 1.0× |")
pj, cj = v[("pool", "jupyter")], v[("cold", "jupyter")]
print(f"| `bai start` → the Jupyter URL of `bai open` answers 200, from the pool, p50 | {p(pj, .5):.3f} s | cold {p(cj, .5):.3f} s | {p(pj, .5)/p(cj, .5):.2f}× | ≤ 1 s |")
print(f"| `bai start` → the Jupyter URL of `bai open` answers 200, cold, p50 | {p(cj, .5):.3f} s | | | ≤ 2 s |")
for k, what in [(1, "first (the pool's kernel)"), (2, "second (while the pool makes its next kernel)"), (3, "third (while the pool makes another)")]:
    for part, label in [("start", "`bai start`"), ("both", "`bai start` + Jupyter 200")]:
        pk = v[("pool", f"start{k}")] if part == "start" else [a + b for a, b in zip(v[("pool", f"start{k}")], v[("pool", f"open{k}")])]
        ck = v[("cold", f"start{k}")] if part == "start" else [a + b for a, b in zip(v[("cold", f"start{k}")], v[("cold", f"open{k}")])]
        goal = "≤ 1.0×" if k > 1 else ""
        print(f"| three `bai start` (cpu 0.25, mem 256m) back to back on a pool of one, then each one's Jupyter: the {what}, {label}, p50 of {len(pk)} | {p(pk, .5):.3f} s | without pools, the same {p(ck, .5):.3f} s | {p(pk, .5)/p(ck, .5):.2f}× | {goal} |")
print(f"| {burst} sessions (cpu 0.1, mem 256m) at once with a pool of {burst}, until all RUNNING | {float(burst_bai):.3f} s | {burst} × `docker run -d` {float(burst_docker):.3f} s | {float(burst_bai)/float(burst_docker):.2f}× | ≤ 0.3× |")
print(f"| baid RSS with an idle pool of {idle} (cpu 0.1, mem 256m) | {rss_pool} MB | baid without pools {rss_none} MB | {int(rss_pool)/max(1, int(rss_none)):.2f}× | |")
print(f"| baid CPU over 20 s with an idle pool of {idle} | {int(cpu_pool)*10} ms | without pools {int(cpu_none)*10} ms | | |")
print(f"| the {idle} idle pool containers' memory | {pool_mem} MiB | | | |")
print()
st = lambda side, k: f"{med((side, k))*1000:.0f} ms"
print(f"Where a run spends its time (medians of the status histories of this run's runs, pool / cold):")
print(f"the CLI's call to CREATING {st('pool', 'call')} / {st('cold', 'call')}; CREATING → RUNNING (from the pool the claim:")
print(f"the renames, the runner's binding and its start again under the session's environment, its first")
print(f"ping; cold the engine's create and start and the runner's readiness) {st('pool', 'claim')} / {st('cold', 'claim')}; the code")
print(f"(RUNNING → TERMINATING: the exec through the API and the CLI's destroy call) {st('pool', 'code')} / {st('cold', 'code')};")
print(f"the end (TERMINATING → TERMINATED: the runner asked to exit, the engine told to stop, until the kernel's processes are gone) {st('pool', 'end')} / {st('cold', 'end')}.")
print("A session is TERMINATED once its kernel's processes are gone; the engine's clean-up and removal")
print("of the stopped container (about 60 ms, see bench/cold-path.sh) follow in the background, while")
print("`docker run --rm` waits for its removal. Each run starts on a quiet machine: the pool's refill")
print("after a pool run (its container start and the Jupyter it pre-starts) is over before the cold run starts.")
print("The three-start rows: the second and third `bai start` come while the pool makes its next kernel")
print("and take it when it is ready (bai-agent's pool/wait.rs) instead of starting a second container beside")
print("it. The Jupyter part (Jupyter's own start at cpu 0.25; no pre-start below 512 MiB) is the same work on")
print(f"both sides and varies from round to round with the machine's load. The pool's counters: {rowhits}.")
PY
cat bench/results/13-pool.md
bench/assemble.sh
