//! A create request becomes a [`SessionSpec`] here, once, at the HTTP edge: every spelling,
//! the defaults, the resource preset and the limits that need no server state are applied
//! by this pure conversion, so the lifecycle only checks what needs the store.

use super::create::{CreateConfig, CreateRequest, ListOrText, NumberOrText};
use bai_core::Problem;
use bai_core::accel::AccelSlot;
use bai_core::cluster::ClusterMode;
use bai_core::name::SessionName;
use bai_core::resources::{ResourceRequest, ResourceSlots};
use bai_core::spec::{
    DEFAULT_PRIORITY, FolderRef, MAX_COUNT, MAX_PREOPEN_PORTS, MountAsk, SessionSpec, check_env,
};
use bai_core::status::SessionType;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;

pub use bai_core::amount::resource_ask;

/// What the conversion is given from the server, read before it.
#[derive(Debug, Clone)]
pub struct SpecContext<'a> {
    /// The preset the request names ([`CreateRequest::preset_name`]): its slots and shared
    /// memory.
    pub preset: Option<(&'a ResourceSlots, Option<u64>)>,
    /// The accelerator slots the cluster offers.
    pub accel_slots: &'a [AccelSlot],
    /// Container ports the built-in apps take.
    pub reserved_ports: &'a [u16],
    /// Now, for a `starts_at` given as a delay.
    pub now: DateTime<Utc>,
}

impl CreateRequest {
    /// The resource preset asked for (`config.preset` first).
    pub fn preset_name(&self) -> Option<&str> {
        self.config
            .as_ref()
            .and_then(|c| c.preset.as_deref())
            .or(self.preset.as_deref())
    }

    /// The request as a [`SessionSpec`], or the first thing wrong with it.
    pub fn to_spec(&self, ctx: &SpecContext<'_>) -> Result<SessionSpec, Problem> {
        let no_config = CreateConfig::default();
        let config = self.config.as_ref().unwrap_or(&no_config);
        let session_type = self.session_type.unwrap_or(SessionType::Interactive);
        if session_type == SessionType::System {
            return Err(Problem::invalid(
                "system sessions are made by the platform itself (SFTP to a folder: `bai vfolder sftp NAME` or the Data page's SFTP); create an interactive, batch or inference session",
            ));
        }
        let name = self
            .name
            .as_deref()
            .map(SessionName::parse)
            .transpose()
            .map_err(|e| Problem::invalid(e.to_string()))?;
        if session_type == SessionType::Batch && self.startup_command.is_none() {
            return Err(Problem::invalid(
                "a batch session needs a startup command (startupCommand / --startup-command)",
            ));
        }
        let batch_timeout_secs = self
            .batch_timeout
            .as_ref()
            .map(|t| bai_core::units::duration_secs(&t.to_string()))
            .transpose()
            .map_err(|v| {
                Problem::invalid(format!(
                    "batch_timeout {v} is not a duration: use seconds or 30s, 5m, 2h"
                ))
            })?
            .flatten()
            .filter(|s| *s > 0);
        if batch_timeout_secs.is_some() && session_type != SessionType::Batch {
            return Err(Problem::invalid(
                "batch_timeout applies only to batch sessions (--type batch)",
            ));
        }
        let requeue = self.requeue.unwrap_or(false);
        if requeue && session_type != SessionType::Batch {
            return Err(Problem::invalid(
                "requeue applies only to batch sessions (--type batch)",
            ));
        }
        let starts_at = match self.starts_at.as_deref() {
            Some(_) if session_type != SessionType::Batch => {
                return Err(Problem::invalid(
                    "starts_at applies only to batch sessions (--type batch)",
                ));
            }
            Some(s) => Some(parse_starts_at(s, ctx.now).map_err(Problem::invalid)?),
            None => None,
        };
        let (cluster_mode, cluster_size) = cluster_shape(self)?;
        let mut spec = SessionSpec::new(self.image.clone(), resources(config, ctx)?);
        spec.owner_access_key = self.owner_access_key.clone();
        spec.name = name;
        spec.session_type = session_type;
        spec.startup_command = self.startup_command.clone();
        spec.bootstrap_script = self.bootstrap_script.clone();
        spec.batch_timeout_secs = batch_timeout_secs;
        spec.requeue = requeue;
        spec.starts_at = starts_at;
        spec.project = self.group.clone().unwrap_or_else(|| "default".into());
        spec.domain = self.domain.clone().unwrap_or_else(|| "default".into());
        spec.scaling_group = config
            .scaling_group
            .clone()
            .or_else(|| self.scaling_group.clone());
        spec.cluster_mode = cluster_mode;
        spec.cluster_size = cluster_size;
        spec.agent = agent(config.agent_list.as_ref())?;
        spec.environ = environ(config)?;
        spec.mounts = mounts(config);
        spec.preopen_ports = preopen_ports(config.preopen_ports.as_ref(), ctx.reserved_ports)?;
        spec.dependencies = self.dependencies.clone().unwrap_or_default();
        spec.priority = match self.priority {
            None => DEFAULT_PRIORITY,
            Some(p @ 0..=100) => p,
            Some(p) => {
                return Err(Problem::invalid(format!(
                    "priority {p} is out of range: use 0 to 100"
                )));
            }
        };
        spec.tag = self.tag.clone();
        spec.enqueue_only = self.enqueue_only.unwrap_or(false);
        spec.max_wait_secs = self.max_wait_seconds.unwrap_or(0);
        spec.reuse_if_exists = self.reuse_if_exists.unwrap_or(true);
        spec.count = match self.count {
            None => 1,
            Some(n @ 1..=MAX_COUNT) => n,
            Some(n) => {
                return Err(Problem::invalid(format!(
                    "count {n} is out of range: create 1 to {MAX_COUNT} sessions at once"
                )));
            }
        };
        Ok(spec)
    }
}

