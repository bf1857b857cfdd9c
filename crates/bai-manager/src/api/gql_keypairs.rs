//! GraphQL of keypairs: `keypair` (the caller's own, or any by `access_key` for admins) and
//! `modify_keypair(access_key, props: {is_active, rate_limit})` for administrators, as the
//! official client's `admin keypair update` sends it. Deactivating a keypair revokes it at
//! once: its next signed request is refused (401).

use crate::auth::Caller;
use crate::state::Manager;
use bai_gql::{FieldError, OperationKind};
use bai_store::{KeypairChange, KeypairRow};
use serde_json::{Map, Value, json};

fn err(msg: impl Into<String>) -> FieldError {
    FieldError::new(msg)
}

pub fn handles(field: &str) -> bool {
    matches!(field, "keypair" | "modify_keypair")
}

/// A keypair as Backend.AI's `KeyPair` type.
fn keypair_json(m: &Manager, kp: &KeypairRow) -> Value {
    json!({
        "user_id": kp.email,
        "user": kp.user_id,
        "access_key": kp.access_key,
        "secret_key": kp.secret_key,
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
                .map_err(|e| err(e.to_string()))?
                .ok_or_else(|| err(format!("no keypair {ak:?}")))?;
            Ok(keypair_json(m, &kp))
        }
        (OperationKind::Mutation, "modify_keypair") => {
            if !caller.is_admin {
                return Err(err("only administrators may modify keypairs"));
            }
            let ak = access_key.ok_or_else(|| err("access_key is required"))?;
            let props = args
                .get("props")
                .and_then(Value::as_object)
                .ok_or_else(|| err("props is required"))?;
            let mut change = KeypairChange::default();
            for (k, v) in props {
                match (k.as_str(), v) {
                    (_, Value::Null) => {}
                    ("is_active", Value::Bool(b)) => change.is_active = Some(*b),
                    ("rate_limit", v) => {
                        let n = v.as_i64().filter(|n| *n >= 0).ok_or_else(|| {
                            err(format!(
                                "rate_limit must be a whole number ≥ 0 (0: no limit), not {v}"
                            ))
                        })?;
                        change.rate_limit = Some(n);
                    }
                    ("is_active", v) => {
                        return Err(err(format!("is_active must be true or false, not {v}")));
                    }
                    (other, _) => {
                        return Err(err(format!(
                            "{other} cannot be changed here: only is_active and rate_limit"
                        )));
                    }
                }
            }
            if ak == caller.access_key && change.is_active == Some(false) {
                return Ok(json!({"ok": false, "msg": "you cannot deactivate your own keypair"}));
            }
            let found = m
                .store
                .modify_keypair(ak, &change)
                .map_err(|e| err(e.to_string()))?;
            Ok(if found {
                json!({"ok": true, "msg": "success"})
            } else {
                json!({"ok": false, "msg": format!("no keypair {ak:?}")})
            })
        }
        _ => Err(err(format!("unknown field {field}"))),
    }
}
