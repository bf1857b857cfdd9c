//! `bai resource-groups`, `bai presets` and the `bai admin resource-group |
//! preset | policy` commands.

use crate::args::{
    AdminGroupCmd, AdminPolicyCmd, AdminPresetCmd, AdminProjectCmd, GroupFields, PresetsArgs,
};
use crate::output::{cell, table};
use anyhow::Result;
use bai_client::Client;
use serde_json::{Map, Value, json};

/// `{"cpu": "2", "mem": "4294967296"}` → `cpu 2, mem 4 GiB`.
pub fn slots_text(v: &Value) -> String {
    let Some(o) = v.as_object() else {
        return cell(v);
    };
    o.iter()
        .map(|(k, v)| {
            let s = cell(v);
            match (k.as_str(), s.parse::<u64>()) {
                ("mem", Ok(b)) => format!("mem {}", bai_core::resources::format_bytes(b)),
                _ => format!("{k} {s}"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

pub(super) fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

pub async fn list_groups(client: &Client, all: bool) -> Result<i32> {
    let v = client.resource_groups(all).await?;
    let rows: Vec<Vec<String>> = items(&v, "resource_groups")
        .iter()
        .map(|g| {
            vec![
                cell(&g["name"]),
                cell(&g["scheduler"]),
                cell(&g["selector"]),
                if g["is_public"].as_bool() == Some(true) {
                    "public"
                } else {
                    "private"
                }
                .into(),
                items(g, "agents").len().to_string(),
                slots_text(&g["free"]),
                slots_text(&g["capacity"]),
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
        ],
        &rows,
    );
    Ok(0)
}

pub async fn presets(client: &Client, a: &PresetsArgs) -> Result<i32> {
    if !a.check {
        let v = client.presets().await?;
        let rows: Vec<Vec<String>> = items(&v, "presets")
            .iter()
            .map(|p| {
                vec![
                    cell(&p["name"]),
                    slots_text(&p["resource_slots"]),
                    cell(&p["shared_memory"]),
                ]
            })
            .collect();
        table(&["Name", "Resources", "Shared memory"], &rows);
        return Ok(0);
    }
    let v = client.check_presets(a.group.as_deref()).await?;
    let rows: Vec<Vec<String>> = items(&v, "presets")
        .iter()
        .map(|p| {
            vec![
                cell(&p["name"]),
                slots_text(&p["resource_slots"]),
                if p["allocatable"].as_bool() == Some(true) {
                    "yes"
                } else {
                    "no"
                }
                .into(),
            ]
        })
        .collect();
    table(&["Name", "Resources", "Fits now"], &rows);
    println!();
    println!("resource group      : {}", cell(&v["scaling_group"]));
    println!(
        "group free          : {}",
        slots_text(&v["scaling_group_remaining"])
    );
    println!("your limit          : {}", slots_text(&v["keypair_limits"]));
    println!("you use             : {}", slots_text(&v["keypair_using"]));
    Ok(0)
}

fn group_body(name: Option<&str>, f: &GroupFields) -> Value {
    let mut o = Map::new();
    if let Some(n) = name {
        o.insert("name".into(), n.into());
    }
    if let Some(d) = &f.description {
        o.insert("description".into(), d.as_str().into());
    }
    if let Some(s) = &f.scheduler {
        o.insert("scheduler".into(), s.as_str().into());
    }
    if let Some(s) = &f.selector {
        o.insert("selector".into(), s.as_str().into());
    }
    if let Some(p) = f.public {
        o.insert("is_public".into(), p.into());
    }
    if let Some(s) = f.starvation {
        o.insert("starvation_secs".into(), s.into());
    }
    if let Some(s) = f.pending_timeout {
        o.insert("pending_timeout_secs".into(), s.into());
    }
    Value::Object(o)
}

fn print_group(g: &Value) {
    println!(
        "resource group {}: scheduler {}, selector {}, {}, starvation {}s, pending timeout {}s",
        cell(&g["name"]),
        cell(&g["scheduler"]),
        cell(&g["selector"]),
        if g["is_public"].as_bool() == Some(true) {
            "public"
        } else {
            "private"
        },
        cell(&g["starvation_secs"]),
        cell(&g["pending_timeout_secs"]),
    );
}

pub async fn admin_group(client: &Client, c: &AdminGroupCmd) -> Result<i32> {
    match c {
        AdminGroupCmd::List => return list_groups(client, true).await,
        AdminGroupCmd::Create { name, fields } => print_group(
            &client
                .create_resource_group(&group_body(Some(name), fields))
                .await?,
        ),
        AdminGroupCmd::Update { name, fields } => print_group(
            &client
                .update_resource_group(name, &group_body(None, fields))
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
            let who = match (project, access_key) {
                (Some(p), _) => {
                    client.resource_group_project_access(name, p, allow).await?;
                    format!("Members of project {p}")
                }
                (None, Some(ak)) => {
                    client.resource_group_access(name, ak, allow).await?;
                    ak.clone()
                }
                (None, None) => anyhow::bail!("give an access key or --project"),
            };
            let verb = if allow { "may now" } else { "may no longer" };
            println!("{who} {verb} use resource group {name}.");
        }
    }
    Ok(0)
}

/// `-r` pairs as a slot map (shmem kept apart), values as strings.
fn slot_map(items: &[(String, String)]) -> (Value, Option<String>) {
    let (res, opts) = crate::args::resources(items);
    let shmem = opts.get("shmem").map(cell);
    (Value::Object(res), shmem)
}

pub async fn admin_preset(client: &Client, c: &AdminPresetCmd) -> Result<i32> {
    match c {
        AdminPresetCmd::Create { name, resources } => {
            let (slots, shmem) = slot_map(resources);
            let p = client
                .put_preset(&json!({"name": name, "resource_slots": slots, "shared_memory": shmem}))
                .await?;
            println!(
                "Preset {} is {}.",
                cell(&p["name"]),
                slots_text(&p["resource_slots"])
            );
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
            let v = client.resource_policies().await?;
            let rows: Vec<Vec<String>> = items(&v, "resource_policies")
                .iter()
                .map(|p| {
                    vec![
                        cell(&p["name"]),
                        cell(&p["max_concurrent_sessions"]),
                        cell(&p["max_pending_sessions"]),
                        slots_text(&p["total_resource_slots"]),
                        cell(&p["max_session_lifetime"]),
                        cell(&p["idle_timeout"]),
                        cell(&p["max_containers_per_session"]),
                        items(p, "keypairs").len().to_string(),
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
            let total = if total.is_empty() {
                Value::Null
            } else {
                slot_map(total).0
            };
            let p = client
                .put_resource_policy(&json!({
                    "name": name,
                    "max_concurrent_sessions": max_concurrent,
                    "max_pending_sessions": max_pending,
                    "total_resource_slots": total,
                    "max_session_lifetime": max_lifetime,
                    "idle_timeout": idle_timeout,
                    "max_containers_per_session": max_containers_per_session,
                }))
                .await?;
            println!("Resource policy {} is saved.", cell(&p["name"]));
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
    let v = client.projects().await?;
    let rows: Vec<Vec<String>> = items(&v, "projects")
        .iter()
        .map(|p| {
            let members: Vec<String> = items(p, "members").iter().map(cell).collect();
            vec![
                cell(&p["name"]),
                cell(&p["description"]),
                members.join(", "),
            ]
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

    #[test]
    fn slots_read_as_words() {
        assert_eq!(
            slots_text(&json!({"cpu": "2", "mem": "4294967296"})),
            "cpu 2, mem 4 GiB"
        );
        let body = group_body(
            Some("gpu"),
            &GroupFields {
                scheduler: Some("drf".into()),
                public: Some(false),
                ..Default::default()
            },
        );
        assert_eq!(
            body,
            json!({"name": "gpu", "scheduler": "drf", "is_public": false})
        );
    }
}
