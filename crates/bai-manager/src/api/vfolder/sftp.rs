//! `POST /folders/{id}/sftp`: SFTP to a data folder. The platform starts a system session of
//! the caller with the folder mounted and only sshd, authorized for a key made for it alone,
//! counted under the keypair policy's `max_concurrent_sftp_sessions`; once it runs,
//! `crate::sftp` listens on a port of the app pool and relays to its sshd. The answer holds
//! the private key (shown once).

use super::visible_folder;
use crate::auth::Caller;
use crate::error::ApiResult;
use crate::state::Manager;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::{Extension, Json};
use bai_api::folders::SftpAccess;
use bai_control::lifecycle::create::{Created, create, plan_spec};
use bai_core::resources::{DEFAULT_SHMEM, ResourceRequest, ResourceSlots};
use bai_core::spec::{FolderRef, MountAsk};
use bai_core::{Problem, SessionName, SessionSpec, SessionStatus as S, SessionType};
use std::sync::Arc;

/// The user SFTP logs in as.
const USER: &str = "work";

/// The caller's live system sessions, against their policy's limit.
fn check_limit(m: &Manager, caller: &Caller) -> ApiResult<()> {
    let max = m
        .store
        .policy_of(&caller.access_key)?
        .max_concurrent_sftp_sessions;
    let live: Vec<S> = S::ALL.into_iter().filter(|s| !s.is_terminal()).collect();
    let (_, open) = m.store.list_sessions(&bai_store::SessionFilter {
        statuses: live,
        access_key: Some(caller.access_key.clone()),
        system: true,
        limit: 0,
        offset: 0,
        after: None,
    })?;
    if open >= max {
        return Err(Problem::conflict(
            "sftp-session-limit",
            "Too many SFTP sessions.",
            format!(
                "you have {open} SFTP session(s) open and your resource policy allows {max}; end one first (bai ps --system, then bai rm NAME)"
            ),
        )
        .into());
    }
    Ok(())
}

/// Where a system session's sshd is reached (the SFTP listener relays to it).
async fn sshd_address(
    m: &Manager,
    row: &bai_store::SessionRow,
) -> Result<std::net::SocketAddr, Problem> {
    let agent = m.agents.holding(row)?;
    agent
        .rpc
        .app_address(row.main_kernel_id, bai_ground::apps::SSHD_PORT)
        .await
        .map_err(|e| {
            Problem::from(e).context(format!("sshd of session {:?} cannot be reached", row.name))
        })
}

pub async fn sftp(
    State(m): State<Arc<Manager>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<String>,
) -> ApiResult<(StatusCode, Json<SftpAccess>)> {
    let folder = visible_folder(&m, &caller, &id)?;
    if folder.is_trashed() {
        return Err(Problem::invalid(format!(
            "data folder {:?} is in the trash: restore it first",
            folder.name
        ))
        .into());
    }
    check_limit(&m, &caller)?;
    let keys = bai_control::lifecycle::cluster_keys::generate().map_err(Problem::internal)?;
    let image = m
        .config
        .sftp_image
        .clone()
        .unwrap_or_else(|| "python".into());
    let resources = ResourceRequest {
        slots: ResourceSlots {
            cpu_milli: 1000,
            mem: 256 << 20,
            accel: Default::default(),
        },
        shmem: DEFAULT_SHMEM,
    };
    let mut spec = SessionSpec::new(image, resources);
    let suffix = &uuid::Uuid::new_v4().simple().to_string()[..6];
    let short: String = folder
        .name
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .take(20)
        .collect();
    spec.name = Some(
        SessionName::parse(&format!("sftp-{short}-{suffix}"))
            .map_err(|e| Problem::internal(format!("the SFTP session's own name: {e}")))?,
    );
    spec.reuse_if_exists = false;
    spec.mounts = vec![MountAsk {
        folder: FolderRef::Id(folder.id.to_string()),
        target: None,
    }];
    // The platform's own variable (users may not set BAI_ names; the platform does).
    spec.environ
        .insert("BAI_AUTHORIZED_KEY".into(), keys.public_key.clone());
    // Planned as an interactive session (resource groups take those), run as a system one.
    let mut plan = plan_spec(&m.lifecycle, &caller, &spec)?;
    plan.session.spec.session_type = SessionType::System;
    let path = plan
        .session
        .spec
        .mounts
        .iter()
        .find(|mt| mt.vfolder_id == folder.id)
        .map(|mt| mt.kernel_path.clone())
        .unwrap_or_else(|| format!("/home/work/{}", folder.name));
    // SFTP starts in the folder (krunner's sshd: `internal-sftp -d`), and the scratch home
    // around it, which ends with the session, takes no upload.
    plan.session
        .spec
        .environ
        .insert("BAI_SFTP_DIR".into(), path.clone());
    let mut events = m.bus.subscribe();
    let row = match create(&m.lifecycle, &plan)? {
        Created::New(r) | Created::Retried(r) | Created::Reused(r) => r,
    };
    // Until it runs (or fails: the lifecycle ends every session that cannot start).
    let row = loop {
        let now = m
            .store
            .session(row.id)?
            .ok_or_else(|| Problem::internal("the SFTP session vanished"))?;
        if now.state.status == S::Running {
            break now;
        }
        // The scheduler looked at it and cannot place it now (no room, a limit): its caller
        // waits for a port, not in a queue, so it is cancelled and the reason given.
        if now.state.status == S::Pending
            && let Some(why) = m.scheduler.pending_view(row.id)
        {
            crate::sftp::end(&m, row.id, bai_core::Reason::UserRequested).await;
            return Err(Problem::conflict(
                "sftp-session-waits",
                "No room for an SFTP session now.",
                format!(
                    "the SFTP session cannot start now ({}): {}; it was cancelled, try again later",
                    why.code, why.reason
                ),
            )
            .into());
        }
        if now.state.status.is_terminal() || now.state.status == S::Error {
            return Err(Problem::new(
                503,
                "sftp-session-failed",
                "The SFTP session did not start.",
                format!(
                    "the SFTP session {} ended as {}: {}",
                    now.name,
                    now.state.status.as_str(),
                    now.state.status_info.unwrap_or_default()
                ),
            )
            .into());
        }
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), events.recv()).await;
    };
    let sshd = sshd_address(&m, &row).await?;
    let port = match crate::sftp::serve(&m, row.id, sshd).await {
        Ok(p) => p,
        Err(e) => {
            crate::sftp::end(&m, row.id, bai_core::Reason::UserRequested).await;
            return Err(Problem::new(503, "sftp-no-port", "No port for SFTP.", e).into());
        }
    };
    let host = m.config.endpoint_host.clone();
    tracing::info!(session = %row.id, folder = %folder.name, port, "sftp session ready");
    Ok((
        StatusCode::CREATED,
        Json(SftpAccess {
            session_id: row.id.to_string(),
            session_name: row.name.clone(),
            command: format!("sftp -i KEYFILE -P {port} {USER}@{host}"),
            host,
            port,
            user: USER.into(),
            path,
            private_key: keys.private_key,
        }),
    ))
}
