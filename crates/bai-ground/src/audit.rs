//! Writing the audit log. Every signed request that changes something is recorded by the
//! API's authentication layer (`record_request`), with the route it matched and its answer,
//! so a new route cannot be left out; GraphQL records each mutation field; web logins
//! record themselves. A failure to write is logged, never the caller's problem.

use crate::identity::Caller;
use bai_store::{AuditEntry, Store};
use std::sync::Arc;

/// What a handler names as the thing it acted on when the path does not (the id of a
/// session it created), put in the response's extensions.
#[derive(Debug, Clone)]
pub struct AuditTarget(pub String);

/// Records one action. `outcome`: Ok, or Err with why it was refused.
pub fn record(
    store: &Store,
    actor: &str,
    access_key: Option<&str>,
    action: &str,
    target: &str,
    outcome: Result<(), &str>,
) {
    let (outcome, detail) = match outcome {
        Ok(()) => ("ok", ""),
        Err(why) => ("refused", why),
    };
    if let Err(e) = store.add_audit(&AuditEntry {
        actor,
        access_key,
        action,
        target,
        outcome,
        detail,
    }) {
        tracing::error!(error = %e, action, "could not write the audit log");
    }
}

/// Whether a request of this method changes something (and is audited).
pub fn changes(method: &axum::http::Method) -> bool {
    !matches!(
        *method,
        axum::http::Method::GET | axum::http::Method::HEAD | axum::http::Method::OPTIONS
    )
}

/// Records a signed request that changed (or tried to change) something: the action is
/// `METHOD route`, the target what the handler named or else the path, the outcome the
/// answer's status.
pub fn record_request(
    store: &Store,
    caller: &Caller,
    method: &str,
    route: &str,
    path: &str,
    status: u16,
    target: Option<&AuditTarget>,
) {
    let target = target.map(|t| t.0.as_str()).unwrap_or(path);
    let action = format!("{method} {route}");
    let code = status.to_string();
    let outcome = if status < 400 {
        Ok(())
    } else {
        Err(code.as_str())
    };
    record(
        store,
        &caller.email,
        Some(&caller.access_key),
        &action,
        target,
        outcome,
    );
}

/// Deletes audit entries older than `retention` (None: kept for good), now and every hour.
pub fn spawn_pruner(store: Arc<Store>, retention: Option<std::time::Duration>) {
    let Some(keep) = retention else {
        return;
    };
    crate::hourly::spawn("audit log pruning", move || prune(&store, keep));
}

/// One pruning: entries older than `keep` go.
pub fn prune(store: &Store, keep: std::time::Duration) {
    let Some(before) = bai_store::time_before(keep) else {
        return;
    };
    match store.prune_audit(&before) {
        Ok(0) => {}
        Ok(n) => tracing::info!(entries = n, before = %before, "audit log pruned"),
        Err(e) => tracing::warn!(error = %e, "could not prune the audit log"),
    }
}
