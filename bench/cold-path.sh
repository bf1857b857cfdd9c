#!/usr/bin/env bash
# Where a cold `bai run --rm -c 'print(1)' python` spends its time, against `docker run --rm`
# in the same run (issue 40, "the cold path"). Each run's steps are read from two clocks of
# this machine: the session's status history (the manager writes when it entered each
# status) and the engine's container events (`docker events`: create, network connect,
# start, die, destroy), joined by the kernel container's `ai.bai.session` label; the CLI's
# own start and exit close the run. Median of ROUNDS for each step.
#   bench/cold-path.sh      (release build and the python image first: make bench does both)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
ROUNDS="${ROUNDS:-15}"
BIN=target/release
IMAGE=bai/python:3.11-bookworm
data="$(mktemp -d /tmp/bai-cold.XXXXXX)"
port=$((20000 + RANDOM % 20000))
BAI_DATA_DIR="$data" BAI_LISTEN="127.0.0.1:$port" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$data/out.log" 2>"$data/err.log" &
baid_pid=$!
events_pid=
cleanup() {
  [ -n "$events_pid" ] && kill "$events_pid" 2>/dev/null || true
  kill "$baid_pid" 2>/dev/null || true
  wait "$baid_pid" 2>/dev/null || true
  agent=$(grep -o 'agent-[0-9a-f]*' "$data/out.log" | head -1 || true)
  [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 300); do grep -q "Stop with Ctrl-C" "$data/out.log" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC1091
. "$data/env-user.sh"
bai="$BIN/bai"
now() { date +%s.%N; }

# Warm-up: the image's layers and both paths' first-run costs.
"$bai" run --rm -q -c 'print(1)' python >/dev/null
docker run --rm "$IMAGE" python3 -c 'print(1)' >/dev/null
docker run --rm --network bai-kernels "$IMAGE" python3 -c 'print(1)' >/dev/null

docker events --filter type=container --filter type=network \
  --format '{{.TimeNano}}|{{.Type}}|{{.Action}}|{{.Actor.ID}}|{{index .Actor.Attributes "ai.bai.session"}}|{{index .Actor.Attributes "container"}}|{{index .Actor.Attributes "ai.bai.bench"}}' \
  >"$data/events" &
events_pid=$!
sleep 1
: >"$data/runs"
for i in $(seq 1 "$ROUNDS"); do
  t0=$(now); "$bai" run --rm -q -t "cold-$i" -c 'print(1)' python >/dev/null; t1=$(now)
  echo "bai cold-$i $t0 $t1" >>"$data/runs"
  t0=$(now); docker run --rm --label ai.bai.bench=cold-$i "$IMAGE" python3 -c 'print(1)' >/dev/null; t1=$(now)
  echo "docker cold-$i $t0 $t1" >>"$data/runs"
  # The same, on bai's own kernel bridge.
  t0=$(now); docker run --rm --network bai-kernels --label ai.bai.bench=same-$i "$IMAGE" python3 -c 'print(1)' >/dev/null; t1=$(now)
  echo "same same-$i $t0 $t1" >>"$data/runs"
done
sleep 1
kill "$events_pid" 2>/dev/null || true
events_pid=
for i in $(seq 1 "$ROUNDS"); do
  echo "== cold-$i" >>"$data/history"
  "$bai" session history "cold-$i" >>"$data/history" 2>/dev/null || true
done

python3 - "$data" "$ROUNDS" <<'PY' > bench/results/12-cold-path.md
import collections, datetime, os, statistics, sys
data, rounds = sys.argv[1], int(sys.argv[2])
runs = [l.split() for l in open(f"{data}/runs")]
events = [l.rstrip("\n").split("|") for l in open(f"{data}/events")]
events = [e for e in events if len(e) == 7]
# The status history of each bai run: status -> seconds.
hist, cur = collections.defaultdict(dict), None
for line in open(f"{data}/history"):
    p = line.split()
    if not p:
        continue
    if p[0] == "==":
        cur = p[1]
    elif cur and len(p) == 2 and p[0].isupper():
        t = datetime.datetime.fromisoformat(p[1].replace("Z", "+00:00")).timestamp()
        hist[cur][p[0]] = t
# Container id -> its session (bai) or bench label (docker); network connects name the
# container in their attributes.
owner = {}
for e in events:
    if e[1] == "container" and e[4] not in ("", "<no value>"):
        owner.setdefault(e[3], ("session", e[4]))
    if e[1] == "container" and e[6].startswith(("cold-", "same-")):
        owner.setdefault(e[3], ("bench", e[6]))
ev = collections.defaultdict(dict)
for e in events:
    t = int(e[0]) / 1e9
    if e[1] == "container":
        key = owner.get(e[3])
        if key:
            ev[key].setdefault(e[2].split(":")[0], t)
    elif e[1] == "network" and e[2] == "connect":
        key = owner.get(e[5])
        if key:
            ev[key].setdefault("connect", t)

def steps(points):
    """Consecutive (name, seconds) gaps between the named points, in order."""
    return [(f"{a} → {b}", tb - ta) for (a, ta), (b, tb) in zip(points, points[1:])]

bai_rows, dock_rows = collections.defaultdict(list), collections.defaultdict(list)
same_rows, same_total = collections.defaultdict(list), []
bai_total, dock_total = [], []
removal = []

def record(rows, total, pts, t0, t1):
    """Adds one run's steps between the points it has (in order) and its whole time."""
    for k, v in steps([(n, t) for n, t in pts if t is not None]):
        rows[k].append(v)
    total.append(t1 - t0)

for kind, name, t0, t1 in runs:
    t0, t1 = float(t0), float(t1)
    if kind == "bai":
        h = hist.get(name, {})
        # The session's id: the container whose history matches by time.
        sess = [k for k in ev if k[0] == "session" and "create" in ev[k]
                and h.get("CREATING", 0) <= ev[k]["create"] <= h.get("RUNNING", 0)]
        if not h or len(sess) != 1:
            continue
        c = ev[sess[0]]
        pts = [("CLI start", t0), ("PENDING", h.get("PENDING")), ("SCHEDULED", h.get("SCHEDULED")),
               ("PREPARING", h.get("PREPARING")), ("PREPARED", h.get("PREPARED")),
               ("CREATING", h.get("CREATING")),
               ("container created", c.get("create")), ("network connected", c.get("connect")),
               ("container started", c.get("start")), ("RUNNING", h.get("RUNNING")),
               ("TERMINATING", h.get("TERMINATING")), ("container died", c.get("die")),
               ("TERMINATED", h.get("TERMINATED")), ("CLI exit", t1)]
        record(bai_rows, bai_total, pts, t0, t1)
        # The engine's removal of the stopped container, after the session's end.
        if c.get("die") is not None and c.get("destroy") is not None:
            removal.append(c["destroy"] - c["die"])
    else:
        c = ev.get(("bench", name), {})
        pts = [("CLI start", t0), ("container created", c.get("create")),
               ("network connected", c.get("connect")), ("container started", c.get("start")),
               ("container died", c.get("die")), ("container removed", c.get("destroy")),
               ("CLI exit", t1)]
        if kind == "same":
            record(same_rows, same_total, pts, t0, t1)
        else:
            record(dock_rows, dock_total, pts, t0, t1)

ms = lambda xs: f"{statistics.median(xs) * 1000:.0f} ms" if xs else "-"
print("## The cold path, step by step (bench/cold-path.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release build), median of "
      f"{len(bai_total)} `bai run --rm -q -c 'print(1)' python`, {len(dock_total)} "
      "`docker run --rm` of the same image on Docker's default bridge and "
      f"{len(same_total)} on bai's own kernel bridge (`--network bai-kernels`), alternating. "
      "Each step is the gap between two points of the same run: the manager's status history, "
      "the engine's container events, and the CLI's start and exit.")
print()
ratio = lambda a, b: statistics.median(a) / statistics.median(b)
print(f"Whole run: bai {ms(bai_total)}; docker {ms(dock_total)} on its default bridge "
      f"({ratio(bai_total, dock_total):.2f}×), {ms(same_total)} on bai's kernel bridge "
      f"({ratio(bai_total, same_total):.2f}×).")
print()
med = lambda rows, k: statistics.median(rows[k]) if rows.get(k) else 0.0
own = ["CLI start → PENDING", "PENDING → SCHEDULED", "SCHEDULED → PREPARING",
       "PREPARING → PREPARED", "PREPARED → CREATING", "CREATING → container created",
       "container started → RUNNING", "RUNNING → TERMINATING",
       "container died → TERMINATED", "TERMINATED → CLI exit"]
start = "network connected → container started"
print(f"Reading it: the engine's start of the container ({start}) takes "
      f"{med(bai_rows, start) * 1000:.0f} ms on bai's isolated `bai-kernels` bridge against "
      f"{med(dock_rows, start) * 1000:.0f} ms for `docker run` on Docker's default bridge and "
      f"{med(same_rows, start) * 1000:.0f} ms for `docker run` on the same bridge. The platform's own "
      f"steps (the CLI's call, every status change, the agent's work before the create, the "
      f"runner's readiness, the code's exec and the removal request) add up to "
      f"{sum(med(bai_rows, k) for k in own) * 1000:.0f} ms. The engine removes bai's stopped "
      f"container after the session ended (container died → container removed: "
      f"{ms(removal)}, not part of bai's run); `docker run --rm` waits for its removal.")
print()
print("| bai step | median | | docker step | default bridge | bai's kernel bridge |")
print("|---|---|---|---|---|---|")
b, d = list(bai_rows.items()), list(dock_rows.items())
for i in range(max(len(b), len(d))):
    left = f"{b[i][0]} | {ms(b[i][1])}" if i < len(b) else " | "
    right = f"{d[i][0]} | {ms(d[i][1])} | {ms(same_rows.get(d[i][0], []))}" if i < len(d) else " | | "
    print(f"| {left} | | {right} |")
PY
bench/assemble.sh
cat bench/results/12-cold-path.md
