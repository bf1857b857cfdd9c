//! Stopping a kernel for destroy: the runner asked to exit and the engine's stop (SIGTERM,
//! SIGKILL after a grace), and the answer as soon as its processes are gone.
//!
//! The engine's `stop` call returns only after its own clean-up of the exited container
//! (the network sandbox, the mounts): about 50 ms on a bridge, longer than the kernel took to
//! die. Nothing of the kernel runs by then, so the answer does not wait for it: the engine's
//! `die` event for the container ends the wait, and the clean-up is handed to the removal
//! ([`Stopped::settling`]). The logs are read as the stop begins (the engine holds them
//! back while it cleans up); what the kernel prints while it dies is not in them.

use super::{Inner, LOG_TAIL_BYTES, inspect};
use crate::error::is_not_found;
use crate::krunner_proto::EXIT;
use bai_core::agent::{AgentError, KernelExit};
use bollard::query_parameters::{EventsOptions, StopContainerOptions};
use futures::StreamExt;
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};
use tokio::task::JoinHandle;
use uuid::Uuid;

/// Grace between SIGTERM and SIGKILL. krunner dies at once on SIGTERM, so this is only
/// waited for when something in the kernel holds on.
const STOP_GRACE_SECS: i32 = 1;

/// How long asking the runner to exit may take before the stop alone ends it.
const ASK_EXIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// A kernel whose processes are gone.
#[derive(Debug)]
pub struct Stopped {
    pub exit: KernelExit,
    /// On a network of its session's own (a cluster kernel's), which goes with its removal.
    pub session_network: bool,
    /// The engine's `stop` call, still cleaning up the exited container: the removal
    /// waits for it.
    pub settling: Option<JoinHandle<()>>,
}

/// Waits until the engine has finished with the stopped container ([`Stopped::settling`]).
pub async fn settled(settling: Option<JoinHandle<()>>) {
    if let Some(call) = settling {
        let _ = call.await;
    }
}

/// Stops the kernel if it runs and collects its exit and logs. A kernel that was still
/// running has no exit code of its own (`exit_code: None`: we ended it).
pub async fn stop(
    inner: &Inner,
    kernel_id: Uuid,
    mut exit: KernelExit,
) -> Result<Stopped, AgentError> {
    let Some(state) = inspect::state(inner, kernel_id).await? else {
        return Ok(Stopped {
            exit,
            session_network: false,
            settling: None,
        });
    };
    let logs = async {
        inspect::logs(inner, kernel_id, LOG_TAIL_BYTES)
            .await
            .unwrap_or_else(|e| {
                tracing::warn!(kernel = %kernel_id, error = %e, "cannot collect logs");
                String::new()
            })
    };
    let mut settling = None;
    if state.running {
        let (logs, ended) = tokio::join!(logs, end(inner, kernel_id));
        exit.logs = logs;
        exit.oom_killed = ended.oom_killed;
        settling = ended.settling;
        if settling.is_none() {
            // The stop call came back first; the engine's record has the OOM flag.
            exit.oom_killed |= inspect::state(inner, kernel_id)
                .await
                .ok()
                .flatten()
                .is_some_and(|s| s.oom_killed);
        }
    } else {
        exit.exit_code = state.exit_code;
        exit.oom_killed = state.oom_killed;
        exit.logs = logs.await;
    }
    tracing::info!(kernel = %kernel_id, exit_code = ?exit.exit_code, oom = exit.oom_killed, "kernel stopped; its removal follows");
    Ok(Stopped {
        exit,
        session_network: state.session_network,
        settling,
    })
}

/// How a running kernel ended.
struct Ended {
    oom_killed: bool,
    /// The stop call, when the `die` event came before it returned.
    settling: Option<JoinHandle<()>>,
}

/// Asks the engine to stop the container and waits for its `die` event, or for the stop
/// call's return when the events cannot be read.
async fn end(inner: &Inner, kernel_id: Uuid) -> Ended {
    let name = Inner::container_name(kernel_id);
    // Events from this instant on (the engine replays them to a later subscriber), so a
    // `die` before the subscription is in place is not missed.
    let since = engine_time(SystemTime::now());
    // The runner is asked to exit over its socket (as SIGTERM would end it, without the
    // engine's signalling through the runtime: ~10 ms); the engine's stop follows at once
    // regardless, and stays the guarantee (SIGKILL after the grace).
    tokio::spawn(ask_exit(inner.dirs(kernel_id).socket));
    let mut call = tokio::spawn(stop_call(inner.docker.clone(), name.clone(), kernel_id));
    let filters = HashMap::from([
        ("container".to_string(), vec![name]),
        ("type".to_string(), vec!["container".to_string()]),
        (
            "event".to_string(),
            vec!["die".to_string(), "oom".to_string()],
        ),
    ]);
    let opts = EventsOptions {
        since: Some(since),
        filters: Some(filters),
        ..Default::default()
    };
    let mut events = inner.docker.events(Some(opts));
    let mut oom_killed = false;
    let died = loop {
        tokio::select! {
            event = events.next() => match event {
                Some(Ok(e)) if e.action.as_deref() == Some("oom") => oom_killed = true,
                Some(Ok(e)) if e.action.as_deref() == Some("die") => break true,
                Some(Ok(_)) => {}
                Some(Err(e)) => {
                    tracing::debug!(kernel = %kernel_id, error = %e, "cannot follow the engine's events; waiting for the stop");
                    break false;
                }
                None => break false,
            },
            _ = &mut call => return Ended { oom_killed, settling: None },
        }
    };
    if died {
        return Ended {
            oom_killed,
            settling: Some(call),
        };
    }
    let _ = call.await;
    Ended {
        oom_killed,
        settling: None,
    }
}

/// Asks the runner listening on `socket` to exit; a runner that cannot be reached is left to
/// the engine's stop.
async fn ask_exit(socket: std::path::PathBuf) {
    use tokio::io::AsyncWriteExt;
    let asked = async {
        let mut s = tokio::net::UnixStream::connect(&socket).await?;
        s.write_all(EXIT).await
    };
    if let Ok(Err(e)) = tokio::time::timeout(ASK_EXIT_TIMEOUT, asked).await {
        tracing::debug!(socket = %socket.display(), error = %e, "cannot ask the runner to exit; the stop ends it");
    }
}

async fn stop_call(docker: bollard::Docker, name: String, kernel_id: Uuid) {
    let opts = StopContainerOptions {
        t: Some(STOP_GRACE_SECS),
        signal: None,
    };
    match docker.stop_container(&name, Some(opts)).await {
        Ok(()) => {}
        // 304: it stopped by itself meanwhile.
        Err(bollard::errors::Error::DockerResponseServerError {
            status_code: 304, ..
        }) => {}
        Err(e) if is_not_found(&e) => {}
        Err(e) => {
            tracing::warn!(kernel = %kernel_id, error = %e, "cannot stop; removing by force")
        }
    }
}

/// A time as the engine's event filter reads it: seconds and nanoseconds since the epoch.
fn engine_time(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    format!("{}.{:09}", d.as_secs(), d.subsec_nanos())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn engine_time_has_nine_digits_of_nanoseconds() {
        let t = UNIX_EPOCH + Duration::new(1_700_000_000, 5_000);
        assert_eq!(engine_time(t), "1700000000.000005000");
    }
}
