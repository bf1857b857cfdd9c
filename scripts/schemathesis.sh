#!/usr/bin/env bash
# Fuzzes every route of docs/openapi.json with schemathesis against a throwaway `baid up`
# (temp data dir, free port, the local Docker agent), once signed as the admin keypair
# and once as the user keypair (Backend.AI HMAC signing: scripts/schemathesis_hooks.py).
# Checks: not_a_server_error, response_schema_conformance, status_code_conformance,
# content_type_conformance. Ends with one line:
#   schemathesis: N operations, M requests, K failures
# and exits non-zero when schemathesis found anything (or could not run).
#
# Environment:
#   ST_MAX_EXAMPLES  test cases per operation and phase (default 10)
#   ST_TIMEOUT       wall-clock limit per role in seconds (default 600)
#   ST_WORKERS       schemathesis workers (default 2)
#   ST_FIXTURES      1 (default): give each role a running session and a data folder to
#                    aim at (so session/folder routes get past 404); 0: random ids only.
#                    Either way the event streams get a request timeout of their own (10 s)
#                    and each role's sessions are ended before the next role begins
#   ST_SEED          schemathesis seed (default: random)
#   ST_ROLES         roles to run, in order (default "user admin": admin drains agents)
#   ST_OUT           where the reports go (default: a new temp dir, printed)
#   ST_VERBOSE       1: stream schemathesis' whole output (default: only its summary)
#   ST_EXTRA_ARGS    more `st run` arguments
#   BAID, BAI_KRUNNER  the binaries (default target/release/{baid,bai-krunner})
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv="$root/.venv-schemathesis"
max_examples=${ST_MAX_EXAMPLES:-10}
role_timeout=${ST_TIMEOUT:-600}
workers=${ST_WORKERS:-2}
fixtures=${ST_FIXTURES:-1}
roles=${ST_ROLES:-user admin}
baid=${BAID:-$root/target/release/baid}
krunner=${BAI_KRUNNER:-$root/target/release/bai-krunner}
out=${ST_OUT:-$(mktemp -d /tmp/bai-schemathesis.XXXXXX)}
mkdir -p "$out" && out=$(cd "$out" && pwd)

die() { echo "schemathesis.sh: $*" >&2; echo "schemathesis: 0 operations, 0 requests, 1 failures (did not run: $*)"; exit 2; }

[ -x "$baid" ] || die "no $baid (build it first)"
[ -x "$krunner" ] || die "no $krunner (build it first)"

# 1. The virtual environment.
if [ ! -x "$venv/bin/st" ]; then
    py=""
    # pyenv's 3.13.0 first (the official client's; it has venv), then whatever is there.
    for c in "$HOME/.pyenv/versions/3.13.0/bin/python3.13" python3.13 python3 python3.12 \
             python3.11 python3.10 "$HOME"/.pyenv/versions/3.1[0-9]*/bin/python3; do
        if command -v "$c" >/dev/null 2>&1 &&
           "$c" -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null; then
            py=$c; break
        fi
    done
    [ -n "$py" ] || die "no Python >= 3.10 for the venv"
    echo "schemathesis.sh: making $venv with $py" >&2
    "$py" -m venv "$venv" && "$venv/bin/pip" install -q "schemathesis>=4.32,<5" || die "could not install schemathesis"
fi
"$venv/bin/st" --version >&2

# 2. A throwaway manager + agent on a free port.
port=$("$venv/bin/python" - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randint(23000, 29000)
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", p))
    except OSError:
        continue
    finally:
        s.close()
    print(p)
    break
EOF
)
[ -n "$port" ] || die "no free port in 23000-29000"
data=$(mktemp -d /tmp/bai-st-data.XXXXXX)
BAI_DATA_DIR=$data BAI_LISTEN=127.0.0.1:$port BAI_AGENT_LISTEN=off BAI_KRUNNER=$krunner \
    nice -n 10 "$baid" up >"$data/baid.out" 2>&1 &
baid_pid=$!
agent=""

