//! What `GET /session/{reference}` (and GraphQL's `compute_session`) shows of a session:
//! a [`SessionInfo`] built from its row, its kernels and what the manager knows live.

use crate::state::Manager;
use bai_api::sessions::info::text;
use bai_api::sessions::{Dependency, Kernel, MountMode, Network, SessionInfo};
use bai_core::resources::format_cpu;
use bai_store::{SessionRow, SubKernel};

/// Everything known about a session, in Backend.AI's field names.
pub fn session_info(m: &Manager, row: &SessionRow) -> SessionInfo {
    let occupies = row.state.status.occupies_resources();
    let occupying = text::slots(Some(&row.spec.requested_slots).filter(|_| occupies));
    let resource_opts = text::resource_opts(row.spec.shmem);
    let idle_checks =
        bai_ground::stats::view::idle_checks(bai_ground::stats::view::reports(&m.readings, row));
    let live_stat = bai_ground::stats::view::live_stat(&m.readings, row);
    // An ended session's counters live in the store (the manager forgot them).
    let last_stat = if row.state.status.is_terminal() {
        m.store.last_stat(row.id).ok().flatten()
    } else {
        None
    };
    let subs = if row.spec.cluster_size > 1 {
        m.store.sub_kernels(row.id).unwrap_or_default()
    } else {
        Vec::new()
    };
    let kernel_slots = row.spec.kernel_slots();
    let kernel_occupying = text::slots(Some(&kernel_slots).filter(|_| occupies));
    let kernels: Vec<Kernel> = bai_control::lifecycle::kernels::places(row, &subs)
        .iter()
        .map(|p| {
            let sub = subs.iter().find(|k| k.id == p.kernel_id);
            let main = sub.is_none();
            let (agent, container) = match sub {
                Some(k) => (k.agent_id.clone(), k.container_id.clone()),
                None => (row.state.agent_id.clone(), row.state.container_id.clone()),
            };
            Kernel {
                id: p.kernel_id.to_string(),
                row_id: p.kernel_id.to_string(),
                session_id: row.id.to_string(),
                cluster_role: p.role.as_str().to_string(),
                cluster_idx: p.idx,
                local_rank: p.local_rank,
                cluster_hostname: p.hostname.clone(),
                image: row.spec.image.clone(),
                image_reference: row.spec.image.clone(),
                registry: "local".into(),
                architecture: std::env::consts::ARCH.into(),
                status: row.state.status,
                status_info: row.state.status_info.clone(),
                status_data: "{}".into(),
                status_changed: row.state.status_changed.clone(),
                created_at: row.created_at.clone(),
                terminated_at: row.state.terminated_at.clone(),
                agent_id: agent.clone(),
                agent,
                container_id: container,
                exit_code: if main {
                    row.state.exit_code
                } else {
                    sub.and_then(|k| k.exit_code)
                },
                resource_opts: resource_opts.clone(),
                occupied_slots: kernel_occupying.clone(),
                preopen_ports: if main {
                    row.spec.preopen_ports.clone()
                } else {
                    Vec::new()
                },
                live_stat: live_stat.clone().filter(|_| main),
                last_stat: last_stat.clone().filter(|_| main),
            }
        })
        .collect();
    let agents = agents_of(row, &subs);
    let network = network_of(m, row, last_stat.as_deref());
    SessionInfo {
        network,
        preopen_ports: row.spec.preopen_ports.clone(),
        id: row.id.to_string(),
        session_id: row.id.to_string(),
        row_id: row.id.to_string(),
        name: row.name.clone(),
        session_name: row.name.clone(),
        kind: row.spec.session_type,
        session_type: row.spec.session_type,
        image: row.spec.image.clone(),
        image_references: vec![row.spec.image.clone()],
        architecture: std::env::consts::ARCH.into(),
        tag: row.spec.tag.clone(),
        priority: row.spec.priority,
        status: row.state.status,
        status_info: row.state.status_info.clone(),
        status_data: text::status_data(row.state.exit_code),
        status_changed: row.state.status_changed.clone(),
        status_history: row.state.status_history.clone(),
        result: row.state.result,
        exit_code: row.state.exit_code,
        created_at: row.created_at.clone(),
        terminated_at: row.state.terminated_at.clone(),
        starts_at: row.spec.starts_at.clone(),
        batch_timeout: row.spec.batch_timeout,
        startup_command: row.spec.startup_command.clone(),
        domain_name: row.spec.domain_name.clone(),
        group_name: row.spec.group_name.clone(),
        group_id: row.spec.group_name.clone(),
        scaling_group: row.spec.scaling_group.clone(),
        access_key: row.spec.access_key.clone(),
        user_id: row.spec.user_id.clone(),
        user_email: m
            .store
            .keypair(&row.spec.access_key)
            .ok()
            .flatten()
            .map(|k| k.email),
        main_kernel_id: row.main_kernel_id.to_string(),
        cluster_mode: row.spec.cluster_mode,
        cluster_size: row.spec.cluster_size,
        egress: row.state.egress.clone(),
        agent: row.state.agent_id.clone(),
        agent_ids: agents.clone(),
        agents,
        container_id: row.state.container_id.clone(),
        requested_slots: row.spec.requested_slots.to_wire().to_string(),
        occupying_slots: occupying.clone(),
        occupied_slots: occupying,
        resource_opts,
        shmem: row.spec.shmem,
        cpu: format_cpu(row.spec.requested_slots.cpu_milli),
        mem: row.spec.requested_slots.mem,
        environ: row.spec.environ.clone(),
        idle_checks: serde_json::to_string(&idle_checks).unwrap_or_else(|_| "{}".into()),
        vfolder_mounts: row
            .spec
            .mounts
            .iter()
            .map(|x| x.vfolder_id.to_string())
            .collect(),
        mounts: row
            .spec
            .mounts
            .iter()
            .map(|x| {
                let mode = if x.read_only {
                    MountMode::Ro
                } else {
                    MountMode::Rw
                };
                (x.name.clone(), x.kernel_path.clone(), mode)
            })
            .collect(),
        service_ports: "[]".into(),
        live_stat,
        last_stat,
        containers: kernels.clone(),
        kernels,
        dependencies: row
            .spec
            .dependencies
            .iter()
            .map(|d| Dependency {
                id: d.to_string(),
                name: m.store.session(*d).ok().flatten().map(|r| r.name),
            })
            .collect(),
        designated_agent: row.spec.designated_agent.clone(),
        pending: if row.state.status == bai_core::status::SessionStatus::Pending {
            m.scheduler.pending_view(row.id)
        } else {
            None
        },
    }
}

/// Every agent holding a kernel (a multi-node session's are several), main1's first.
fn agents_of(row: &SessionRow, subs: &[SubKernel]) -> Vec<String> {
    let mut agents: Vec<String> = row.state.agent_id.iter().cloned().collect();
    for k in subs {
        if let Some(a) = &k.agent_id
            && !agents.contains(a)
        {
            agents.push(a.clone());
        }
    }
    agents
}

/// The session's app traffic: live from the proxy, or as kept when it ended.
fn network_of(m: &Manager, row: &SessionRow, last_stat: Option<&str>) -> Network {
    let kept = || text::kept_network(last_stat?);
    m.traffic
        .get(row.id)
        .map(|t| t.network())
        .or_else(kept)
        .unwrap_or(Network {
            rx_bytes: 0,
            tx_bytes: 0,
            last_activity: None,
        })
}
