//! GraphQL of keypairs: `keypair` (the caller's own, or any by `access_key` for admins), and
//! for administrators `keypair_list`/`keypairs`, `create_keypair` (another keypair for a
//! user), `modify_keypair(access_key, props: {is_active, is_admin, rate_limit,
//! resource_policy})` and `delete_keypair` (refused while the keypair has a session that has
//! not ended or a service), as the official client's `admin keypair` commands send them.
//! Deactivating a keypair revokes it at once: its next signed request is refused (401).
//!
//! `secret_key` is answered only to signed requests (HMAC with a keypair's secret, as the
//! official client and `bai` make them): of the signing keypair itself (whoever signed holds
//! it already), and to an administrator for the keypairs it may read (as Backend.AI does: the
//! official test package's user template makes a user, then reads its secret with
//! `KeyPair.list`). A web session's request — even an administrator's — gets null: the web
//! UI's My keypair page makes a new secret and shows it once instead, and a stolen or forged
//! browser session cannot read any secret out.

use super::args::props;
use super::{db, err};
use crate::auth::Caller;
use crate::state::Manager;
use bai_api::resources::gql_inputs::KeypairProps;
use bai_gql::{FieldError, OperationKind};
use bai_store::{KeypairChange, KeypairInfo, KeypairRow, StillOwned};
use serde_json::{Map, Value, json};

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "keypair"
            | "modify_keypair"
            | "keypair_list"
            | "keypairs"
            | "create_keypair"
            | "delete_keypair"
    )
}

/// The secret key of `access_key` as answered to `caller` (who may read that keypair): only
/// to a signed request, of that keypair or of an administrator.
fn secret_for(caller: &Caller, signed: bool, access_key: &str, secret_key: &str) -> Value {
    if signed && (caller.access_key == access_key || caller.is_admin) {
        Value::String(secret_key.to_string())
    } else {
        Value::Null
    }
}

/// A keypair of a list, as Backend.AI's `KeyPair` type, with `secret` as its secret key.
fn info_json(m: &Manager, k: &KeypairInfo, secret: Value) -> Value {
    let projects: Vec<String> = m
        .store
        .projects_of_user(&k.user_id)
        .unwrap_or_default()
        .into_iter()
        .map(|(_, name)| name)
        .collect();
    json!({
        "user_id": k.email,
        "user": k.user_id,
        "projects": projects,
        "user_info": {"email": k.email, "full_name": k.full_name},
        "access_key": k.access_key,
        "secret_key": secret,
        "is_active": k.is_active,
        "is_admin": k.is_admin,
        "created_at": k.created_at,
        "modified_at": k.created_at,
        "last_used": Value::Null,
        "resource_policy": k.resource_policy,
        "rate_limit": k.rate_limit,
        "concurrency_used": k.concurrency_used,
        "num_queries": 0,
    })
}

fn admin_only(caller: &Caller, what: &str) -> Result<(), FieldError> {
    if caller.is_admin {
        Ok(())
    } else {
        Err(err(format!("only administrators may {what}")))
    }
}

/// A policy name given in props must exist.
fn policy_arg(m: &Manager, name: String) -> Result<String, FieldError> {
    let known = m.store.policies().map_err(db)?;
    if known.iter().any(|p| p.name == name) {
        Ok(name)
    } else {
        Err(err(format!("no keypair resource policy {name:?}")))
    }
}

fn rate_limit_arg(n: i64) -> Result<i64, FieldError> {
    if n >= 0 {
        Ok(n)
    } else {
        Err(err(format!(
            "rate_limit must be a whole number ≥ 0 (0: no limit), not {n}"
        )))
    }
}

/// A keypair as Backend.AI's `KeyPair` type, with `secret` as its secret key.
fn keypair_json(m: &Manager, kp: &KeypairRow, secret: Value) -> Value {
    json!({
        "user_id": kp.email,
        "user": kp.user_id,
        "access_key": kp.access_key,
        "secret_key": secret,
        "is_active": kp.is_active,
        "is_admin": kp.is_admin,
        "rate_limit": kp.rate_limit,
        "resource_policy": m
            .store
            .policy_of(&kp.access_key)
            .map(|p| p.name)
            .unwrap_or_else(|_| "default".into()),
    })
}

