//! `POST /session` (wire contract §5.2).

use crate::{Client, ClientError};
use bai_core::SessionType;
use reqwest::Method;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// What `POST /session` is asked for. Start from [`CreateSession::new`].
#[derive(Debug, Clone)]
pub struct CreateSession {
    /// None: the server picks a name (the official client always sends one).
    pub name: Option<String>,
    pub image: String,
    pub session_type: SessionType,
    /// `config.resources`, e.g. `{"cpu": "2", "mem": "4g"}` (the CLI sends strings).
    pub resources: Map<String, Value>,
    /// `config.resource_opts`, e.g. `{"shmem": "64m"}`.
    pub resource_opts: Map<String, Value>,
    /// `config.environ`.
    pub environ: BTreeMap<String, String>,
    /// `config.mounts`, after [`crate::Config::vfolder_mounts`].
    pub mounts: Vec<String>,
    /// `config.mount_map`: vfolder → mount path.
    pub mount_map: BTreeMap<String, String>,
    /// `config.preopen_ports`.
    pub preopen_ports: Option<Vec<u16>>,
    /// `config.scalingGroup` (resource group).
    pub scaling_group: Option<String>,
    /// Return right after enqueueing (status `PENDING`).
    pub enqueue_only: bool,
    /// Wait at most this long for the session to start (0 = as long as it takes);
    /// the reply status is then `TIMEOUT`.
    pub max_wait_secs: u64,
    pub reuse_if_exists: bool,
    /// Batch sessions: the command that is the session.
    pub startup_command: Option<String>,
    /// ISO-8601 time or a delay such as `10s`, `5m`.
    pub starts_at: Option<String>,
    /// Seconds, or `30s`, `5m`, `2h`.
    pub batch_timeout: Option<String>,
    pub tag: Option<String>,
    /// The script's text.
    pub bootstrap_script: Option<String>,
    /// `None` is sent as `null` (as `run` does), `Some([])` as `[]` (as `start` does).
    pub dependencies: Option<Vec<String>>,
    /// Administrators: create the session for this keypair.
    pub owner_access_key: Option<String>,
    /// Sent only when given.
    pub priority: Option<i64>,
    /// Override the configured domain / project for this session.
    pub domain: Option<String>,
    pub group: Option<String>,
    /// bai: a resource preset to start from (`config.preset`).
    pub preset: Option<String>,
    /// bai: create this many sessions ("Sessions: N"; `count`).
    pub count: Option<u32>,
    /// "Select Agent" (`config.agentList`).
    pub agent: Option<String>,
    /// Number of kernels (`clusterSize`, 1 by default).
    pub cluster_size: u32,
    /// `single-node` (default) or `multi-node` (`clusterMode`).
    pub cluster_mode: String,
}

impl CreateSession {
    /// An interactive session of `image` with the official client's defaults.
    pub fn new(image: impl Into<String>) -> CreateSession {
        CreateSession {
            name: None,
            image: image.into(),
            session_type: SessionType::Interactive,
            resources: Map::new(),
            resource_opts: Map::new(),
            environ: BTreeMap::new(),
            mounts: Vec::new(),
            mount_map: BTreeMap::new(),
            preopen_ports: None,
            scaling_group: None,
            enqueue_only: false,
            max_wait_secs: 0,
            reuse_if_exists: true,
            startup_command: None,
            starts_at: None,
            batch_timeout: None,
            tag: None,
            bootstrap_script: None,
            dependencies: None,
            owner_access_key: None,
            priority: None,
            domain: None,
            group: None,
            preset: None,
            count: None,
            agent: None,
            cluster_size: 1,
            cluster_mode: "single-node".into(),
        }
    }
}

/// What the manager answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreateReply {
    pub session_id: String,
    pub session_name: String,
    /// `RUNNING`, `PENDING` (enqueue only), `TIMEOUT` (max wait passed), `TERMINATED`
    /// (batch finished), `ERROR`, `CANCELLED`, …
    pub status: String,
    /// False when a live session with the same name was reused.
    pub created: bool,
    /// Names of the session's service ports (apps).
    pub service_ports: Vec<String>,
    /// bai, with `count` > 1: every session created, as `(id, name)`.
    pub sessions: Vec<(String, String)>,
}

