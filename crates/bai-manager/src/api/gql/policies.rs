//! GraphQL of user resource policies, as the official client's `admin user-resource-policy`
//! commands ask: `user_resource_policy`, `user_resource_policies`,
//! `create_user_resource_policy`, `modify_user_resource_policy`,
//! `delete_user_resource_policy` (`modify_user`, in `gql::admin`, gives a user one). Users read their own policy; only admins read others' and change them.

use super::args::props;
use super::{db, err};
use crate::auth::Caller;
use crate::state::Manager;
use bai_api::resources::gql_inputs::UserPolicyProps;
use bai_gql::{FieldError, OperationKind};
use bai_store::UserPolicyRow;
use serde_json::{Map, Value, json};
use std::sync::Arc;

pub fn handles(field: &str) -> bool {
    matches!(
        field,
        "user_resource_policy"
            | "user_resource_policies"
            | "create_user_resource_policy"
            | "modify_user_resource_policy"
            | "delete_user_resource_policy"
    )
}

/// A policy as Backend.AI's `UserResourcePolicy` type.
pub fn policy_json(p: &UserPolicyRow) -> Value {
    json!({
        "id": p.name,
        "name": p.name,
        "created_at": (!p.created_at.is_empty()).then_some(&p.created_at),
        "max_vfolder_count": p.max_vfolder_count,
        "max_quota_scope_size": p.max_quota_scope_size,
        "max_session_count_per_model_session": p.max_session_count_per_model_session,
        "max_customized_image_count": p.max_customized_image_count,
    })
}

fn admin_only(caller: &Caller, what: &str) -> Result<(), FieldError> {
    if caller.is_admin {
        Ok(())
    } else {
        Err(err(format!("only administrators may {what}")))
    }
}

fn name_arg(args: &Map<String, Value>) -> Result<&str, FieldError> {
    let name = args
        .get("name")
        .and_then(Value::as_str)
        .map(str::trim)
        .unwrap_or_default();
    if name.is_empty() || name.len() > 64 {
        return Err(err("name must be 1 to 64 characters"));
    }
    Ok(name)
}

/// Reads `props` over `p`: every limit a whole number, folders ≥ 0, bytes ≥ -1, replicas and
/// images ≥ 0 (bai's limit of replicas per service is its most).
fn apply_props(p: &mut UserPolicyRow, props: UserPolicyProps) -> Result<(), FieldError> {
    let limits = [
        (
            props.max_vfolder_count,
            &mut p.max_vfolder_count,
            "max_vfolder_count",
            0,
            i64::MAX,
        ),
        (
            props.max_quota_scope_size,
            &mut p.max_quota_scope_size,
            "max_quota_scope_size",
            -1,
            i64::MAX,
        ),
        (
            props.max_session_count_per_model_session,
            &mut p.max_session_count_per_model_session,
            "max_session_count_per_model_session",
            0,
            i64::from(bai_core::serving::MAX_REPLICAS),
        ),
        (
            props.max_customized_image_count,
            &mut p.max_customized_image_count,
            "max_customized_image_count",
            0,
            1_000,
        ),
    ];
    for (given, field, name, min, max) in limits {
        if let Some(n) = given {
            *field = n.within(name, min, max).map_err(err)?;
        }
    }
    Ok(())
}

pub fn resolve(
    m: &Arc<Manager>,
    caller: &Caller,
    kind: OperationKind,
    field: &str,
    args: &Map<String, Value>,
) -> Result<Value, FieldError> {
    match (kind, field) {
        (OperationKind::Query, "user_resource_policy") => {
            let own = m.store.user_policy_of(&caller.user_id).map_err(db)?;
            match args.get("name").and_then(Value::as_str) {
                None | Some("") => Ok(policy_json(&own)),
                Some(n) if n == own.name => Ok(policy_json(&own)),
                Some(n) => {
                    admin_only(caller, "read another user's resource policy")?;
                    Ok(m.store
                        .user_policy(n)
                        .map_err(db)?
                        .map(|p| policy_json(&p))
                        .unwrap_or(Value::Null))
                }
            }
        }
        (OperationKind::Query, "user_resource_policies") => {
            admin_only(caller, "list user resource policies")?;
            Ok(Value::Array(
                m.store
                    .user_policies()
                    .map_err(db)?
                    .iter()
                    .map(policy_json)
                    .collect(),
            ))
        }
        (OperationKind::Mutation, "create_user_resource_policy") => {
            admin_only(caller, "create user resource policies")?;
            let mut p = UserPolicyRow::new(name_arg(args)?);
            apply_props(&mut p, props(args)?)?;
            if !m.store.create_user_policy(&p).map_err(db)? {
                return Ok(
                    json!({"ok": false, "msg": format!("user resource policy {:?} already exists", p.name), "resource_policy": null}),
                );
            }
            let made = m.store.user_policy(&p.name).map_err(db)?.unwrap_or(p);
            Ok(json!({"ok": true, "msg": "success", "resource_policy": policy_json(&made)}))
        }
        (OperationKind::Mutation, "modify_user_resource_policy") => {
            admin_only(caller, "change user resource policies")?;
            let name = name_arg(args)?;
            let Some(mut p) = m.store.user_policy(name).map_err(db)? else {
                return Ok(
                    json!({"ok": false, "msg": format!("no user resource policy {name:?}")}),
                );
            };
            apply_props(&mut p, props(args)?)?;
            m.store.modify_user_policy(&p).map_err(db)?;
            Ok(json!({"ok": true, "msg": "success"}))
        }
        (OperationKind::Mutation, "delete_user_resource_policy") => {
            admin_only(caller, "delete user resource policies")?;
            let name = name_arg(args)?;
            if name == "default" {
                return Ok(
                    json!({"ok": false, "msg": "the default user resource policy cannot be deleted"}),
                );
            }
            let held = m.store.users_with_policy(name).map_err(db)?;
            if held > 0 {
                return Ok(json!({"ok": false, "msg": format!(
                    "user resource policy {name:?} is held by {held} user(s); give them another first"
                )}));
            }
            Ok(if m.store.delete_user_policy(name).map_err(db)? {
                json!({"ok": true, "msg": "success"})
            } else {
                json!({"ok": false, "msg": format!("no user resource policy {name:?}")})
            })
        }
        _ => Err(err(format!("{field} is not supported"))),
    }
}
