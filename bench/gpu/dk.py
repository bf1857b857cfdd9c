#!/usr/bin/env python3
"""dk.py: the few Docker Engine API calls the GPU device check needs, over the engine's unix
socket, for a machine that has the engine's binaries but no docker CLI (the CLI alone is
42 MB; the device tool carries 64 MiB in all).

  dk.py SOCK info
  dk.py SOCK import TAR REPO:TAG [LABEL=VALUE ...]
  dk.py SOCK run JSON            create, start, wait, print the logs, remove; exit = its exit code
  dk.py SOCK netcreate NAME
"""
import http.client
import json
import os
import socket
import struct
import sys
import urllib.parse


class Conn(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost", timeout=600)
        self.path = path

    def connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(600)
        s.connect(self.path)
        self.sock = s


def call(sock, method, url, body=None, headers=None, raw=False):
    c = Conn(sock)
    h = dict(headers or {})
    if isinstance(body, (dict, list)):
        body = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    c.request(method, url, body=body, headers=h)
    r = c.getresponse()
    data = r.read()
    if r.status >= 300:
        raise SystemExit(f"{method} {url}: {r.status} {data.decode(errors='replace')[:2000]}")
    if raw:
        return data
    return json.loads(data) if data.strip() else None


def demux(data):
    out = []
    i = 0
    while i + 8 <= len(data):
        n = struct.unpack(">I", data[i + 4 : i + 8])[0]
        out.append(data[i + 8 : i + 8 + n])
        i += 8 + n
    return b"".join(out) if out else data


def main():
    sock, cmd, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    if cmd == "info":
        i = call(sock, "GET", "/info")
        keys = ["ServerVersion", "Driver", "CgroupDriver", "CgroupVersion", "KernelVersion",
                "OperatingSystem", "Runtimes", "DefaultRuntime", "SecurityOptions"]
        print(json.dumps({k: i.get(k) for k in keys}))
    elif cmd == "import":
        tar, ref = args[0], args[1]
        repo, tag = ref.rsplit(":", 1)
        q = [("fromSrc", "-"), ("repo", repo), ("tag", tag)]
        for l in args[2:]:
            k, v = l.split("=", 1)
            q.append(("changes", f"LABEL {k}={json.dumps(v)}"))
        with open(tar, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            out = call(sock, "POST", "/images/create?" + urllib.parse.urlencode(q), body=f,
                       headers={"Content-Type": "application/x-tar",
                                "Content-Length": str(size)}, raw=True)
        print(out.decode(errors="replace").strip()[-300:])
    elif cmd == "run":
        spec = json.loads(args[0])
        c = call(sock, "POST", "/containers/create", body=spec)
        cid = c["Id"]
        try:
            call(sock, "POST", f"/containers/{cid}/start")
            w = call(sock, "POST", f"/containers/{cid}/wait")
            logs = call(sock, "GET", f"/containers/{cid}/logs?stdout=1&stderr=1", raw=True)
            sys.stdout.write(demux(logs).decode(errors="replace"))
            code = w.get("StatusCode", 1)
        finally:
            call(sock, "DELETE", f"/containers/{cid}?force=1")
        print(f"[container exit {code}]")
        sys.exit(code)
    elif cmd == "netcreate":
        print(call(sock, "POST", "/networks/create", body={"Name": args[0], "Driver": "bridge"}))
    else:
        raise SystemExit(f"unknown command {cmd}")


if __name__ == "__main__":
    main()
