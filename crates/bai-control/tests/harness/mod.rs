//! The control plane in process, with no HTTP: a store (in memory; PostgreSQL's when the run
//! asks, `BAI_TEST_STORE=postgres`, as `bai_store::testing` says), the lifecycle, the
//! scheduler, the sweeper and the monitor wired as `bai_manager::start` wires them, and the
//! scriptable dummy agent (fails, hangs, exits, reports OOM on command). Tests run on a tokio
//! clock they pause, so a 120-second creation timeout passes as soon as nothing else can
//! happen.
//!
//! Sessions are asked for as the platform's own code asks ([`SessionSpec`], then
//! `plan_spec` and `create`), not as a `POST /session` body: what the HTTP edge makes of a
//! body is tested beside the edge (`bai-manager/tests`).

#![allow(dead_code)]

use bai_agent::{CreateStep, DummyAgent, DummyAgentConfig};
use bai_control::lifecycle::Lifecycle;
use bai_control::lifecycle::create::{CreatePlan, Created, create, plan_spec};
use bai_control::lifecycle::terminate::terminate;
use bai_control::monitor::Monitor;
use bai_control::scheduler::Scheduler;
use bai_core::agent::AgentRpc;
use bai_core::name::SessionName;
use bai_core::resources::{DEFAULT_SHMEM, ResourceRequest, ResourceSlots};
use bai_core::spec::SessionSpec;
use bai_core::status::SessionStatus as S;
use bai_ground::agents::Agents;
use bai_ground::apps::TrafficBook;
use bai_ground::bus::Bus;
use bai_ground::config::ManagerConfig;
use bai_ground::identity::Caller;
use bai_ground::metrics::Metrics;
use bai_ground::stats::Readings;
use bai_ground::storage::Storage;
use bai_store::{SessionRow, Store};
use std::sync::Arc;
use std::time::Duration;
use uuid::Uuid;

pub const IMAGE: &str = "bai/python:latest";

/// How long [`Plane::wait`] waits at most. On the paused clock it passes only once nothing
/// else can happen, so it bounds a test that would hang, not one that is slow.
pub const WAIT_CEILING: Duration = Duration::from_secs(3600);

/// A store with one user (`AKUSER`, member of the default project).
pub fn store() -> Arc<Store> {
    Arc::new(bai_store::testing::store_with_user().expect("a store for tests with a user"))
}

/// The dummy agent of these tests: 8 cores, 16 GiB, the python image, no start delay.
pub fn agent() -> DummyAgent {
    agent_with("dummy-a", 8)
}

/// A dummy agent `id` of `cores` cores and 16 GiB, with the python image.
pub fn agent_with(id: &str, cores: u64) -> DummyAgent {
    DummyAgent::new(DummyAgentConfig::sized(id, cores, IMAGE))
}

pub fn config() -> ManagerConfig {
    ManagerConfig {
        create_timeout_secs: 120,
        schedule_tick_ms: 50,
        ..Default::default()
    }
}

/// What a session asks for unless a test says otherwise: one named interactive session of
/// [`IMAGE`] with one core and 1 GiB, queued at once (`enqueueOnly`).
pub fn spec(name: &str) -> SessionSpec {
    let mut spec = SessionSpec::new(
        IMAGE,
        ResourceRequest {
            slots: ResourceSlots {
                cpu_milli: 1000,
                mem: 1 << 30,
                accel: Default::default(),
            },
            shmem: DEFAULT_SHMEM,
        },
    );
    spec.name = Some(SessionName::parse(name).expect("a valid session name"));
    spec.enqueue_only = true;
    spec
}

/// A started control plane with its dummy agents.
pub struct Plane {
    pub lifecycle: Arc<Lifecycle>,
    pub scheduler: Arc<Scheduler>,
    pub readings: Arc<Readings>,
    pub agents: Arc<Agents>,
    pub bus: Arc<Bus>,
    pub storage: Arc<Storage>,
    pub store: Arc<Store>,
    /// The first agent.
    pub agent: DummyAgent,
    pub user: Caller,
}

impl Plane {
    pub async fn start() -> Plane {
        Self::start_on(store(), agent(), config()).await
    }

    /// A control plane (a new one, as after a restart) on an existing store and agent.
    pub async fn start_on(store: Arc<Store>, agent: DummyAgent, config: ManagerConfig) -> Plane {
        Self::start_on_many(store, vec![agent], config).await
    }

