//! Users: `user_list`, `users`, `user`, `user_from_uuid`, `create_user`, `modify_user`,
//! `delete_user` (status `deleted`: their keypairs stop working) and `purge_user` (deletes a
//! user with nothing left running and no folders). An inactive or deleted user's requests and
//! web logins are refused. Administrators cannot lock themselves out (demote, deactivate,
//! delete or purge their own account).

use super::{Args, db, err, ok, refused};
use bai_api::resources::gql_inputs::UserProps;
use bai_gql::{FieldError, OperationKind};
use bai_store::{NewUser, StillOwned, UserField, UserFilter, UserInfo};
use serde_json::{Value, json};

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "user_list"
            | "users"
            | "user"
            | "user_from_uuid"
            | "create_user"
            | "modify_user"
            | "delete_user"
            | "purge_user"
    )
}

const ROLES: &[&str] = &["superadmin", "admin", "user", "monitor"];
const STATUSES: &[&str] = &["active", "inactive", "deleted", "before-verification"];

/// A user as Backend.AI's `User` type.
fn user_json(a: &Args<'_>, u: &UserInfo) -> Value {
    let groups: Vec<Value> =
        a.m.store
            .projects_of_user(&u.id)
            .unwrap_or_default()
            .into_iter()
            .map(|(id, name)| json!({"id": id, "name": name}))
            .collect();
    json!({
        "id": u.id,
        "uuid": u.id,
        "username": u.username,
        "email": u.email,
        "need_password_change": u.need_password_change,
        "full_name": u.full_name,
        "description": u.description,
        "is_active": u.status == "active",
        "status": u.status,
        "status_info": Value::Null,
        "created_at": u.created_at,
        "modified_at": u.created_at,
        "domain_name": u.domain_name,
        "role": u.role,
        "resource_policy": u.resource_policy,
        "allowed_client_ip": Value::Null,
        "totp_activated": false,
        "sudo_session_enabled": false,
        "main_access_key": u.main_access_key,
        "container_uid": Value::Null,
        "container_main_gid": Value::Null,
        "container_gids": Value::Null,
        "groups": groups,
    })
}

/// `field == "value"` of a Backend.AI filter expression, on a field users can be found by.
fn user_filter(filter: &str) -> Result<Option<(UserField, String)>, FieldError> {
    let filter = filter.trim();
    if filter.is_empty() {
        return Ok(None);
    }
    let parsed = filter.split_once("==").and_then(|(f, v)| {
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| v.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))?;
        Some((UserField::parse(f.trim())?, v.to_string()))
    });
    parsed.map(Some).ok_or_else(|| {
        err(format!(
            "filter {filter:?} is not supported: use FIELD == \"VALUE\" with FIELD one of \
             username, email, full_name, role, status, domain_name"
        ))
    })
}

fn one_of(key: &str, v: &str, allowed: &[&str]) -> Result<(), FieldError> {
    if allowed.contains(&v) {
        Ok(())
    } else {
        Err(err(format!(
            "{key} {v:?} is not one of {}",
            allowed.join(", ")
        )))
    }
}

/// Fields bai does not have, accepted only with their "off" value.
fn refuse_unsupported(p: &UserProps) -> Result<(), FieldError> {
    if p.totp_activated == Some(true) {
        return Err(err("TOTP is not available on this server"));
    }
    if p.sudo_session_enabled == Some(true) {
        return Err(err("sudo in sessions is not available on this server"));
    }
    if p.allowed_client_ip
        .as_ref()
        .is_some_and(|l| !l.0.is_empty())
    {
        return Err(err("allowed_client_ip is not available on this server"));
    }
    for (k, v) in [
        ("container_uid", &p.container_uid),
        ("container_main_gid", &p.container_main_gid),
        ("container_gids", &p.container_gids),
        ("main_access_key", &p.main_access_key),
    ] {
        if v.is_some() {
            return Err(err(format!("{k} cannot be set on this server")));
        }
    }
    Ok(())
}

