//! Creating a session: validate everything up front, then store it PENDING.
//! Nothing is half-created: a bad request is answered with a problem and writes nothing.

use super::Lifecycle;
use crate::identity::Caller;
use bai_core::Problem;
use bai_core::agent::Mount;
use bai_core::cluster::ClusterMode;
use bai_core::name::SessionName;
use bai_core::resources::{ResourceRequest, format_bytes, format_cpu};
use bai_core::status::SessionType;
use bai_store::{NewSession, SessionRow};

use super::admit::{
    apply_preset, check_pending_limit, check_project, check_session_type, cluster_shape,
    designated_agent, parse_count, parse_preopen_ports, resolve_dependencies, resolve_group,
};
use super::mounts::resolve_mounts;
use bai_api::sessions::{CreateConfig, CreateRequest, NumberOrText};
use serde_json::Value;
use std::collections::BTreeMap;
use uuid::Uuid;

/// A validated create request.
#[derive(Debug, Clone)]
pub struct CreatePlan {
    pub session: NewSession,
    pub enqueue_only: bool,
    pub max_wait_secs: u64,
    pub reuse_if_exists: bool,
    /// How many sessions to create from this request ("Sessions: N").
    pub count: u32,
    /// The request's `Idempotency-Key` (set by the API after planning).
    pub idempotency: Option<super::idempotent::IdemKey>,
}

/// Parses a duration: a number of seconds, or a human duration (`90s`, `5m`, `1h30m`, `1d`;
/// [`bai_core::parse_duration`]).
pub fn parse_duration_secs(v: &Value) -> Result<Option<i64>, String> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) => n
            .as_f64()
            .filter(|f| f.is_finite() && *f >= 0.0)
            .map(|f| Some(f.round() as i64))
            .ok_or_else(|| n.to_string()),
        Value::String(s) if s.trim().is_empty() => Ok(None),
        Value::String(s) => bai_core::parse_duration(s)
            .map_err(|_| s.trim().to_string())
            .and_then(|d| i64::try_from(bai_core::units::round_secs(d)).map_err(|_| s.to_string()))
            .map(Some),
        other => Err(other.to_string()),
    }
}

/// Parses `starts_at`: an ISO-8601 time (naive = UTC) or a delay like `10s`, `5m`.
pub fn parse_starts_at(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    let s = s.trim();
    if let Ok(t) = chrono::DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&chrono::Utc));
    }
    for fmt in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M:%S",
        "%Y-%m-%d %H:%M:%S",
    ] {
        if let Ok(t) = chrono::NaiveDateTime::parse_from_str(s, fmt) {
            return Ok(t.and_utc());
        }
    }
    if let Ok(Some(secs)) = parse_duration_secs(&Value::String(s.to_string())) {
        return Ok(chrono::Utc::now() + chrono::Duration::seconds(secs));
    }
    Err(format!(
        "starts_at {s:?} is neither an ISO-8601 time (2026-11-22T10:00:00+00:00) nor a delay (30s, 5m, 2h)"
    ))
}

/// Environment names the platform sets in every kernel (`BAI_KERNEL_ID`,
/// `BAI_KRUNNER_SOCKET`, …); a user's value could cut the agent off its kernel.
pub const RESERVED_ENV_PREFIX: &str = "BAI_";

