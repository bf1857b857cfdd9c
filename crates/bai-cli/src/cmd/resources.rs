//! `bai resource-groups`, `bai presets` and the `bai admin resource-group |
//! preset | policy` commands.

use crate::args::{
    AdminGroupCmd, AdminPolicyCmd, AdminPresetCmd, AdminProjectCmd, GroupFields, PresetsArgs,
};
use crate::output::table;
use anyhow::{Result, anyhow};
use bai_api::resources::{
    Amount, GroupAccessChange, NewPreset, NewResourceGroup, NewResourcePolicy, ResourceGroup,
    ResourceGroupSettings, ResourceSlots, ResourceSlotsSpec,
};
use bai_client::Client;
use std::collections::BTreeMap;

/// `{"cpu": "2", "mem": "4294967296"}` → `cpu 2, mem 4 GiB`.
pub fn slots_text(s: &ResourceSlots) -> String {
    // The wire's "Infinity": nothing limits the slot.
    let word = |v: &str| {
        if v == "Infinity" {
            "unlimited".to_string()
        } else {
            v.to_string()
        }
    };
    let mem = match s.mem.parse::<u64>() {
        Ok(b) => bai_core::resources::format_bytes(b),
        Err(_) => word(&s.mem),
    };
    [format!("cpu {}", word(&s.cpu)), format!("mem {mem}")]
        .into_iter()
        .chain(
            s.accelerators
                .iter()
                .map(|(k, v)| format!("{k} {}", word(v))),
        )
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `bai presets` says where there is none yet.
const NO_PRESETS: &str = "No presets yet: an administrator adds them with `bai admin preset create NAME -r cpu=1 -r mem=2g`.";

/// `public` or `private`.
fn access_word(is_public: bool) -> &'static str {
    if is_public { "public" } else { "private" }
}

pub async fn list_groups(client: &Client, all: bool) -> Result<i32> {
    let list = client.resource_groups(all).await?;
    let rows: Vec<Vec<String>> = list
        .resource_groups
        .iter()
        .map(|g| {
            vec![
                g.name.clone(),
                wire_word(g.scheduler),
                wire_word(g.selector),
                access_word(g.is_public).into(),
                g.agents.len().to_string(),
                slots_text(&g.free),
                slots_text(&g.capacity),
                g.egress.summary(),
            ]
        })
        .collect();
    table(
        &[
            "Name",
            "Scheduler",
            "Selector",
            "Access",
            "Agents",
            "Free",
            "Capacity",
            "Egress",
        ],
        &rows,
    );
    if list
        .resource_groups
        .iter()
        .any(|g| g.egress.mode == bai_core::egress::EgressMode::Open)
    {
        println!("{OPEN_RISK}");
    }
    Ok(0)
}

/// A value's word on the wire (`fifo`, `round-robin`, …).
pub(super) fn wire_word<T: serde::Serialize>(v: T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        Ok(other) => other.to_string(),
        Err(_) => "-".into(),
    }
}

pub async fn presets(client: &Client, a: &PresetsArgs) -> Result<i32> {
    if !a.check {
        let list = client.presets().await?;
        let rows: Vec<Vec<String>> = list
            .presets
            .iter()
            .map(|p| {
                vec![
                    p.name.clone(),
                    slots_text(&p.resource_slots),
                    p.shared_memory.clone().unwrap_or_else(|| "-".into()),
                ]
            })
            .collect();
        if rows.is_empty() {
            println!("{NO_PRESETS}");
        } else {
            table(&["Name", "Resources", "Shared memory"], &rows);
        }
        return Ok(0);
    }
    let fits = client.check_presets(a.group.as_deref()).await?;
    let rows: Vec<Vec<String>> = fits
        .presets
        .iter()
        .map(|p| {
            vec![
                p.preset.name.clone(),
                slots_text(&p.preset.resource_slots),
                if p.allocatable { "yes" } else { "no" }.into(),
            ]
        })
        .collect();
    if rows.is_empty() {
        println!("{NO_PRESETS}");
    } else {
        table(&["Name", "Resources", "Fits now"], &rows);
    }
    println!();
    println!("resource group      : {}", fits.scaling_group);
    println!(
        "group free          : {}",
        slots_text(&fits.scaling_group_remaining)
    );
    println!("your limit          : {}", slots_text(&fits.keypair_limits));
    println!("you use             : {}", slots_text(&fits.keypair_using));
    Ok(0)
}

