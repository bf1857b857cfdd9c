#!/usr/bin/env python3
"""The baseline of bench/kubernetes.sh: one pod of IMAGE that prints 1, made and deleted
directly through the API server, as a user of Kubernetes alone would: create it (the same
requests = limits as bai's default), watch it until it Succeeded, read its log, delete it
(grace 0) and watch until it is gone. Prints the log. Standard library only; the client
certificate is the test cluster's admin one (KUBE_DIR/pki).

    kube-pod.py KUBE_DIR NAMESPACE IMAGE NAME
"""
import json
import ssl
import sys
import urllib.error
import urllib.request

kdir, ns, image, name = sys.argv[1:5]
env = dict(
    line.strip().split("=", 1)
    for line in open(f"{kdir}/env")
    if "=" in line and not line.startswith("export")
)
server = env["BAI_KUBE_SERVER"]
ctx = ssl.create_default_context(cafile=f"{kdir}/pki/ca.crt")
ctx.load_cert_chain(f"{kdir}/pki/admin.crt", f"{kdir}/pki/admin.key")
name = f"bench-{name}"


def call(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(server + path, data=data, method=method)
    req.add_header("Content-Type", "application/json")
    return urllib.request.urlopen(req, context=ctx)


def watch(until, version=None):
    """Watches the pod (from `version`, else from its present state) until `until(event)`."""
    path = (f"/api/v1/namespaces/{ns}/pods?watch=1&fieldSelector=metadata.name%3D{name}"
            "&timeoutSeconds=120" + (f"&resourceVersion={version}" if version else ""))
    with call("GET", path) as r:
        for line in r:
            if until(json.loads(line)):
                return
    raise SystemExit(f"pod {name}: the watch ended first")


try:
    call("POST", "/api/v1/namespaces", {"metadata": {"name": ns}}).close()
except urllib.error.HTTPError as e:
    if e.code != 409:
        raise
res = {"cpu": "1", "memory": "1Gi"}
pod = {
    "metadata": {"name": name},
    "spec": {
        "restartPolicy": "Never",
        "terminationGracePeriodSeconds": 0,
        "automountServiceAccountToken": False,
        "containers": [{
            "name": "main",
            "image": image,
            "imagePullPolicy": "Never",
            "command": ["python3", "-c", "print(1)"],
            "resources": {"requests": res, "limits": res},
        }],
    },
}
call("POST", f"/api/v1/namespaces/{ns}/pods", pod).close()
watch(lambda e: e["object"].get("status", {}).get("phase") in ("Succeeded", "Failed"))
with call("GET", f"/api/v1/namespaces/{ns}/pods/{name}/log") as r:
    sys.stdout.write(r.read().decode())
call("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}", {"gracePeriodSeconds": 0}).close()
try:
    with call("GET", f"/api/v1/namespaces/{ns}/pods/{name}") as r:
        version = json.load(r)["metadata"]["resourceVersion"]
    watch(lambda e: e["type"] == "DELETED", version)
except urllib.error.HTTPError as e:
    if e.code != 404:
        raise
