//! Keypair resource policies: `keypair_resource_policy`, `keypair_resource_policies`,
//! `create_keypair_resource_policy`, `modify_keypair_resource_policy`,
//! `delete_keypair_resource_policy`. The limits bai enforces (concurrent and pending
//! sessions, total slots, containers per session, session lifetime, idle timeout) take effect
//! at once; Backend.AI's `allowed_vfolder_hosts`, SFTP limit and `default_for_unspecified` are
//! kept and shown as given. A policy a keypair holds cannot be deleted.

use super::{Args, check_name, db, err, ok, refused};
use bai_api::resources::gql_inputs::{KeypairPolicyProps, Whole};
use bai_core::resources::ResourceSlots;
use bai_gql::{FieldError, OperationKind};
use bai_store::PolicyRow;
use serde_json::{Map, Value, json};

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "keypair_resource_policy"
            | "keypair_resource_policies"
            | "create_keypair_resource_policy"
            | "modify_keypair_resource_policy"
            | "delete_keypair_resource_policy"
    )
}

/// A policy as Backend.AI's `KeyPairResourcePolicy` type (JSON fields as JSON text).
fn policy_json(p: &PolicyRow) -> Value {
    let slots = p
        .total_slots
        .as_ref()
        .map(|s| s.to_wire().to_string())
        .unwrap_or_else(|| "{}".into());
    json!({
        "name": p.name,
        "created_at": p.created_at,
        "default_for_unspecified": p.default_for_unspecified,
        "total_resource_slots": slots,
        "max_session_lifetime": p.max_session_lifetime,
        "max_concurrent_sessions": p.max_concurrent_sessions,
        "max_pending_session_count": p.max_pending_sessions,
        "max_pending_session_resource_slots": Value::Null,
        "max_concurrent_sftp_sessions": p.max_concurrent_sftp_sessions,
        // No limit of its own: bai's bound is the one that holds.
        "max_containers_per_session": p
            .max_containers_per_session
            .unwrap_or(i64::from(bai_core::cluster::MAX_CLUSTER_SIZE)),
        "idle_timeout": p.idle_timeout,
        "allowed_vfolder_hosts": p.allowed_vfolder_hosts,
        "max_vfolder_count": 0,
        "max_vfolder_size": 0,
        "max_quota_scope_size": -1,
    })
}

fn apply(a: &Args<'_>, pol: &mut PolicyRow, p: KeypairPolicyProps) -> Result<(), FieldError> {
    let whole = |v: Whole, field: &str, min: i64, max: i64| v.within(field, min, max).map_err(err);
    if let Some(v) = p.default_for_unspecified {
        pol.default_for_unspecified = v.as_str().to_string();
    }
    if let Some(text) = p.total_resource_slots {
        let map: Map<String, Value> = text.object();
        pol.total_slots = if map.is_empty() {
            None
        } else {
            let slots: ResourceSlots =
                crate::api::resources::parse_slot_map(&map, &a.m.agents.accel_slots())
                    .map_err(|e| err(format!("total_resource_slots: {}", e.msg)))?;
            Some(slots)
        };
    }
    if let Some(n) = p.max_session_lifetime {
        pol.max_session_lifetime = whole(n, "max_session_lifetime", 0, i64::from(i32::MAX))?;
    }
    if let Some(n) = p.max_concurrent_sessions {
        pol.max_concurrent_sessions = Some(whole(n, "max_concurrent_sessions", 0, 100_000)?);
    }
    if let Some(n) = p.max_pending_session_count {
        pol.max_pending_sessions = Some(whole(n, "max_pending_session_count", 0, 100_000)?);
    }
    if let Some(n) = p.max_concurrent_sftp_sessions {
        pol.max_concurrent_sftp_sessions = whole(n, "max_concurrent_sftp_sessions", 0, 100_000)?;
    }
    if let Some(n) = p.max_containers_per_session {
        pol.max_containers_per_session = Some(whole(n, "max_containers_per_session", 1, 100_000)?);
    }
    if let Some(n) = p.idle_timeout {
        pol.idle_timeout = whole(n, "idle_timeout", 0, i64::from(i32::MAX))?;
    }
    if let Some(v) = p.allowed_vfolder_hosts {
        pol.allowed_vfolder_hosts = v.0;
    }
    if p.max_pending_session_resource_slots
        .is_some_and(|t| t.0 != "{}")
    {
        return Err(err(
            "max_pending_session_resource_slots is not available on this server; \
             use max_pending_session_count",
        ));
    }
    Ok(())
}

fn find(a: &Args<'_>, name: &str) -> Result<Option<PolicyRow>, FieldError> {
    Ok(a.m
        .store
        .policies()
        .map_err(db)?
        .into_iter()
        .find(|p| p.name == name))
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    let store = &a.m.store;
    match (kind, field) {
        (OperationKind::Query, "keypair_resource_policy") => {
            let own = store.policy_of(&a.caller.access_key).map_err(db)?;
            match a.opt_text("name") {
                None | Some("") => Ok(policy_json(&own)),
                Some(n) if n == own.name => Ok(policy_json(&own)),
                Some(n) => {
                    a.admin_only("read another keypair's resource policy")?;
                    Ok(find(a, n)?.map(|p| policy_json(&p)).unwrap_or(Value::Null))
                }
            }
        }
        (OperationKind::Query, "keypair_resource_policies") => {
            a.admin_only("list keypair resource policies")?;
            Ok(Value::Array(
                store
                    .policies()
                    .map_err(db)?
                    .iter()
                    .map(policy_json)
                    .collect(),
            ))
        }
        (OperationKind::Mutation, "create_keypair_resource_policy") => {
            a.admin_only("create keypair resource policies")?;
            let name = a.text("name")?;
            check_name("keypair resource policy", name)?;
            if find(a, name)?.is_some() {
                return Ok(json!({
                    "ok": false, "msg": format!("keypair resource policy {name:?} already exists"),
                    "resource_policy": null,
                }));
            }
            let mut p = PolicyRow {
                name: name.to_string(),
                allowed_vfolder_hosts: "{}".into(),
                max_concurrent_sftp_sessions: 1,
                default_for_unspecified: "UNLIMITED".into(),
                ..Default::default()
            };
            apply(a, &mut p, a.props()?)?;
            store.put_policy(&p).map_err(db)?;
            a.m.bus.wake_scheduler();
            let made = find(a, name)?.unwrap_or(p);
            Ok(json!({"ok": true, "msg": "success", "resource_policy": policy_json(&made)}))
        }
        (OperationKind::Mutation, "modify_keypair_resource_policy") => {
            a.admin_only("change keypair resource policies")?;
            let name = a.text("name")?;
            let Some(mut p) = find(a, name)? else {
                return Ok(refused(format!("no keypair resource policy {name:?}")));
            };
            apply(a, &mut p, a.props()?)?;
            store.put_policy(&p).map_err(db)?;
            a.m.bus.wake_scheduler();
            Ok(ok())
        }
        (OperationKind::Mutation, "delete_keypair_resource_policy") => {
            a.admin_only("delete keypair resource policies")?;
            let name = a.text("name")?;
            if name == "default" {
                return Ok(refused(
                    "the default keypair resource policy cannot be deleted",
                ));
            }
            if find(a, name)?.is_none() {
                return Ok(refused(format!("no keypair resource policy {name:?}")));
            }
            Ok(if store.delete_policy(name).map_err(db)? {
                ok()
            } else {
                refused(format!(
                    "keypair resource policy {name:?} is held by a keypair; give it another first"
                ))
            })
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}
