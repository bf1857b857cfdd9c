//! Projects as Backend.AI's groups: `groups`, `group`, `groups_by_name`, `create_group`,
//! `modify_group` (fields, and members with `user_update_mode` add/remove), `delete_group`
//! (deactivates) and `purge_group` (deletes a project with no session, service or project
//! folder left). Members read the projects they belong to; administrators read and change all.

use super::{Args, check_name, db, err, ok, refused};
use bai_api::resources::gql_inputs::{GroupProps, MemberUpdate};
use bai_gql::{FieldError, OperationKind};
use bai_store::{ProjectRow, PurgeRefusal};
use serde_json::{Value, json};

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "groups"
            | "group"
            | "groups_by_name"
            | "create_group"
            | "modify_group"
            | "delete_group"
            | "purge_group"
    )
}

/// A project as Backend.AI's `Group` type (JSON fields as JSON text).
fn group_json(p: &ProjectRow) -> Value {
    json!({
        "id": p.id,
        "name": p.name,
        "description": p.description,
        "is_active": p.is_active,
        "created_at": p.created_at,
        "modified_at": p.created_at,
        "domain_name": p.domain_name,
        "total_resource_slots": p.total_resource_slots,
        "allowed_vfolder_hosts": p.allowed_vfolder_hosts,
        "integration_id": p.integration_id,
        "resource_policy": "default",
        "scaling_groups": Value::Null,
    })
}

fn apply(a: &Args<'_>, g: &mut ProjectRow, p: &GroupProps) -> Result<(), FieldError> {
    if let Some(v) = &p.name {
        check_name("group", v)?;
        g.name = v.clone();
    }
    if let Some(v) = &p.description {
        g.description = v.clone();
    }
    if let Some(v) = p.is_active {
        g.is_active = v;
    }
    if let Some(v) = &p.domain_name {
        if a.m.store.domain(v).map_err(db)?.is_none() {
            return Err(err(format!("no domain {v:?}")));
        }
        g.domain_name = v.clone();
    }
    if let Some(v) = &p.total_resource_slots {
        g.total_resource_slots = v.0.clone();
    }
    if let Some(v) = &p.allowed_vfolder_hosts {
        g.allowed_vfolder_hosts = v.0.clone();
    }
    if let Some(v) = &p.integration_id {
        g.integration_id = Some(v.clone());
    }
    if let Some(v) = &p.resource_policy
        && v != "default"
    {
        return Err(err(format!(
            "project resource policies are not available on this server (only \"default\"), not {v:?}"
        )));
    }
    Ok(())
}

/// The projects the caller may read: all for administrators, their own for others.
fn visible(a: &Args<'_>, rows: Vec<ProjectRow>) -> Result<Vec<ProjectRow>, FieldError> {
    if a.caller.is_admin {
        return Ok(rows);
    }
    let mine: Vec<String> =
        a.m.store
            .projects_of_user(&a.caller.user_id)
            .map_err(db)?
            .into_iter()
            .map(|(id, _)| id)
            .collect();
    Ok(rows.into_iter().filter(|p| mine.contains(&p.id)).collect())
}

fn gid(a: &Args<'_>) -> Result<String, FieldError> {
    a.opt_text("gid")
        .or(a.opt_text("id"))
        .map(str::to_string)
        .ok_or_else(|| err("gid is required"))
}

/// Checks `modify_group`'s member change before anything is written: the mode is given with
/// the users, and each user exists. The ids to change, and how.
fn member_change(
    a: &Args<'_>,
    p: &GroupProps,
) -> Result<Option<(Vec<String>, MemberUpdate)>, FieldError> {
    let Some(mode) = p.user_update_mode else {
        if p.user_uuids.is_some() {
            return Err(err(
                "user_uuids needs user_update_mode \"add\" or \"remove\"",
            ));
        }
        return Ok(None);
    };
    let ids = p.user_uuids.clone().unwrap_or_default().0;
    for id in &ids {
        if a.m.store.user_by_id(id).map_err(db)?.is_none() {
            return Err(err(format!("no user with id {id:?}")));
        }
    }
    Ok(Some((ids, mode)))
}

