//! How the agent reaches its kernels' runners (`--runner-reach`).
//!
//! - `socket` (the default): over the runner's Unix socket in the kernel's hostPath run
//!   directory, as the Docker backend does. The agent must run on the node it offers, with
//!   the right to open a socket of uid 1000 (`DAC_OVERRIDE` in the shipped DaemonSet).
//! - `network`: over the pod network, at the pod's IP and [`RUNNER_PORT`], and the pod is
//!   detached from the node's disk ([`super::secret`], [`super::handover`]). krunner listens
//!   there too (`BAI_KRUNNER_LISTEN`), and serves only connections that open with the
//!   kernel's token: 32 random bytes the agent makes for each kernel and hands it in the
//!   kernel's Secret (krunner writes it into its run directory, mode 0600, before it
//!   listens), and reads back from that Secret after a restart (so it still reaches the
//!   kernels it re-adopts). The runner is pinged only once the kubelet reports the pod
//!   running with its IP. A pool pod's runner listens there too with its own pod's token,
//!   which becomes the kernel's at the claim (`pool::claim`).

use super::Inner;
use super::observe::Observed;
use crate::runner::RunnerAt;
use bai_core::agent::AgentError;
use std::net::{IpAddr, SocketAddr};
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

/// A new kernel's runner token: 32 random bytes as 64 hex digits.
pub fn new_token() -> String {
    format!("{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple())
}

/// Where the runner of a kernel whose pod is `observed` answers now: its socket; or over the
/// network, once the pod runs with an IP and its token is known here (`None` before).
pub(crate) fn now(inner: &Inner, kernel: Uuid, observed: Option<&Observed>) -> Option<RunnerAt> {
    match inner.config.runner_reach {
        RunnerReach::Socket => Some(RunnerAt::Socket(inner.dirs(kernel).socket)),
        RunnerReach::Network => match observed {
            Some(Observed::Running(Some(ip))) => Some(at(*ip, inner.token(kernel)?)),
            _ => None,
        },
    }
}

/// The runner of a kernel whose pod runs at `ip`, with its token (read back from its Secret
/// when this agent has not made it: a re-adopted kernel).
pub(crate) async fn network(
    inner: &Inner,
    kernel: Uuid,
    ip: IpAddr,
) -> Result<RunnerAt, AgentError> {
    let token = match inner.token(kernel) {
        Some(t) => t,
        None => {
            let t = super::secret::token(inner, kernel).await?;
            inner.set_token(kernel, t.clone());
            t
        }
    };
    Ok(at(ip, token))
}

/// The runner at the pod IP `ip`, reached with `token`.
pub(crate) fn at(ip: IpAddr, token: String) -> RunnerAt {
    RunnerAt::Network {
        addr: SocketAddr::new(ip, RUNNER_PORT),
        token,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn krunner_listens_on_the_pod_network_only_when_reached_there() {
        assert_eq!(RunnerReach::Socket.listen(), None);
        assert_eq!(
            RunnerReach::Network.listen(),
            Some(format!("0.0.0.0:{RUNNER_PORT}"))
        );
    }

    #[test]
    fn a_token_is_long_and_fresh() {
        let first = new_token();
        assert_eq!(first.len(), 64, "{first}");
        assert!(first.bytes().all(|b| b.is_ascii_hexdigit()), "{first}");
        assert_ne!(new_token(), first, "a new kernel, a new token");
    }
}
