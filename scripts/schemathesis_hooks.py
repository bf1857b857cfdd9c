"""Schemathesis hooks for bai: Backend.AI keypair HMAC signing of every request.

Loaded with `SCHEMATHESIS_HOOKS=schemathesis_hooks` (with scripts/ on PYTHONPATH), as
scripts/schemathesis.sh does. The keypair comes from BACKEND_ACCESS_KEY / BACKEND_SECRET_KEY,
the same variables the bai CLI reads.

The signature (crates/bai-core/src/sign.rs, crates/bai-client/src/request.rs):

    sign_str = METHOD "\n" path_and_query "\n" date "\n"
               "host:" host "\n" "content-type:" media_type "\n"
               "x-backendai-version:" version "\n" sha256_hex(b"")
    k1  = HMAC-SHA256(secret_key, date as YYYYMMDD, UTC)
    k2  = HMAC-SHA256(k1, host)
    sig = hex(HMAC-SHA256(k2, sign_str))

path_and_query is the raw request target exactly as sent, media_type the Content-Type
without parameters, lower-cased (application/octet-stream when there is none), and the
body hash is always that of the empty string. The signing is done as a `requests` auth
object, so it sees the final prepared request: the percent-encoded path and query that
go on the wire and the Content-Type (with the multipart boundary) that requests chose.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import os
import time
from urllib.parse import urlsplit

import requests
import schemathesis
from schemathesis.checks import not_a_server_error

API_VERSION = "v9.20250722"
DEFAULT_MEDIA_TYPE = "application/octet-stream"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def media_type_of(content_type: str | None) -> str:
    if content_type is None or not content_type.strip():
        return DEFAULT_MEDIA_TYPE
    return content_type.split(";", 1)[0].strip().lower()


def _hmac(key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, hashlib.sha256).digest()


def sign(
    secret_key: str,
    method: str,
    path_and_query: str,
    date: str,
    date_ymd: str,
    host: str,
    media_type: str,
    api_version: str = API_VERSION,
) -> str:
    sign_str = (
        f"{method.upper()}\n{path_and_query}\n{date}\n"
        f"host:{host}\ncontent-type:{media_type}\n"
        f"x-backendai-version:{api_version}\n{EMPTY_SHA256}"
    )
    k1 = _hmac(secret_key.encode(), date_ymd.encode())
    k2 = _hmac(k1, host.encode())
    return hmac.new(k2, sign_str.encode(), hashlib.sha256).hexdigest()


class BackendAISign(requests.auth.AuthBase):
    """Signs a prepared request with the keypair from the environment."""

    def __init__(self, access_key: str, secret_key: str) -> None:
        self.access_key = access_key
        self.secret_key = secret_key

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        now = datetime.datetime.now(datetime.timezone.utc)
        date = now.isoformat(timespec="microseconds")  # 2026-01-02T03:04:05.123456+00:00
        url = urlsplit(r.url)
        # What http.client sends as Host: netloc without userinfo (port kept when given).
        host = url.netloc.rsplit("@", 1)[-1]
        ct = r.headers.get("Content-Type")
        sig = sign(
            self.secret_key,
            r.method or "GET",
            r.path_url,  # path + "?" + query, exactly as on the request line
            date,
            now.strftime("%Y%m%d"),
            host,
            media_type_of(ct),
        )
        r.headers["Date"] = date
        r.headers["X-BackendAI-Version"] = API_VERSION
        r.headers["Authorization"] = f"BackendAI signMethod=HMAC-SHA256, credential={self.access_key}:{sig}"
        return r


def _self_test() -> None:
    """The known-answer vectors of the wire contract §2.3 (as in sign.rs)."""
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    date = "2026-01-02T03:04:05.123456+00:00"
    cases = [
        ("GET", "/session/mysess/logs", "text/plain",
         "c8958c232cded759c947826f4649e2e83aaa79caf7a409cf1492376345f66e43"),
        ("POST", "/admin/gql", "application/json",
         "181c4b0766584d64729220add89099bc5e9d440bfac72603535202dcf59b8baa"),
        ("GET", "/events/session?sessionName=mysess&scope=*", DEFAULT_MEDIA_TYPE,
         "c67a43959277ff3c566ada020373d02253b5effa3e743358c38324a115208c46"),
    ]
    for method, path, media, want in cases:
        got = sign(secret, method, path, date, "20260102", "127.0.0.1:8090", media, "v9.20250722")
        assert got == want, f"signature self-test failed for {method} {path}: {got}"


_self_test()


@schemathesis.serializer("application/offset+octet-stream")
def _tus_chunk(ctx, value):
    """The TUS PATCH body (PATCH /storage/upload): raw bytes, like application/octet-stream."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    data = getattr(value, "data", None)  # schemathesis' Binary wrapper
    if isinstance(data, (bytes, bytearray)):
        return bytes(data)
    return str(value).encode("utf-8", errors="ignore")


