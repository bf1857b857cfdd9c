//! The node's NVIDIA MPS control daemon (`nvidia-cuda-mps-control -d`): started once when
//! the fractional plugin is discovered, reused when one already answers on the same pipe
//! directory (an agent restart leaves it running for the kernels that use it), stopped
//! only on request ([`MpsDaemon::stop`]), never on drop.
//!
//! Directories: `<mps_dir>/pipe` (the daemon's control pipe and the servers' sockets, bind
//! mounted into fractional kernels) and `<mps_dir>/log` (`control.log`, `server.log`).
//! Both are mode 0755, owned by the agent's user (root). Kernels run as uid 1000 and only
//! need to reach the daemon's sockets, which it creates world-connectable (`control` 0666,
//! `log` 0777) itself; a uid-1000 client against a root daemon with a 0755 pipe directory
//! was checked on an H100 with driver 580 (MPS 13.0). The MPS server a client gets runs
//! as that client's uid and writes nothing in the pipe directory. Were an older driver
//! to need the directory writable by clients, 0777 would be the fix (only this node's
//! kernels see it, and all they can do there is speak MPS's protocol).

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const CONTROL: &str = "nvidia-cuda-mps-control";
/// Where the control program is looked for after `PATH`.
const FALLBACK_DIRS: [&str; 2] = ["/usr/local/nvidia/bin", "/usr/bin"];
/// How long one control command may take (a stale pipe without a daemon blocks forever).
const COMMAND_TIMEOUT: Duration = Duration::from_secs(3);
/// How long a started (or stopped) daemon may take to answer (or to stop answering).
const SETTLE_TIMEOUT: Duration = Duration::from_secs(10);

/// A running MPS control daemon this agent uses.
#[derive(Debug, Clone)]
pub struct MpsDaemon {
    control: PathBuf,
    pipe_dir: PathBuf,
    log_dir: PathBuf,
    /// False when an already running daemon was found and reused.
    pub started: bool,
}

/// `nvidia-cuda-mps-control` on `PATH`, else in the usual driver directories.
pub fn find_control() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(FALLBACK_DIRS.iter().map(PathBuf::from))
        .map(|d| d.join(CONTROL))
        .find(|p| p.is_file())
}

fn make_dir(dir: &Path, mode: u32) -> Result<(), String> {
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)))
        .map_err(|e| format!("cannot prepare {}: {e}", dir.display()))
}

impl MpsDaemon {
    /// Starts the daemon for the GPUs `indices` (NVML indices) under `mps_dir`, or reuses
    /// the one already answering there.
    pub fn start(mps_dir: &Path, indices: &[u32]) -> Result<MpsDaemon, String> {
        let control = find_control().ok_or_else(|| {
            format!(
                "{CONTROL} is not on PATH nor in {}: install the NVIDIA driver's MPS tools \
                 or use allocation_mode = discrete",
                FALLBACK_DIRS.join(", ")
            )
        })?;
        make_dir(mps_dir, 0o755)?;
        let mut d = MpsDaemon {
            control,
            pipe_dir: mps_dir.join("pipe"),
            log_dir: mps_dir.join("log"),
            started: false,
        };
        make_dir(&d.pipe_dir, 0o755)?;
        make_dir(&d.log_dir, 0o755)?;
        if d.answers() {
            tracing::info!(pipe = %d.pipe_dir.display(), "reusing the running MPS daemon");
            return Ok(d);
        }
        let devices: Vec<String> = indices.iter().map(|i| i.to_string()).collect();
        let out_path = d.log_dir.join("agent-start.log");
        let out = std::fs::File::create(&out_path)
            .map_err(|e| format!("cannot write {}: {e}", out_path.display()))?;
        let err = out
            .try_clone()
            .map_err(|e| format!("cannot write {}: {e}", out_path.display()))?;
        let status = d
            .command()
            .arg("-d")
            .env("CUDA_VISIBLE_DEVICES", devices.join(","))
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .status()
            .map_err(|e| format!("cannot run {}: {e}", d.control.display()))?;
        if !status.success() {
            return Err(format!(
                "{CONTROL} -d failed ({status}): {}",
                d.log_tail(&out_path)
            ));
        }
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while !d.answers() {
            if Instant::now() > deadline {
                let log = d.log_tail(&d.log_dir.join("control.log"));
                return Err(format!(
                    "the MPS daemon started but does not answer on {}: {log}",
                    d.pipe_dir.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        d.started = true;
        tracing::info!(pipe = %d.pipe_dir.display(), devices = %devices.join(","), "MPS daemon started");
        Ok(d)
    }

    /// The host directory clients reach the daemon through.
    pub fn pipe_dir(&self) -> &Path {
        &self.pipe_dir
    }

    /// Where the daemon writes `control.log` and `server.log`.
    pub fn log_dir(&self) -> &Path {
        &self.log_dir
    }

    /// Tells the daemon to quit (`echo quit | nvidia-cuda-mps-control`) and waits until it
    /// no longer answers. Kernels still using MPS lose their GPU.
    pub fn stop(&self) -> Result<(), String> {
        self.send("quit")?;
        let deadline = Instant::now() + SETTLE_TIMEOUT;
        while self.answers() {
            if Instant::now() > deadline {
                return Err(format!(
                    "the MPS daemon on {} still answers after quit",
                    self.pipe_dir.display()
                ));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        tracing::info!(pipe = %self.pipe_dir.display(), "MPS daemon stopped");
        Ok(())
    }

    /// Whether a daemon answers on the pipe directory.
    pub fn answers(&self) -> bool {
        self.pipe_dir.join("control").exists() && self.send("get_server_list").is_ok()
    }

    fn command(&self) -> Command {
        let mut c = Command::new(&self.control);
        c.env("CUDA_MPS_PIPE_DIRECTORY", &self.pipe_dir)
            .env("CUDA_MPS_LOG_DIRECTORY", &self.log_dir);
        c
    }

    /// Sends one command to the daemon; its reply, or why there is none.
    fn send(&self, input: &str) -> Result<String, String> {
        let mut child = self
            .command()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", self.control.display()))?;
        if let Some(mut stdin) = child.stdin.take() {
            // A daemon that is not there shows in the exit status, not here.
            let _ = writeln!(stdin, "{input}");
        }
        let deadline = Instant::now() + COMMAND_TIMEOUT;
        let status = loop {
            match child.try_wait() {
                Ok(Some(s)) => break s,
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!("{CONTROL} did not answer {input:?} in time"));
                }
                Err(e) => return Err(format!("{CONTROL}: {e}")),
            }
        };
        let mut out = String::new();
        let mut err = String::new();
        if let Some(mut s) = child.stdout.take() {
            let _ = s.read_to_string(&mut out);
        }
        if let Some(mut s) = child.stderr.take() {
            let _ = s.read_to_string(&mut err);
        }
        if status.success() {
            Ok(out)
        } else {
            Err(format!("{CONTROL} {input:?}: {status} {}", err.trim()))
        }
    }

    /// The last lines of a log, for error messages.
    fn log_tail(&self, path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = lines[lines.len().saturating_sub(5)..].join(" | ");
        if tail.is_empty() {
            format!("nothing in {}", path.display())
        } else {
            format!("{} says: {tail}", path.display())
        }
    }
}
