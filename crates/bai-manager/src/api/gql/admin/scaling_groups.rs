//! Resource groups as Backend.AI's scaling groups: `scaling_groups`, `scaling_group`,
//! `create_scaling_group`, `modify_scaling_group`, `delete_scaling_group`. The scheduler
//! (`fifo`, `lifo`, `drf`), the agent selection, the pending timeout and the session types a
//! group takes are bai's own settings and take effect; an inactive group takes no new sessions.
//! `driver`/`driver_opts` are kept as given (bai's agents join by token, no driver provisions
//! them). A group with sessions or agents cannot be deleted.

use super::{Args, check_name, db, err, ok, refused};
use bai_api::resources::gql_inputs::ScalingGroupProps;
use bai_gql::{FieldError, OperationKind};
use bai_store::ResourceGroupRow;
use serde_json::{Map, Value, json};

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "scaling_groups"
            | "scaling_group"
            | "create_scaling_group"
            | "modify_scaling_group"
            | "delete_scaling_group"
    )
}

const SCHEDULERS: &[&str] = &["fifo", "lifo", "drf"];
const SESSION_TYPES: &[&str] = &["interactive", "batch", "inference"];

/// Backend.AI's spelling of bai's agent selection.
fn strategy(selector: &str) -> &str {
    match selector {
        "round-robin" => "roundrobin",
        other => other,
    }
}

/// `scheduler_opts` as Backend.AI's `ScalingGroupOpts`.
fn scheduler_opts(g: &ResourceGroupRow) -> Value {
    json!({
        "allowed_session_types": g.allowed_session_types,
        "pending_timeout": g.pending_timeout_secs as f64,
        "config": {},
        "agent_selection_strategy": strategy(&g.selector),
        "roundrobin": g.selector == "round-robin",
    })
}

/// A resource group as Backend.AI's `ScalingGroup` type (JSON fields as JSON text).
fn group_json(g: &ResourceGroupRow) -> Value {
    json!({
        "name": g.name,
        "description": g.description,
        "is_active": g.is_active,
        "is_public": g.is_public,
        "created_at": g.created_at,
        "driver": g.driver,
        "driver_opts": g.driver_opts,
        "scheduler": g.scheduler,
        "scheduler_opts": scheduler_opts(g).to_string(),
        "use_host_network": g.use_host_network,
        "wsproxy_addr": g.wsproxy_addr,
        "wsproxy_api_token": Value::Null,
    })
}

/// Reads `scheduler_opts` onto the group: the session types, the pending timeout (seconds)
/// and the agent selection.
fn apply_opts(g: &mut ResourceGroupRow, opts: &Map<String, Value>) -> Result<(), FieldError> {
    for (k, v) in opts {
        match (k.as_str(), v) {
            (_, Value::Null) => {}
            ("allowed_session_types", Value::Array(items)) => {
                let mut types = Vec::new();
                for t in items {
                    match t.as_str() {
                        Some(t) if SESSION_TYPES.contains(&t) => types.push(t.to_string()),
                        _ => {
                            return Err(err(format!(
                                "scheduler_opts.allowed_session_types: {t} is not one of {}",
                                SESSION_TYPES.join(", ")
                            )));
                        }
                    }
                }
                g.allowed_session_types = types;
            }
            ("pending_timeout", v) => {
                let secs = v
                    .as_f64()
                    .filter(|s| *s >= 0.0 && *s <= 1e9)
                    .ok_or_else(|| {
                        err(format!(
                            "scheduler_opts.pending_timeout must be seconds ≥ 0, not {v}"
                        ))
                    })?;
                g.pending_timeout_secs = secs.round() as i64;
            }
            ("agent_selection_strategy", Value::String(s)) => {
                g.selector = match s.to_ascii_lowercase().as_str() {
                    "dispersed" => "dispersed".into(),
                    "concentrated" => "concentrated".into(),
                    "roundrobin" | "round-robin" => "round-robin".into(),
                    other => {
                        return Err(err(format!(
                            "scheduler_opts.agent_selection_strategy {other:?} is not one of \
                             dispersed, concentrated, roundrobin"
                        )));
                    }
                };
            }
            ("roundrobin", Value::Bool(true)) => g.selector = "round-robin".into(),
            ("roundrobin", Value::Bool(false)) => {}
            ("config", Value::Object(c)) if c.is_empty() => {}
            (other, v) => {
                return Err(err(format!(
                    "scheduler_opts.{other} = {v} is not supported (allowed_session_types, \
                     pending_timeout, agent_selection_strategy, roundrobin)"
                )));
            }
        }
    }
    Ok(())
}

