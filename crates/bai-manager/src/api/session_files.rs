//! `GET /session/{ref}/files`: one directory of the session's main kernel, as the official
//! SDK's `list_files` reads it (the path in a JSON body, or `?path=`; `files` is a JSON text).
//! `GET /session/{ref}/dependency-graph`: the sessions it waits for, recursively.

use super::visible_session;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::Extension;
use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use bai_api::body::{Fields, Lookup};
use bai_api::sessions::{DependencyNode, FileListing};
use bai_core::Problem;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// The path asked for: `path` of a JSON body, else `?path=`, else the working directory.
fn asked_path(body: &Bytes, q: &HashMap<String, String>) -> ApiResult<String> {
    if !body.is_empty() {
        match Fields::read(body)?.lookup("path") {
            Lookup::Absent => {}
            Lookup::Text(s) => return Ok(s),
            Lookup::Null => return Ok(".".into()),
            Lookup::Other(other) => {
                return Err(Problem::invalid(format!("path {other} must be a string")).into());
            }
        }
    }
    Ok(q.get("path").cloned().unwrap_or_else(|| ".".into()))
}

/// Where `path` is inside the kernel (relative paths are under /home/work).
fn absolute(path: &str) -> String {
    if path.starts_with('/') {
        path.to_string()
    } else if path.is_empty() || path == "." {
        "/home/work".to_string()
    } else {
        format!("/home/work/{}", path.trim_start_matches("./"))
    }
}

pub async fn list_files(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
    Query(q): Query<HashMap<String, String>>,
    body: Bytes,
) -> ApiResult<Json<FileListing>> {
    let row = visible_session(&m, &caller, &reference)?;
    let path = asked_path(&body, &q)?;
    if path.contains('\0') {
        return Err(Problem::invalid("path contains a NUL byte").into());
    }
    if !row.state.status.is_up() {
        return Err(Problem::new(
            409,
            "invalid-session-state",
            "Invalid session state.",
            format!(
                "session {:?} is {}: its files can be listed only while it runs",
                row.name, row.state.status
            ),
        )
        .into());
    }
    let agent = m.agents.holding(&row)?;
    let entries = agent
        .rpc
        .list_files(row.main_kernel_id, path.clone())
        .await?;
    let files = serde_json::to_string(&entries).unwrap_or_else(|_| "[]".into());
    Ok(Json(FileListing {
        files,
        errors: None,
        abspath: absolute(&path),
    }))
}

/// How deep a dependency graph is followed (cycles cannot be made, but rows are data).
const MAX_DEPTH: usize = 32;

fn node(
    m: &Manager,
    id: Uuid,
    seen: &mut HashSet<Uuid>,
    depth: usize,
) -> ApiResult<DependencyNode> {
    let Some(row) = m.store.session(id)? else {
        return Ok(DependencyNode {
            session_id: id.to_string(),
            session_name: None,
            status: None,
            status_changed: None,
            depends_on: Vec::new(),
        });
    };
    let mut depends_on = Vec::new();
    if depth < MAX_DEPTH && seen.insert(id) {
        for d in &row.spec.dependencies {
            depends_on.push(node(m, *d, seen, depth + 1)?);
        }
        seen.remove(&id);
    }
    Ok(DependencyNode {
        session_id: row.id.to_string(),
        session_name: Some(row.name),
        status: Some(row.state.status),
        status_changed: Some(row.state.status_changed),
        depends_on,
    })
}

pub async fn dependency_graph(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(reference): Path<String>,
) -> ApiResult<Json<DependencyNode>> {
    let row = visible_session(&m, &caller, &reference)?;
    Ok(Json(node(&m, row.id, &mut HashSet::new(), 0)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_come_from_the_body_or_the_query() {
        let q = HashMap::from([("path".to_string(), "q".to_string())]);
        let body = Bytes::from_static(br#"{"path": "/home/work/x"}"#);
        assert_eq!(asked_path(&body, &q).ok().as_deref(), Some("/home/work/x"));
        assert_eq!(asked_path(&Bytes::new(), &q).ok().as_deref(), Some("q"));
        assert_eq!(
            asked_path(&Bytes::new(), &HashMap::new()).ok().as_deref(),
            Some(".")
        );
        assert!(asked_path(&Bytes::from_static(b"{\"path\": 3}"), &q).is_err());
        assert_eq!(absolute("."), "/home/work");
        assert_eq!(absolute("sub/dir"), "/home/work/sub/dir");
        assert_eq!(absolute("/tmp"), "/tmp");
    }
}
