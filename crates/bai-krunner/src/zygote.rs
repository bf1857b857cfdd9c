//! Jupyter pre-started in pool kernels. Most of Jupyter's start (over a second) is its
//! Python imports, which do not depend on the session. A pool kernel's runner therefore
//! starts [`zygote.py`] under Jupyter's own Python: it imports the Notebook server and
//! waits on a socket in the run directory ([`SOCKET`]), holding no port and no data; the
//! pool kernel is ready once that socket is there. Bound to an interactive session with no
//! bootstrap script (one that could change what Jupyter sees), the kernel keeps it and leaves
//! its pid for the session's runner ([`PRESTARTED`]); when the user first opens Jupyter, that
//! runner sends it the session's command line, environment and directory, and the server
//! answers within a few hundred milliseconds, where a cold start takes over a second. Any
//! other session ends it before its runner starts.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SCRIPT: &str = include_str!("zygote.py");
/// The file in the run directory naming the pre-started Jupyter's pid, for the session's
/// runner (a variable would show in the session's environment).
pub const PRESTARTED: &str = "jupyter.pid";
/// The socket in the run directory the pre-started Jupyter waits on.
pub const SOCKET: &str = "jupyter-prestart.sock";
/// The app it becomes.
pub const APP: &str = "jupyter";
/// Below this memory limit a pool kernel does not pre-start Jupyter: its imports would take
/// a share of a small session's memory that the user may never use.
const MIN_MEMORY: u64 = 512 << 20;
/// The longest a pool kernel waits for the imports before it is ready without them.
/// (Within the agent's 30 s for a kernel to answer.)
const IMPORTS_TIMEOUT: Duration = Duration::from_secs(20);

/// A pre-started Jupyter waiting for its session.
pub struct Zygote {
    child: Child,
    socket: PathBuf,
}

/// The container's memory limit (cgroup v2, or v1's file), `None` when unlimited or
/// unknown (v1 says unlimited with a number near 2^63).
fn memory_limit() -> Option<u64> {
    [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|f| std::fs::read_to_string(f).ok())?
    .trim()
    .parse()
    .ok()
    .filter(|m| *m < 1 << 60)
}

impl Zygote {
    /// Starts the imports when this kernel may pre-start Jupyter (it has Jupyter and memory
    /// to spare) and returns once they are done (its socket is there), or it gave up.
    pub fn start(run: &Path, workdir: &Path) -> Option<Zygote> {
        if memory_limit().is_some_and(|m| m < MIN_MEMORY) {
            return None;
        }
        let python = crate::notebook::jupyters_python().ok()?;
        let socket = run.join(SOCKET);
        let _ = std::fs::remove_file(&socket);
        let mut child = match Command::new(python)
            .args(["-c", SCRIPT])
            .arg(&socket)
            .current_dir(workdir)
            .stdin(Stdio::null())
            .spawn()
        {
            Ok(c) => c,
            Err(e) => {
                say!("krunner: no Jupyter pre-start: {e}");
                return None;
            }
        };
        let deadline = Instant::now() + IMPORTS_TIMEOUT;
        while !socket.exists() {
            let gone = !matches!(child.try_wait(), Ok(None));
            if gone || Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Some(Zygote { child, socket })
    }

    /// Keeps the pre-started Jupyter for the session whose environment `env` is, leaving its
    /// pid beside its socket for the session's runner; ends it when the session is not one
    /// to give it to.
    pub fn hand_over(mut self, env: &[(String, String)]) {
        let get = |k: &str| {
            env.iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        let interactive = get("BAI_SESSION_TYPE").is_none_or(|t| t == "interactive");
        let bootstrap = get("BAI_BOOTSTRAP_SCRIPT").is_some_and(|s| !s.trim().is_empty());
        let kept = interactive
            && !bootstrap
            && self.socket.parent().is_some_and(|run| {
                std::fs::write(run.join(PRESTARTED), self.child.id().to_string()).is_ok()
            });
        if !kept {
            let _ = self.child.kill();
            let _ = self.child.wait();
            let _ = std::fs::remove_file(&self.socket);
        }
    }
}

/// The pre-started Jupyter of this kernel, taken once by the session's runner (the file is
/// removed): its pid and socket.
pub fn adopt(run: &Path) -> Option<(u32, PathBuf)> {
    let file = run.join(PRESTARTED);
    let pid = std::fs::read_to_string(&file).ok()?.trim().parse().ok();
    let _ = std::fs::remove_file(&file);
    pid.map(|p| (p, run.join(SOCKET)))
}

/// Whether the pre-started Jupyter can become the app `name` (the one the user opens first).
pub fn serves(name: &str) -> bool {
    name == "jupyter" || name == "jupyterlab"
}

/// Sends the pre-started Jupyter its session: this runner's command line for the app
/// (`jupyter notebook …` or `jupyter lab …`), its environment (the session's) and its
/// directory. An error when it is gone or cannot be that app (then it ends).
pub fn order(
    socket: &Path,
    argv: &[String],
    env: &[(String, String)],
    workdir: &Path,
) -> std::io::Result<()> {
    use std::io::{BufRead, Write};
    let sub = argv.get(1).map(String::as_str).unwrap_or("notebook");
    // Jupyter's own name for the server it runs (`jupyter lab` executes `jupyter-lab`).
    let program = format!("jupyter-{sub}");
    let argv: Vec<&str> = std::iter::once(program.as_str())
        .chain(argv.iter().skip(2).map(String::as_str))
        .collect();
    let env: std::collections::BTreeMap<&str, &str> =
        env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let line = serde_json::json!({
        "app": sub,
        "argv": argv,
        "env": env,
        "cwd": workdir.display().to_string(),
    });
    let mut s = std::os::unix::net::UnixStream::connect(socket)?;
    s.set_read_timeout(Some(Duration::from_secs(10)))?;
    writeln!(s, "{line}")?;
    s.flush()?;
    let mut answer = String::new();
    std::io::BufReader::new(s).read_line(&mut answer)?;
    match answer.trim() {
        "ok" => Ok(()),
        "" => Err(std::io::Error::other("it closed without an answer")),
        why => Err(std::io::Error::other(why.to_string())),
    }
}