cleanup() {
    if kill -0 "$baid_pid" 2>/dev/null; then
        kill "$baid_pid" 2>/dev/null
        for _ in $(seq 20); do kill -0 "$baid_pid" 2>/dev/null || break; sleep 0.5; done
        kill -9 "$baid_pid" 2>/dev/null
    fi
    wait "$baid_pid" 2>/dev/null
    if [ -n "$agent" ]; then
        docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null 2>&1
    fi
    cp "$data/baid.out" "$out/baid.out" 2>/dev/null
    # The agent's shared mount of its kernels' directory outlives it (a restart reuses it).
    umount -R "$data/kernels" 2>/dev/null || umount -l "$data/kernels" 2>/dev/null
    rm -rf "$data"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

for _ in $(seq 120); do
    grep -q "Stop with Ctrl-C" "$data/baid.out" 2>/dev/null && break
    kill -0 "$baid_pid" 2>/dev/null || break
    sleep 0.5
done
grep -q "Stop with Ctrl-C" "$data/baid.out" 2>/dev/null || { cat "$data/baid.out" >&2; die "baid up did not start"; }
agent=$(sed 's/\x1b\[[0-9;]*m//g' "$data/baid.out" | sed -n 's/^ *agent *: *\(agent-[0-9a-zA-Z]*\).*/\1/p' | head -1)
echo "schemathesis.sh: baid on 127.0.0.1:$port (agent ${agent:-?}), data $data, reports $out" >&2

# 3. One schemathesis run per role.
checks=not_a_server_error_but_no_agents,response_schema_conformance,status_code_conformance,content_type_conformance
seed_args=()
[ -n "${ST_SEED:-}" ] && seed_args=(--seed "$ST_SEED")
# shellcheck disable=SC2206
extra_args=(${ST_EXTRA_ARGS:-})
status=0
for role in $roles; do
    [ -f "$data/env-$role.sh" ] || die "no $data/env-$role.sh"
    mkdir -p "$out/$role"
    (
        # shellcheck disable=SC1090
        . "$data/env-$role.sh"
        export PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_hooks
        protect="" cfg=(--config-file "$out/$role/fixtures.toml")
        if [ "$fixtures" = 1 ]; then
            if ! protect=$("$venv/bin/python" "$root/scripts/schemathesis_hooks.py" fixtures "stfix-$role" \
                    "$root/docs/openapi.json" "$out/$role/fixtures.toml"); then
                echo "schemathesis.sh: [$role] no fixtures; random ids only" >&2
                protect=""
            fi
        fi
        # Without fixtures, the config holds only the event streams' own request timeout.
        [ -n "$protect" ] || "$venv/bin/python" "$root/scripts/schemathesis_hooks.py" streams \
            "$root/docs/openapi.json" "$out/$role/fixtures.toml" || cfg=()
        export BAI_ST_PROTECT=$protect
        echo "schemathesis.sh: [$role] st run ($BACKEND_ACCESS_KEY), max examples $max_examples" >&2
        # st keeps a cache (.schemathesis/) in its working directory: keep it out of the tree.
        cd "$out/$role" || exit 2
        timeout "$role_timeout" nice -n 10 "$venv/bin/st" "${cfg[@]}" run "$root/docs/openapi.json" \
            --url "$BACKEND_ENDPOINT" --checks "$checks" --max-examples "$max_examples" \
            --workers "$workers" --request-timeout 30 --continue-on-failure \
            --report json,har,ndjson --report-dir "$out/$role" \
            "${seed_args[@]}" "${extra_args[@]}" >"$out/$role/output.txt" 2>&1
        rc=$?
        if [ "${ST_VERBOSE:-0}" = 1 ]; then
            cat "$out/$role/output.txt"
        else
            sed -n '/^=* SUMMARY =*$/,$p' "$out/$role/output.txt"
        fi
        [ $rc -eq 124 ] && echo "schemathesis.sh: [$role] timed out after ${role_timeout}s" >&2
        # Every session of this role ends before the next role's fixture asks for the CPUs.
        "$venv/bin/python" "$root/scripts/schemathesis_hooks.py" cleanup "${protect:--}" >&2
        exit $rc
    )
    rc=$?
    echo "schemathesis.sh: [$role] st exit $rc; full output $out/$role/output.txt" >&2
    [ $rc -ne 0 ] && status=1
done

# 4. One line for all roles.
"$venv/bin/python" - "$out" $roles <<'EOF'
import glob, json, sys
out, roles = sys.argv[1], sys.argv[2:]
ops, requests, failures, missing = 0, 0, 0, []
for role in roles:
    reports = sorted(glob.glob(f"{out}/{role}/json-*.json"))
    if not reports:
        missing.append(role)
        continue
    r = json.load(open(reports[-1]))
    ops = max(ops, r["operations"]["tested"])
    failures += r["test_cases"]["unique_failures"] + len(r.get("errors") or [])
    har = sorted(glob.glob(f"{out}/{role}/har-*.json"))
    requests += len(json.load(open(har[-1]))["log"]["entries"]) if har else r["test_cases"]["generated"]
    print(f"schemathesis: [{role}] {r['operations']['tested']} operations, "
          f"{r['test_cases']['generated']} test cases, {r['test_cases']['unique_failures']} unique failures, "
          f"{len(r.get('errors') or [])} errors", file=sys.stderr)
failures += len(missing)
note = f" (no report for {', '.join(missing)})" if missing else ""
print(f"schemathesis: {ops} operations, {requests} requests, {failures} failures{note}")
EOF
exit $status
