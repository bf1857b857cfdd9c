//! What administrators run the cluster with: the audit log (`GET /admin/audit`), keypairs
//! (GraphQL `modify_keypair`), health and metrics.

use crate::gql::mutation_ok;
use crate::{Client, ClientError};
use bai_api::server::{AuditList, AuditQuery, Health};
use reqwest::Method;
use serde_json::{Map, Value, json};

impl Client {
    /// The audit log, newest first (administrators).
    pub async fn audit(&self, q: &AuditQuery) -> Result<AuditList, ClientError> {
        let limit = q.limit.map(|n| n.to_string());
        let mut pairs: Vec<(&str, &str)> = Vec::new();
        for (k, v) in [
            ("actor", q.actor.as_deref()),
            ("action", q.action.as_deref()),
            ("target", q.target.as_deref()),
            ("since", q.since.as_deref()),
            ("limit", limit.as_deref()),
        ] {
            if let Some(v) = v {
                pairs.push((k, v));
            }
        }
        let path = if pairs.is_empty() {
            "/admin/audit".to_string()
        } else {
            format!("/admin/audit?{}", crate::encode::query(&pairs))
        };
        let v = self.send_json(Method::GET, &path, None).await?;
        serde_json::from_value(v)
            .map_err(|e| ClientError::Protocol(format!("the audit log is not as expected: {e}")))
    }

    /// Activates or deactivates a keypair and sets its rate limit (administrators).
    pub async fn modify_keypair(
        &self,
        access_key: &str,
        is_active: Option<bool>,
        rate_limit: Option<i64>,
    ) -> Result<(), ClientError> {
        let mut props = Map::new();
        if let Some(a) = is_active {
            props.insert("is_active".into(), a.into());
        }
        if let Some(n) = rate_limit {
            props.insert("rate_limit".into(), n.into());
        }
        let v = self
            .gql(
                "mutation($ak: String!, $props: ModifyKeyPairInput!) { modify_keypair(access_key: $ak, props: $props) { ok msg } }",
                json!({"ak": access_key, "props": Value::Object(props)}),
            )
            .await?;
        mutation_ok(&v, "modify_keypair").map(drop)
    }

    /// `GET /health` (unsigned).
    pub async fn health(&self) -> Result<Health, ClientError> {
        let resp = self
            .http
            .get(self.url("/health"))
            .send()
            .await
            .map_err(|e| self.connect_error(&e))?;
        let status = resp.status().as_u16();
        let bytes = resp.bytes().await.map_err(|e| self.connect_error(&e))?;
        if status != 200 && status != 503 {
            return Err(ClientError::from_reply(status, &bytes));
        }
        serde_json::from_slice(&bytes).map_err(|e| {
            ClientError::Protocol(format!("the health answer is not as expected: {e}"))
        })
    }

    /// `GET /metrics` signed (administrators): Prometheus' text format.
    pub async fn metrics(&self) -> Result<String, ClientError> {
        let bytes = self.send(Method::GET, "/metrics", None).await?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
