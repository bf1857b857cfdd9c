# bai krunner's Python REPL helper. Runs inside the kernel container as the `work` user.
# Protocol with krunner: JSON lines. In (stdin): {"code": "..."} or {"input": "..."}.
# Out (the original stdout, kept on a private fd): {"t": "stdout"|"stderr", "data": ...},
# {"t": "waiting-input", "prompt": ..., "password": bool}, {"t": "finished", "exit_code": N}.
import ast, builtins, codecs, json, os, sys, threading, traceback

_ctl = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
_ctl_in = os.fdopen(os.dup(0), "r", encoding="utf-8", errors="replace")
_lock = threading.Lock()
_SENTINEL = b"\x00\x1b[bai-drain]\x00"


def _send(obj):
    with _lock:
        _ctl.write(json.dumps(obj) + "\n")
        _ctl.flush()


class _Pump(threading.Thread):
    """Forwards what is written to a file descriptor (by subprocesses, C code) as records."""

    def __init__(self, fd, kind):
        super().__init__(daemon=True)
        r, w = os.pipe()
        os.dup2(w, fd)
        os.close(w)
        self.fd, self.r, self.kind = fd, r, kind
        self.drained = threading.Event()
        self.dec = codecs.getincrementaldecoder("utf-8")("replace")

    def _emit(self, data):
        text = self.dec.decode(data)
        if text:
            _send({"t": self.kind, "data": text})

    def run(self):
        buf = b""
        while True:
            chunk = os.read(self.r, 65536)
            if not chunk:
                return
            buf += chunk
            while True:
                i = buf.find(_SENTINEL)
                if i < 0:
                    break
                self._emit(buf[:i])
                buf = buf[i + len(_SENTINEL):]
                self.drained.set()
            keep = 0
            for n in range(min(len(_SENTINEL) - 1, len(buf)), 0, -1):
                if _SENTINEL.startswith(buf[-n:]):
                    keep = n
                    break
            self._emit(buf[: len(buf) - keep])
            buf = buf[len(buf) - keep:]

    def drain(self):
        self.drained.clear()
        os.write(self.fd, _SENTINEL)
        self.drained.wait(5)


class _Out:
    """sys.stdout / sys.stderr: each write becomes a record, in order."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, kind, fd):
        self.kind, self._fd = kind, fd

    def write(self, s):
        if not isinstance(s, str):
            s = str(s)
        if s:
            _send({"t": self.kind, "data": s})
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def readable(self):
        return False

    def writable(self):
        return True


_pumps = [_Pump(1, "stdout"), _Pump(2, "stderr")]
for p in _pumps:
    p.start()
sys.stdout = _Out("stdout", 1)
sys.stderr = _Out("stderr", 2)


def _read_input(prompt, password):
    _send({"t": "waiting-input", "prompt": str(prompt), "password": password})
    line = _ctl_in.readline()
    if not line:
        raise EOFError
    return json.loads(line).get("input", "")


builtins.input = lambda prompt="": _read_input(prompt, False)
try:
    import getpass

    getpass.getpass = lambda prompt="Password: ", stream=None: _read_input(prompt, True)
except Exception:
    pass

_globals = {"__name__": "__main__", "__builtins__": builtins}


def _run(code):
    try:
        tree = ast.parse(code, "<input>", "exec")
    except SyntaxError:
        et, ev, _ = sys.exc_info()
        traceback.print_exception(et, ev, None)
        return 1
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    try:
        exec(compile(tree, "<input>", "exec"), _globals)
        if last is not None:
            value = eval(compile(last, "<input>", "eval"), _globals)
            if value is not None:
                sys.stdout.write(repr(value))
        return 0
    except SystemExit as e:
        if e.code is None:
            return 0
        if isinstance(e.code, int):
            return e.code
        sys.stderr.write(str(e.code) + "\n")
        return 1
    except BaseException:
        et, ev, tb = sys.exc_info()
        traceback.print_exception(et, ev, tb.tb_next if tb is not None else None)
        return 1


while True:
    line = _ctl_in.readline()
    if not line:
        break
    try:
        req = json.loads(line)
    except ValueError:
        continue
    if "code" not in req:
        continue
    rc = _run(req["code"])
    for p in _pumps:
        p.drain()
    _send({"t": "finished", "exit_code": rc})
