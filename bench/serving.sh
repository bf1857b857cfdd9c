#!/usr/bin/env bash
# Model serving benchmark (issue "Model serving"), a real service in the real Docker engine:
# the model of tests/fixtures/model-nb, two public replicas of half a core each.
# 1. Added latency of the endpoint for small requests: GET /health through the endpoint
#    against the same GET straight to one replica's container, a new connection per request,
#    N each, interleaved; the differences of p50 and p99.               goal p50 ≤ +0.5 ms
# 2. Throughput: C clients of a CPU-bound request (/work?n=N: N steps of a Python loop)
#    for D s through the endpoint with two replicas, against the same load straight to one
#    replica.                                                          goal ≥ 1.6×
# 3. Recovery: the time from `docker kill` of a replica to a healthy replacement, against a
#    replica's own start (scale 2 → 3 until the third is healthy), same run; and the
#    requests that failed during the recovery, with two replicas and a client running.
#                                                                      goal ≤ +2 s, 0 failed
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
REQUESTS="${REQUESTS:-500}"
CLIENTS="${CLIENTS:-8}"
WORK_N="${WORK_N:-200000}"
SECONDS_EACH="${SECONDS_EACH:-10}"
BIN="$PWD/target/release"
data="$(mktemp -d /var/tmp/bai-bench-serving.XXXXXX)"
port=$((20000 + RANDOM % 20000))
BAI_DATA_DIR="$data" BAI_LISTEN="127.0.0.1:$port" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$data/out.log" 2>"$data/err.log" &
baid_pid=$!
cleanup() {
  kill "$baid_pid" 2>/dev/null || true
  wait "$baid_pid" 2>/dev/null || true
  agent=$(grep -o 'agent-[0-9a-f]*' "$data/out.log" | head -1 || true)
  [ -n "$agent" ] && docker ps -aq --filter "label=ai.bai.agent=$agent" | xargs -r docker rm -f >/dev/null
  rm -rf "$data"
}
trap cleanup EXIT
for _ in $(seq 1 100); do grep -q "Stop with Ctrl-C" "$data/out.log" 2>/dev/null && break; sleep 0.1; done
# shellcheck disable=SC1091
. "$data/env-user.sh"
bai="$BIN/bai"
"$bai" vfolder create benchmodel --usage-mode model >/dev/null
(cd tests/fixtures/model-nb && "$bai" vfolder upload benchmodel model-definition.yaml train.py serve.py corpus.tsv >/dev/null)
"$bai" service create python benchmodel 2 -t benchsvc --public -r cpu=0.5 -r mem=512m >/dev/null
python3 - "$bai" "$REQUESTS" "$CLIENTS" "$WORK_N" "$SECONDS_EACH" <<'PY' > bench/results/70-serving.md
import sys, time, json, statistics, datetime, os, subprocess, threading, http.client, urllib.parse
bai, n, clients, work_n, secs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])

def info():
    out = subprocess.run([bai, 'service', 'info', 'benchsvc'], capture_output=True, text=True, check=True).stdout
    return out

def service():
    # `bai service info`: the URL line and the routes' table (route, session, status, …).
    lines = info().splitlines()
    url = next(l.split()[1] for l in lines if l.startswith('url'))
    routes = [l.split() for l in lines if len(l.split()) >= 7 and l.split()[2] in
              ('healthy', 'provisioning', 'unhealthy', 'terminating', 'failed_to_start')]
    return url, routes

def wait(pred, what, limit=600):
    t0 = time.monotonic()
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() - t0 > limit:
            raise SystemExit(f'timed out waiting for {what}')
        time.sleep(0.05)

def healthy(k):
    def check():
        url, routes = service()
        h = [r for r in routes if r[2] == 'healthy']
        return (url, h) if len(h) == k and len(routes) == k and url.startswith('http') else None
    return check