_access = os.environ.get("BACKEND_ACCESS_KEY")
_secret = os.environ.get("BACKEND_SECRET_KEY")
if _access and _secret:
    schemathesis.auth.set_from_requests(BackendAISign(_access, _secret))
else:
    raise RuntimeError("schemathesis_hooks: set BACKEND_ACCESS_KEY and BACKEND_SECRET_KEY")


# ---------------------------------------------------------------------------------------
# Fixtures: `python scripts/schemathesis_hooks.py fixtures NAME OPENAPI CONFIG_OUT` makes a
# data folder and a running session (which mounts the folder, so the folder cannot be
# deleted while it runs) for the keypair in the environment, and writes a schemathesis
# config (TOML) that feeds their name / id to the operations that take one (with
# probability 0.5, so random values are still tried). It prints the fixture names and
# ids, comma-separated, on its last line: put them in BAI_ST_PROTECT and the before_call
# hook below keeps the destructive operations (end, rename, commit, imagify, delete) off
# them, also when schemathesis draws them from earlier responses.
# `python scripts/schemathesis_hooks.py cleanup NAME,SESSION_ID,FOLDER_ID` ends the session
# and deletes the folder.

FIXTURE_PROBABILITY = 0.5
# (METHOD, path) that must not touch a fixture: they would end, rename, image or delete it.
GUARDED = {
    ("DELETE", "/session/{reference}"),
    ("POST", "/session/{reference}/rename"),
    ("POST", "/session/{reference}/commit"),
    ("POST", "/session/{reference}/imagify"),
    ("DELETE", "/folders/{id}"),
    ("DELETE", "/folders"),
}
_PROTECTED = {v for v in os.environ.get("BAI_ST_PROTECT", "").split(",") if v}


# A create waits until its session runs; one that cannot run yet (the agent is full of
# sessions made by earlier cases) would wait for good. Creates without a bound on that wait
# get one, well inside the request timeout; values of the wrong type are left to be refused.
CREATES = {("POST", "/session"), ("POST", "/session/_/create-from-template")}
MAX_WAIT = 3


def _bound_the_wait(body) -> None:
    if not isinstance(body, dict):
        return
    wait = body.get("maxWaitSeconds")
    if wait is None or (type(wait) is int and (wait == 0 or wait > MAX_WAIT)):
        body["maxWaitSeconds"] = MAX_WAIT


# A 503 with this problem type is the server's answer to a create in a resource group no agent
# node is registered in. The stateful phase can leave the caller only such a group (it makes
# groups, and makes `default` private); that answer is the API's, not a server fault.
NO_AGENTS = "https://api.backend.ai/probs/no-agents"


@schemathesis.check
def not_a_server_error_but_no_agents(ctx, response, case):
    """not_a_server_error, except the documented 503 `no-agents`."""
    if response.status_code == 503:
        try:
            problem = json.loads(response.content)
        except ValueError:
            problem = None
        if isinstance(problem, dict) and problem.get("type") == NO_AGENTS:
            return None
    return not_a_server_error(ctx, response, case)


