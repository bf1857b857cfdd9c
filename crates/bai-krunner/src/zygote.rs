//! Jupyter pre-started in pool kernels. Most of Jupyter's start (over a second) is its
//! Python imports, which do not depend on the session. A pool kernel's runner therefore
//! starts [`zygote.py`] under Jupyter's own Python: it imports the Notebook server and
//! waits on a pipe, holding no port and no data. When the kernel is bound to an
//! interactive session with no bootstrap script (one that could change what Jupyter
//! sees), the runner hands it the session's command line, environment and directory
//! before it executes itself as the session's runner; the server then answers within a
//! few hundred milliseconds of RUNNING, where a cold kernel starts it when first opened.
//!
//! The session's runner adopts the process by the pid left in its run directory
//! ([`PRESTARTED`]), so opening the app finds it running. Any other session ends it.

use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};

const SCRIPT: &str = include_str!("zygote.py");
/// The file in the run directory naming the pre-started Jupyter's pid, for the session's
/// runner (a variable would show in the session's environment).
pub const PRESTARTED: &str = "jupyter.pid";
/// The app it becomes.
pub const APP: &str = "jupyter";
/// Below this memory limit a pool kernel does not pre-start Jupyter: its imports would take
/// a share of a small session's memory that the user may never use.
const MIN_MEMORY: u64 = 512 << 20;

/// A pre-started Jupyter waiting for its session.
pub struct Zygote {
    child: Child,
    order: ChildStdin,
    /// `JUPYTER_PATH` with the Notebook kernel's spec, as a cold start sets it.
    jupyter_path: Option<String>,
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
    /// Starts the imports when this kernel may pre-start Jupyter: it has Jupyter (its
    /// Notebook kernel written now, as a cold start would), and memory to spare.
    pub fn start(workdir: &Path) -> Option<Zygote> {
        if memory_limit().is_some_and(|m| m < MIN_MEMORY) {
            return None;
        }
        let python = crate::notebook::jupyters_python().ok()?;
        let mut command = Command::new(python);
        command
            .args(["-c", SCRIPT])
            .current_dir(workdir)
            .stdin(Stdio::piped());
        let jupyter_path = crate::apps::notebook_path();
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                eprintln!("krunner: no Jupyter pre-start: {e}");
                return None;
            }
        };
        let order = child.stdin.take()?;
        Some(Zygote {
            child,
            order,
            jupyter_path,
        })
    }

    /// Hands the pre-started Jupyter to the session whose environment `env` is (the whole
    /// of it) and leaves its pid beside `socket` for the session's runner; `false` when the
    /// session is not one to give it to (it ended). It starts serving once the session's
    /// runner answers on `socket`, so the session's log begins with the runner's line.
    pub fn hand_over(mut self, env: &[(String, String)], socket: &Path, workdir: &Path) -> bool {
        let Some(run) = socket.parent() else {
            self.end();
            return false;
        };
        let get = |k: &str| {
            env.iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.as_str())
        };
        let interactive = get("BAI_SESSION_TYPE").is_none_or(|t| t == "interactive");
        let bootstrap = get("BAI_BOOTSTRAP_SCRIPT").is_some_and(|s| !s.trim().is_empty());
        if !interactive || bootstrap {
            self.end();
            return false;
        }
        let session = get("BAI_SESSION_ID").unwrap_or_default();
        let Some((argv, _)) = crate::apps::app_command(APP, session, workdir) else {
            self.end();
            return false;
        };
        // Jupyter's own name for the server it runs (`jupyter notebook` executes this).
        let argv: Vec<String> = std::iter::once("jupyter-notebook".to_string())
            .chain(argv.into_iter().skip(2))
            .collect();
        let mut vars: std::collections::BTreeMap<String, String> = std::env::vars()
            .filter(|(k, _)| k != crate::pool::POOL_VAR)
            .collect();
        vars.extend(env.iter().cloned());
        if let Some(p) = self.jupyter_path.take() {
            vars.insert("JUPYTER_PATH".into(), p);
        }
        let line = serde_json::json!({
            "argv": argv,
            "env": vars,
            "cwd": workdir.display().to_string(),
            "runner": socket.display().to_string(),
        });
        let pid = self.child.id();
        let sent = std::fs::write(run.join(PRESTARTED), pid.to_string()).is_ok()
            && writeln!(self.order, "{line}").is_ok()
            && self.order.flush().is_ok();
        if !sent {
            let _ = std::fs::remove_file(run.join(PRESTARTED));
            self.end();
            return false;
        }
        true
    }

    fn end(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The pre-started Jupyter's pid, read once by the session's runner (the file is removed);
/// it says so in the log after its first line.
pub fn adopt(run: &Path) -> Option<u32> {
    let file = run.join(PRESTARTED);
    let pid = std::fs::read_to_string(&file).ok()?.trim().parse().ok();
    let _ = std::fs::remove_file(&file);
    if let Some(pid) = pid {
        eprintln!("krunner: {APP} was pre-started (pid {pid})");
    }
    pid
}
