//! Domains: `domains`, `domain`, `create_domain`, `modify_domain`, `delete_domain`
//! (deactivates) and `purge_domain` (deletes an empty one). The `default` domain, where
//! bai puts every account it creates, cannot be renamed, deactivated or purged. A user of an
//! inactive domain is refused as an inactive user is.

use super::{Args, check_name, db, err, ok, refused};
use bai_api::resources::gql_inputs::DomainProps;
use bai_gql::{FieldError, OperationKind};
use bai_store::{DomainInUse, DomainRow};
use serde_json::{Value, json};

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "domains" | "domain" | "create_domain" | "modify_domain" | "delete_domain" | "purge_domain"
    )
}

/// A domain as Backend.AI's `Domain` type (JSON fields as JSON text).
pub fn domain_json(d: &DomainRow) -> Value {
    json!({
        "name": d.name,
        "description": d.description,
        "is_active": d.is_active,
        "created_at": d.created_at,
        "modified_at": d.created_at,
        "total_resource_slots": d.total_resource_slots,
        "allowed_vfolder_hosts": d.allowed_vfolder_hosts,
        "allowed_docker_registries": serde_json::from_str::<Value>(&d.allowed_docker_registries)
            .unwrap_or_else(|_| json!([])),
        "integration_id": d.integration_id,
        "scaling_groups": Value::Null,
    })
}

fn apply(d: &mut DomainRow, p: DomainProps) -> Result<(), FieldError> {
    if let Some(name) = p.name {
        check_name("domain", &name)?;
        d.name = name;
    }
    if let Some(v) = p.description {
        d.description = v;
    }
    if let Some(v) = p.is_active {
        d.is_active = v;
    }
    if let Some(v) = p.total_resource_slots {
        d.total_resource_slots = v.0;
    }
    if let Some(v) = p.allowed_vfolder_hosts {
        d.allowed_vfolder_hosts = v.0;
    }
    if let Some(v) = p.allowed_docker_registries {
        d.allowed_docker_registries = json!(v.0).to_string();
    }
    if let Some(v) = p.integration_id {
        d.integration_id = Some(v);
    }
    Ok(())
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    let store = &a.m.store;
    match (kind, field) {
        (OperationKind::Query, "domains") => {
            a.admin_only("list domains")?;
            let want = a.args.get("is_active").and_then(Value::as_bool);
            Ok(Value::Array(
                store
                    .domains()
                    .map_err(db)?
                    .iter()
                    .filter(|d| want.is_none_or(|w| d.is_active == w))
                    .map(domain_json)
                    .collect(),
            ))
        }
        (OperationKind::Query, "domain") => {
            let own = store
                .user_by_id(&a.caller.user_id)
                .map_err(db)?
                .map(|u| u.domain_name)
                .unwrap_or_else(|| "default".into());
            let name = a.opt_text("name").unwrap_or(&own);
            if name != own {
                a.admin_only("read another domain")?;
            }
            Ok(store
                .domain(name)
                .map_err(db)?
                .map(|d| domain_json(&d))
                .unwrap_or(Value::Null))
        }
        (OperationKind::Mutation, "create_domain") => {
            a.admin_only("create domains")?;
            let name = a.text("name")?;
            check_name("domain", name)?;
            let mut d = DomainRow::new(name);
            apply(&mut d, a.props()?)?;
            d.name = name.to_string();
            if !store.insert_domain(&d).map_err(db)? {
                return Ok(json!({
                    "ok": false, "msg": format!("domain {name:?} already exists"), "domain": null,
                }));
            }
            let made = store.domain(name).map_err(db)?.unwrap_or(d);
            Ok(json!({"ok": true, "msg": "success", "domain": domain_json(&made)}))
        }
        (OperationKind::Mutation, "modify_domain") | (OperationKind::Mutation, "delete_domain") => {
            a.admin_only("change domains")?;
            let name = a.text("name")?;
            let Some(mut d) = store.domain(name).map_err(db)? else {
                return Ok(refused(format!("no domain {name:?}")));
            };
            if field == "delete_domain" {
                d.is_active = false;
            } else {
                apply(&mut d, a.props()?)?;
            }
            if name == "default" && (d.name != name || !d.is_active) {
                return Ok(refused(
                    "the default domain cannot be renamed or deactivated: bai puts new accounts there",
                ));
            }
            if d.name != name && store.domain(&d.name).map_err(db)?.is_some() {
                return Ok(refused(format!("domain {:?} already exists", d.name)));
            }
            store.update_domain(name, &d).map_err(db)?;
            Ok(ok())
        }
        (OperationKind::Mutation, "purge_domain") => {
            a.admin_only("purge domains")?;
            let name = a.text("name")?;
            if name == "default" {
                return Ok(refused("the default domain cannot be purged"));
            }
            Ok(match store.purge_domain(name).map_err(db)? {
                Ok(true) => ok(),
                Ok(false) => refused(format!("no domain {name:?}")),
                Err(DomainInUse::Users(n)) => refused(format!(
                    "domain {name:?} still has {n} user(s): purge them or move them first"
                )),
                Err(DomainInUse::Projects(n)) => refused(format!(
                    "domain {name:?} still has {n} project(s): purge them first"
                )),
                Err(DomainInUse::Sessions(n)) => refused(format!(
                    "domain {name:?} still has {n} session(s) that have not ended"
                )),
            })
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}
