# krunner's Jupyter pre-start, run by Jupyter's own Python in a pool kernel. It pays for
# Jupyter's imports (most of its start) while the kernel waits for a session, and holds
# nothing else: no port, no file, no user data. Bound to a session, krunner sends one line,
# {"argv": [...], "env": {...}, "cwd": "...", "runner": SOCKET}; once the session's runner
# answers on SOCKET, the process takes the session's environment and directory and runs the
# Notebook server as `jupyter notebook` would have.
# An empty line or a closed pipe (the kernel went to a session that does not want it)
# ends it.
import json
import os
import socket
import sys
import time

try:
    import notebook.app  # noqa: F401  (Jupyter Notebook 7 and jupyter_server under it)
except Exception as e:  # an image whose Jupyter differs: no pre-start, nothing breaks
    print(f"krunner: no Jupyter pre-start ({e})", file=sys.stderr, flush=True)
    sys.exit(0)

line = sys.stdin.readline()
if not line.strip():
    sys.exit(0)
order = json.loads(line)


def runner_answers(path):
    """Whether the session's runner answers a ping on its socket."""
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.sendall(b'{"op":"ping"}\n')
        return b"pong" in s.recv(256)
    except OSError:
        return False
    finally:
        s.close()


# The session's log begins with its runner's line: serve once the runner answers (it
# starts within a second; past a minute something is wrong with it, and Jupyter serves).
deadline = time.monotonic() + 60
while not runner_answers(order["runner"]) and time.monotonic() < deadline:
    time.sleep(0.01)
devnull = os.open(os.devnull, os.O_RDONLY)
os.dup2(devnull, 0)
os.close(devnull)
sys.stdin = open(0, closefd=False)
os.environ.clear()
os.environ.update(order["env"])
os.chdir(order["cwd"])
sys.argv = order["argv"]
sys.exit(notebook.app.main())
