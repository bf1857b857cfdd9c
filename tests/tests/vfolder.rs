//! Data folders end to end: the unmodified official client's vfolder commands and mounts in
//! real containers, against `baid up` and the real Docker engine.
//!
//! One test binary; the tests are grouped by what they cover: `folders` (commands, isolation,
//! project and automount folders), `data` (mounts, quotas, raw transfers), `hosts` (storage
//! hosts) and `sharing` (invitations, project-folder shares, clones). The helpers they share
//! are here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a test may panic on what it did not expect

#[path = "vfolder/data.rs"]
mod data;
#[path = "vfolder/folders.rs"]
mod folders;
#[path = "vfolder/hosts.rs"]
mod hosts;
#[path = "vfolder/sharing.rs"]
mod sharing;

use bai_e2e::{Run, Server};
use serde_json::{Value, json};
use std::path::PathBuf;

fn official() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.venv-official/bin/backend.ai")
}

fn ba(s: &Server, admin: bool, args: &[&str]) -> Run {
    let acct = if admin { &s.admin } else { &s.user };
    s.run_as(official(), acct, args)
}

fn client(s: &Server, admin: bool) -> bai_client::Client {
    s.client(if admin { &s.admin } else { &s.user })
}

/// A signed request through the SDK; Ok(reply) or Err((status, problem msg)).
fn api(
    s: &Server,
    admin: bool,
    method: &str,
    path: &str,
    body: Option<Value>,
) -> Result<Value, (u16, String)> {
    let c = client(s, admin);
    let m = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(c.send_json(m, path, body.as_ref()))
        .map_err(|e| (e.status().unwrap_or(0), e.to_string()))
}

/// The id (hex) of the user's folder `name`.
fn folder_id(s: &Server, admin: bool, name: &str) -> String {
    api(
        s,
        admin,
        "GET",
        "/folders/_/id",
        Some(json!({ "name": name })),
    )
    .unwrap_or_else(|e| panic!("id of {name}: {e:?}"))["id"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
