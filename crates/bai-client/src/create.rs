//! `POST /session` (wire contract §5.2), written and read with the wire-contract types.

use crate::request::typed;
use crate::retry::{Failover, Sent};
use crate::{Client, ClientError};
use bai_api::sessions::{ClusterMode, CreateConfig, CreateRequest, ListOrText, NumberOrText};
use bai_core::SessionType;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;

pub use bai_api::sessions::CreateReply;

/// What `POST /session` is asked for. Start from [`CreateSession::new`].
#[derive(Debug, Clone)]
pub struct CreateSession {
    /// None: the server picks a name (the official client always sends one).
    pub name: Option<String>,
    pub image: String,
    pub session_type: SessionType,
    /// `config.resources`, e.g. `{"cpu": "2", "mem": "4g"}` (the CLI sends texts).
    pub resources: BTreeMap<String, NumberOrText>,
    /// `config.resource_opts`, e.g. `{"shmem": "64m"}`.
    pub resource_opts: BTreeMap<String, NumberOrText>,
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
    /// Batch sessions: back to the queue when preempted (sent only when set).
    pub requeue: bool,
    pub tag: Option<String>,
    /// The script's text.
    pub bootstrap_script: Option<String>,
    /// `None` leaves the field out (as `run` does), `Some([])` sends `[]` (as `start` does).
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
    /// All kernels on one agent (default) or spread (`clusterMode`).
    pub cluster_mode: ClusterMode,
}

impl CreateSession {
    /// An interactive session of `image` with the official client's defaults.
    pub fn new(image: impl Into<String>) -> CreateSession {
        CreateSession {
            name: None,
            image: image.into(),
            session_type: SessionType::Interactive,
            resources: BTreeMap::new(),
            resource_opts: BTreeMap::new(),
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
            requeue: false,
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
            cluster_mode: ClusterMode::SingleNode,
        }
    }
}

impl Client {
    /// The body of `POST /session`, as sent: the official client's fields, and bai's own
    /// (`config.preset`, `config.agentList`, `count`) only when used.
    pub fn create_body(&self, req: &CreateSession) -> CreateRequest {
        let mut mounts = self.config.vfolder_mounts.clone();
        mounts.extend(req.mounts.iter().cloned());
        let mount_options: BTreeMap<String, Value> = req
            .mount_map
            .keys()
            .map(|k| (k.clone(), json!({"type": "bind"})))
            .collect();
        let ports = req.preopen_ports.as_ref().map(|ports| {
            ListOrText::List(
                ports
                    .iter()
                    .map(|p| NumberOrText::Number((*p).into()))
                    .collect(),
            )
        });
        CreateRequest {
            image: req.image.clone(),
            name: req.name.clone(),
            session_type: Some(req.session_type),
            startup_command: req.startup_command.clone(),
            batch_timeout: req.batch_timeout.clone().map(NumberOrText::Text),
            requeue: req.requeue.then_some(true),
            starts_at: req.starts_at.clone(),
            bootstrap_script: req.bootstrap_script.clone(),
            group: Some(
                req.group
                    .clone()
                    .unwrap_or_else(|| self.config.group.clone()),
            ),
            domain: Some(
                req.domain
                    .clone()
                    .unwrap_or_else(|| self.config.domain.clone()),
            ),
            tag: req.tag.clone(),
            owner_access_key: req.owner_access_key.clone(),
            enqueue_only: Some(req.enqueue_only),
            max_wait_seconds: Some(req.max_wait_secs),
            reuse_if_exists: Some(req.reuse_if_exists),
            priority: req.priority,
            count: req.count.filter(|n| *n > 1),
            dependencies: req.dependencies.clone(),
            cluster_size: Some(req.cluster_size),
            cluster_mode: Some(req.cluster_mode),
            scaling_group: None,
            preset: None,
            architecture: Some(std::env::consts::ARCH.to_string()),
            callback_url: None,
            config: Some(CreateConfig {
                resources: Some(req.resources.clone()),
                resource_opts: Some(req.resource_opts.clone()),
                scaling_group: req.scaling_group.clone(),
                preset: req.preset.clone(),
                environ: Some(req.environ.clone()),
                mounts: Some(mounts),
                mount_ids: Some(Vec::new()),
                mount_map: Some(req.mount_map.clone()),
                mount_id_map: Some(BTreeMap::new()),
                mount_options: Some(mount_options),
                preopen_ports: ports,
                agent_list: req.agent.clone().map(|a| ListOrText::List(vec![a])),
                attach_network: None,
            }),
        }
    }

