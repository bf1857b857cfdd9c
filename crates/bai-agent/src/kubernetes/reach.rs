//! How the agent reaches its kernels' runners (`--runner-reach`).
//!
//! - `socket` (the default): over the runner's Unix socket in the kernel's hostPath run
//!   directory, as the Docker backend does. The agent must run on the node it offers, with
//!   the right to open a socket of uid 1000 (`DAC_OVERRIDE` in the shipped DaemonSet).
//! - `network`: over the pod network, at the pod's IP and [`RUNNER_PORT`]. krunner listens
//!   there too (`BAI_KRUNNER_LISTEN`), and serves only connections that open with the
//!   kernel's token: 32 random bytes the agent writes to `krunner.token` in the kernel's run
//!   directory (mode 0600, uid 1000) before its pod is made, and reads back for each call
//!   (so a restarted agent still reaches the kernels it re-adopts). The runner is pinged only
//!   once the kubelet reports the pod running with its IP. Warm pools are not kept in this
//!   mode (a pool pod's runner listens on its socket only): those sessions start cold.

use super::Inner;
use super::observe::Observed;
use crate::krunner_proto::TOKEN_FILE;
use crate::runner::RunnerAt;
use bai_core::agent::AgentError;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use uuid::Uuid;

pub use bai_core::cluster::RUNNER_PORT;

/// How the agent reaches its kernels' runners.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum RunnerReach {
    /// The runner's socket in the kernel's run directory on the node.
    #[default]
    Socket,
    /// The pod's IP at [`RUNNER_PORT`], each connection opening with the kernel's token.
    Network,
}

impl RunnerReach {
    /// What krunner listens on besides its socket (`BAI_KRUNNER_LISTEN`), if anything.
    pub fn listen(self) -> Option<String> {
        match self {
            RunnerReach::Socket => None,
            RunnerReach::Network => Some(format!("0.0.0.0:{RUNNER_PORT}")),
        }
    }
}

/// Writes a new token for the kernel whose run directory is `run` (before its pod is made):
/// readable by uid 1000 only, as krunner runs.
pub fn write_token(run: &Path) -> Result<(), AgentError> {
    let token = format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());
    let path = run.join(TOKEN_FILE);
    let fail = |e: std::io::Error| {
        AgentError::Runtime(format!(
            "cannot write the runner's token {}: {e}",
            path.display()
        ))
    };
    let _ = std::fs::remove_file(&path);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .map_err(fail)?;
    f.write_all(format!("{token}\n").as_bytes()).map_err(fail)?;
    crate::kernel_files::hand_to_work_user(&path)
}

fn read_token(run: &Path) -> Result<String, AgentError> {
    let path = run.join(TOKEN_FILE);
    std::fs::read_to_string(&path)
        .map(|t| t.trim().to_string())
        .map_err(|e| {
            AgentError::Runtime(format!(
                "cannot read the runner's token {}: {e}",
                path.display()
            ))
        })
}

/// Where the runner of a kernel whose pod is `observed` answers now: its socket; or over the
/// network, once the pod runs with an IP (`None` before).
pub(crate) fn now(inner: &Inner, kernel: Uuid, observed: Option<&Observed>) -> Option<RunnerAt> {
    match inner.config.runner_reach {
        RunnerReach::Socket => Some(RunnerAt::Socket(inner.dirs(kernel).socket)),
        RunnerReach::Network => match observed {
            Some(Observed::Running(Some(ip))) => network(inner, kernel, *ip).ok(),
            _ => None,
        },
    }
}

pub(crate) fn network(inner: &Inner, kernel: Uuid, ip: IpAddr) -> Result<RunnerAt, AgentError> {
    Ok(RunnerAt::Network {
        addr: SocketAddr::new(ip, RUNNER_PORT),
        token: read_token(&inner.dirs(kernel).run)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn krunner_listens_on_the_pod_network_only_when_reached_there() {
        assert_eq!(RunnerReach::Socket.listen(), None);
        assert_eq!(
            RunnerReach::Network.listen(),
            Some(format!("0.0.0.0:{RUNNER_PORT}"))
        );
    }

    #[test]
    fn a_token_is_long_fresh_and_private() {
        // (Handing the file to uid 1000 needs root, as the agent and the tests run.)
        let run = tempfile::tempdir().unwrap();
        write_token(run.path()).unwrap();
        let first = read_token(run.path()).unwrap();
        assert_eq!(first.len(), 64, "{first}");
        let meta = std::fs::metadata(run.path().join(TOKEN_FILE)).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        write_token(run.path()).unwrap();
        assert_ne!(
            read_token(run.path()).unwrap(),
            first,
            "a new kernel, a new token"
        );
    }
}
