//! An in-process manager for the tests of what the HTTP edge makes of a session request
//! before the lifecycle plans it: an in-memory store, one dummy agent and the real
//! `bai_manager::start`. The lifecycle's own behaviour is tested beside it, with no HTTP
//! and no manager (`bai-control/tests/harness`).

#![allow(dead_code)]

use bai_agent::{DummyAgent, DummyAgentConfig};
use bai_control::lifecycle::create::CreatePlan;
use bai_core::agent::AgentRpc;
use bai_ground::config::ManagerConfig;
use bai_ground::identity::Caller;
use bai_manager::Manager;
use bai_store::Store;
use serde_json::Value;
use std::sync::Arc;

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
    Arc::new(bai_store::testing::store_with_user().expect("a store for tests with a user"))
}

/// The dummy agent of these tests: 8 cores, 16 GiB, the python image, no start delay.
pub fn agent() -> DummyAgent {
    DummyAgent::new(DummyAgentConfig::sized("dummy-a", 8, IMAGE))
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
        let (store, agent) = (store(), agent());
        let rpc: Arc<dyn AgentRpc> = Arc::new(agent.clone());
        let started = bai_manager::start(store.clone(), config(), vec![rpc])
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
}
