#!/usr/bin/env bash
# History at scale (issue 38): a manager that keeps every session it ever ran. For each engine
# (SQLite, PostgreSQL), two managers side by side: one with SMALL ended sessions, one with BIG
# (written by the store's own paths, crates/bai-manager/examples/history_fill.rs). Measured on
# each, alternating: `bai ps --dead` (one GraphQL page of 10) at offset 0, in the middle and at
# the last page; `bai run --rm -c 'print(1)'` (a create, on the local Docker agent); baid's
# RSS after the listings, and once idle. Ratios BIG/SMALL (goal: pages ≤ 2×, RSS ≤ 100 MB, create unchanged).
# Then a whole walk, `bai ps --all` (pages of 100): by keyset cursor (what `--all`
# does) and by offset (`--offset 1`, the official client's way), WALKS rounds each; its time
# per page at BIG against SMALL, and the two walks against each other.
#
# With AGENTS=N each manager also runs N dummy agents (baid --dummy-agents, in resource group
# AGENT_GROUP, default `default`, where the creates then land on them); that run's table goes
# to its own section (bench/results/28-history-agents.md).
#
#   bench/history.sh         (after make build-test; BIG=100000 SMALL=100 ROUNDS=15 WALKS=3)
#   ENGINES=sqlite bench/history.sh
#   BIG=20000 AGENTS=100 bench/history.sh     (the shape of issue 56: 100 dummy agents)
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
BIG="${BIG:-100000}"
SMALL="${SMALL:-100}"
ROUNDS="${ROUNDS:-15}"
WALKS="${WALKS:-3}"
ENGINES="${ENGINES:-sqlite postgres}"
AGENTS="${AGENTS:-0}"
AGENT_GROUP="${AGENT_GROUP:-default}"
IDLE="${IDLE:-5}"
RESULT=bench/results/28-history.md
if [ "$AGENTS" -gt 0 ]; then RESULT=bench/results/28-history-agents.md; fi
BIN=target/release
cargo build --profile release -q -p bai-manager --example history_fill
FILL=target/release/examples/history_fill
dirs=(); pids=(); dbs=()
cluster=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for d in "${dirs[@]}"; do
    agent=$(grep -o 'agent-[0-9a-f]*' "$d/out.log" 2>/dev/null | head -1 || true)
    [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
    rm -rf "$d"
  done
  for db in "${dbs[@]}"; do psql "$cluster" -qc "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1 || true; done
}
trap cleanup EXIT
start() { # DIR PORT [DATABASE] → pid
  env BAI_DATA_DIR="$1" BAI_LISTEN="127.0.0.1:$2" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" \
    BAI_DUMMY_AGENTS="$AGENTS" BAI_DUMMY_GROUP="$AGENT_GROUP" RUST_LOG=warn ${3:+BAI_DATABASE=$3} setsid "$BIN/baid" up >"$1/out.log" 2>"$1/err.log" &
  local pid=$!
  for _ in $(seq 1 600); do grep -q "Stop with Ctrl-C" "$1/out.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "Stop with Ctrl-C" "$1/out.log" || { cat "$1/err.log" >&2; exit 1; }
  echo "$pid"
}
stop() { kill "$1"; wait "$1" 2>/dev/null || true; }
# A manager with N ended sessions: started once (its database, its admin), stopped, filled,
# started again. Prints "DIR PID".
manager() { # ENGINE N
  local d port url="" pid ak
  d="$(mktemp -d /tmp/bai-bench-hist.XXXXXX)"
  port=$((20000 + RANDOM % 20000))
  if [ "$1" = postgres ]; then
    local db="bai_hist_$$_$2"
    psql "$cluster" -qc "CREATE DATABASE $db" >/dev/null
    url="${cluster%/*}/$db"
  fi
  pid=$(start "$d" "$port" "$url"); stop "$pid"
  ak=$(set -a; . "$d/env-user.sh"; echo "$BACKEND_ACCESS_KEY")
  # PostgreSQL takes writers side by side (a round trip per statement): four fills at once.
  local writers=1; [ "$1" = postgres ] && writers=4
  for _ in $(seq 1 "$writers"); do "$FILL" "${url:-$d/bai.db}" "$ak" $(($2 / writers)) >&2 & done
  wait
  pid=$(start "$d" "$port" "$url")
  echo "$d $pid"
}
now() { date +%s.%N; }
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1; python3 -c "print(round($(now) - $t0, 4))"; }
median() { python3 -c 'import sys,statistics; print(round(statistics.median(float(x) for x in sys.argv[1:]), 4))' "$@"; }
ratio() { python3 -c "print(f'{$1/$2:.2f}')"; }
on() { local d=$1; shift; (set -a; . "$d/env-user.sh"; "$@"); }
rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status"; }