pub fn resolve(
    m: &Manager,
    caller: &Caller,
    signed: bool,
    kind: OperationKind,
    field: &str,
    args: &Map<String, Value>,
) -> Result<Value, FieldError> {
    let access_key = args.get("access_key").and_then(Value::as_str);
    match (kind, field) {
        (OperationKind::Query, "keypair") => {
            let ak = match access_key {
                Some(ak) if ak != caller.access_key && !caller.is_admin => {
                    return Err(err("only administrators may read another user's keypair"));
                }
                Some(ak) => ak,
                None => caller.access_key.as_str(),
            };
            let kp = m
                .store
                .keypair(ak)
                .map_err(db)?
                .ok_or_else(|| err(format!("no keypair {ak:?}")))?;
            let secret = secret_for(caller, signed, &kp.access_key, &kp.secret_key);
            Ok(keypair_json(m, &kp, secret))
        }
        (OperationKind::Mutation, "modify_keypair") => {
            admin_only(caller, "modify keypairs")?;
            let ak = access_key.ok_or_else(|| err("access_key is required"))?;
            if args.get("props").is_none_or(Value::is_null) {
                return Err(err("props is required"));
            }
            let p: KeypairProps = props(args)?;
            if p.concurrency_limit.is_some() {
                return Err(err(
                    "concurrency_limit cannot be changed here: only is_active, is_admin, \
                     rate_limit and resource_policy",
                ));
            }
            let change = KeypairChange {
                is_active: p.is_active,
                is_admin: p.is_admin,
                rate_limit: p.rate_limit.map(rate_limit_arg).transpose()?,
                resource_policy: p.resource_policy.map(|n| policy_arg(m, n)).transpose()?,
            };
            if ak == caller.access_key && change.is_admin == Some(false) {
                return Ok(
                    json!({"ok": false, "msg": "you cannot take the administrator flag off your own keypair"}),
                );
            }
            if ak == caller.access_key && change.is_active == Some(false) {
                return Ok(json!({"ok": false, "msg": "you cannot deactivate your own keypair"}));
            }
            let found = m.store.modify_keypair(ak, &change).map_err(db)?;
            Ok(if found {
                json!({"ok": true, "msg": "success"})
            } else {
                json!({"ok": false, "msg": format!("no keypair {ak:?}")})
            })
        }
        (OperationKind::Query, "keypair_list") | (OperationKind::Query, "keypairs") => {
            admin_only(caller, "list keypairs")?;
            let email = args.get("email").and_then(Value::as_str);
            let is_active = args.get("is_active").and_then(Value::as_bool);
            let (limit, offset) = if field == "keypairs" {
                (10_000, 0)
            } else {
                (
                    args.get("limit")
                        .and_then(Value::as_i64)
                        .unwrap_or(20)
                        .clamp(0, 1000),
                    args.get("offset")
                        .and_then(Value::as_i64)
                        .unwrap_or(0)
                        .max(0),
                )
            };
            let (rows, total) = m
                .store
                .keypair_list(email, is_active, limit, offset)
                .map_err(db)?;
            let items: Vec<Value> = rows
                .iter()
                .map(|k| {
                    let secret = secret_for(caller, signed, &k.access_key, &k.secret_key);
                    info_json(m, k, secret)
                })
                .collect();
            Ok(if field == "keypairs" {
                Value::Array(items)
            } else {
                json!({"items": items, "total_count": total})
            })
        }
        (OperationKind::Mutation, "create_keypair") => {
            admin_only(caller, "create keypairs")?;
            let email = args
                .get("user_id")
                .and_then(Value::as_str)
                .ok_or_else(|| err("user_id (the user's email) is required"))?;
            let p: KeypairProps = props(args)?;
            let (ak, sk) = bai_core::sign::new_keypair();
            let mut k = KeypairInfo {
                access_key: ak.clone(),
                secret_key: sk,
                user_id: String::new(),
                email: email.to_string(),
                full_name: String::new(),
                is_active: true,
                is_admin: false,
                resource_policy: "default".into(),
                rate_limit: 10_000,
                created_at: String::new(),
                concurrency_used: 0,
            };
            if let Some(b) = p.is_active {
                k.is_active = b;
            }
            if let Some(b) = p.is_admin {
                k.is_admin = b;
            }
            if let Some(n) = p.rate_limit {
                k.rate_limit = rate_limit_arg(n)?;
            }
            if let Some(name) = p.resource_policy {
                k.resource_policy = policy_arg(m, name)?;
            }
            if !m.store.add_keypair(email, &k).map_err(db)? {
                return Ok(
                    json!({"ok": false, "msg": format!("no user {email:?}"), "keypair": null}),
                );
            }
            let (rows, _) = m
                .store
                .keypair_list(Some(email), None, 1000, 0)
                .map_err(db)?;
            let made = rows
                .iter()
                .find(|r| r.access_key == ak)
                // Made just now by this administrator: its secret is shown this once.
                .map(|r| info_json(m, r, Value::String(r.secret_key.clone())));
            Ok(json!({"ok": true, "msg": "success", "keypair": made}))
        }
        (OperationKind::Mutation, "delete_keypair") => {
            admin_only(caller, "delete keypairs")?;
            let ak = access_key.ok_or_else(|| err("access_key is required"))?;
            if ak == caller.access_key {
                return Ok(
                    json!({"ok": false, "msg": "you cannot delete the keypair you are signed in with"}),
                );
            }
            Ok(match m.store.delete_keypair(ak).map_err(db)? {
                Ok(true) => json!({"ok": true, "msg": "success"}),
                Ok(false) => json!({"ok": false, "msg": format!("no keypair {ak:?}")}),
                Err(StillOwned::Sessions(n)) => json!({"ok": false, "msg": format!(
                    "keypair {ak:?} still has {n} session(s) that have not ended: terminate them first"
                )}),
                Err(StillOwned::Services(n) | StillOwned::Folders(n)) => {
                    json!({"ok": false, "msg": format!(
                        "keypair {ak:?} still owns {n} model service(s): delete them first"
                    )})
                }
            })
        }
        _ => Err(err(format!("unknown field {field}"))),
    }
}