impl Client {
    /// The JSON body of `POST /session`, exactly as sent.
    pub fn create_body(&self, req: &CreateSession) -> Value {
        let mut mounts = self.config.vfolder_mounts.clone();
        mounts.extend(req.mounts.iter().cloned());
        let mount_options: Map<String, Value> = req
            .mount_map
            .keys()
            .map(|k| (k.clone(), json!({"type": "bind"})))
            .collect();
        let mut body = json!({
            "name": req.name,
            "image": req.image,
            "type": req.session_type.as_str(),
            "tag": req.tag,
            "config": {
                "mounts": mounts,
                "mount_ids": [],
                "environ": req.environ,
                "resources": req.resources,
                "resource_opts": req.resource_opts,
                "scalingGroup": req.scaling_group,
                "attach_network": null,
                "mount_map": req.mount_map,
                "mount_id_map": {},
                "mount_options": mount_options,
                "preopen_ports": req.preopen_ports,
            },
            "dependencies": req.dependencies,
            "callback_url": null,
            "architecture": std::env::consts::ARCH,
            "clusterSize": req.cluster_size,
            "clusterMode": req.cluster_mode,
            "starts_at": req.starts_at,
            "batch_timeout": req.batch_timeout,
            "bootstrap_script": req.bootstrap_script,
            "owner_access_key": req.owner_access_key,
            "domain": req.domain.as_ref().unwrap_or(&self.config.domain),
            "group": req.group.as_ref().unwrap_or(&self.config.group),
            "enqueueOnly": req.enqueue_only,
            "maxWaitSeconds": req.max_wait_secs,
            "reuseIfExists": req.reuse_if_exists,
            "startupCommand": req.startup_command,
        });
        if let (Some(p), Some(obj)) = (req.priority, body.as_object_mut()) {
            obj.insert("priority".into(), p.into());
        }
        // bai's additions, sent only when used so the body stays the official client's.
        if let Some(p) = &req.preset {
            body["config"]["preset"] = p.as_str().into();
        }
        if let Some(a) = &req.agent {
            body["config"]["agentList"] = json!([a]);
        }
        if let Some(n) = req.count.filter(|n| *n > 1) {
            body["count"] = n.into();
        }
        body
    }

    /// `POST /session`. Unless `enqueue_only`, the manager answers once the session runs,
    /// failed, or (batch) finished, or `max_wait_secs` passed.
    ///
    /// Safe to retry: every call sends a fresh `Idempotency-Key`, and when the manager
    /// cannot be reached (it restarts, the connection drops mid-wait) the same request
    /// is sent again with the same key for up to [`CREATE_RETRY_FOR`], so it creates one
    /// session whatever happened to the first attempt.
    pub async fn create_session(&self, req: &CreateSession) -> Result<CreateReply, ClientError> {
        let key = uuid::Uuid::new_v4().to_string();
        self.create_session_keyed(req, &key).await
    }

    /// [`Client::create_session`] with the caller's idempotency key.
    pub async fn create_session_keyed(
        &self,
        req: &CreateSession,
        key: &str,
    ) -> Result<CreateReply, ClientError> {
        let payload = self.create_body(req).to_string();
        let give_up = std::time::Instant::now() + CREATE_RETRY_FOR;
        let mut pause = std::time::Duration::from_millis(250);
        // Once a request went out, a manager that stops answering may have stored it: the
        // same key is sent again until it answers. A manager never reached is an error.
        let mut sent_once = false;
        loop {
            let sent = self
                .dispatch_reached(Method::POST, "/session", Some("application/json"), |r| {
                    r.header("Idempotency-Key", key).body(payload.clone())
                })
                .await;
            match sent {
                Ok(resp) => {
                    let bytes = resp.bytes().await.map_err(|e| self.connect_error(&e))?;
                    let v: Value = serde_json::from_slice(&bytes)
                        .map_err(|e| ClientError::Protocol(format!("reply is not JSON: {e}")))?;
                    return parse_create_reply(&v, req.name.as_deref());
                }
                Err((ClientError::Connect { .. }, reached))
                    if (sent_once || reached) && std::time::Instant::now() < give_up =>
                {
                    sent_once = true;
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(std::time::Duration::from_secs(4));
                }
                Err((e, _)) => return Err(e),
            }
        }
    }
}

