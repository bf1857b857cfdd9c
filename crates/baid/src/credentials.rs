//! `baid agent --credentials file|secret`: where an agent keeps the credential the manager
//! gives it on its first join (`bai_link::credential`). A file in the data dir by default; a
//! Secret of the kernels' namespace for a Kubernetes agent whose data dir does not outlive
//! its pod (`bai_agent::kubernetes::credential`).

use async_trait::async_trait;
use bai_agent::KubernetesAgent;
use bai_agent::kubernetes::credential::CredentialSecrets;
use bai_link::credential::{CredentialFile, CredentialStore};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Place {
    /// A file in the data dir.
    File,
    /// A Secret per agent id in the kernels' namespace (Kubernetes backend).
    Secret,
}

/// Why these flags cannot keep the credential where asked.
pub fn check(place: Place, kubernetes: bool) -> Result<(), String> {
    if place == Place::Secret && !kubernetes {
        return Err(
            "--credentials secret needs --backend kubernetes (the Secret is kept \
                    in the kernels' namespace)"
                .into(),
        );
    }
    Ok(())
}

/// The store of one agent's credential: `file` (used with `Place::File`), or the Secrets of
/// `kube`'s namespace.
pub fn store(
    place: Place,
    file: PathBuf,
    kube: Option<&KubernetesAgent>,
) -> Arc<dyn CredentialStore> {
    match (place, kube) {
        (Place::Secret, Some(k)) => Arc::new(InSecret(k.credential_secrets())),
        _ => Arc::new(CredentialFile(file)),
    }
}

/// The credential in a Secret, as the join asks for it.
#[derive(Debug)]
struct InSecret(CredentialSecrets);

#[async_trait]
impl CredentialStore for InSecret {
    async fn load(&self, agent_id: &str) -> Result<Option<String>, String> {
        self.0.load(agent_id).await
    }

    async fn keep(&self, agent_id: &str, credential: &str) -> Result<(), String> {
        self.0.keep(agent_id, credential).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_needs_the_kubernetes_backend() {
        assert!(check(Place::File, false).is_ok());
        assert!(check(Place::Secret, true).is_ok());
        let err = check(Place::Secret, false).unwrap_err();
        assert!(err.contains("--backend kubernetes"), "{err}");
    }
}