out=$(mktemp)
for engine in $ENGINES; do
  [ "$engine" = postgres ] && cluster="$(scripts/test-postgres.sh)"
  read -r sd spid < <(manager "$engine" "$SMALL")
  read -r bd bpid < <(manager "$engine" "$BIG")
  # manager() ran in a subshell: what cleanup must undo is recorded here.
  pids+=("$spid" "$bpid"); dirs+=("$sd" "$bd")
  [ "$engine" = postgres ] && dbs+=("bai_hist_$$_$SMALL" "bai_hist_$$_$BIG")
  for d in "$sd" "$bd"; do on "$d" "$BIN/bai" run --rm -q -c 'print(1)' python >/dev/null; done # warm-up
  declare -A t=()
  for _ in $(seq 1 "$ROUNDS"); do
    for which in small big; do
      if [ $which = small ]; then d=$sd; n=$SMALL; else d=$bd; n=$BIG; fi
      t[$which.first]+="$(on "$d" timed "$BIN/bai" ps --dead) "
      t[$which.middle]+="$(on "$d" timed "$BIN/bai" ps --dead --offset $((n / 2))) "
      t[$which.last]+="$(on "$d" timed "$BIN/bai" ps --dead --offset $((n - 20))) "
      t[$which.create]+="$(on "$d" timed "$BIN/bai" run --rm -q -c 'print(1)' python) "
    done
  done
  for _ in $(seq 1 "$WALKS"); do
    for which in small big; do
      if [ $which = small ]; then d=$sd; n=$SMALL; else d=$bd; n=$BIG; fi
      pages=$(( (n + 99) / 100 ))
      w=$(on "$d" timed "$BIN/bai" ps --all)
      t[$which.walk]+="$(python3 -c "print(round($w / $pages, 5))") "
      w=$(on "$d" timed "$BIN/bai" ps --all --offset 1)
      t[$which.walkoff]+="$(python3 -c "print(round($w / $pages, 5))") "
    done
  done
  for what in first middle last create walk walkoff; do
    # shellcheck disable=SC2086
    s=$(median ${t[small.$what]}); b=$(median ${t[big.$what]})
    echo "$engine $what $s $b $(ratio "$b" "$s")" >>"$out"
  done
  echo "$engine rss $(rss "$spid") $(rss "$bpid") $(ratio "$(rss "$bpid")" "$(rss "$spid")")" >>"$out"
  # baid gives its allocator's free pages back once a burst of queries ends (its store's use
  # counter read every 2 s, crates/bai-manager/src/heap.rs): the size it keeps while idle.
  sleep "$IDLE"
  echo "$engine rssidle $(rss "$spid") $(rss "$bpid") $(ratio "$(rss "$bpid")" "$(rss "$spid")")" >>"$out"
  unset t
done
# How to read the table: the text below it, written by hand, starts at a line "A page's total
# comes from" (or "Where the memory goes", with agents); it is kept from the earlier file.
reading=$(sed -n '/^\(A page.s total comes from\|Where the memory goes\)/,$p' "$RESULT" 2>/dev/null || true)
python3 - "$out" "$SMALL" "$BIG" "$ROUNDS" "$AGENTS" "$AGENT_GROUP" "$IDLE" <<'PY' > "$RESULT"
import sys, datetime, os
path, small, big, rounds, agents, group, idle = sys.argv[1:]
names = {"first": "`bai ps --dead`, the first page (10)", "middle": "`bai ps --dead`, the page in the middle",
         "last": "`bai ps --dead`, the last page", "create": "`bai run --rm -c 'print(1)'`",
         "rss": "baid RSS right after the listings (MB)",
         "rssidle": f"baid RSS {idle} s after the listings (MB)",
         "walk": "`bai ps --all` (every page) by cursor, per page of 100",
         "walkoff": "`bai ps --all` (every page) by offset, per page of 100"}
if int(agents):
    print(f"## History at scale with {agents} dummy agents (AGENTS={agents} bench/history.sh)")
else:
    print("## History at scale (bench/history.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release build): a manager with {int(small):,} ended")
print(f"sessions against one with {int(big):,}, side by side, each engine; median of {rounds} alternating runs")
if int(agents):
    print(f"(each manager also runs {agents} dummy agents in resource group `{group}` beside its Docker agent)")
print("(times in seconds, each a whole CLI process: one GraphQL request and its start-up).")
print()
print(f"| engine | measure | {int(small):,} ended | {int(big):,} ended | ratio | goal |")
print("|---|---|---|---|---|---|")
goals = {"first": "≤ 2×", "middle": "(none)", "last": "≤ 2×", "create": "≈ 1×", "rss": "≤ 100 MB", "rssidle": "≤ 100 MB",
         "walk": "≤ 2×", "walkoff": "(baseline)"}
walks = {}
for line in open(path):
    engine, what, s, b, r = line.split()
    print(f"| {engine} | {names[what]} | {s} | {b} | {r}× | {goals[what]} |")
    if what.startswith("walk"):
        walks[(engine, what)] = float(b)
print()
print(f"A whole walk at {int(big):,}, by cursor against by offset (per page, same run):")
print()
for engine in sorted({e for e, _ in walks}):
    c, o = walks.get((engine, "walk")), walks.get((engine, "walkoff"))
    if c and o:
        print(f"- {engine}: {c * 1000:.2f} ms against {o * 1000:.2f} ms per page, {c / o:.2f}×; "
              f"the whole walk {c * (int(big) // 100):.1f} s against {o * (int(big) // 100):.1f} s")
PY
if [ -n "$reading" ]; then printf '\n%s\n' "$reading" >>"$RESULT"; fi
cat "$RESULT"
bench/assemble.sh