/// How long [`Client::create_session`] keeps sending a create the manager did not answer.
pub const CREATE_RETRY_FOR: std::time::Duration = std::time::Duration::from_secs(60);

pub(crate) fn parse_create_reply(
    v: &Value,
    asked: Option<&str>,
) -> Result<CreateReply, ClientError> {
    let field = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let session_id = field("sessionId")
        .ok_or_else(|| ClientError::Protocol(format!("no sessionId in the create reply {v}")))?;
    Ok(CreateReply {
        session_name: field("sessionName")
            .or_else(|| asked.map(str::to_string))
            .unwrap_or_else(|| session_id.clone()),
        session_id,
        status: field("status").unwrap_or_else(|| "RUNNING".into()),
        created: v.get("created").and_then(Value::as_bool).unwrap_or(true),
        service_ports: v
            .get("servicePorts")
            .and_then(Value::as_array)
            .map(|ports| {
                ports
                    .iter()
                    .filter_map(|p| p.get("name").and_then(Value::as_str).map(str::to_string))
                    .collect()
            })
            .unwrap_or_default(),
        sessions: v
            .get("sessions")
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(|s| {
                        Some((
                            s.get("sessionId")?.as_str()?.to_string(),
                            s.get("sessionName")?.as_str()?.to_string(),
                        ))
                    })
                    .collect()
            })
            .unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn body_has_the_official_shape() {
        let mut cfg = Config::new("http://127.0.0.1:8090", "AK", "SK").unwrap();
        cfg.vfolder_mounts = vec!["data".into()];
        let c = Client::new(cfg).unwrap();
        let mut r = CreateSession::new("python");
        r.name = Some("pysdk-6f39a1b61d".into());
        r.resources.insert("mem".into(), "4096m".into());
        r.resource_opts.insert("shmem".into(), "64m".into());
        r.environ.insert("A".into(), "b=c".into());
        r.session_type = SessionType::Batch;
        r.startup_command = Some("ls".into());
        r.batch_timeout = Some("30".into());
        r.dependencies = Some(vec![]);
        let b = c.create_body(&r);
        assert_eq!(b["name"], "pysdk-6f39a1b61d");
        assert_eq!(b["type"], "batch");
        assert_eq!(b["startupCommand"], "ls");
        assert_eq!(b["batch_timeout"], "30");
        assert_eq!(b["config"]["resources"], json!({"mem": "4096m"}));
        assert_eq!(b["config"]["resource_opts"], json!({"shmem": "64m"}));
        assert_eq!(b["config"]["environ"], json!({"A": "b=c"}));
        assert_eq!(b["config"]["mounts"], json!(["data"]));
        assert_eq!(b["config"]["scalingGroup"], Value::Null);
        assert_eq!(b["dependencies"], json!([]));
        assert_eq!(b["enqueueOnly"], false);
        assert_eq!(b["maxWaitSeconds"], 0);
        assert_eq!(b["reuseIfExists"], true);
        assert_eq!(b["domain"], "default");
        assert_eq!(b["group"], "default");
        assert_eq!(b["clusterSize"], 1);
        assert!(b.get("priority").is_none());
        assert!(b.get("starts_at").is_some_and(Value::is_null));
    }

    #[test]
    fn reply_defaults() {
        let r = parse_create_reply(&json!({"sessionId": "u-1"}), Some("n")).unwrap();
        assert_eq!(
            r,
            CreateReply {
                session_id: "u-1".into(),
                session_name: "n".into(),
                status: "RUNNING".into(),
                created: true,
                service_ports: vec![],
                sessions: vec![],
            }
        );
        let r = parse_create_reply(
            &json!({"sessionId": "u", "sessionName": "s", "status": "PENDING", "created": false,
                    "servicePorts": [{"name": "sshd", "protocol": "tcp", "ports": [2200]}]}),
            None,
        )
        .unwrap();
        assert_eq!(r.status, "PENDING");
        assert!(!r.created);
        assert_eq!(r.service_ports, vec!["sshd"]);
        assert!(parse_create_reply(&json!({}), None).is_err());
    }
}