/// `resources` and `resource_opts.shmem`, the preset filling in what they leave out.
fn resources(config: &CreateConfig, ctx: &SpecContext<'_>) -> Result<ResourceRequest, Problem> {
    let mut ask = resource_ask(config.resources.as_ref(), config.resource_opts.as_ref());
    if let Some((slots, shmem)) = ctx.preset {
        ask = ask.with_preset(slots, shmem, ctx.accel_slots);
    }
    ResourceRequest::parse(&ask, ctx.accel_slots).map_err(|e| Problem::invalid(e.to_string()))
}

/// `clusterSize` (1 to bai's bound) and `clusterMode`. The owner's policy is the lifecycle's.
fn cluster_shape(r: &CreateRequest) -> Result<(ClusterMode, u32), Problem> {
    let size = bai_core::cluster::check_size(r.cluster_size.unwrap_or(1))?;
    Ok((r.cluster_mode.unwrap_or_default(), size))
}

/// "Select Agent" (`config.agentList`): one agent, or none.
fn agent(asked: Option<&ListOrText<String>>) -> Result<Option<String>, Problem> {
    let list: Vec<&str> = match asked {
        None => return Ok(None),
        Some(ListOrText::List(a)) => a.iter().map(String::as_str).collect(),
        Some(ListOrText::Text(s)) => s
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
    };
    match list.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.to_string())),
        _ => Err(Problem::invalid(
            "give one agent in agentList: it holds a single-node session, or main1 of a multi-node one",
        )),
    }
}

fn environ(config: &CreateConfig) -> Result<BTreeMap<String, String>, Problem> {
    let env = config.environ.clone().unwrap_or_default();
    for (k, v) in &env {
        check_env(k, v).map_err(Problem::invalid)?;
    }
    Ok(env)
}

/// `mounts` (names) and `mount_ids` (ids), with `mount_map` / `mount_id_map` targets.
fn mounts(config: &CreateConfig) -> Vec<MountAsk> {
    let target = |map: &Option<BTreeMap<String, String>>, key: &str| {
        map.as_ref().and_then(|m| m.get(key)).cloned()
    };
    let by_name = config.mounts.iter().flatten().map(|n| MountAsk {
        folder: FolderRef::Name(n.clone()),
        target: target(&config.mount_map, n),
    });
    let by_id = config.mount_ids.iter().flatten().map(|id| MountAsk {
        folder: FolderRef::Id(id.clone()),
        target: target(&config.mount_id_map, id),
    });
    by_name.chain(by_id).collect()
}

/// `config.preopen_ports`: a list of ports (numbers or numeric strings), or one string with
/// ports separated by commas or spaces; each 1024–65535, no duplicates, none a built-in
/// app's, at most [`MAX_PREOPEN_PORTS`].
pub fn preopen_ports(
    v: Option<&ListOrText<NumberOrText>>,
    reserved: &[u16],
) -> Result<Vec<u16>, Problem> {
    let items: Vec<String> = match v {
        None => return Ok(Vec::new()),
        Some(ListOrText::Text(s)) => s
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(str::to_string)
            .collect(),
        Some(ListOrText::List(a)) => a.iter().map(|p| p.to_string().trim().to_string()).collect(),
    };
    let mut ports: Vec<u16> = Vec::new();
    for item in items {
        let port = match item.parse::<u32>() {
            Ok(p @ 1024..=65535) => p as u16,
            _ => {
                return Err(Problem::invalid(format!(
                    "preopen port {item:?} is invalid: use numbers from 1024 to 65535"
                )));
            }
        };
        if ports.contains(&port) {
            return Err(Problem::invalid(format!(
                "preopen port {port} is given twice"
            )));
        }
        if reserved.contains(&port) {
            return Err(Problem::invalid(format!(
                "preopen port {port} is taken by a built-in app or the session's runner; choose \
                 another"
            )));
        }
        ports.push(port);
    }
    if ports.len() > MAX_PREOPEN_PORTS {
        return Err(Problem::invalid(format!(
            "at most {MAX_PREOPEN_PORTS} preopen ports may be given"
        )));
    }
    Ok(ports)
}

/// `starts_at`: an ISO-8601 time (naive = UTC) or a delay like `10s`, `5m` from `now`.
pub fn parse_starts_at(s: &str, now: DateTime<Utc>) -> Result<DateTime<Utc>, String> {
    let s = s.trim();
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Ok(t.with_timezone(&Utc));
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
    if let Ok(Some(secs)) = bai_core::units::duration_secs(s) {
        return Ok(now + chrono::Duration::seconds(secs));
    }
    Err(format!(
        "starts_at {s:?} is neither an ISO-8601 time (2026-11-22T10:00:00+00:00) nor a delay (30s, 5m, 2h)"
    ))
}

#[cfg(test)]
#[path = "spec_tests.rs"]
mod tests;
