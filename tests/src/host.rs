//! What the harness does to this host's processes and mounts, bounded so that a clean-up
//! never hangs: commands under `timeout`, processes ended (TERM, then KILL), mount points
//! unmounted deepest first, and what a killed Docker engine's containers leave behind.

use crate::wait_until;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// How long a process sent SIGTERM may take before it is killed (a stopping `dockerd` stops
/// its containers and containerd first).
const STOP_DEADLINE: Duration = Duration::from_secs(30);

/// Runs `cmd` under `timeout 60`, so cleanup never hangs on a wedged engine.
pub fn bounded(cmd: &mut Command) -> Option<Output> {
    let mut wrapped = Command::new("timeout");
    wrapped
        .arg("60")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null());
    for (k, v) in cmd.get_envs() {
        match v {
            Some(v) => wrapped.env(k, v),
            None => wrapped.env_remove(k),
        };
    }
    wrapped.output().ok()
}

/// Sends SIGTERM to `pid`, waits up to [`STOP_DEADLINE`] for `gone`, then sends SIGKILL.
pub fn terminate(pid: u32, mut gone: impl FnMut() -> bool) {
    let pid = pid.to_string();
    let _ = Command::new("kill")
        .args(["-TERM", &pid])
        .stderr(Stdio::null())
        .status();
    if !wait_until(STOP_DEADLINE, &mut gone) {
        let _ = Command::new("kill")
            .args(["-KILL", &pid])
            .stderr(Stdio::null())
            .status();
        wait_until(Duration::from_secs(10), gone);
    }
}

/// Removes what a container of a killed engine leaves outside the machine's directory: its
/// (empty) cgroups under `docker/<id>` and its shim's socket, which containerd names
/// `/run/containerd/s/<sha256 of "<containerd address>/moby/<id>">`.
pub fn remove_container_litter(containerd: &Path, id: &str) {
    if let Ok(hierarchies) = std::fs::read_dir("/sys/fs/cgroup") {
        for h in hierarchies.filter_map(Result::ok) {
            let _ = std::fs::remove_dir(h.path().join("docker").join(id));
        }
    }
    let _ = std::fs::remove_dir(Path::new("/sys/fs/cgroup/docker").join(id));
    let key = format!("{}/moby/{id}", containerd.display());
    if let Some(hash) = sha256_hex(key.as_bytes()) {
        let socket = Path::new("/run/containerd/s").join(hash);
        if socket.exists() {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// The SHA-256 of `data` in hex, by `sha256sum`.
fn sha256_hex(data: &[u8]) -> Option<String> {
    use std::io::Write;
    let mut child = Command::new("sha256sum")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child.stdin.take()?.write_all(data).ok()?;
    let out = child.wait_with_output().ok()?;
    let hex = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()?
        .to_string();
    (out.status.success() && hex.len() == 64).then_some(hex)
}

/// Whether process `pid` exists and is not a zombie (an orphan of a crashed run may wait a
/// while for init to reap it).
pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|stat| {
            let (_, rest) = stat.rsplit_once(')')?;
            rest.split_whitespace()
                .next()
                .map(|state| state != "Z" && state != "X")
        })
        .unwrap_or(false)
}

/// The mount points at or under `dir` (by its real path) in this mount namespace, deepest
/// first.
pub fn mounts_under(dir: &Path) -> Vec<PathBuf> {
    // Mount points are listed by their real path.
    let dir = std::fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut points: Vec<PathBuf> = info
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|p| PathBuf::from(unescape_mount_path(p)))
        .filter(|p| p.starts_with(&dir))
        .collect();
    points.sort_by_key(|p| std::cmp::Reverse(p.as_os_str().len()));
    points.dedup();
    points
}

/// Unmounts every mount point at or under `dir`, deepest first (lazily if a plain unmount
/// fails): a machine's overlay layers, its data root's bind mount and namespace files that
/// a killed dockerd left behind; a warm pool's shared kernels directory.
pub fn unmount_under(dir: &Path) {
    for p in mounts_under(dir) {
        let plain = Command::new("umount")
            .arg(&p)
            .stderr(Stdio::null())
            .status()
            .map(|s| s.success())
            .unwrap_or(false);
        if !plain {
            let _ = Command::new("umount")
                .arg("-l")
                .arg(&p)
                .stderr(Stdio::null())
                .status();
        }
    }
}

/// Decodes the octal escapes (`\040` for a space) of a path in `/proc/self/mountinfo`.
fn unescape_mount_path(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, c| n.wrapping_mul(8) + (c - b'0')));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