url, routes = wait(healthy(2), 'two healthy replicas')
u = urllib.parse.urlsplit(url)
def container_ip(session):
    cid = json.loads(subprocess.run([bai, 'session', 'info', '--json', session], capture_output=True, text=True, check=True).stdout)['container_id']
    return subprocess.run(['docker', 'inspect', '-f', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', cid],
                          capture_output=True, text=True, check=True).stdout.strip(), cid
ip, _ = container_ip(routes[0][1])

def get(host, port, path):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection(host, port, timeout=30); c.request('GET', path)
    r = c.getresponse(); r.read(); c.close()
    if r.status != 200:
        raise RuntimeError(f'{host}:{port}{path} answered {r.status}')
    return time.perf_counter() - t0

# 1. Latency.
for _ in range(50):
    get(u.hostname, u.port, '/health'); get(ip, 8000, '/health')
via, direct = [], []
for _ in range(n):
    via.append(get(u.hostname, u.port, '/health'))
    direct.append(get(ip, 8000, '/health'))
def pct(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(len(xs) * p))] * 1000
v50, d50, v99, d99 = pct(via, .5), pct(direct, .5), pct(via, .99), pct(direct, .99)

# 2. Throughput under the same closed-loop load.
def load(host, port, seconds, path, stop=None):
    done, failed = [0], [0]
    lock = threading.Lock()
    end = time.monotonic() + seconds
    def client():
        c = None
        while (time.monotonic() < end) if stop is None else not stop.is_set():
            try:
                if c is None:
                    c = http.client.HTTPConnection(host, port, timeout=30)
                c.request('GET', path); r = c.getresponse(); r.read()
                ok = r.status == 200
                if r.getheader('Connection', '').lower() == 'close':
                    c.close(); c = None
            except Exception:
                ok = False
                if c is not None:
                    c.close()
                c = None
            with lock:
                if ok: done[0] += 1
                else: failed[0] += 1
    ts = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.monotonic()
    for t in ts: t.start()
    for t in ts: t.join()
    return done[0] / (time.monotonic() - t0), done[0], failed[0]
work = f'/work?n={work_n}'
one, _, _ = load(ip, 8000, secs, work)
two, _, failed_tp = load(u.hostname, u.port, secs, work)

# 3. A replica's own start: scale 2 → 3 until the third is healthy.
t0 = time.monotonic()
subprocess.run([bai, 'service', 'scale', 'benchsvc', '3'], check=True, capture_output=True)
wait(healthy(3), 'three healthy replicas')
start = time.monotonic() - t0
subprocess.run([bai, 'service', 'scale', 'benchsvc', '2'], check=True, capture_output=True)
url, routes = wait(healthy(2), 'back to two')
before = {r[0] for r in routes}
# Kill one while a client keeps calling the endpoint.
stop = threading.Event()
result = {}
def background():
    _, result['done'], result['failed'] = load(u.hostname, u.port, 0, '/health', stop)
bg = threading.Thread(target=background); bg.start()
time.sleep(1)
_, cid = container_ip(routes[0][1])
t0 = time.monotonic()
subprocess.run(['docker', 'kill', cid], check=True, capture_output=True)
def replaced():
    got = healthy(2)()
    return got if got and {r[0] for r in got[1]} != before else None
wait(replaced, 'a replacement')
recover = time.monotonic() - t0
stop.set(); bg.join()

print("## Model serving (bench/serving.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release build), a public service of the fixture model, two replicas of half a core each, in Docker.")
print()
print("| benchmark | bai | baseline (same run) | ratio | goal |")
print("|---|---|---|---|---|")
print(f"| endpoint, GET /health, new connection each, p50 of {n} | {v50:.3f} ms | straight to a replica {d50:.3f} ms | +{v50 - d50:.3f} ms | p50 added ≤ 0.5 ms |")
print(f"| endpoint, same, p99 | {v99:.3f} ms | straight to a replica {d99:.3f} ms | +{v99 - d99:.3f} ms | (shown) |")
print(f"| {clients} clients of a CPU-bound request ({work_n:,} loop steps) for {secs:.0f} s: two replicas through the endpoint | {two:.1f} req/s ({failed_tp} failed) | one replica straight {one:.1f} req/s | {two / one:.2f}× | ≥ 1.6× |")
print(f"| `docker kill` of a replica until a replacement is healthy | {recover:.2f} s | a replica's own start (scale 2 → 3) {start:.2f} s | +{recover - start:.2f} s | ≤ +2 s |")
print(f"| requests failed during that recovery ({clients} clients calling the endpoint throughout) | {result['failed']} of {result['done'] + result['failed']} | — | — | 0 |")
PY
cat bench/results/70-serving.md
bench/assemble.sh
