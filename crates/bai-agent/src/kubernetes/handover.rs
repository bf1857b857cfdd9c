//! What goes into a detached kernel through its runner (`--runner-reach network`: the
//! agent shares no disk with it): uploads into its home and its session's host table. Each
//! is a `put` request to krunner, which writes as the kernel's user, refuses any path that
//! leaves the home or follows a link, and writes in place.

use super::hosts::Push;
use super::{Inner, ready};
use crate::paths::confined_join;
use crate::runner;
use bai_core::agent::AgentError;
use std::net::IpAddr;
use std::path::Path;
use uuid::Uuid;

/// Raw bytes per `put` (a request line is at most 64 MiB of base64 on krunner's side).
const CHUNK: usize = 16 << 20;

/// Uploads `files` into the kernel's `/home/work`, each path relative to it.
pub async fn upload(
    inner: &Inner,
    kernel: Uuid,
    files: Vec<(String, bytes::Bytes)>,
) -> Result<(), AgentError> {
    let at = ready::runner_of(inner, kernel).await?;
    for (path, data) in files {
        let rel = confined_join(Path::new(""), &path)
            .map_err(|e| AgentError::BadRequest(format!("cannot upload {path:?}: {e}")))?;
        let rel = rel.display().to_string();
        let mut chunks = data.chunks(CHUNK);
        let first = chunks.next().unwrap_or_default();
        runner::put(at.clone(), kernel, "home", &rel, first, 0o644, false).await?;
        for more in chunks {
            runner::put(at.clone(), kernel, "home", &rel, more, 0o644, true).await?;
        }
    }
    Ok(())
}

/// Sends each detached kernel's host table through its runner, in order.
async fn push(inner: &Inner, tables: Vec<Push>) -> Result<(), AgentError> {
    for (kernel, text) in tables {
        let at = ready::runner_of(inner, kernel).await?;
        runner::put(at, kernel, "run", "hosts", text.as_bytes(), 0o644, false).await?;
    }
    Ok(())
}

/// The kernel's pod runs at `addr`: every table of its session on this agent says so (the
/// detached kernels' through their runners; one change at a time, so a later table is never
/// overtaken by an earlier one).
pub async fn host_up(
    inner: &Inner,
    session: Uuid,
    kernel: Uuid,
    addr: IpAddr,
) -> Result<(), AgentError> {
    let _one = inner.hosts_sent.lock().await;
    let tables = inner.hosts.up(session, kernel, addr)?;
    super::egress::node::peers(inner, session).await?;
    push(inner, tables).await
}

/// The manager told the whole table of a multi-node session: every table of it on this
/// agent lists them all.
pub async fn hosts_told(
    inner: &Inner,
    session: Uuid,
    hosts: Vec<(String, IpAddr)>,
) -> Result<(), AgentError> {
    let _one = inner.hosts_sent.lock().await;
    let tables = inner.hosts.told(session, hosts)?;
    super::egress::node::peers(inner, session).await?;
    push(inner, tables).await
}
