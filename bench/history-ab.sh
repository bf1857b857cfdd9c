#!/usr/bin/env bash
# baid's memory with a long history (issue 56), this build against an earlier one, side by
# side: two managers (BEFORE's baid and this checkout's), each with the same history, driven
# by the same `bai` CLI in alternation. Two shapes (SHAPES):
#   fill:   BIG_FILL ended sessions (100,000) written by the store's own paths
#           (history_fill, as bench/history.sh does), no dummy agents;
#   agents: AGENTS dummy agents (100) and BIG_API ended sessions (20,000) run on them through
#           the API (`bai run --rm`, PAR at once), so the manager itself wrote its history.
# Then ROUNDS rounds of listings (`bai ps --dead`: the first, the middle and the last page) and
# a create (`bai run --rm -c 'print(1)'`, on the Docker agent or a dummy), then WALKS whole
# walks (`bai ps --all`, by cursor and by offset). Measured on each: the median times, and
# baid's RSS after the rounds, right after the walks and IDLE seconds later.
#
#   BEFORE=/path/to/earlier/release bench/history-ab.sh   (a directory with baid, bai-krunner;
#                                  AFTER, default target/release, the same of this build)
#   SHAPES=agents BEFORE=… bench/history-ab.sh
# Writes bench/results/28b-history-ab.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
BEFORE="${BEFORE:?BEFORE: a directory with the earlier baid and bai-krunner}"
SHAPES="${SHAPES:-fill agents}"
BIG_FILL="${BIG_FILL:-100000}"
BIG_API="${BIG_API:-20000}"
AGENTS="${AGENTS:-100}"
PAR="${PAR:-4}"
ROUNDS="${ROUNDS:-15}"
WALKS="${WALKS:-2}"
IDLE="${IDLE:-8}"
# This build: baid, bai-krunner and the `bai` both managers are driven by.
BIN="${AFTER:-target/release}"
cargo build --profile release -q -p bai-manager --example history_fill
FILL=target/release/examples/history_fill
dirs=(); pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  for d in "${dirs[@]}"; do
    agent=$(grep -o 'agent-[0-9a-f]*' "$d/out.log" 2>/dev/null | head -1 || true)
    [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
    rm -rf "$d"
  done
}
trap cleanup EXIT
start() { # BINDIR DIR PORT AGENTS → pid
  env BAI_DATA_DIR="$2" BAI_LISTEN="127.0.0.1:$3" BAI_AGENT_LISTEN=off BAI_KRUNNER="$1/bai-krunner" \
    BAI_DUMMY_AGENTS="$4" RUST_LOG=warn setsid "$1/baid" up >"$2/out.log" 2>"$2/err.log" &
  local pid=$!
  for _ in $(seq 1 600); do grep -q "Stop with Ctrl-C" "$2/out.log" 2>/dev/null && break; sleep 0.1; done
  grep -q "Stop with Ctrl-C" "$2/out.log" || { cat "$2/err.log" >&2; exit 1; }
  echo "$pid"
}
on() { local d=$1; shift; (set -a; . "$d/env-user.sh"; "$@"); }
rss() { awk '/VmRSS/ {print int($2/1024)}' "/proc/$1/status"; }
now() { date +%s.%N; }
timed() { local t0; t0=$(now); "$@" >/dev/null 2>&1; python3 -c "print(round($(now) - $t0, 4))"; }
median() { python3 -c 'import sys,statistics; print(round(statistics.median(float(x) for x in sys.argv[1:]), 4))' "$@"; }
# A manager of build BINDIR for SHAPE, its history written; prints "DIR PID".
manager() { # BINDIR SHAPE
  local d port pid ak agents=0
  d="$(mktemp -d /tmp/bai-bench-hab.XXXXXX)"; port=$((20000 + RANDOM % 20000))
  [ "$2" = agents ] && agents=$AGENTS
  pid=$(start "$1" "$d" "$port" "$agents")
  if [ "$2" = fill ]; then
    kill "$pid"; wait "$pid" 2>/dev/null || true
    ak=$(set -a; . "$d/env-user.sh"; echo "$BACKEND_ACCESS_KEY")
    "$FILL" "$d/bai.db" "$ak" "$BIG_FILL" >&2
    pid=$(start "$1" "$d" "$port" "$agents")
  else
    # The creates below would pass the keypair's default rate limit.
    ak=$(set -a; . "$d/env-user.sh"; echo "$BACKEND_ACCESS_KEY")
    (set -a; . "$d/env-admin.sh"; "$BIN/bai" admin keypair update "$ak" --rate-limit 0 >/dev/null)
  fi
  echo "$d $pid"
}
out=$(mktemp)
for shape in $SHAPES; do
  read -r ad apid < <(manager "$BEFORE" "$shape")
  read -r bd bpid < <(manager "$BIN" "$shape")
  pids+=("$apid" "$bpid"); dirs+=("$ad" "$bd")
  n=$BIG_FILL
  if [ "$shape" = agents ]; then
    n=$BIG_API
    # PAR loops, each a session on one manager then one on the other.
    for _ in $(seq 1 "$PAR"); do
      (for _ in $(seq 1 $((BIG_API / PAR))); do
        for d in "$ad" "$bd"; do on "$d" "$BIN/bai" run --rm -q -c 'print(1)' python >/dev/null 2>&1 || true; done
      done) &
    done
    wait
    echo "$shape created $(rss "$apid") $(rss "$bpid")" >>"$out"
  fi
  declare -A t=()
  for _ in $(seq 1 "$ROUNDS"); do
    for which in a b; do
      if [ $which = a ]; then d=$ad; else d=$bd; fi
      t[$which.first]+="$(on "$d" timed "$BIN/bai" ps --dead) "
      t[$which.middle]+="$(on "$d" timed "$BIN/bai" ps --dead --offset $((n / 2))) "
      t[$which.last]+="$(on "$d" timed "$BIN/bai" ps --dead --offset $((n - 20))) "
      t[$which.create]+="$(on "$d" timed "$BIN/bai" run --rm -q -c 'print(1)' python) "
    done
  done
  echo "$shape rss $(rss "$apid") $(rss "$bpid")" >>"$out"
  for _ in $(seq 1 "$WALKS"); do
    for which in a b; do
      if [ $which = a ]; then d=$ad; else d=$bd; fi
      pages=$(( (n + 99) / 100 ))
      w=$(on "$d" timed "$BIN/bai" ps --all)
      t[$which.walk]+="$(python3 -c "print(round($w / $pages, 5))") "
    done
  done
  echo "$shape rsswalk $(rss "$apid") $(rss "$bpid")" >>"$out"
  sleep "$IDLE"
  echo "$shape rssidle $(rss "$apid") $(rss "$bpid")" >>"$out"
  for what in first middle last create walk; do
    # shellcheck disable=SC2086
    echo "$shape $what $(median ${t[a.$what]}) $(median ${t[b.$what]})" >>"$out"
  done
  unset t
  for p in "$apid" "$bpid"; do kill "$p"; wait "$p" 2>/dev/null || true; done
