//! Watching agents: a kernel whose main process ended (batch finished, crash, out of
//! memory) ends its session with the reason in words.

use super::terminate::finish_termination;
use super::transition::{Change, transition};
use crate::state::{AgentHandle, Manager};
use bai_core::agent::{AgentEvent, KernelExit};
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S, SessionType};
use futures::StreamExt;
use std::sync::Arc;

/// Consumes an agent's events for as long as the agent lives.
pub fn spawn(m: Arc<Manager>, agent: Arc<AgentHandle>) {
    tokio::spawn(async move {
        let mut events = agent.rpc.events();
        while let Some(ev) = events.next().await {
            match ev {
                AgentEvent::KernelExited(exit) => handle_kernel_exit(&m, exit).await,
            }
        }
        tracing::warn!(agent = %agent.id, "agent event stream ended");
    });
}

/// Why a kernel ended, in words.
pub fn exit_reason(ty: SessionType, exit: &KernelExit) -> (String, SessionResult) {
    let code = exit.exit_code.unwrap_or(-1);
    if exit.oom_killed {
        return ("out-of-memory".into(), SessionResult::Failure);
    }
    match (ty, code) {
        (SessionType::Batch, 0) => ("task-finished".into(), SessionResult::Success),
        (SessionType::Batch, c) => (
            format!("task-failed (exit code {c})"),
            SessionResult::Failure,
        ),
        (_, 0) => ("self-terminated".into(), SessionResult::Success),
        (_, 137) => ("killed (exit code 137)".into(), SessionResult::Failure),
        (_, c) => (
            format!("self-terminated (exit code {c})"),
            SessionResult::Failure,
        ),
    }
}

pub async fn handle_kernel_exit(m: &Arc<Manager>, exit: KernelExit) {
    let row = match m.store.session_by_kernel(exit.kernel_id) {
        Ok(Some(r)) => r,
        Ok(None) => {
            tracing::warn!(kernel = %exit.kernel_id, "exit of an unknown kernel");
            return;
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot look up kernel");
            return;
        }
    };
    if !exit.logs.is_empty() {
        let _ = m.store.set_logs(row.id, &exit.logs);
    }
    match row.status {
        S::Running | S::Restarting | S::RunningDegraded => {
            let (reason, result) = exit_reason(row.session_type, &exit);
            let c = Change::new(row.status, S::Terminating, &reason, "kernel-exit")
                .events(&[E::SessionTerminating])
                .result(result, exit.exit_code);
            if let Ok(Some(row)) = transition(m, row.id, c) {
                // The agent already removed the container.
                finish_termination(m, &row, false).await;
            }
        }
        S::Scheduled | S::Preparing | S::Pulling | S::Prepared | S::Creating => {
            if let Ok(mut early) = m.early_exits.lock() {
                early.insert(exit.kernel_id, exit);
            }
        }
        _ => {}
    }
}