/// A setting given as a word, read as its wire-contract type.
fn setting<T: serde::de::DeserializeOwned>(flag: &str, word: &str, choices: &str) -> Result<T> {
    serde_json::from_value(serde_json::Value::String(word.to_string()))
        .map_err(|_| anyhow!("{flag} {word:?}: use {choices}"))
}

fn group_settings(f: &GroupFields) -> Result<ResourceGroupSettings> {
    let secs = |flag: &str, v: Option<i64>| -> Result<Option<u64>> {
        v.map(|n| u64::try_from(n).map_err(|_| anyhow!("{flag} must not be negative")))
            .transpose()
    };
    Ok(ResourceGroupSettings {
        description: f.description.clone(),
        is_public: f.public,
        scheduler: f
            .scheduler
            .as_deref()
            .map(|s| setting("--scheduler", s, "fifo, lifo, drf or fairshare"))
            .transpose()?,
        selector: f
            .selector
            .as_deref()
            .map(|s| setting("--selector", s, "dispersed, concentrated or round-robin"))
            .transpose()?,
        starvation_secs: secs("--starvation", f.starvation)?,
        pending_timeout_secs: secs("--pending-timeout", f.pending_timeout)?,
        egress: f
            .egress
            .as_deref()
            .map(|mode| bai_core::egress::EgressPolicy::parse(mode, &f.egress_allow))
            .transpose()
            .map_err(|e| anyhow!("--egress: {e}"))?,
        warm_pool: f.warm_pool.clone(),
        warm_pool_auto: f.warm_pool_auto,
        fairshare_half_life_secs: f.fairshare_half_life,
        fairshare_weights: f.fairshare_weights.clone(),
        fairshare_priority: f.fairshare_priority.clone(),
        preemption: f
            .preemption
            .as_deref()
            .map(|s| setting("--preemption", s, "off, priority or fairshare"))
            .transpose()?,
        preemption_grace_secs: f.preemption_grace,
        preemption_min_runtime_secs: f.preemption_min_runtime,
        preempt_interactive: f.preempt_interactive,
    })
}

/// Said wherever a group's policy is `open`.
const OPEN_RISK: &str = "note: under egress open, kernels reach their host's control ports, the cluster's nodes and the cloud's metadata service (instance credentials)";

fn print_group(g: &ResourceGroup) {
    println!(
        "resource group {}: scheduler {}, selector {}, {}, starvation {}s, pending timeout {}s, egress {}",
        g.name,
        wire_word(g.scheduler),
        wire_word(g.selector),
        access_word(g.is_public),
        g.starvation_secs,
        g.pending_timeout_secs,
        g.egress.summary(),
    );
    let auto = match g.warm_pool_auto {
        0 => "automatic mode off".to_string(),
        n => format!("automatic mode: {n} per recent shape"),
    };
    let pool = if g.warm_pool.is_empty() {
        "none configured".to_string()
    } else {
        g.warm_pool.replace(';', "; ")
    };
    println!("  warm pool: {pool} ({auto})");
    if g.scheduler == bai_api::resources::Scheduler::Fairshare {
        println!(
            "  fair share: half-life {}s, weights {}, priority {}",
            g.fairshare_half_life_secs, g.fairshare_weights, g.fairshare_priority
        );
    }
    println!("  preemption: {}", g.preemption.summary());
    if g.egress.mode == bai_core::egress::EgressMode::Open {
        println!("{OPEN_RISK}");
    }
}

