//! An in-process manager for lifecycle tests: an in-memory store, the scriptable dummy agent
//! (fails, hangs, exits, reports OOM on command) and the real `bai_manager::start`, on a
//! tokio clock the test pauses, so a 120-second creation timeout passes as soon as nothing
//! else can happen.

#![allow(dead_code)]

use bai_agent::{CreateStep, DummyAgent, DummyAgentConfig};
use bai_control::lifecycle::create::{CreatePlan, create};
use bai_control::lifecycle::terminate::terminate;
use bai_core::agent::AgentRpc;
use bai_core::status::SessionStatus as S;
use bai_ground::config::ManagerConfig;
use bai_ground::identity::Caller;
use bai_manager::Manager;
use bai_store::{SessionRow, Store, UserRow};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

/// A `POST /session` body read as the HTTP edge reads it, then planned.
pub fn plan(
    lifecycle: &bai_control::lifecycle::Lifecycle,
    caller: &Caller,
    body: &Value,
) -> Result<CreatePlan, bai_core::Problem> {
    let body = bai_api::sessions::read_create(&serde_json::to_vec(body).expect("json"))?;
    let spec = bai_manager::api::session_spec::spec_of(lifecycle, &body.request)?;
    bai_control::lifecycle::create::plan_spec(lifecycle, caller, &spec)
}

pub const IMAGE: &str = "bai/python:latest";

/// A started manager with one dummy agent.
pub struct Harness {
    pub m: Arc<Manager>,
    pub agent: DummyAgent,
    pub store: Arc<Store>,
    pub user: Caller,
}

/// A store with one user (`AKUSER`, member of the default project).
pub fn store() -> Arc<Store> {
    let store = Arc::new(Store::open_for_tests().expect("in-memory store"));
    store
        .create_user_with_keypair(
            &UserRow {
                id: "u1".into(),
                email: "user@bai.test".into(),
                role: "user".into(),
            },
            "AKUSER",
            "secret",
            false,
        )
        .expect("user");
    store
}

/// The dummy agent of these tests: 8 cores, 16 GiB, the python image, no start delay.
pub fn agent() -> DummyAgent {
    agent_with("dummy-a", 8)
}

/// A dummy agent `id` of `cores` cores and 16 GiB, with the python image.
pub fn agent_with(id: &str, cores: u64) -> DummyAgent {
    DummyAgent::new(DummyAgentConfig {
        id: id.into(),
        scaling_group: "default".into(),
        capacity: bai_core::ResourceSlots {
            cpu_milli: cores * 1000,
            mem: 16 << 30,
            accel: Default::default(),
        },
        start_delay: Duration::ZERO,
        images: vec![IMAGE.into()],
    })
}

pub fn config() -> ManagerConfig {
    ManagerConfig {
        create_timeout_secs: 120,
        schedule_tick_ms: 50,
        ..Default::default()
    }
}

impl Harness {
    pub async fn start() -> Harness {
        Self::start_on(store(), agent(), config()).await
    }

    /// A manager (a new one, as after a restart) on an existing store and agent.
    pub async fn start_on(store: Arc<Store>, agent: DummyAgent, config: ManagerConfig) -> Harness {
        Self::start_on_many(store, vec![agent], config).await
    }

    /// A manager with several agents (`agent` is the first).
    pub async fn start_on_many(
        store: Arc<Store>,
        agents: Vec<DummyAgent>,
        config: ManagerConfig,
    ) -> Harness {
        let agent = agents.first().cloned().expect("an agent");
        let rpcs: Vec<Arc<dyn AgentRpc>> = agents
            .into_iter()
            .map(|a| Arc::new(a) as Arc<dyn AgentRpc>)
            .collect();
        let started = bai_manager::start(store.clone(), config, rpcs)
            .await
            .expect("manager starts");
        Harness {
            m: started.manager,
            agent,
            store,
            user: Caller {
                access_key: "AKUSER".into(),
                user_id: "u1".into(),
                email: "user@bai.test".into(),
                is_admin: false,
            },
        }
    }

    /// Creates a session as the user would (`POST /session` with `enqueueOnly`).
    pub fn create(&self, name: &str, extra: Value) -> SessionRow {
        let mut body = json!({
            "name": name,
            "image": IMAGE,
            "enqueueOnly": true,
            "config": {"resources": {"cpu": 1, "mem": "1g"}},
        });
        if let (Some(b), Some(e)) = (body.as_object_mut(), extra.as_object()) {
            for (k, v) in e {
                b.insert(k.clone(), v.clone());
            }
        }
        let p = plan(&self.m.lifecycle, &self.user, &body).expect("valid request");
        match create(&self.m.lifecycle, &p).expect("created") {
            bai_control::lifecycle::create::Created::New(row) => row,
            bai_control::lifecycle::create::Created::Reused(_)
            | bai_control::lifecycle::create::Created::Retried(_) => panic!("{name} was reused"),
        }
    }

    pub fn row(&self, id: Uuid) -> SessionRow {
        self.store.session(id).expect("store").expect("session")
    }

    /// Waits (on lifecycle events, not on time) until the session satisfies `done`.
    pub async fn wait(
        &self,
        id: Uuid,
        what: &str,
        done: impl Fn(&SessionRow) -> bool,
    ) -> SessionRow {
        let mut rx = self.m.bus.subscribe();
        // A bound on the paused clock: it passes only once nothing else can happen.
        let waited = tokio::time::timeout(Duration::from_secs(3600), async {
            loop {
                let row = self.row(id);
                if done(&row) {
                    return row;
                }
                let _ = tokio::time::timeout(Duration::from_millis(200), rx.recv()).await;
            }
        })
        .await;
        match waited {
            Ok(row) => row,
            Err(_) => panic!(
                "{what}: still {:?} ({:?})",
                self.row(id).state.status,
                self.row(id).state.status_info
            ),
        }
    }

    pub async fn wait_status(&self, id: Uuid, want: S) -> SessionRow {
        self.wait(id, &format!("waiting for {want}"), |r| {
            r.state.status == want
        })
        .await
    }

    pub async fn terminate(&self, id: Uuid) -> S {
        terminate(
            &self.m.lifecycle,
            id,
            bai_core::Reason::UserRequested,
            bai_core::SessionResult::Undefined,
        )
        .await
        .expect("terminate")
    }

    /// A user's `rm` running beside the test, as a task to await.
    pub fn spawn_terminate(
        &self,
        id: Uuid,
    ) -> tokio::task::JoinHandle<Result<S, bai_core::Problem>> {
        let m = self.m.clone();
        tokio::spawn(async move {
            terminate(
                &m.lifecycle,
                id,
                bai_core::Reason::UserRequested,
                bai_core::SessionResult::Undefined,
            )
            .await
        })
    }

    pub fn script(&self, steps: impl IntoIterator<Item = CreateStep>) {
        self.agent.script_create(steps);
    }

    /// The kinds of the session's persisted events, in order.
    pub fn events(&self, id: Uuid) -> Vec<String> {
        self.store
            .events_of(id)
            .expect("events")
            .into_iter()
            .map(|e| e.kind.as_str().to_string())
            .collect()
    }

    /// How many times the session entered `status` according to its history records.
    pub fn entered(&self, id: Uuid, status: S) -> usize {
        self.store
            .history(id)
            .expect("history")
            .iter()
            .filter(|h| h.to_status == Some(status) && h.from_status != Some(status))
            .count()
    }
}