/// Applies the profile fields of `p` to `u`, checking each against the store.
fn apply(a: &Args<'_>, u: &mut UserInfo, p: &UserProps) -> Result<(), FieldError> {
    refuse_unsupported(p)?;
    if let Some(v) = &p.username {
        if v.trim().is_empty() || v.chars().count() > 64 {
            return Err(err("username must be 1 to 64 characters"));
        }
        u.username = v.clone();
    }
    if let Some(v) = &p.full_name {
        u.full_name = v.clone();
    }
    if let Some(v) = &p.description {
        u.description = v.clone();
    }
    if let Some(v) = p.need_password_change {
        u.need_password_change = v;
    }
    if let Some(v) = p.is_active {
        u.status = if v { "active" } else { "inactive" }.into();
    }
    if let Some(v) = &p.status {
        one_of("status", v, STATUSES)?;
        u.status = v.clone();
    }
    if let Some(v) = &p.role {
        one_of("role", v, ROLES)?;
        u.role = v.clone();
    }
    if let Some(v) = &p.domain_name {
        if a.m.store.domain(v).map_err(db)?.is_none() {
            return Err(err(format!("no domain {v:?}")));
        }
        u.domain_name = v.clone();
    }
    if let Some(v) = &p.resource_policy {
        if a.m.store.user_policy(v).map_err(db)?.is_none() {
            return Err(err(format!("no user resource policy {v:?}")));
        }
        u.resource_policy = v.clone();
    }
    Ok(())
}

/// The password's hash, when `p` sets one.
fn password_hash(p: &UserProps) -> Result<Option<String>, FieldError> {
    match p.password.as_deref() {
        None => Ok(None),
        Some("") => Err(err("password must not be empty")),
        Some(pw) => bai_ground::browsers::hash_password(pw)
            .map(Some)
            .map_err(|e| err(format!("hashing the password failed: {e}"))),
    }
}

/// The project ids of `group_ids`, each checked.
fn project_ids(a: &Args<'_>, p: &UserProps) -> Result<Option<Vec<String>>, FieldError> {
    let Some(ids) = p.group_ids.clone().map(|l| l.0) else {
        return Ok(None);
    };
    for id in &ids {
        if a.m.store.project_by_id(id).map_err(db)?.is_none() {
            return Err(err(format!("no project (group) with id {id:?}")));
        }
    }
    Ok(Some(ids))
}

fn username_taken(a: &Args<'_>, username: &str, except: &str) -> Result<bool, FieldError> {
    let (found, _) =
        a.m.store
            .user_list(&UserFilter {
                field: Some((UserField::Username, username.to_string())),
                limit: 2,
                ..Default::default()
            })
            .map_err(db)?;
    Ok(found.iter().any(|u| u.id != except))
}

