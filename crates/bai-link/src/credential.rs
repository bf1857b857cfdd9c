//! Where an agent keeps the credential the manager gave it on its first join. Without it a
//! restarted agent is refused under its own id ("belongs to another agent"), so the store
//! must outlive the process: a file in the data dir ([`CredentialFile`]), or, for an agent
//! whose data dir does not outlive it (a pod's), a store elsewhere (the Kubernetes backend
//! keeps it in a Secret).

use async_trait::async_trait;
use std::path::PathBuf;

/// A place that keeps one agent's credential across its restarts.
#[async_trait]
pub trait CredentialStore: Send + Sync + std::fmt::Debug {
    /// The credential kept for `agent_id`: none yet, or another agent's, is `Ok(None)`; an
    /// error is a store that cannot be read now (the join waits and asks again rather than
    /// join without it and be refused for good).
    async fn load(&self, agent_id: &str) -> Result<Option<String>, String>;
    /// Keeps `credential` as `agent_id`'s, replacing what was kept.
    async fn keep(&self, agent_id: &str, credential: &str) -> Result<(), String>;
}

/// The credential in a file (mode 0600): the agent id on its first line, the credential on
/// its second.
#[derive(Debug, Clone)]
pub struct CredentialFile(pub PathBuf);

/// The file's text for `agent_id`'s `credential`.
fn file_text(agent_id: &str, credential: &str) -> String {
    format!("{agent_id}\n{credential}\n")
}

/// The credential in a file's `text` if it is `agent_id`'s.
fn credential_in(text: &str, agent_id: &str) -> Option<String> {
    let mut lines = text.lines();
    (lines.next()? == agent_id)
        .then(|| lines.next().map(str::to_string))
        .flatten()
}

#[async_trait]
impl CredentialStore for CredentialFile {
    async fn load(&self, agent_id: &str) -> Result<Option<String>, String> {
        match std::fs::read_to_string(&self.0) {
            Ok(text) => Ok(credential_in(&text, agent_id)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("cannot read {}: {e}", self.0.display())),
        }
    }

    async fn keep(&self, agent_id: &str, credential: &str) -> Result<(), String> {
        crate::identity::write_private(&self.0, file_text(agent_id, credential).as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[tokio::test]
    async fn a_file_gives_back_only_its_own_agents_credential() {
        let dir = tempfile::tempdir().unwrap();
        let store = CredentialFile(dir.path().join("credential"));
        assert_eq!(store.load("node-1").await, Ok(None));
        store.keep("node-1", "c0ffee").await.unwrap();
        assert_eq!(store.load("node-1").await, Ok(Some("c0ffee".into())));
        assert_eq!(store.load("node-2").await, Ok(None));
        let mode = std::fs::metadata(&store.0).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        store.keep("node-1", "beef").await.unwrap();
        assert_eq!(store.load("node-1").await, Ok(Some("beef".into())));
    }

    #[tokio::test]
    async fn an_unreadable_file_is_an_error_not_an_absent_credential() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the file should be cannot be read as one.
        let store = CredentialFile(dir.path().to_path_buf());
        let err = store.load("node-1").await.unwrap_err();
        assert!(err.contains("cannot read"), "{err}");
    }
}