done
# How to read the table: the text below it, written by hand from a line "Where the memory
# went" on, kept from the earlier file.
reading=$(sed -n '/^Where the memory went/,$p' bench/results/28b-history-ab.md 2>/dev/null || true)
python3 - "$out" "$BIG_FILL" "$BIG_API" "$AGENTS" "$ROUNDS" "$WALKS" "$IDLE" <<'PY' > "$out.md"
import sys, datetime, os
path, big_fill, big_api, agents, rounds, walks, idle = sys.argv[1:]
shapes = {"fill": f"{int(big_fill):,} ended (history_fill), no dummy agents",
          "agents": f"{int(big_api):,} ended, run on {agents} dummy agents through the API"}
names = {"created": "baid RSS once the history was run (MB)",
         "rss": f"baid RSS right after {rounds} rounds of listings and creates (MB)",
         "rsswalk": f"baid RSS right after {walks} whole walks (`bai ps --all`) (MB)",
         "rssidle": f"baid RSS {idle} s after the walks (MB)",
         "first": "`bai ps --dead`, the first page (s)", "middle": "`bai ps --dead`, the page in the middle (s)",
         "last": "`bai ps --dead`, the last page (s)", "create": "`bai run --rm -c 'print(1)'` (s)",
         "walk": "`bai ps --all` by cursor, per page of 100 (s)"}
goals = {"rss": "≤ 100 MB", "rsswalk": "≤ 100 MB", "rssidle": "≤ 100 MB", "create": "≈ 1×",
         "first": "≈ 1×", "middle": "≈ 1×", "last": "≈ 1×", "walk": "≈ 1×", "created": ""}
print("## History memory, this build against the one before (bench/history-ab.sh, issue 56)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release builds): two managers side by side, the")
print(f"earlier build's and this one's, with the same history, driven in alternation by the same CLI;")
print(f"medians of {rounds} alternating rounds (times in seconds, each a whole CLI process).")
print()
print("| history | measure | before | this build | ratio | goal |")
print("|---|---|---|---|---|---|")
for line in open(path):
    shape, what, a, b = line.split()
    ratio = f"{float(b) / float(a):.2f}×" if float(a) else "—"
    print(f"| {shapes[shape]} | {names[what]} | {a} | {b} | {ratio} | {goals[what]} |")
PY
if [ -n "$reading" ]; then printf '\n%s\n' "$reading" >>"$out.md"; fi
mv "$out.md" bench/results/28b-history-ab.md
cat bench/results/28b-history-ab.md
bench/assemble.sh
