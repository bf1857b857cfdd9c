//! One SSH key pair per cluster session, made by the manager (so kernels on different agents
//! share it) in OpenSSH's formats (`bai-sshkey`).

use bai_core::cluster::ClusterKeys;

const COMMENT: &str = "work@cluster.bai.local";

/// A fresh key pair.
pub fn generate() -> Result<ClusterKeys, String> {
    let k = bai_sshkey::ed25519(COMMENT).map_err(|e| e.to_string())?;
    Ok(ClusterKeys {
        private_key: k.private_key,
        public_key: k.public_key,
    })
}