/// Adds or removes members (by user id) as `modify_group`'s `user_update_mode` says.
fn update_members(
    a: &Args<'_>,
    g: &ProjectRow,
    change: Option<(Vec<String>, MemberUpdate)>,
) -> Result<(), FieldError> {
    let Some((ids, mode)) = change else {
        return Ok(());
    };
    let add = mode == MemberUpdate::Add;
    for id in &ids {
        a.m.store.set_project_member(&g.name, id, add).map_err(db)?;
    }
    Ok(())
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    let store = &a.m.store;
    match (kind, field) {
        (OperationKind::Query, "groups") | (OperationKind::Query, "groups_by_name") => {
            let domain = a.opt_text("domain_name");
            let want_active = a.args.get("is_active").and_then(Value::as_bool);
            let name = if field == "groups_by_name" {
                Some(a.text("name")?)
            } else {
                None
            };
            let rows = visible(a, store.project_rows(domain).map_err(db)?)?;
            Ok(Value::Array(
                rows.iter()
                    .filter(|p| want_active.is_none_or(|w| p.is_active == w))
                    .filter(|p| name.is_none_or(|n| p.name == n))
                    .map(group_json)
                    .collect(),
            ))
        }
        (OperationKind::Query, "group") => {
            let id = gid(a)?;
            let found = store.project_by_id(&id).map_err(db)?;
            let rows = visible(a, found.into_iter().collect())?;
            Ok(rows.first().map(group_json).unwrap_or(Value::Null))
        }
        (OperationKind::Mutation, "create_group") => {
            a.admin_only("create groups")?;
            let name = a.text("name")?;
            check_name("group", name)?;
            let mut g = ProjectRow::new(name);
            apply(a, &mut g, &a.props()?)?;
            g.name = name.to_string();
            if !store.insert_project(&g).map_err(db)? {
                return Ok(json!({
                    "ok": false, "msg": format!("group {name:?} already exists"), "group": null,
                }));
            }
            let made = store.project_by_id(&g.id).map_err(db)?.unwrap_or(g);
            Ok(json!({"ok": true, "msg": "success", "group": group_json(&made)}))
        }
        (OperationKind::Mutation, "modify_group") | (OperationKind::Mutation, "delete_group") => {
            a.admin_only("change groups")?;
            let id = gid(a)?;
            let Some(mut g) = store.project_by_id(&id).map_err(db)? else {
                return Ok(refused(format!("no group with id {id:?}")));
            };
            let old_name = g.name.clone();
            let p: GroupProps = a.props()?;
            let members = if field == "delete_group" {
                g.is_active = false;
                None
            } else {
                apply(a, &mut g, &p)?;
                member_change(a, &p)?
            };
            if old_name == "default" && (g.name != old_name || !g.is_active) {
                return Ok(refused(
                    "the default group cannot be renamed or deactivated: bai puts new users there",
                ));
            }
            if g.name != old_name && store.project_exists(&g.name).map_err(db)? {
                return Ok(refused(format!("group {:?} already exists", g.name)));
            }
            store.update_project(&g).map_err(db)?;
            update_members(a, &g, members)?;
            Ok(ok())
        }
        (OperationKind::Mutation, "purge_group") => {
            a.admin_only("purge groups")?;
            let id = gid(a)?;
            if store
                .project_by_id(&id)
                .map_err(db)?
                .is_some_and(|g| g.name == "default")
            {
                return Ok(refused("the default group cannot be purged"));
            }
            // A refusal is an error, as Backend.AI raises it (the client reads a 400).
            match store.purge_project(&id).map_err(db)? {
                Ok(true) => Ok(ok()),
                Ok(false) => Ok(refused(format!("no group with id {id:?}"))),
                Err(PurgeRefusal::Sessions(n)) => Err(err(format!(
                    "the group still has {n} session(s) that have not ended: terminate them first"
                ))),
                Err(PurgeRefusal::Services(n)) => Err(err(format!(
                    "the group still has {n} model service(s): delete them first"
                ))),
                Err(PurgeRefusal::Folders(n)) => Err(err(format!(
                    "the group still has {n} project folder(s): delete them first"
                ))),
            }
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}
