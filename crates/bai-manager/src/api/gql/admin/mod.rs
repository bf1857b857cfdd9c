//! Backend.AI's admin GraphQL, as the official client's `admin agent|domain|group|user|keypair|
//! keypair-resource-policy|scaling-group|storage` commands send it. One file per kind; every
//! field here is for administrators only, except what a user may read of their own.
//!
//! Mutations answer `{ok, msg, …}` as Backend.AI does: a refusal the caller can act on (a
//! name taken, something still running) is `ok: false` with the reason; a malformed request
//! is a GraphQL error.

mod agents;
mod domains;
mod groups;
mod kp_policies;
mod scaling_groups;
mod storage;
mod users;

use super::{db, err};
use crate::state::Manager;
use bai_gql::{FieldError, OperationKind};
use bai_ground::identity::Caller;
use serde_json::{Map, Value, json};

pub fn handles(field: &str) -> bool {
    agents::handles(field)
        || domains::handles(field)
        || groups::handles(field)
        || kp_policies::handles(field)
        || scaling_groups::handles(field)
        || storage::handles(field)
        || users::handles(field)
}

pub fn resolve(
    m: &Manager,
    caller: &Caller,
    kind: OperationKind,
    field: &str,
    args: &Map<String, Value>,
) -> Result<Value, FieldError> {
    let a = Args { m, caller, args };
    if agents::handles(field) {
        agents::resolve(&a, kind, field)
    } else if domains::handles(field) {
        domains::resolve(&a, kind, field)
    } else if groups::handles(field) {
        groups::resolve(&a, kind, field)
    } else if kp_policies::handles(field) {
        kp_policies::resolve(&a, kind, field)
    } else if scaling_groups::handles(field) {
        scaling_groups::resolve(&a, kind, field)
    } else if storage::handles(field) {
        storage::resolve(&a, kind, field)
    } else {
        users::resolve(&a, kind, field)
    }
}

/// What a resolver gets: the manager, who asks, and the field's arguments.
struct Args<'a> {
    m: &'a Manager,
    caller: &'a Caller,
    args: &'a Map<String, Value>,
}

impl Args<'_> {
    fn admin_only(&self, what: &str) -> Result<(), FieldError> {
        if self.caller.is_admin {
            Ok(())
        } else {
            Err(err(format!("only administrators may {what}")))
        }
    }

    /// A string argument, required.
    fn text(&self, key: &str) -> Result<&str, FieldError> {
        self.args
            .get(key)
            .and_then(Value::as_str)
            .ok_or_else(|| err(format!("{key} is required")))
    }

    fn opt_text(&self, key: &str) -> Option<&str> {
        self.args.get(key).and_then(Value::as_str)
    }

    /// The `props` input object read as its type (see [`super::args::props`]).
    fn props<T: serde::de::DeserializeOwned + Default>(&self) -> Result<T, FieldError> {
        super::args::props(self.args)
    }

    fn limit_offset(&self) -> (i64, i64) {
        let limit = self
            .args
            .get("limit")
            .and_then(Value::as_i64)
            .unwrap_or(20)
            .clamp(0, 1000);
        let offset = self
            .args
            .get("offset")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .max(0);
        (limit, offset)
    }
}

fn ok() -> Value {
    json!({"ok": true, "msg": "success"})
}

fn refused(msg: impl Into<String>) -> Value {
    json!({"ok": false, "msg": msg.into()})
}

/// A name of a domain, project or resource group: 1 to 64 characters, no control characters
/// and no surrounding spaces.
fn check_name(what: &str, name: &str) -> Result<(), FieldError> {
    if name.is_empty()
        || name.chars().count() > 64
        || name.trim() != name
        || name.chars().any(char::is_control)
    {
        return Err(err(format!(
            "{what} name {name:?} must be 1 to 64 characters without surrounding spaces"
        )));
    }
    Ok(())
}
