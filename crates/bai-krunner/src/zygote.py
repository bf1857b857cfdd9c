# krunner's Jupyter pre-start, run by Jupyter's own Python in a pool kernel: argv[1] is the
# socket it waits on. It pays for Jupyter's imports (most of its start) while the kernel
# waits for a session, and holds nothing else: no port, no file, no user data. Its socket
# appears once the imports are done (the pool kernel is ready then). The session's runner
# sends one line when its user first opens Jupyter: {"argv": [...], "env": {...},
# "cwd": "..."}; the process then takes the session's environment and directory and runs
# the Notebook server as `jupyter notebook` would have.
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

server = socket.socket(socket.AF_UNIX)
old = os.umask(0o077)
server.bind(path + ".new")
os.umask(old)
server.listen(1)
os.rename(path + ".new", path)
conn, _ = server.accept()
line = conn.makefile().readline()
conn.close()
server.close()
os.unlink(path)
if not line.strip():
    sys.exit(0)
order = json.loads(line)
os.environ.clear()
os.environ.update(order["env"])
os.chdir(order["cwd"])
sys.argv = order["argv"]
sys.exit(notebook.app.main())
