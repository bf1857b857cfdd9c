//! Watching agents: a kernel whose main process ended (batch finished, crash, out of
//! memory) ends its session with the reason in words; an agent's changed image list is
//! taken into the catalogue, and its changed offer into the scheduler's view.

use super::Lifecycle;
use super::terminate::finish_termination;
use super::transition::{Change, TransitionError, transition};
use bai_core::Reason;
use bai_core::agent::{AgentEvent, KernelExit};
use bai_core::event::EventKind as E;
use bai_core::status::{SessionResult, SessionStatus as S, SessionType};
use bai_ground::agents::AgentHandle;
use futures::StreamExt;
use std::sync::Arc;

/// Consumes an agent's events for as long as the agent lives.
pub fn spawn(lifecycle: Arc<Lifecycle>, agent: Arc<AgentHandle>) {
    tokio::spawn(async move {
        let mut events = agent.rpc.events();
        while let Some(ev) = events.next().await {
            match ev {
                AgentEvent::KernelExited(exit) => handle_kernel_exit(&lifecycle, exit).await,
                // Followed by the launch that asked for the pull (`pull.rs`).
                AgentEvent::ImagePull { .. } => {}
                AgentEvent::ImagesChanged { images } => {
                    set_agent_images(&lifecycle, &agent.id, images);
                }
                AgentEvent::OfferChanged {
                    capacity,
                    size,
                    withheld,
                    kernels_unreachable,
                    kernel_most,
                } => {
                    let offer = Offer {
                        capacity,
                        size,
                        withheld,
                        kernels_unreachable,
                        kernel_most,
                    };
                    set_agent_offer(&lifecycle, &agent.id, offer);
                }
            }
        }
        tracing::warn!(agent = %agent.id, "agent event stream ended");
    });
}

/// Takes an agent's new image list (`AgentEvent::ImagesChanged`): the catalogue and the
/// scheduler see it at once, and aliases of new images are registered.
fn set_agent_images(
    lifecycle: &Lifecycle,
    agent_id: &str,
    images: Vec<bai_core::agent::ImageInfo>,
) {
    let Some(a) = lifecycle.agents.get(agent_id) else {
        return;
    };
    a.set_images(images);
    let info = a.info();
    tracing::info!(agent = %agent_id, images = info.images.len(), "the agent's images changed");
    if let Err(e) = crate::images::aliases::register(&lifecycle.store, &info) {
        tracing::warn!(agent = %agent_id, error = %e, "cannot register image aliases");
    }
}

/// Takes an agent's new offer (`AgentEvent::OfferChanged`): the scheduler places by it
/// from its next pass, woken now (room may have come back).
struct Offer {
    capacity: bai_core::resources::ResourceSlots,
    size: Option<bai_core::resources::ResourceSlots>,
    withheld: Option<String>,
    kernels_unreachable: bool,
    kernel_most: std::collections::BTreeMap<String, bai_core::agent::KernelMost>,
}

fn set_agent_offer(lifecycle: &Lifecycle, agent_id: &str, offer: Offer) {
    let Offer {
        capacity,
        size,
        withheld,
        kernels_unreachable,
        kernel_most,
    } = offer;
    let Some(a) = lifecycle.agents.get(agent_id) else {
        return;
    };
    tracing::info!(
        agent = %agent_id,
        cpu = %bai_core::resources::format_cpu(capacity.cpu_milli),
        mem = %bai_core::resources::format_bytes(capacity.mem),
        withheld = withheld.as_deref().unwrap_or(""),
        kernels_unreachable,
        "the agent's offer changed"
    );
    a.set_offer(capacity, size, withheld, kernels_unreachable, kernel_most);
    lifecycle.bus.wake_scheduler();
}

/// Why a kernel ended.
pub fn exit_reason(ty: SessionType, exit: &KernelExit) -> (Reason, SessionResult) {
    let code = exit.exit_code.unwrap_or(-1);
    if exit.oom_killed {
        return (Reason::OutOfMemory, SessionResult::Failure);
    }
    match (ty, code) {
        (SessionType::Batch, 0) => (Reason::TaskFinished, SessionResult::Success),
        (SessionType::Batch, c) => (Reason::TaskFailed(c), SessionResult::Failure),
        (_, 0) => (Reason::SelfTerminated(None), SessionResult::Success),
        (_, 137) => (Reason::Killed(137), SessionResult::Failure),
        (_, c) => (Reason::SelfTerminated(Some(c)), SessionResult::Failure),
    }
}

