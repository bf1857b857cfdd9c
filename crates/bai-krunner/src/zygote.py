# krunner's Jupyter pre-start, run by Jupyter's own Python in a pool kernel: argv[1] is the
# socket it waits on. It pays for Jupyter's imports (most of its start) while the kernel
# waits for a session, and holds nothing else: no port, no file, no user data. Its socket
# appears once the imports are done (the pool kernel is ready then). The session's runner
# sends one line when its user first opens Jupyter or JupyterLab: {"app": "notebook" or
# "lab", "argv": [...], "env": {...}, "cwd": "..."}; the process answers "ok" (or "no: why",
# and ends), then takes the session's environment and directory and runs that server as
# `jupyter notebook` or `jupyter lab` would have.
import json
import os
import socket
import sys

path = sys.argv[1]
try:
    import notebook.app  # noqa: F401  (Jupyter Notebook 7 and jupyter_server under it)
except Exception as e:  # an image whose Jupyter differs: no pre-start, nothing breaks
    print(f"krunner: no Jupyter pre-start ({e})", file=sys.stderr, flush=True)
    sys.exit(0)
mains = {"notebook": notebook.app.main}
try:
    import jupyterlab.labapp  # a few more modules on top of the Notebook's (Notebook 7 needs it)

    mains["lab"] = jupyterlab.labapp.main
except Exception:
    pass

server = socket.socket(socket.AF_UNIX)
old = os.umask(0o077)
server.bind(path + ".new")
os.umask(old)
server.listen(1)
os.rename(path + ".new", path)
conn, _ = server.accept()
line = conn.makefile().readline()
server.close()
os.unlink(path)
if not line.strip():
    sys.exit(0)
order = json.loads(line)
main = mains.get(order.get("app"))
conn.sendall(b"ok\n" if main else b"no: this Jupyter has no such app\n")
conn.close()
if main is None:
    sys.exit(0)
os.environ.clear()
os.environ.update(order["env"])
os.chdir(order["cwd"])
sys.argv = order["argv"]
sys.exit(main())
