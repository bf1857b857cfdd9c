//! `GET|PUT /user/launcher-history`: the launcher's Recent History, per user, on the server.
//! It used to live in the browser under one key for every user of that browser, and stayed
//! after logout, so the next user saw (and could relaunch) the previous user's settings.

use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use bai_api::sessions::LauncherHistory;
use bai_core::Problem;
use bai_ground::identity::Caller;
use serde_json::Value;
use std::sync::Arc;

const KEY: &str = "launcher.history";

/// `GET /user/launcher-history`: the caller's own (empty at first).
pub async fn get(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
) -> ApiResult<Json<LauncherHistory>> {
    let stored = m.store.user_setting(&caller.user_id, KEY)?;
    let entries = stored
        .and_then(|t| serde_json::from_str::<Vec<Value>>(&t).ok())
        .unwrap_or_default();
    Ok(Json(LauncherHistory { entries }))
}

/// Checks what the UI sends: a list of at most 20 objects, each with a text `id` and
/// `label` and an object `settings`, 64 KiB in all.
pub fn check(body: &[u8]) -> Result<LauncherHistory, Problem> {
    if body.len() > LauncherHistory::MAX_BYTES {
        return Err(Problem::invalid(format!(
            "the history is larger than {} KiB",
            LauncherHistory::MAX_BYTES / 1024
        )));
    }
    let h: LauncherHistory = serde_json::from_slice(body).map_err(|e| {
        Problem::invalid(format!("the history must be {{\"entries\": [...]}}: {e}"))
    })?;
    if h.entries.len() > LauncherHistory::MAX_ENTRIES {
        return Err(Problem::invalid(format!(
            "at most {} history entries, not {}",
            LauncherHistory::MAX_ENTRIES,
            h.entries.len()
        )));
    }
    for (i, e) in h.entries.iter().enumerate() {
        let text = |k: &str| e.get(k).and_then(Value::as_str).is_some();
        if !text("id") || !text("label") || !e.get("settings").is_some_and(Value::is_object) {
            return Err(Problem::invalid(format!(
                "history entry {i} needs a text id and label and an object settings"
            )));
        }
    }
    Ok(h)
}

/// `PUT /user/launcher-history`: replaces the caller's history.
pub async fn put(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    body: Bytes,
) -> ApiResult<Json<LauncherHistory>> {
    let h = check(&body)?;
    let text = Problem::json_text(&h.entries)?;
    m.store.set_user_setting(&caller.user_id, KEY, &text)?;
    Ok(Json(h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_histories_of_bounded_size_are_kept() {
        let ok = br#"{"entries": [{"id": "1", "label": "a", "pinned": false, "settings": {}}]}"#;
        assert_eq!(check(ok).expect("ok").entries.len(), 1);
        for bad in [
            &br#"[]"#[..],
            br#"{"entries": [{"id": "1", "label": "a"}]}"#,
            br#"{"entries": [{"id": 1, "label": "a", "settings": {}}]}"#,
            br#"{"entries": "no"}"#,
        ] {
            assert_eq!(check(bad).expect_err("refused").status, 400);
        }
        let many = serde_json::json!({"entries": (0..21).map(|i| serde_json::json!({"id": i.to_string(), "label": "x", "settings": {}})).collect::<Vec<_>>()});
        assert!(check(many.to_string().as_bytes()).is_err());
        let big = serde_json::json!({"entries": [{"id": "1", "label": "x".repeat(70_000), "settings": {}}]});
        assert!(check(big.to_string().as_bytes()).is_err());
    }
}