pub(super) fn resolve(a: &Args<'_>, kind: OperationKind, field: &str) -> Result<Value, FieldError> {
    let store = &a.m.store;
    match (kind, field) {
        (OperationKind::Query, "user_list") | (OperationKind::Query, "users") => {
            a.admin_only("list users")?;
            let (limit, offset) = if field == "users" {
                (1000, 0)
            } else {
                a.limit_offset()
            };
            let mut status = a.opt_text("status").map(str::to_string);
            if let Some(active) = a.args.get("is_active").and_then(Value::as_bool) {
                status = Some(if active { "active" } else { "inactive" }.into());
            }
            let filter = UserFilter {
                status,
                project_id: a.opt_text("group_id").map(str::to_string),
                field: user_filter(a.opt_text("filter").unwrap_or(""))?,
                limit,
                offset,
            };
            let (rows, total) = store.user_list(&filter).map_err(db)?;
            let items: Vec<Value> = rows.iter().map(|u| user_json(a, u)).collect();
            Ok(if field == "users" {
                Value::Array(items)
            } else {
                json!({"items": items, "total_count": total})
            })
        }
        (OperationKind::Query, "user") | (OperationKind::Query, "user_from_uuid") => {
            let found = match (a.opt_text("email"), a.opt_text("user_id")) {
                (Some(email), _) => store.user_by_email(email).map_err(db)?,
                (None, Some(id)) => store.user_by_id(id).map_err(db)?,
                (None, None) => store.user_by_id(&a.caller.user_id).map_err(db)?,
            };
            match found {
                Some(u) if u.id == a.caller.user_id => Ok(user_json(a, &u)),
                Some(u) => {
                    a.admin_only("read other users")?;
                    Ok(user_json(a, &u))
                }
                None => Ok(Value::Null),
            }
        }
        (OperationKind::Mutation, "create_user") => {
            a.admin_only("create users")?;
            let email = a.text("email")?.trim().to_string();
            if !email.contains('@') || email.len() > 128 || email.chars().any(char::is_whitespace) {
                return Err(err(format!("email {email:?} is not an email address")));
            }
            if store.user_by_email(&email).map_err(db)?.is_some() {
                return Ok(
                    json!({"ok": false, "msg": format!("user {email:?} already exists"), "user": null}),
                );
            }
            let p: UserProps = a.props()?;
            let Some(hash) = password_hash(&p)? else {
                return Err(err("password is required"));
            };
            let (ak, sk) = bai_core::sign::new_keypair();
            let mut u = UserInfo {
                id: uuid::Uuid::new_v4().to_string(),
                username: email.split('@').next().unwrap_or(&email).to_string(),
                email: email.clone(),
                full_name: String::new(),
                description: String::new(),
                role: "user".into(),
                status: "active".into(),
                need_password_change: false,
                domain_name: "default".into(),
                resource_policy: "default".into(),
                created_at: String::new(),
                main_access_key: Some(ak.clone()),
            };
            apply(a, &mut u, &p)?;
            if u.role == "superadmin" && !is_superadmin(a) {
                return Err(err("only a superadmin may create another superadmin"));
            }
            if username_taken(a, &u.username, &u.id)? {
                return Ok(
                    json!({"ok": false, "msg": format!("username {:?} is taken", u.username), "user": null}),
                );
            }
            let new = NewUser {
                info: u,
                password_hash: Some(hash),
                access_key: ak,
                secret_key: sk,
                project_ids: project_ids(a, &p)?.unwrap_or_default(),
            };
            if !store.create_user(&new).map_err(db)? {
                return Ok(
                    json!({"ok": false, "msg": format!("user {email:?} already exists"), "user": null}),
                );
            }
            let made = store.user_by_email(&email).map_err(db)?;
            Ok(json!({
                "ok": true, "msg": "success",
                "user": made.map(|u| user_json(a, &u)),
            }))
        }
        (OperationKind::Mutation, "modify_user") => {
            a.admin_only("change users")?;
            let email = a.text("email")?;
            let Some(mut u) = store.user_by_email(email).map_err(db)? else {
                return Ok(refused(format!("no user {email:?}")));
            };
            let p: UserProps = a.props()?;
            apply(a, &mut u, &p)?;
            if u.id == a.caller.user_id
                && (u.status != "active" || !bai_store::is_admin_role(&u.role))
            {
                return Ok(refused(
                    "you cannot deactivate your own account or give up your own administrator role",
                ));
            }
            if u.role == "superadmin" && !is_superadmin(a) {
                return Err(err("only a superadmin may make another superadmin"));
            }
            if username_taken(a, &u.username, &u.id)? {
                return Ok(refused(format!("username {:?} is taken", u.username)));
            }
            let hash = password_hash(&p)?;
            let groups = project_ids(a, &p)?;
            store
                .update_user(&u, hash.as_deref(), groups.as_deref())
                .map_err(db)?;
            Ok(ok())
        }
        (OperationKind::Mutation, "delete_user") => {
            a.admin_only("delete users")?;
            let email = a.text("email")?;
            let Some(mut u) = store.user_by_email(email).map_err(db)? else {
                return Ok(refused(format!("no user {email:?}")));
            };
            if u.id == a.caller.user_id {
                return Ok(refused("you cannot delete your own account"));
            }
            u.status = "deleted".into();
            store.update_user(&u, None, None).map_err(db)?;
            Ok(ok())
        }
        (OperationKind::Mutation, "purge_user") => {
            a.admin_only("purge users")?;
            let email = a.text("email")?;
            if email == a.caller.email {
                return Ok(refused("you cannot purge your own account"));
            }
            Ok(match store.purge_user(email).map_err(db)? {
                Ok(true) => ok(),
                Ok(false) => refused(format!("no user {email:?}")),
                Err(StillOwned::Sessions(n)) => refused(format!(
                    "user {email:?} still has {n} session(s) that have not ended: terminate them first"
                )),
                Err(StillOwned::Services(n)) => refused(format!(
                    "user {email:?} still has {n} model service(s): delete them first"
                )),
                Err(StillOwned::Folders(n)) => refused(format!(
                    "user {email:?} still owns {n} data folder(s): delete them first, nothing is deleted with the user"
                )),
            })
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}

fn is_superadmin(a: &Args<'_>) -> bool {
    a.m.store
        .user_by_id(&a.caller.user_id)
        .ok()
        .flatten()
        .is_some_and(|u| u.role == "superadmin")
}
