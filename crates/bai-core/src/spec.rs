//! What a user asked for when creating a session, in one typed form.
//!
//! The HTTP edge builds a [`SessionSpec`] once from the wire request (every spelling, the
//! defaults, a resource preset and the limits that need no server state applied there, by a
//! pure conversion); the platform's own sessions (a service's replicas, an SFTP session)
//! build one directly. The lifecycle then does only the checks that need the store and the
//! agents: the owner, the image, the resource group, the folders, the queue.

use crate::cluster::ClusterMode;
use crate::name::SessionName;
use crate::resources::ResourceRequest;
use crate::status::SessionType;
use std::collections::BTreeMap;

/// A priority from 0 (last) to 100 (first); sessions without one get [`DEFAULT_PRIORITY`].
pub const DEFAULT_PRIORITY: i64 = 10;
/// The most sessions one request may create ("Sessions: N").
pub const MAX_COUNT: u32 = 100;
/// The most preopen ports a session may ask for.
pub const MAX_PREOPEN_PORTS: usize = 16;

/// A session request: what to run, for whom, with how much, and how to queue it.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSpec {
    /// Another keypair that is to own the session (administrators only; the lifecycle
    /// checks). `None`: the caller.
    pub owner_access_key: Option<String>,
    /// `None`: a random free name.
    pub name: Option<SessionName>,
    /// The image or an alias of it, as asked (the lifecycle resolves it).
    pub image: String,
    pub session_type: SessionType,
    pub startup_command: Option<String>,
    pub bootstrap_script: Option<String>,
    /// Batch sessions: end after this many seconds.
    pub batch_timeout_secs: Option<i64>,
    /// Batch sessions: preempted, go back to the queue instead of ending.
    pub requeue: bool,
    /// Batch sessions: not before this time.
    pub starts_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The project (`group`).
    pub project: String,
    pub domain: String,
    /// The resource group asked for; `None`: the lifecycle picks the owner's default.
    pub scaling_group: Option<String>,
    /// Per kernel, defaults and preset applied.
    pub resources: ResourceRequest,
    pub cluster_mode: ClusterMode,
    /// Kernels in the session, 1 to [`crate::cluster::MAX_CLUSTER_SIZE`].
    pub cluster_size: u32,
    /// "Select Agent": the agent that is to hold it (or its main kernel).
    pub agent: Option<String>,
    pub environ: BTreeMap<String, String>,
    pub mounts: Vec<MountAsk>,
    pub preopen_ports: Vec<u16>,
    /// The owner's sessions (names or ids) that must finish successfully first.
    pub dependencies: Vec<String>,
    pub priority: i64,
    pub tag: Option<String>,
    /// Answer at once with PENDING instead of waiting for the session to start.
    pub enqueue_only: bool,
    /// How long the create call waits for RUNNING (0: the server's default).
    pub max_wait_secs: u64,
    /// A live session of the same name and image is answered instead of a new one.
    pub reuse_if_exists: bool,
    /// How many sessions to create from this request.
    pub count: u32,
}

impl SessionSpec {
    /// One interactive session of `image` with `resources` and every other field at its
    /// default.
    pub fn new(image: impl Into<String>, resources: ResourceRequest) -> SessionSpec {
        SessionSpec {
            owner_access_key: None,
            name: None,
            image: image.into(),
            session_type: SessionType::Interactive,
            startup_command: None,
            bootstrap_script: None,
            batch_timeout_secs: None,
            requeue: false,
            starts_at: None,
            project: "default".into(),
            domain: "default".into(),
            scaling_group: None,
            resources,
            cluster_mode: ClusterMode::SingleNode,
            cluster_size: 1,
            agent: None,
            environ: BTreeMap::new(),
            mounts: Vec::new(),
            preopen_ports: Vec::new(),
            dependencies: Vec::new(),
            priority: DEFAULT_PRIORITY,
            tag: None,
            enqueue_only: false,
            max_wait_secs: 0,
            reuse_if_exists: true,
            count: 1,
        }
    }
}

/// A data folder to mount, as asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountAsk {
    pub folder: FolderRef,
    /// Where inside the container (`/home/work/NAME` when absent).
    pub target: Option<String>,
}

/// How a request names a folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FolderRef {
    /// By name; a name that no visible folder has is tried as an id.
    Name(String),
    /// By id.
    Id(String),
}

/// Environment names the platform sets in every kernel (`BAI_KERNEL_ID`,
/// `BAI_KRUNNER_SOCKET`, …); a user's value could cut the agent off its kernel.
pub const RESERVED_ENV_PREFIX: &str = "BAI_";

/// Whether `k` may name a user's environment variable: letters, digits and `_`, not
/// starting with a digit, and not one of the platform's own.
pub fn check_env(k: &str, v: &str) -> Result<(), String> {
    let mut chars = k.chars();
    let valid = matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "environment variable name {k:?} is invalid: use letters, digits and '_', not starting with a digit"
        ));
    }
    if k.starts_with(RESERVED_ENV_PREFIX) {
        return Err(format!(
            "environment variable name {k:?} is reserved: names starting with {RESERVED_ENV_PREFIX} steer the session's own runner"
        ));
    }
    if v.contains('\0') {
        return Err(format!("environment variable {k} contains a NUL byte"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_names_are_checked() {
        assert!(check_env("PATH_EXTRA", "x").is_ok());
        assert!(check_env("_X1", "").is_ok());
        assert!(check_env("1X", "x").unwrap_err().contains("invalid"));
        assert!(check_env("A-B", "x").unwrap_err().contains("invalid"));
        assert!(
            check_env("BAI_KERNEL_ID", "x")
                .unwrap_err()
                .contains("reserved")
        );
        assert!(check_env("A", "a\0b").unwrap_err().contains("NUL"));
    }
}