    /// A control plane with several agents (`agent` is the first): each registered and
    /// watched, the store reconciled with what they run, then the scheduler, the sweeper and
    /// the monitor started.
    pub async fn start_on_many(
        store: Arc<Store>,
        agents: Vec<DummyAgent>,
        config: ManagerConfig,
    ) -> Plane {
        let first = agents.first().cloned().expect("an agent");
        let metrics = Arc::new(Metrics::default());
        let storage = Arc::new(
            config
                .storage
                .clone()
                .unwrap_or_else(|| Storage::local(&config.data_dir)),
        );
        let config = Arc::new(config);
        let registry = Arc::new(Agents::default());
        let bus = Arc::new(Bus::new(metrics.clone()));
        let readings = Arc::new(Readings::new(
            store.clone(),
            config.monitor.clone(),
            Arc::new(TrafficBook::default()),
        ));
        let lifecycle = Arc::new(Lifecycle::new(
            store.clone(),
            registry.clone(),
            bus.clone(),
            config.clone(),
            storage.clone(),
            Default::default(),
            readings.clone(),
        ));
        let scheduler = Arc::new(Scheduler::new(
            lifecycle.clone(),
            storage.clone(),
            metrics.clone(),
        ));
        for a in agents {
            let rpc: Arc<dyn AgentRpc> = Arc::new(a);
            let handle = registry
                .register(&store, rpc)
                .await
                .expect("the agent registers");
            bai_control::lifecycle::watch::spawn(lifecycle.clone(), handle);
        }
        bai_control::lifecycle::reconcile::reconcile(&lifecycle)
            .await
            .expect("reconciliation at start");
        bai_control::scheduler::spawn(scheduler.clone());
        bai_control::lifecycle::timeouts::spawn_sweeper(lifecycle.clone());
        bai_control::monitor::round::spawn(Arc::new(Monitor {
            readings: readings.clone(),
            agents: registry.clone(),
            lifecycle: lifecycle.clone(),
        }));
        Plane {
            lifecycle,
            scheduler,
            readings,
            agents: registry,
            bus,
            storage,
            store,
            agent: first,
            user: Caller {
                access_key: "AKUSER".into(),
                user_id: "u1".into(),
                email: "user@bai.test".into(),
                is_admin: false,
            },
        }
    }

    /// `spec` checked against the server's state and planned, as the user.
    pub fn plan(&self, spec: &SessionSpec) -> Result<CreatePlan, bai_core::Problem> {
        plan_spec(&self.lifecycle, &self.user, spec)
    }

    /// Creates a session of [`spec`]`(name)` changed by `edit`, as the user.
    pub fn create(&self, name: &str, edit: impl FnOnce(&mut SessionSpec)) -> SessionRow {
        let mut s = spec(name);
        edit(&mut s);
        let p = self.plan(&s).expect("a valid request");
        match create(&self.lifecycle, &p).expect("created") {
            Created::New(row) => row,
            Created::Reused(_) | Created::Retried(_) => panic!("{name} was reused"),
        }
    }

    pub fn row(&self, id: Uuid) -> SessionRow {
        self.store.session(id).expect("store").expect("session")
    }

    /// Waits until the session satisfies `done`: it looks again at every lifecycle event
    /// (and at least every 200 ms of the clock), up to [`WAIT_CEILING`].
    pub async fn wait(
        &self,
        id: Uuid,
        what: &str,
        done: impl Fn(&SessionRow) -> bool,
    ) -> SessionRow {
        let mut rx = self.bus.subscribe();
        let waited = tokio::time::timeout(WAIT_CEILING, async {
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
            Err(_) => {
                let row = self.row(id);
                panic!(
                    "{what}: still {:?} ({:?})",
                    row.state.status, row.state.status_info
                )
            }
        }
    }

    /// Waits until the session is in `want`.
    pub async fn wait_status(&self, id: Uuid, want: S) -> SessionRow {
        self.wait(id, &format!("waiting for {want}"), |r| {
            r.state.status == want
        })
        .await
    }

    pub async fn terminate(&self, id: Uuid) -> S {
        terminate(
            &self.lifecycle,
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
        let lifecycle = self.lifecycle.clone();
        tokio::spawn(async move {
            terminate(
                &lifecycle,
                id,
                bai_core::Reason::UserRequested,
                bai_core::SessionResult::Undefined,
            )
            .await
        })
    }

    /// What the first agent does with its next creations.
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

    /// How many persisted events of the session are of `kind`.
    pub fn count_events(&self, id: Uuid, kind: &str) -> usize {
        self.events(id).iter().filter(|e| *e == kind).count()
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