@schemathesis.hook
def before_call(context, case, kwargs):
    """Bound a create's wait; point the guarded operations elsewhere when they name a fixture."""
    if (case.method.upper(), case.operation.path) in CREATES:
        _bound_the_wait(case.body)
        if isinstance(kwargs, dict):
            _bound_the_wait(kwargs.get("json"))
    if not _PROTECTED or (case.method.upper(), case.operation.path) not in GUARDED:
        return
    params = case.path_parameters or {}
    for key, value in list(params.items()):
        if isinstance(value, str) and value in _PROTECTED:
            params[key] = "st-spared-" + key
    if isinstance(case.body, dict):
        for key in ("id", "name"):
            if isinstance(case.body.get(key), str) and case.body[key] in _PROTECTED:
                case.body[key] = "st-spared-" + key


def _call(auth: BackendAISign, endpoint: str, method: str, path: str, body=None, timeout=180):
    r = requests.request(method, endpoint + path, json=body, auth=auth, timeout=timeout)
    try:
        data = r.json()
    except ValueError:
        data = r.text
    if r.status_code >= 300:
        raise RuntimeError(f"{method} {path}: {r.status_code} {str(data)[:300]}")
    return data


def _toml_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _env_auth():
    endpoint = os.environ["BACKEND_ENDPOINT"].rstrip("/")
    return endpoint, BackendAISign(os.environ["BACKEND_ACCESS_KEY"], os.environ["BACKEND_SECRET_KEY"])


def make_fixtures(name: str, openapi: str, config_out: str) -> None:
    import json
    import sys

    endpoint, auth = _env_auth()
    folder = _call(auth, endpoint, "POST", "/folders", {"name": name})
    folder_id = folder["id"]
    _call(auth, endpoint, "POST", f"/folders/{folder_id}/mkdir",
          {"path": ["d1", "d2/e"], "parents": True, "exist_ok": True})
    sess = _call(auth, endpoint, "POST", "/session", {
        "image": "python", "name": name, "maxWaitSeconds": 150,
        "config": {"resources": {"cpu": 1, "mem": "128m"}, "mounts": [name]},
    })
    if sess.get("status") != "RUNNING":
        print(f"fixtures: session {name} is {sess.get('status')}, not RUNNING", file=sys.stderr)
    spec = json.load(open(openapi))
    by_param: dict[str, list[str]] = {"reference": [], "id": []}
    for path, ops in spec["paths"].items():
        for method, op in ops.items():
            if not isinstance(op, dict) or (method.upper(), path) in GUARDED:
                continue
            if path.startswith(("/session/{reference}", "/stream/session/{reference}")):
                by_param["reference"].append(op["operationId"])
            elif path.startswith("/folders/{id}"):
                by_param["id"].append(op["operationId"])
    lines = [
        "[dictionaries.bai_session]", f"values = [{_toml_str(name)}, {_toml_str(sess['sessionId'])}]", "",
        "[dictionaries.bai_folder]", f"values = [{_toml_str(folder_id)}]", "",
    ]
    for param, dictionary in (("reference", "bai_session"), ("id", "bai_folder")):
        ids = ", ".join(_toml_str(i) for i in sorted(by_param[param]))
        lines += [
            "[[operations]]", f"include-operation-id = [{ids}]",
            f'parameters = {{ "path.{param}" = {{ dictionary = "{dictionary}", probability = {FIXTURE_PROBABILITY} }} }}', "",
        ]
    lines += stream_blocks(spec)
    with open(config_out, "w") as f:
        f.write("\n".join(lines))
    print(f"fixtures: folder {name} ({folder_id}), session {name} ({sess['sessionId']}, {sess.get('status')})",
          file=sys.stderr)
    print(f"{name},{sess['sessionId']},{folder_id}")


# An event stream (`GET /events/session`, `/events/background-task`) answers at once and then
# stays open while nothing happens: schemathesis reads it until its request timeout, so each
# such case took the whole 30 s (a third of the run). Its answer's status, media type and
# first events are what the checks see; STREAM_TIMEOUT_S of listening shows them.
STREAM_TIMEOUT_S = 10


def stream_blocks(spec: dict) -> list[str]:
    """Config lines giving the spec's event-stream operations a request timeout of their own."""
    ids = []
    for ops in spec["paths"].values():
        for op in ops.values():
            if not isinstance(op, dict):
                continue
            if any("text/event-stream" in (r.get("content") or {}) for r in op.get("responses", {}).values()):
                ids.append(op["operationId"])
    if not ids:
        return []
    listed = ", ".join(_toml_str(i) for i in sorted(ids))
    return ["[[operations]]", f"include-operation-id = [{listed}]", f"request-timeout = {STREAM_TIMEOUT_S}", ""]