pub async fn admin_group(client: &Client, c: &AdminGroupCmd) -> Result<i32> {
    match c {
        AdminGroupCmd::List => return list_groups(client, true).await,
        AdminGroupCmd::Create { name, fields } => {
            let group = NewResourceGroup {
                name: name.clone(),
                settings: group_settings(fields)?,
            };
            print_group(&client.create_resource_group(&group).await?)
        }
        AdminGroupCmd::Update { name, fields } => print_group(
            &client
                .update_resource_group(name, &group_settings(fields)?)
                .await?,
        ),
        AdminGroupCmd::Delete { name } => {
            client.delete_resource_group(name).await?;
            println!("Resource group {name} is deleted.");
        }
        AdminGroupCmd::Allow {
            name,
            access_key,
            project,
        }
        | AdminGroupCmd::Deny {
            name,
            access_key,
            project,
        } => {
            let allow = matches!(c, AdminGroupCmd::Allow { .. });
            let (change, who) = match (project, access_key) {
                (Some(p), _) => (
                    GroupAccessChange {
                        project: Some(p.clone()),
                        access_key: None,
                        allow: Some(allow),
                    },
                    format!("Members of project {p}"),
                ),
                (None, Some(ak)) => (
                    GroupAccessChange {
                        access_key: Some(ak.clone()),
                        project: None,
                        allow: Some(allow),
                    },
                    ak.clone(),
                ),
                (None, None) => anyhow::bail!("give an access key or --project"),
            };
            client.resource_group_access(name, &change).await?;
            let verb = if allow { "may now" } else { "may no longer" };
            println!("{who} {verb} use resource group {name}.");
        }
    }
    Ok(0)
}

/// `-r` pairs as the slots a client gives (shmem kept apart), amounts as texts.
fn slot_spec(items: &[(String, String)]) -> (ResourceSlotsSpec, Option<String>) {
    let (mut res, opts) = crate::args::resources(items);
    let mut take = |k: &str| res.remove(k).map(Amount::Text);
    let spec = ResourceSlotsSpec {
        cpu: take("cpu"),
        mem: take("mem"),
        accelerators: res
            .into_iter()
            .map(|(k, v)| (k, Amount::Text(v)))
            .collect::<BTreeMap<_, _>>(),
    };
    (spec, opts.get("shmem").cloned())
}

pub async fn admin_preset(client: &Client, c: &AdminPresetCmd) -> Result<i32> {
    match c {
        AdminPresetCmd::Create { name, resources } => {
            let (slots, shmem) = slot_spec(resources);
            let p = client
                .put_preset(&NewPreset {
                    name: name.clone(),
                    resource_slots: slots,
                    shared_memory: shmem.map(Amount::Text),
                })
                .await?;
            println!("Preset {} is {}.", p.name, slots_text(&p.resource_slots));
        }
        AdminPresetCmd::Delete { name } => {
            client.delete_preset(name).await?;
            println!("Preset {name} is deleted.");
        }
    }
    Ok(0)
}

pub async fn admin_policy(client: &Client, c: &AdminPolicyCmd) -> Result<i32> {
    match c {
        AdminPolicyCmd::List => {
            let list = client.resource_policies().await?;
            let or_dash = |v: Option<u64>| v.map(|n| n.to_string()).unwrap_or_else(|| "-".into());
            let rows: Vec<Vec<String>> = list
                .resource_policies
                .iter()
                .map(|a| {
                    let p = &a.policy;
                    vec![
                        p.name.clone(),
                        or_dash(p.max_concurrent_sessions),
                        or_dash(p.max_pending_sessions),
                        p.total_resource_slots
                            .as_ref()
                            .map(slots_text)
                            .unwrap_or_else(|| "-".into()),
                        p.max_session_lifetime.to_string(),
                        p.idle_timeout.to_string(),
                        or_dash(p.max_containers_per_session),
                        a.keypairs.len().to_string(),
                    ]
                })
                .collect();
            table(
                &[
                    "Name",
                    "Concurrent",
                    "Pending",
                    "Total slots",
                    "Lifetime",
                    "Idle timeout",
                    "Containers",
                    "Keypairs",
                ],
                &rows,
            );
        }
        AdminPolicyCmd::Create {
            name,
            max_concurrent,
            max_pending,
            total,
            max_lifetime,
            idle_timeout,
            max_containers_per_session,
        } => {
            let count = |flag: &str, v: &Option<i64>| -> Result<Option<u64>> {
                v.map(|n| u64::try_from(n).map_err(|_| anyhow!("{flag} must not be negative")))
                    .transpose()
            };
            let policy = NewResourcePolicy {
                name: name.clone(),
                max_concurrent_sessions: count("--max-concurrent", max_concurrent)?,
                max_pending_sessions: count("--max-pending", max_pending)?,
                total_resource_slots: (!total.is_empty()).then(|| slot_spec(total).0),
                max_session_lifetime: count("--max-lifetime", max_lifetime)?,
                idle_timeout: count("--idle-timeout", idle_timeout)?,
                max_containers_per_session: count(
                    "--max-containers-per-session",
                    max_containers_per_session,
                )?,
            };
            let p = client.put_resource_policy(&policy).await?;
            println!("Resource policy {} is saved.", p.name);
        }
        AdminPolicyCmd::Delete { name } => {
            client.delete_resource_policy(name).await?;
            println!("Resource policy {name} is deleted.");
        }
        AdminPolicyCmd::Assign { access_key, policy } => {
            client.assign_resource_policy(access_key, policy).await?;
            println!("{access_key} now has resource policy {policy}.");
        }
    }
    Ok(0)
}