    /// `POST /session`. Unless `enqueue_only`, the manager answers once the session runs,
    /// failed, or (batch) finished, or `max_wait_secs` passed.
    ///
    /// Safe to retry: every call sends a fresh `Idempotency-Key`, and the same request is
    /// sent again with the same key (so it creates one session whatever happened to the
    /// first attempt) when the manager cannot be reached after the request went out (it
    /// restarts, the connection drops mid-wait), or the platform switches managers, for up
    /// to twice [`crate::Config::failover_wait`] (60 s); and when its wait outlasts the read timeout (no request
    /// hangs for good: a repeat waits again as the first would have) while the session may
    /// still start (`max_wait_secs` 0: as long as it takes).
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
        let payload = serde_json::to_string(&self.create_body(req))
            .map_err(|e| ClientError::Protocol(e.to_string()))?;
        const JSON: Option<&str> = Some("application/json");
        let request = self.signed_request(Method::POST, "/session", JSON, |r| {
            r.header("Idempotency-Key", key).body(payload)
        })?;
        // The manager answers by then at the latest, when the wait is bounded.
        let answers_by = (req.max_wait_secs > 0 && !req.enqueue_only).then(|| {
            std::time::Instant::now()
                + std::time::Duration::from_secs(req.max_wait_secs)
                + self.create_retry_for()
        });
        let mut failover = Failover::new(self.create_retry_for());
        loop {
            let mut this = request
                .try_clone()
                .ok_or_else(|| ClientError::Protocol("the create cannot be sent again".into()))?;
            self.resign(&mut this, "/session", JSON);
            match self.execute_once(this).await {
                Ok(resp) => {
                    failover.done(&self.notice);
                    let bytes = resp.bytes().await.map_err(|e| self.connect_error(&e))?;
                    let v: Value = serde_json::from_slice(&bytes)
                        .map_err(|e| ClientError::Protocol(format!("reply is not JSON: {e}")))?;
                    return typed("create", v);
                }
                // Still waiting for the session (or the manager froze): ask again with the
                // same key, which waits as the first would have.
                Err((_, Sent::TimedOut))
                    if !req.enqueue_only
                        && answers_by.is_none_or(|t| std::time::Instant::now() < t) =>
                {
                    tracing::debug!("a create waited past the read timeout; sending it again");
                }
                Err((e, sent)) => {
                    if !failover.again(&self.notice, &e, sent, true).await {
                        return Err(e);
                    }
                }
            }
        }
    }
}

impl Client {
    /// How long [`Client::create_session`] keeps sending a create the manager did not
    /// answer (or answered that it is switching managers): twice what other requests wait,
    /// as a create is always safe to send again.
    pub fn create_retry_for(&self) -> std::time::Duration {
        self.config.failover_wait * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use bai_api::sessions::CreateStatus;

    #[test]
    fn body_has_the_official_fields() {
        let mut cfg = Config::new("http://127.0.0.1:8090", "AK", "SK").unwrap();
        cfg.vfolder_mounts = vec!["data".into()];
        let c = Client::new(cfg).unwrap();
        let mut r = CreateSession::new("python");
        r.name = Some("pysdk-6f39a1b61d".into());
        r.resources
            .insert("mem".into(), NumberOrText::Text("4096m".into()));
        r.resource_opts
            .insert("shmem".into(), NumberOrText::Text("64m".into()));
        r.environ.insert("A".into(), "b=c".into());
        r.session_type = SessionType::Batch;
        r.startup_command = Some("ls".into());
        r.batch_timeout = Some("30".into());
        r.dependencies = Some(vec![]);
        r.preopen_ports = Some(vec![8080]);
        let b = serde_json::to_value(c.create_body(&r)).unwrap();
        assert_eq!(b["name"], "pysdk-6f39a1b61d");
        assert_eq!(b["type"], "batch");
        assert_eq!(b["startupCommand"], "ls");
        assert_eq!(b["batch_timeout"], "30");
        assert_eq!(b["config"]["resources"], json!({"mem": "4096m"}));
        assert_eq!(b["config"]["resource_opts"], json!({"shmem": "64m"}));
        assert_eq!(b["config"]["environ"], json!({"A": "b=c"}));
        assert_eq!(b["config"]["mounts"], json!(["data"]));
        assert_eq!(b["config"]["preopen_ports"], json!([8080]));
        assert!(b["config"].get("scalingGroup").is_none());
        assert_eq!(b["dependencies"], json!([]));
        assert_eq!(b["enqueueOnly"], false);
        assert_eq!(b["maxWaitSeconds"], 0);
        assert_eq!(b["reuseIfExists"], true);
        assert_eq!(b["domain"], "default");
        assert_eq!(b["group"], "default");
        assert_eq!(b["clusterSize"], 1);
        assert_eq!(b["clusterMode"], "single-node");
        // bai's own fields stay out unless used.
        assert!(b.get("priority").is_none());
        assert!(b.get("count").is_none());
        assert!(b["config"].get("preset").is_none());
        assert!(b["config"].get("agentList").is_none());
        r.count = Some(3);
        r.agent = Some("i-1".into());
        let b = serde_json::to_value(c.create_body(&r)).unwrap();
        assert_eq!(b["count"], 3);
        assert_eq!(b["config"]["agentList"], json!(["i-1"]));
    }

    #[test]
    fn replies_are_read_as_the_wire_type() {
        let r: CreateReply = typed(
            "create",
            json!({"sessionId": "u", "sessionName": "s", "status": "PENDING", "created": false,
                    "servicePorts": [{"name": "sshd", "protocol": "tcp", "ports": [2200]}]}),
        )
        .unwrap();
        assert_eq!(r.status, CreateStatus::Pending);
        assert!(!r.created);
        assert_eq!(r.service_ports[0].name, "sshd");
        let e = typed::<CreateReply>("create", json!({"sessionId": "u-1"})).unwrap_err();
        assert!(e.to_string().contains("create answer"), "{e}");
    }
}