def write_stream_config(openapi: str, config_out: str) -> None:
    """The config without fixtures: only the event streams' timeout."""
    with open(openapi) as f:
        spec = json.load(f)
    with open(config_out, "w") as f:
        f.write("\n".join(stream_blocks(spec)))


LIVE_WAIT_S = 300
# The two statuses a session never leaves; every other one of the API document's is live.
FINAL = ("TERMINATED", "CANCELLED")
OPENAPI = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "openapi.json")


def live_statuses(openapi: str = OPENAPI) -> str:
    """The statuses of a session that has not ended, as the list filter takes them: read from
    the document's `SessionStatus`, so a status added there is waited for here too."""
    with open(openapi) as f:
        schema = json.load(f)["components"]["schemas"]["SessionStatus"]
    names = [s["const"] for s in schema["oneOf"]]
    missing = [f for f in FINAL if f not in names]
    if missing:
        raise RuntimeError(f"schemathesis_hooks: SessionStatus has no {missing}")
    return ",".join(n for n in names if n not in FINAL)


def _live_sessions(auth, endpoint, access_key: str) -> list[str]:
    """The keypair's sessions that have not ended: its own and its system ones (the SFTP
    sessions a folder's `sftp` route starts, listed only with `type: "system"`)."""
    query = ("query($s: String, $ak: String, $t: String) { compute_session_list(limit: 100, offset: 0,"
             " status: $s, access_key: $ak, type: $t) { items { id } } }")
    ids = []
    live = live_statuses()
    for kind in (None, "system"):
        body = {"query": query, "variables": {"s": live, "ak": access_key, "t": kind}}
        data = _call(auth, endpoint, "POST", "/admin/gql", body)
        ids += [i["id"] for i in data["data"]["compute_session_list"]["items"]]
    return ids


def cleanup_fixtures(protect: str) -> None:
    """Ends every session of the role's keypair (the fixture's and those the run made, which
    would hold the agent's CPUs from the next role's fixture), waits until they have ended,
    then deletes the fixture's folder. `protect` is the `fixtures` line
    NAME,SESSION_ID,FOLDER_ID, or "-" when there were no fixtures."""
    endpoint, auth = _env_auth()
    access_key = os.environ["BACKEND_ACCESS_KEY"]
    asked: set[str] = set()
    deadline = time.monotonic() + LIVE_WAIT_S
    while True:
        try:
            live = _live_sessions(auth, endpoint, access_key)
        except Exception as exc:  # best effort: the next role then waits for the agent
            print(f"cleanup: {exc}")
            break
        if not live:
            break
        if time.monotonic() > deadline:
            print(f"cleanup: {len(live)} sessions still live after {LIVE_WAIT_S} s")
            break
        for sid in live:
            if sid not in asked:
                asked.add(sid)
                try:
                    _call(auth, endpoint, "DELETE", f"/session/{sid}?forced=true")
                except Exception as exc:
                    print(f"cleanup: {exc}")
        time.sleep(1)
    print(f"cleanup: ended {len(asked)} sessions")
    if protect == "-":
        return
    _name, _session_id, folder_id = protect.split(",")
    try:
        _call(auth, endpoint, "DELETE", "/folders", {"id": folder_id})
    except Exception as exc:  # best effort: the run may have renamed it
        print(f"cleanup: {exc}")


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 5 and sys.argv[1] == "fixtures":
        make_fixtures(sys.argv[2], sys.argv[3], sys.argv[4])
    elif len(sys.argv) == 4 and sys.argv[1] == "streams":
        write_stream_config(sys.argv[2], sys.argv[3])
    elif len(sys.argv) == 3 and sys.argv[1] == "cleanup":
        cleanup_fixtures(sys.argv[2])
    else:
        sys.exit("usage: schemathesis_hooks.py fixtures NAME OPENAPI CONFIG_OUT | streams OPENAPI CONFIG_OUT"
                 " | cleanup NAME,SESSION_ID,FOLDER_ID|-")
