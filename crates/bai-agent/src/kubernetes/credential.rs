//! The agent's own credential (what the manager gave it on its first join) in a Secret of
//! the kernels' namespace, for an agent whose data dir does not outlive it: one in a pod of
//! a Deployment (`dist/kubernetes/agent-each-node.yaml`), whose next pod must join under the
//! same ids. One Secret per agent id, `bai-agent-credential-<id>`, holding the id and the
//! credential; not labelled as a kernel's (`managed-by`), so no sweep of kernels' objects
//! takes it, and it stays when sessions end (it is the agent's, not a session's).
//!
//! [`secret_name`] and [`credential_of`] are pure (unit-tested); the rest asks the API server.

use super::error::is_not_found;
use super::labels::label_value;
use crate::LABEL_AGENT;
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Patch, PatchParams, PostParams};
use kube::{Api, Client};
use std::collections::BTreeMap;

/// The Secret's key of the agent id it belongs to.
const ID_KEY: &str = "agent-id";
/// The Secret's key of the credential.
const CREDENTIAL_KEY: &str = "credential";
/// The label every such Secret carries (`kubectl get secrets -l …` lists them).
pub const COMPONENT: (&str, &str) = ("app.kubernetes.io/component", "agent-credential");

/// The agents' credentials in Secrets of one namespace.
#[derive(Clone)]
pub struct CredentialSecrets {
    secrets: Api<Secret>,
    namespace: String,
}

impl std::fmt::Debug for CredentialSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CredentialSecrets({})", self.namespace)
    }
}

/// The Secret's name for `agent_id`: a DNS subdomain (lower case; other characters become
/// `-`). Two ids may share a name; the Secret names its own id, so one never gets another's.
pub fn secret_name(agent_id: &str) -> String {
    let id: String = agent_id
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(200)
        .collect();
    format!("bai-agent-credential-{}", id.trim_matches(['-', '.']))
        .trim_end_matches('-')
        .to_string()
}

/// The credential a Secret's `data` keeps, if it is `agent_id`'s.
fn credential_of(data: Option<&BTreeMap<String, ByteString>>, agent_id: &str) -> Option<String> {
    let data = data?;
    let text = |k: &str| {
        data.get(k)
            .and_then(|v| String::from_utf8(v.0.clone()).ok())
    };
    if text(ID_KEY)? != agent_id {
        return None;
    }
    text(CREDENTIAL_KEY).filter(|c| !c.is_empty())
}

/// The Secret's data for `agent_id`'s `credential`.
fn data(agent_id: &str, credential: &str) -> BTreeMap<String, ByteString> {
    BTreeMap::from([
        (ID_KEY.into(), ByteString(agent_id.as_bytes().to_vec())),
        (
            CREDENTIAL_KEY.into(),
            ByteString(credential.as_bytes().to_vec()),
        ),
    ])
}

impl CredentialSecrets {
    pub fn new(client: Client, namespace: &str) -> CredentialSecrets {
        CredentialSecrets {
            secrets: Api::namespaced(client, namespace),
            namespace: namespace.to_string(),
        }
    }

    /// The credential kept for `agent_id` (none kept, or another id's Secret: `None`).
    pub async fn load(&self, agent_id: &str) -> Result<Option<String>, String> {
        let name = secret_name(agent_id);
        match self.secrets.get(&name).await {
            Ok(s) => Ok(credential_of(s.data.as_ref(), agent_id)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(e) => Err(format!(
                "cannot read the Secret {}/{name}: {e}",
                self.namespace
            )),
        }
    }

    /// Keeps `credential` as `agent_id`'s, replacing what its Secret held.
    pub async fn keep(&self, agent_id: &str, credential: &str) -> Result<(), String> {
        let name = secret_name(agent_id);
        let failed =
            |e: kube::Error| format!("cannot write the Secret {}/{name}: {e}", self.namespace);
        let patch = serde_json::json!({"data": data(agent_id, credential)});
        match self
            .secrets
            .patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
        {
            Ok(_) => return Ok(()),
            Err(e) if is_not_found(&e) => {}
            Err(e) => return Err(failed(e)),
        }
        let secret = Secret {
            metadata: ObjectMeta {
                name: Some(name.clone()),
                labels: Some(BTreeMap::from([
                    ("app.kubernetes.io/name".into(), "bai-agent".into()),
                    (COMPONENT.0.into(), COMPONENT.1.into()),
                    (LABEL_AGENT.into(), label_value(agent_id)),
                ])),
                ..Default::default()
            },
            data: Some(data(agent_id, credential)),
            type_: Some("Opaque".into()),
            ..Default::default()
        };
        self.secrets
            .create(&PostParams::default(), &secret)
            .await
            .map(|_| ())
            .map_err(failed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_a_dns_subdomain_of_the_id() {
        assert_eq!(secret_name("k8s-gpu-3"), "bai-agent-credential-k8s-gpu-3");
        assert_eq!(secret_name("K8s_Node.1"), "bai-agent-credential-k8s-node.1");
        assert_eq!(secret_name("node-"), "bai-agent-credential-node");
        assert_eq!(secret_name("@@"), "bai-agent-credential");
        assert!(secret_name(&"a".repeat(400)).len() <= 253);
    }

    #[test]
    fn a_secret_gives_back_only_its_own_agents_credential() {
        let d = data("node-1", "c0ffee");
        assert_eq!(credential_of(Some(&d), "node-1").as_deref(), Some("c0ffee"));
        // Another id of the same name (`Node_1` and `node-1` share one).
        assert_eq!(credential_of(Some(&d), "Node_1"), None);
        assert_eq!(credential_of(None, "node-1"), None);
        let empty = data("node-1", "");
        assert_eq!(credential_of(Some(&empty), "node-1"), None);
        let mut no_id = d.clone();
        no_id.remove(ID_KEY);
        assert_eq!(credential_of(Some(&no_id), "node-1"), None);
    }
}
