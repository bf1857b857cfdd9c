# bai krunner's Python REPL helper. Runs inside the kernel container as the `work` user,
# one process for the life of the kernel, so state persists between executions.
#
# Protocol with krunner, JSON lines over private file descriptors (duplicates of the
# original stdin/stdout; fds 0, 1 and 2 are taken over for the user's code):
#   in:  {"code": "..."}        run a snippet
#        {"input": "..."}       the line a waiting input() asked for
#        {"eof": true}          nobody will answer the waiting input(): raise EOFError
#   out: {"t": "stdout"|"stderr", "data": "..."}
#        {"t": "waiting-input", "prompt": "...", "password": false}
#        {"t": "finished", "exit_code": N}
#
# fds 1 and 2 are pipes read by pump threads, so output of subprocesses and C code is
# captured too, in order with Python's own prints (sys.stdout writes straight to fd 1).
# Before "finished" (and before "waiting-input") every pump is drained: a sentinel is
# written to each pipe and the pump acknowledges it once everything before it was sent.
import ast, builtins, codecs, io, json, os, sys, threading, traceback

_ctl = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8", errors="replace")
_ctl_in = os.fdopen(os.dup(0), "r", encoding="utf-8", errors="replace")
_lock = threading.Lock()
_SENTINEL = b"\x00\x1b[bai-drain]\x00"

# The user's code (and its subprocesses) must never read the control channel.
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)


def _send(obj):
    with _lock:
        _ctl.write(json.dumps(obj) + "\n")
        _ctl.flush()


class _Pump(threading.Thread):
    """Forwards what is written to a file descriptor as records, coalescing chunks."""

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
            # Keep back a possible sentinel prefix at the end.
            keep = 0
            for n in range(min(len(_SENTINEL) - 1, len(buf)), 0, -1):
                if _SENTINEL.startswith(buf[-n:]):
                    keep = n
                    break
            self._emit(buf[: len(buf) - keep])
            buf = buf[len(buf) - keep:]

    def drain(self):
        self.drained.clear()
        try:
            os.write(self.fd, _SENTINEL)
        except OSError:
            return  # the user's code closed or replaced the descriptor
        self.drained.wait(5)


_pumps = [_Pump(1, "stdout"), _Pump(2, "stderr")]
for _p in _pumps:
    _p.start()
# sys.stdout/sys.stderr keep writing to fds 1 and 2 (now the pipes), unbuffered.
for _s in (sys.stdout, sys.stderr):
    try:
        _s.reconfigure(encoding="utf-8", errors="backslashreplace", write_through=True)
    except Exception:
        pass


def _flush_output():
    for s in {id(x): x for x in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)}.values():
        try:
            s.flush()
        except Exception:
            pass
    for p in _pumps:
        p.drain()


def _read_input(prompt="", password=False):
    _flush_output()
    _send({"t": "waiting-input", "prompt": str(prompt), "password": bool(password)})
    line = _ctl_in.readline()
    if not line:
        raise EOFError
    try:
        msg = json.loads(line)
    except ValueError:
        raise EOFError
    if "input" not in msg:
        raise EOFError
    return str(msg["input"])


class _Stdin(io.TextIOBase):
    """sys.stdin: each line read is asked for with waiting-input."""

    encoding = "utf-8"

    def readable(self):
        return True

    def isatty(self):
        return False

    def readline(self, size=-1):
        try:
            return _read_input("", False) + "\n"
        except EOFError:
            return ""

    def read(self, size=-1):
        return self.readline()


builtins.input = lambda prompt="": _read_input(prompt, False)
sys.stdin = _Stdin()
try:
    import getpass

    getpass.getpass = lambda prompt="Password: ", stream=None: _read_input(prompt, True)
except Exception:
    pass

_globals = {"__name__": "__main__", "__builtins__": builtins}


def _exit_code(code):
    if code is None:
        return 0
    if isinstance(code, int):
        return int(code) & 0xFF
    sys.stderr.write(str(code) + "\n")
    return 1


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
                builtins._ = value
                # As Backend.AI's kernels answer `1 + 1`: "2", no newline.
                sys.stdout.write(repr(value))
        return 0
    except SystemExit as e:
        rc = _exit_code(e.code)
        if rc != 0 and isinstance(e.code, int):
            # Said on stderr, as Backend.AI's kernels do, so the failure is visible.
            sys.stderr.write("SystemExit: %d\n" % e.code)
        return rc
    except BaseException:
        et, ev, tb = sys.exc_info()
        traceback.print_exception(et, ev, tb.tb_next if tb is not None else None)
        return 1


while True:
    _line = _ctl_in.readline()
    if not _line:
        break
    try:
        _req = json.loads(_line)
    except ValueError:
        continue
    if "code" not in _req:
        continue  # a stray input line with nobody waiting
    _rc = _run(str(_req["code"]))
    _flush_output()
    _send({"t": "finished", "exit_code": _rc})