fn apply(g: &mut ResourceGroupRow, p: ScalingGroupProps) -> Result<(), FieldError> {
    if let Some(v) = p.description {
        g.description = v;
    }
    if let Some(v) = p.is_active {
        g.is_active = v;
    }
    if let Some(v) = p.is_public {
        g.is_public = v;
    }
    if let Some(v) = p.wsproxy_addr {
        g.wsproxy_addr = (!v.is_empty()).then_some(v);
    }
    if p.wsproxy_api_token.is_some_and(|t| !t.is_empty()) {
        return Err(err(
            "wsproxy_api_token is not used on this server: bai's own proxy serves apps",
        ));
    }
    if p.use_host_network == Some(true) {
        return Err(err(
            "use_host_network is not available on this server: sessions are isolated on bai's bridge",
        ));
    }
    if let Some(v) = p.driver {
        if v.trim().is_empty() || v.len() > 64 {
            return Err(err("driver must be 1 to 64 characters"));
        }
        g.driver = v;
    }
    if let Some(v) = p.driver_opts {
        g.driver_opts = v.0;
    }
    if let Some(v) = p.scheduler {
        if !SCHEDULERS.contains(&v.as_str()) {
            return Err(err(format!(
                "scheduler {v:?} is not one of {}",
                SCHEDULERS.join(", ")
            )));
        }
        g.scheduler = v;
    }
    if let Some(v) = p.scheduler_opts {
        apply_opts(g, &v.object())?;
    }
    Ok(())
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    let store = &a.m.store;
    match (kind, field) {
        (OperationKind::Query, "scaling_groups") => {
            let want = a.args.get("is_active").and_then(Value::as_bool);
            let rows = if a.caller.is_admin {
                store.resource_groups().map_err(db)?
            } else {
                store.groups_for(&a.caller.access_key).map_err(db)?
            };
            Ok(Value::Array(
                rows.iter()
                    .filter(|g| want.is_none_or(|w| g.is_active == w))
                    .map(group_json)
                    .collect(),
            ))
        }
        (OperationKind::Query, "scaling_group") => {
            a.admin_only("read a scaling group's configuration")?;
            let name = a.text("name")?;
            Ok(store
                .resource_group(name)
                .map_err(db)?
                .map(|g| group_json(&g))
                .unwrap_or(Value::Null))
        }
        (OperationKind::Mutation, "create_scaling_group") => {
            a.admin_only("create scaling groups")?;
            let name = a.text("name")?;
            check_name("scaling group", name)?;
            if store.resource_group(name).map_err(db)?.is_some() {
                return Ok(json!({
                    "ok": false, "msg": format!("scaling group {name:?} already exists"),
                    "scaling_group": null,
                }));
            }
            let mut g = ResourceGroupRow::new(name);
            // Backend.AI's default for a new group: interactive and batch sessions.
            g.allowed_session_types = vec!["interactive".into(), "batch".into()];
            apply(&mut g, a.props()?)?;
            store.put_resource_group(&g).map_err(db)?;
            let made = store.resource_group(name).map_err(db)?.unwrap_or(g);
            a.m.bus.wake_scheduler();
            Ok(json!({"ok": true, "msg": "success", "scaling_group": group_json(&made)}))
        }
        (OperationKind::Mutation, "modify_scaling_group") => {
            a.admin_only("change scaling groups")?;
            let name = a.text("name")?;
            let Some(mut g) = store.resource_group(name).map_err(db)? else {
                return Ok(refused(format!("no scaling group {name:?}")));
            };
            apply(&mut g, a.props()?)?;
            store.put_resource_group(&g).map_err(db)?;
            a.m.bus.wake_scheduler();
            Ok(ok())
        }
        (OperationKind::Mutation, "delete_scaling_group") => {
            a.admin_only("delete scaling groups")?;
            let name = a.text("name")?;
            if name == "default" {
                return Ok(refused("the default scaling group cannot be deleted"));
            }
            if let Some(why) = crate::api::resources::groups::in_use(a.m, name).map_err(db)? {
                return Ok(refused(why));
            }
            Ok(if store.delete_resource_group(name).map_err(db)? {
                ok()
            } else {
                refused(format!("no scaling group {name:?}"))
            })
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}