pub async fn projects(client: &Client) -> Result<i32> {
    let list = client.projects().await?;
    let rows: Vec<Vec<String>> = list
        .projects
        .iter()
        .map(|p| {
            let description = if p.description.is_empty() {
                "-".to_string()
            } else {
                p.description.clone()
            };
            vec![p.name.clone(), description, p.members.join(", ")]
        })
        .collect();
    table(&["Project", "Description", "Members"], &rows);
    Ok(0)
}

pub async fn admin_project(client: &Client, c: &AdminProjectCmd) -> Result<i32> {
    match c {
        AdminProjectCmd::List => return projects(client).await,
        AdminProjectCmd::Create { name, description } => {
            client.create_project(name, description).await?;
            println!("Project {name} is created.");
        }
        AdminProjectCmd::Delete { name } => {
            client.delete_project(name).await?;
            println!("Project {name} is deleted.");
        }
        AdminProjectCmd::AddMember { name, email } => {
            client.project_member(name, email, true).await?;
            println!("{email} is now a member of project {name}.");
        }
        AdminProjectCmd::RemoveMember { name, email } => {
            client.project_member(name, email, false).await?;
            println!("{email} is no longer a member of project {name}.");
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    #[test]
    fn slots_read_as_words() {
        let slots = ResourceSlots {
            cpu: "2".into(),
            mem: "4294967296".into(),
            accelerators: [("cuda.shares".to_string(), "0.5".to_string())].into(),
        };
        assert_eq!(slots_text(&slots), "cpu 2, mem 4 GiB, cuda.shares 0.5");
        let unlimited = ResourceSlots {
            cpu: "Infinity".into(),
            mem: "Infinity".into(),
            accelerators: [("cuda.device".to_string(), "Infinity".to_string())].into(),
        };
        assert_eq!(
            slots_text(&unlimited),
            "cpu unlimited, mem unlimited, cuda.device unlimited"
        );
        let fields = GroupFields {
            scheduler: Some("drf".into()),
            public: Some(false),
            ..Default::default()
        };
        let group = NewResourceGroup {
            name: "gpu".into(),
            settings: group_settings(&fields).unwrap(),
        };
        assert_eq!(
            serde_json::to_value(&group).unwrap(),
            json!({"name": "gpu", "scheduler": "drf", "is_public": false})
        );
        let bad = GroupFields {
            selector: Some("random".into()),
            ..Default::default()
        };
        let e = group_settings(&bad).unwrap_err().to_string();
        assert!(e.contains("--selector \"random\""), "{e}");
    }

    #[test]
    fn resource_flags_become_slots() {
        let items: Vec<(String, String)> = ["cpu=2", "mem=4096", "shmem=64", "cuda.shares=1"]
            .iter()
            .map(|s| crate::args::parse_kv(s).unwrap())
            .collect();
        let (spec, shmem) = slot_spec(&items);
        assert_eq!(
            serde_json::to_value(&spec).unwrap(),
            json!({"cpu": "2", "mem": "4096m", "cuda.shares": "1"})
        );
        assert_eq!(shmem.as_deref(), Some("64m"));
    }
}
