//! The kernel's Secret, for an agent that shares no disk with its kernels
//! (`--runner-reach network`): everything the Docker backend writes into a kernel's
//! directories on the node before it starts travels in one Secret of the kernel, made before
//! its pod and owned by it (so Kubernetes removes it with the pod):
//!
//! - the runner's token, the owner's dotfiles and a cluster session's authorized key, which
//!   krunner writes where they belong as the kernel's user when it starts (listed in the
//!   Secret's `files.json`, with the modes the user gave: `bai-krunner`'s `unpack`);
//! - every kernel's `/etc` files and a cluster session's private key, public key and SSH
//!   client configuration, mounted read-only at their places (`subPath`s of the Secret).
//!
//! [`kernel_secret`] is pure (unit-tested); the rest asks the API server.

use super::error::{KubeError, is_not_found};
use super::labels::{self, KernelLabels};
use super::pod::pod_name;
use super::{Inner, egress};
use crate::kernel_files::{cluster, etc};
use crate::paths::confined_join;
use bai_core::agent::{AgentError, KernelSpec};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use std::collections::BTreeMap;
use std::path::Path;
use uuid::Uuid;

/// The Secret's key of the runner's token.
pub const TOKEN_KEY: &str = crate::krunner_proto::TOKEN_FILE;
/// The Secret's list of what krunner writes where.
const MANIFEST: &str = "files.json";

/// A kernel's Secret and what of it is mounted where (key → path inside, read-only).
#[derive(Debug, Clone)]
pub struct KernelSecret {
    pub secret: Secret,
    pub mounts: Vec<(String, String)>,
}

/// The Secret of the kernel `spec` in `namespace`, holding `token`.
pub fn kernel_secret(
    spec: &KernelSpec,
    namespace: &str,
    agent: &str,
    token: &str,
) -> Result<KernelSecret, AgentError> {
    let mut data: BTreeMap<String, ByteString> = BTreeMap::new();
    let mut manifest = Vec::new();
    let mut mounts = Vec::new();
    let mut put = |key: String, text: &[u8]| {
        data.insert(key, ByteString(text.to_vec()));
    };
    put(TOKEN_KEY.into(), format!("{token}\n").as_bytes());
    manifest.push(serde_json::json!({"key": TOKEN_KEY, "place": "run",
        "path": TOKEN_KEY, "mode": 0o600}));
    for (name, inside, text) in etc::texts() {
        put(name.into(), text.as_bytes());
        mounts.push((name.to_string(), inside.to_string()));
    }
    for (i, d) in spec.dotfiles.iter().enumerate() {
        let path = dotfile_path(d)?;
        let key = format!("dotfile-{i}");
        put(key.clone(), d.data.as_bytes());
        manifest.push(serde_json::json!({"key": key, "place": "home",
            "path": path, "mode": d.mode & 0o777}));
    }
    for f in cluster::ssh_set(&spec.cluster_info()) {
        put(f.name.into(), f.text.as_bytes());
        match f.inside {
            Some(inside) => mounts.push((f.name.to_string(), inside.to_string())),
            None => manifest.push(serde_json::json!({"key": f.name, "place": "run",
                "path": f.name, "mode": f.mode})),
        }
    }
    put(
        MANIFEST.into(),
        serde_json::Value::Array(manifest).to_string().as_bytes(),
    );
    let secret = Secret {
        metadata: ObjectMeta {
            name: Some(pod_name(spec.kernel_id)),
            namespace: Some(namespace.to_string()),
            labels: Some(
                KernelLabels {
                    agent,
                    kernel: spec.kernel_id,
                    session: spec.session_id,
                }
                .to_map(),
            ),
            ..Default::default()
        },
        data: Some(data),
        type_: Some("Opaque".into()),
        ..Default::default()
    };
    Ok(KernelSecret { secret, mounts })
}

/// A dotfile's path under the home as krunner takes it (relative, normalized); one that
/// leaves the home is refused.
pub fn dotfile_path(d: &bai_core::dotfile::Dotfile) -> Result<String, AgentError> {
    confined_join(Path::new(""), &d.path)
        .map(|p| p.display().to_string())
        .map_err(|e| AgentError::BadRequest(format!("dotfile {:?}: {e}", d.path)))
}

/// Makes the kernel's Secret (before its pod: the kubelet starts no container without it).
/// One left by an earlier try of the same kernel is replaced.
pub async fn before_pod(inner: &Inner, secret: &Secret) -> Result<(), AgentError> {
    let name = secret.metadata.name.clone().unwrap_or_default();
    match inner.secrets.delete(&name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => {
            return Err(KubeError::api(format_args!("cannot replace the Secret {name}"))(e).into());
        }
    }
    inner
        .secrets
        .create(&PostParams::default(), secret)
        .await
        .map_err(KubeError::api(format_args!(
            "cannot create the Secret {name}"
        )))?;
    Ok(())
}

/// Makes the pod `name` (`uid`) the owner of its Secret (of the same name).
pub async fn own(inner: &Inner, name: &str, uid: &str) -> Result<(), AgentError> {
    let owner = egress::policy::owned_by(name, uid);
    let patch = serde_json::json!({"metadata": {"ownerReferences": [owner]}});
    inner
        .secrets
        .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .map_err(KubeError::api(format_args!(
            "cannot hand the Secret {name} to its pod"
        )))?;
    Ok(())
}

/// The runner's token of a kernel, read back from its Secret (a re-adopted kernel's): the
/// Secret of its pod's name (`bai-k-<kernel>`, or the pool pod's it was given).
pub async fn token(inner: &Inner, kernel: Uuid) -> Result<String, AgentError> {
    let name = inner.pod_of(kernel);
    let s = inner
        .secrets
        .get(&name)
        .await
        .map_err(KubeError::api(format_args!(
            "cannot read the runner's token of kernel {kernel}"
        )))?;
    s.data
        .as_ref()
        .and_then(|d| d.get(TOKEN_KEY))
        .and_then(|t| String::from_utf8(t.0.clone()).ok())
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| AgentError::Runtime(format!("the Secret {name} holds no runner token")))
}

/// Deletes a kernel's Secret (none there is fine: it goes with its pod).
pub async fn remove(inner: &Inner, kernel: Uuid) {
    if inner.config.runner_reach != super::RunnerReach::Network {
        return; // none was made by this agent
    }
    delete(inner, &inner.pod_of(kernel)).await;
}

/// Deletes the Secret `name` (none there is fine).
pub async fn delete(inner: &Inner, name: &str) {
    match inner.secrets.delete(name, &DeleteParams::default()).await {
        Ok(_) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => tracing::warn!(secret = %name, error = %e, "cannot delete a kernel's Secret"),
    }
}

/// At the agent's start (its pods listed): removes its Secrets that have no owner and whose
/// kernel has no pod (a crash between the Secret and its pod).
pub async fn sweep(inner: &Inner) {
    if inner.config.runner_reach != super::RunnerReach::Network {
        return;
    }
    let lp = ListParams::default().labels(&labels::agent_selector(&inner.config.agent_id));
    let list = match inner.secrets.list(&lp).await {
        Ok(l) => l,
        Err(e) => {
            tracing::warn!(error = %e, "cannot list this agent's Secrets");
            return;
        }
    };
    for s in list.items {
        let Some(kernel) = labels::unowned_kernel(&s.metadata) else {
            continue;
        };
        if !inner.knows(kernel) {
            tracing::info!(kernel = %kernel, "removing a Secret left without its pod");
            remove(inner, kernel).await;
        }
    }
}

#[cfg(test)]
#[path = "secret_tests.rs"]
mod tests;