/// Takes a kernel's end. When the store cannot record it now (its disk is full, say), the
/// exit is kept and tried again, less often each time, until the store answers: a session
/// whose kernel ended is never left RUNNING.
pub async fn handle_kernel_exit(lifecycle: &Arc<Lifecycle>, exit: KernelExit) {
    let Err(e) = record_kernel_exit(lifecycle, &exit).await else {
        return;
    };
    tracing::warn!(kernel = %exit.kernel_id, error = %e, "cannot record a kernel's end now; trying again until the store answers");
    let lifecycle = lifecycle.clone();
    super::retry::until_done(move || {
        let (lifecycle, exit) = (lifecycle.clone(), exit.clone());
        async move {
            let done = record_kernel_exit(&lifecycle, &exit).await.is_ok();
            if done {
                tracing::info!(kernel = %exit.kernel_id, "a kernel's end recorded after all");
            }
            done
        }
    });
}

/// [`handle_kernel_exit`] once; Err when the store failed (nothing was changed).
async fn record_kernel_exit(
    lifecycle: &Arc<Lifecycle>,
    exit: &KernelExit,
) -> Result<(), bai_store::StoreError> {
    let Some(row) = lifecycle.store.session_by_kernel(exit.kernel_id)? else {
        tracing::warn!(kernel = %exit.kernel_id, "exit of an unknown kernel");
        return Ok(());
    };
    let main = exit.kernel_id == row.main_kernel_id;
    let kept = if main {
        lifecycle.store.set_logs(row.id, &exit.logs)
    } else {
        lifecycle
            .store
            .set_sub_kernel_exit(exit.kernel_id, exit.exit_code, &exit.logs)
    };
    if !exit.logs.is_empty()
        && let Err(e) = kept
    {
        tracing::warn!(session = %row.id, error = %e, "cannot keep the kernel's logs");
    }
    match row.state.status {
        s if s.is_up() => {
            let (reason, result) = if main {
                exit_reason(row.spec.session_type, exit)
            } else {
                // A sub kernel has no command of its own: its end is a failure of the session.
                (
                    sub_exit_reason(lifecycle, &row, exit),
                    SessionResult::Failure,
                )
            };
            let code = if main { exit.exit_code } else { None };
            let c = Change::new(row.state.status, S::Terminating, reason, "kernel-exit")
                .events(&[E::SessionTerminating])
                .result(result, code);
            match transition(lifecycle, row.id, c) {
                Ok(Some(row)) => {
                    // The agent already removed this container; the other kernels go now.
                    finish_termination(lifecycle, &row, row.spec.cluster_size > 1).await;
                }
                // Someone else moved it first.
                Ok(None) => {}
                Err(TransitionError::Store(e)) => return Err(e),
                Err(e) => {
                    tracing::error!(session = %row.id, error = %e, "status change failed");
                }
            }
        }
        // In its grace: the preemption task sees the end and goes on at once.
        s if s.is_creating() || s == S::Preempted => {
            if let Ok(mut early) = lifecycle.early_exits.lock() {
                early.insert(exit.kernel_id, exit.clone());
            }
        }
        _ => {}
    }
    Ok(())
}

/// Why a session ends when one of its sub kernels ended: the kernel named, and how.
fn sub_exit_reason(
    lifecycle: &Lifecycle,
    row: &bai_store::SessionRow,
    exit: &KernelExit,
) -> Reason {
    let host = super::kernels::kernel_ids(lifecycle, row)
        .iter()
        .position(|k| *k == exit.kernel_id)
        .map(|i| format!("sub{i}"))
        .unwrap_or_else(|| exit.kernel_id.to_string());
    let how = if exit.oom_killed {
        "ran out of memory".to_string()
    } else {
        match exit.exit_code {
            Some(c) => format!("exited with code {c}"),
            None => "ended".to_string(),
        }
    };
    Reason::KernelLost(format!("kernel {host} {how}"))
}