fn valid_env_name(k: &str) -> bool {
    let mut chars = k.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Reads a `POST /session` body in any spelling clients use, naming a field that does not
/// read.
pub fn read_request(body: &Value) -> Result<CreateRequest, Problem> {
    if !body.is_object() {
        return Err(Problem::invalid("the request body must be a JSON object"));
    }
    let body = bai_api::sessions::canonical_create_body(body.clone());
    if body.get("image").is_none() {
        return Err(Problem::invalid(
            "no image given: name an image or alias, e.g. `python`",
        ));
    }
    bai_api::read::from_value(body).map_err(|e| Problem::invalid(e.to_string()))
}

/// Validates a `POST /session` body for `caller`.
pub fn plan(m: &Lifecycle, caller: &Caller, body: &Value) -> Result<CreatePlan, Problem> {
    let req = read_request(body)?;
    if req.session_type == Some(SessionType::System) {
        return Err(Problem::invalid(
            "system sessions are made by the platform itself (SFTP to a folder: `bai vfolder sftp NAME` or the Data page's SFTP); create an interactive, batch or inference session",
        ));
    }
    plan_request(m, caller, &req)
}

/// Validates a create request for `caller`.
pub fn plan_request(
    m: &Lifecycle,
    caller: &Caller,
    body: &CreateRequest,
) -> Result<CreatePlan, Problem> {
    let no_config = CreateConfig::default();
    let config = body.config.as_ref().unwrap_or(&no_config);

    // Owner: an admin may create a session for another keypair.
    let (access_key, user_id) = match body.owner_access_key.as_deref() {
        Some(ak) if ak != caller.access_key => {
            if !caller.is_admin {
                return Err(Problem::forbidden(
                    "only administrators can create sessions for another user (owner_access_key)",
                ));
            }
            let kp = m
                .store
                .keypair(ak)?
                .ok_or_else(|| Problem::invalid(format!("no keypair with access key {ak:?}")))?;
            (kp.access_key, kp.user_id)
        }
        _ => (caller.access_key.clone(), caller.user_id.clone()),
    };

    // Name.
    let name = match body.name.as_deref() {
        Some(n) => SessionName::parse(n).map_err(|e| Problem::invalid(e.to_string()))?,
        None => loop {
            let n = SessionName::random();
            if m.store
                .live_session_named(&access_key, n.as_str())?
                .is_none()
            {
                break n;
            }
        },
    };

    // Image.
    let image_req = body.image.as_str();
    let images = crate::images::Sources {
        store: &m.store,
        agents: &m.agents,
        registry: &m.registry,
    };
    let image =
        crate::images::resolve(&images, image_req, &user_id, caller.is_admin).ok_or_else(|| {
            Problem::image_not_found(
                image_req,
                &crate::images::known(&images, &user_id, caller.is_admin),
            )
        })?;

    // Type and its options.
    let session_type = body.session_type.unwrap_or(SessionType::Interactive);
    let startup_command = body.startup_command.clone();
    if session_type == SessionType::Batch && startup_command.is_none() {
        return Err(Problem::invalid(
            "a batch session needs a startup command (startupCommand / --startup-command)",
        ));
    }
    let batch_timeout = parse_duration_secs(
        &body
            .batch_timeout
            .as_ref()
            .map_or(Value::Null, |t| t.to_json()),
    )
    .map_err(|v| {
        Problem::invalid(format!(
            "batch_timeout {v} is not a duration: use seconds or 30s, 5m, 2h"
        ))
    })?
    .filter(|s| *s > 0);
    if batch_timeout.is_some() && session_type != SessionType::Batch {
        return Err(Problem::invalid(
            "batch_timeout applies only to batch sessions (--type batch)",
        ));
    }
    let starts_at = match body.starts_at.as_deref() {
        Some(s) => {
            if session_type != SessionType::Batch {
                return Err(Problem::invalid(
                    "starts_at applies only to batch sessions (--type batch)",
                ));
            }
            Some(
                parse_starts_at(s)
                    .map_err(Problem::invalid)?
                    .to_rfc3339_opts(chrono::SecondsFormat::Micros, false),
            )
        }
        None => None,
    };

    // Resource group: it must exist and be open to the owner; its agents bound the request.
    let project = body.group.as_deref().unwrap_or("default").to_string();
    check_project(m, &access_key, &project)?;
    let group_name = config
        .scaling_group
        .as_deref()
        .or(body.scaling_group.as_deref());
    let scaling_group = resolve_group(m, &access_key, &project, group_name)?;
    check_session_type(m, &scaling_group, session_type)?;

    // Resources: a preset first, then what is given explicitly on top of it.
    let mut resources = NumberOrText::json_map(config.resources.as_ref());
    let mut resource_opts = NumberOrText::json_map(config.resource_opts.as_ref());
    if let Some(preset) = config.preset.as_deref().or(body.preset.as_deref()) {
        apply_preset(m, preset, &mut resources, &mut resource_opts)?;
    }
    let accel = m.agents.accel_slots();
    let req = ResourceRequest::parse(&resources, &resource_opts, &accel)
        .map_err(|e| Problem::invalid(e.to_string()))?;
    // Resources are per kernel; a single-node session needs all of its kernels' on one node,
    // a multi-node session one kernel's on each node it uses.
    let (cluster_mode, cluster_size) =
        cluster_shape(m, &access_key, body.cluster_size, body.cluster_mode)?;
    let multi_node = cluster_mode == ClusterMode::MultiNode && cluster_size > 1;
    let total = req.slots.times(u64::from(cluster_size));
    let need = if multi_node {
        req.slots.clone()
    } else {
        total.clone()
    };
    let each = if multi_node {
        format!(" (each of its {cluster_size} kernels)")
    } else if cluster_size > 1 {
        format!(" ({cluster_size} kernels together)")
    } else {
        String::new()
    };
    let agents: Vec<_> = m
        .agents
        .all()
        .into_iter()
        .filter(|a| a.info().scaling_group == scaling_group)
        .collect();
    if agents.is_empty() {
        return Err(Problem::new(
            503,
            "no-agents",
            "No agents.",
            format!(
                "no agent node is registered in resource group {scaling_group:?}; start one with `baid up` or pick another group"
            ),
        ));
    }
    if !agents.iter().any(|a| need.fits_in(&a.info().capacity)) {
        // An accelerator no node of the group has enough of, named first.
        for (slot, want) in need.accel.iter().filter(|(_, v)| **v > 0) {
            let most = agents
                .iter()
                .map(|a| a.info().capacity.accel.get(slot).copied().unwrap_or(0))
                .max()
                .unwrap_or(0);
            if *want > most {
                let unit = bai_core::accel::display_unit(slot);
                let has = if most == 0 {
                    format!("no node of resource group {scaling_group:?} has any")
                } else {
                    format!(
                        "the most one node of resource group {scaling_group:?} has is {} {unit}",
                        format_cpu(most)
                    )
                };
                return Err(Problem::new(
                    400,
                    "resource-request-too-large",
                    "Too large resource request.",
                    format!(
                        "the session asks for {slot}={} ({unit}){each}, but {has}; ask for less",
                        format_cpu(*want)
                    ),
                )
                .with_code("session_create_unavailable"));
            }
        }
        let largest = agents
            .iter()
            .map(|a| a.info().capacity)
            .max_by_key(|c| (c.mem, c.cpu_milli))
            .unwrap_or_default();
        return Err(Problem::new(
            400,
            "resource-request-too-large",
            "Too large resource request.",
            format!(
                "the session asks for {} cores and {} of memory{each}, but the largest node of resource group {scaling_group:?} has {} cores and {}; ask for less",
                format_cpu(need.cpu_milli),
                format_bytes(need.mem),
                format_cpu(largest.cpu_milli),
                format_bytes(largest.mem)
            ),
        )
        .with_code("session_create_unavailable"));
    }
    if multi_node {
        super::admit::fits_group(&agents, &scaling_group, &total, cluster_size)?;
    }
    // The selected agent holds what one placement on it needs: the whole of a single-node
    // session, main1 of a multi-node one.
    let designated_agent =
        designated_agent(config.agent_list.as_ref(), &agents, &scaling_group, &need)?;

    // Environment.
    let mut environ = BTreeMap::new();
    if let Some(env) = &config.environ {
        for (k, v) in env {
            if !valid_env_name(k) {
                return Err(Problem::invalid(format!(
                    "environment variable name {k:?} is invalid: use letters, digits and '_', not starting with a digit"
                )));
            }
            if k.starts_with(RESERVED_ENV_PREFIX) {
                return Err(Problem::invalid(format!(
                    "environment variable name {k:?} is reserved: names starting with {RESERVED_ENV_PREFIX} steer the session's own runner"
                )));
            }
            if v.contains('\0') {
                return Err(Problem::invalid(format!(
                    "environment variable {k} contains a NUL byte"
                )));
            }
            environ.insert(k.clone(), v.clone());
        }
    }

    // Data folders.
    let mounts = resolve_mounts(m, &user_id, config)?;
    check_dotfiles(m, &user_id, &mounts)?;

    let preopen_ports = parse_preopen_ports(config.preopen_ports.as_ref())?;
    let dependencies =
        resolve_dependencies(m, &access_key, body.dependencies.as_deref().unwrap_or(&[]))?;
    check_pending_limit(m, &access_key)?;
    let priority = match body.priority {
        None => 10,
        Some(p @ 0..=100) => p,
        Some(p) => {
            return Err(Problem::invalid(format!(
                "priority {p} is out of range: use 0 to 100"
            )));
        }
    };
    Ok(CreatePlan {
        session: NewSession {
            id: Uuid::new_v4(),
            name: name.to_string(),
            access_key,
            user_id,
            domain_name: body.domain.as_deref().unwrap_or("default").to_string(),
            group_name: project,
            scaling_group,
            session_type,
            image,
            tag: body.tag.clone(),
            priority,
            starts_at,
            batch_timeout,
            startup_command,
            bootstrap_script: body.bootstrap_script.clone(),
            environ,
            requested_slots: total,
            shmem: req.shmem,
            main_kernel_id: Uuid::new_v4(),
            cluster_mode,
            sub_kernels: (1..cluster_size).map(|_| Uuid::new_v4()).collect(),
            designated_agent,
            dependencies,
            mounts,
            preopen_ports: preopen_ports.clone(),
        },
        enqueue_only: body.enqueue_only.unwrap_or(false),
        max_wait_secs: body.max_wait_seconds.unwrap_or(0),
        reuse_if_exists: body.reuse_if_exists.unwrap_or(true),
        count: parse_count(body.count)?,
        idempotency: None,
    })
}

/// A dotfile of the owner where a folder is mounted would be hidden by the folder: refused
/// at the create, as Backend.AI does, naming both.
fn check_dotfiles(m: &Lifecycle, user_id: &str, mounts: &[Mount]) -> Result<(), Problem> {
    if mounts.is_empty() {
        return Ok(());
    }
    let dotfiles = m.store.dotfiles(user_id).map_err(bai_core::Problem::from)?;
    for mt in mounts {
        let rel = mt
            .kernel_path
            .strip_prefix(bai_core::dotfile::HOME)
            .unwrap_or(&mt.kernel_path)
            .trim_start_matches('/');
        if let Some(d) = bai_core::dotfile::under_mount(&dotfiles, rel) {
            return Err(Problem::invalid(format!(
                "your dotfile {:?} lies where folder {:?} is mounted ({}): mount the folder elsewhere or move the dotfile",
                d.path, mt.name, mt.kernel_path
            )));
        }
    }
    Ok(())
}

/// Outcome of [`create`].
pub enum Created {
    New(SessionRow),
    /// A live session with that name exists and the client asked to reuse it.
    Reused(SessionRow),
    /// The request's idempotency key already made this session (a retry).
    Retried(SessionRow),
}

/// "Sessions: N": the planned session N times, named `NAME-1` … `NAME-N`, all PENDING in
/// one go; those that do not fit wait in the queue. Nothing is stored when a name is taken.
pub fn create_many(m: &Lifecycle, plan: &CreatePlan) -> Result<Vec<SessionRow>, Problem> {
    // A retry of a request that already made its sessions answers them again.
    if let Some(key) = &plan.idempotency
        && super::idempotent::existing(m, &plan.session.access_key, &key.nth(1))?.is_some()
    {
        let mut rows = Vec::new();
        for i in 1..=plan.count {
            if let Some(row) =
                super::idempotent::existing(m, &plan.session.access_key, &key.nth(i))?
            {
                rows.push(row);
            }
        }
        return Ok(rows);
    }
    let mut plans = Vec::new();
    for i in 1..=plan.count {
        let mut p = plan.clone();
        let name = format!("{}-{i}", plan.session.name);
        SessionName::parse(&name).map_err(|e| {
            Problem::invalid(format!(
                "with {} sessions the names get a suffix: {e}",
                plan.count
            ))
        })?;
        p.session.name = name;
        p.session.id = Uuid::new_v4();
        p.session.main_kernel_id = Uuid::new_v4();
        p.session.sub_kernels = (0..p.session.sub_kernels.len())
            .map(|_| Uuid::new_v4())
            .collect();
        p.reuse_if_exists = false;
        p.idempotency = plan.idempotency.as_ref().map(|k| k.nth(i));
        if m.store
            .live_session_named(&p.session.access_key, &p.session.name)?
            .is_some()
        {
            return Err(Problem::conflict(
                "session-already-exists",
                "The session already exists.",
                format!("you already have a live session named {:?}", p.session.name),
            ));
        }
        plans.push(p);
    }
    let mut rows = Vec::new();
    for p in &plans {
        let (Created::New(row) | Created::Reused(row) | Created::Retried(row)) = create(m, p)?;
        rows.push(row);
    }
    Ok(rows)
}

/// Stores a planned session PENDING (or finds the one to reuse) and wakes the scheduler.
pub fn create(m: &Lifecycle, plan: &CreatePlan) -> Result<Created, Problem> {
    let s = &plan.session;
    if let Some(key) = &plan.idempotency
        && let Some(row) = super::idempotent::existing(m, &s.access_key, key)?
    {
        return Ok(Created::Retried(row));
    }
    if let Some(existing) = m.store.live_session_named(&s.access_key, &s.name)? {
        if plan.reuse_if_exists && existing.image == s.image {
            return Ok(Created::Reused(existing));
        }
        return Err(Problem::conflict(
            "session-already-exists",
            "The session already exists.",
            format!(
                "you already have a live session named {:?}; pick another name or remove it first",
                s.name
            ),
        )
        .with_data(serde_json::json!({ "existingSessionId": existing.id.to_string() })));
    }
    let key = plan
        .idempotency
        .as_ref()
        .map(|k| (k.key.as_str(), k.digest.as_str()));
    let ev = match m.store.insert_session_keyed(s, key) {
        Ok(ev) => ev,
        Err(e) => {
            // Two retries raced: the one that lost finds the winner's session.
            if let Some(k) = &plan.idempotency
                && let Some(row) = super::idempotent::existing(m, &s.access_key, k)?
            {
                return Ok(Created::Retried(row));
            }
            return Err(bai_core::Problem::from(e));
        }
    };
    m.bus.publish(vec![ev]);
    m.bus.wake_scheduler();
    let row = m
        .store
        .session(s.id)?
        .ok_or_else(|| Problem::internal("session vanished right after insert"))?;
    Ok(Created::New(row))
}
