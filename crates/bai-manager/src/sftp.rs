//! SFTP to a data folder: the TCP port in front of a system session's sshd.
//!
//! `api::vfolder::sftp` starts the session; [`serve`] then listens on a free port of the app
//! port pool and relays each connection to the kernel's sshd (the key the session was made
//! with is its only way in). The listener closes when the session ends; when no connection
//! has been open for `sftp_idle`, it ends the session (`idle-timeout`). A manager that
//! restarts has no listener for the system sessions it left: `reap` ends them at start.

use crate::state::Manager;
use bai_core::{Reason, SessionResult, SessionStatus, SessionType};
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::net::TcpListener;
use uuid::Uuid;

/// Listens for SFTP to `session` on a free port of the app port pool; returns the port.
pub async fn serve(m: &Arc<Manager>, session: Uuid, sshd: SocketAddr) -> Result<u16, String> {
    let (lo, hi) = m.config.app_port_pool;
    for port in bai_control::proxy::candidates(None, (lo, hi), rand::random()) {
        if let Ok(l) = TcpListener::bind(("0.0.0.0", port)).await {
            tokio::spawn(run(m.clone(), session, sshd, l));
            tracing::info!(session = %session, port, "sftp listener opened");
            return Ok(port);
        }
    }
    Err(format!(
        "no free port in the app port pool {lo}-{hi}; close other apps or widen BAI_APP_PORTS"
    ))
}

/// Ends an SFTP session (its listener closes with it); a failure is logged, as there is no
/// caller to tell.
pub async fn end(m: &Manager, session: Uuid, reason: Reason) {
    if let Err(e) = bai_control::lifecycle::terminate::terminate(
        &m.lifecycle,
        session,
        reason,
        SessionResult::Undefined,
    )
    .await
    {
        tracing::warn!(session = %session, error = %e, "cannot end the sftp session");
    }
}

async fn run(m: Arc<Manager>, session: Uuid, sshd: SocketAddr, l: TcpListener) {
    let ended = bai_control::proxy::session_end(&m.bus, session);
    tokio::pin!(ended);
    let open = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(tokio::sync::Notify::new());
    let traffic = m.traffic.of(session);
    loop {
        // The idle clock runs only while no connection is open, and starts again at every
        // connection's end.
        let idle = open.load(Ordering::SeqCst) == 0;
        let clock = tokio::time::sleep(m.config.sftp_idle);
        tokio::select! {
            () = &mut ended => break,
            () = clock, if idle => {
                tracing::info!(session = %session, "sftp session idle: ending it");
                end(&m, session, Reason::IdleTimeout).await;
                break;
            }
            () = closed.notified() => {}
            acc = l.accept() => {
                let Ok((mut client, _)) = acc else { continue };
                open.fetch_add(1, Ordering::SeqCst);
                let (open, closed, traffic) = (open.clone(), closed.clone(), traffic.clone());
                tokio::spawn(async move {
                    match bai_relay::dial(sshd, bai_relay::DIAL_WAIT).await {
                        Ok(mut server) => {
                            if let Ok((up, down)) =
                                tokio::io::copy_bidirectional(&mut client, &mut server).await
                            {
                                traffic.add(up, down);
                            }
                        }
                        Err(e) => tracing::warn!(error = %e, "sftp: sshd cannot be reached"),
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                    closed.notify_one();
                });
            }
        }
    }
    tracing::info!(session = %session, "sftp listener closed");
}

/// Ends the system sessions a previous run of the manager left running (their listeners
/// went with it).
pub async fn reap(m: &Arc<Manager>) {
    let live: Vec<SessionStatus> = SessionStatus::ALL
        .into_iter()
        .filter(|s| !s.is_terminal() && *s != SessionStatus::Terminating)
        .collect();
    let rows = match m.store.sessions_in(&live) {
        Ok(r) => r,
        Err(e) => {
            tracing::warn!(error = %e, "sftp: cannot list the sessions left");
            return;
        }
    };
    for r in rows
        .into_iter()
        .filter(|r| r.spec.session_type == SessionType::System)
    {
        tracing::info!(session = %r.id, "sftp session left by an earlier run: ending it");
        end(m, r.id, Reason::UserRequested).await;
    }
}
