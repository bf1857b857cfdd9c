//! Storing new sessions and what a session keeps (its reason, name, logs, last readings).

use super::history::{add_history_tx, insert_event_tx};
use super::{NewSession, corrupt};
use crate::{Result, Store, now_str};
use bai_core::Reason;
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::HistoryResult;
use bai_core::status::SessionStatus;
use rusqlite::{OptionalExtension, params};
use uuid::Uuid;

impl Store {
    /// Inserts a PENDING session with its first history record and `session_enqueued` event.
    pub fn insert_session(&self, s: &NewSession) -> Result<SessionEvent> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let now = now_str();
        let hist = serde_json::to_string(&super::StatusHistory::from([(
            SessionStatus::Pending,
            now.clone(),
        )]))
        .map_err(|e| corrupt("status_history", e))?;
        let environ = serde_json::to_string(&s.environ).map_err(|e| corrupt("environ", e))?;
        let slots =
            serde_json::to_string(&s.requested_slots).map_err(|e| corrupt("requested_slots", e))?;
        let deps =
            serde_json::to_string(&s.dependencies).map_err(|e| corrupt("dependencies", e))?;
        let mounts = serde_json::to_string(&s.mounts).map_err(|e| corrupt("mounts", e))?;
        let preopen =
            serde_json::to_string(&s.preopen_ports).map_err(|e| corrupt("preopen_ports", e))?;
        tx.execute(
            "INSERT INTO sessions(id, name, access_key, user_id, domain_name, group_name,
                scaling_group, type, image, tag, priority, status, status_info, status_changed,
                status_history, created_at, starts_at, batch_timeout, startup_command,
                bootstrap_script, environ, requested_slots, shmem, main_kernel_id,
                designated_agent, dependencies, mounts, preopen_ports, cluster_mode, cluster_size)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?26, ?27, ?12,
                ?13, ?12, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?28, ?29)",
            params![
                s.id.to_string(),
                s.name,
                s.access_key,
                s.user_id,
                s.domain_name,
                s.group_name,
                s.scaling_group,
                s.session_type.as_str(),
                s.image,
                s.tag,
                s.priority,
                now,
                hist,
                s.starts_at,
                s.batch_timeout,
                s.startup_command,
                s.bootstrap_script,
                environ,
                slots,
                s.shmem as i64,
                s.main_kernel_id.to_string(),
                s.designated_agent,
                deps,
                mounts,
                preopen,
                SessionStatus::Pending.as_str(),
                Reason::Enqueued.to_string(),
                s.cluster_mode.as_str(),
                s.sub_kernels.len() as i64 + 1,
            ],
        )?;
        super::kernels::insert_subs_tx(&tx, s.id, &s.sub_kernels)?;
        add_history_tx(
            &tx,
            s.id,
            "enqueue",
            HistoryResult::Success,
            None,
            Some(SessionStatus::Pending),
            None,
            "session accepted and queued",
            &now,
        )?;
        let ev = insert_event_tx(
            &tx,
            EventKind::SessionEnqueued,
            s.id,
            &s.name,
            &s.access_key,
            &Reason::Enqueued.to_string(),
            None,
            None,
            &now,
        )?;
        tx.commit()?;
        Ok(ev)
    }

    /// Updates why a session is where it is, without a status change (e.g. why PENDING).
    pub fn set_status_info(&self, id: Uuid, info: &str) -> Result<()> {
        self.conn().execute(
            "UPDATE sessions SET status_info = ?2 WHERE id = ?1 AND (status_info IS NULL OR status_info != ?2)",
            params![id.to_string(), info],
        )?;
        Ok(())
    }

    /// Updates why a session is where it is while it is still in `status` (progress within
    /// a status: it never overwrites the reason of a later one). Whether it did.
    pub fn set_status_info_while(
        &self,
        id: Uuid,
        status: SessionStatus,
        info: &str,
    ) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE sessions SET status_info = ?3 WHERE id = ?1 AND status = ?2",
            params![id.to_string(), status.as_str(), info],
        )? > 0)
    }

    pub fn rename_session(&self, id: Uuid, new_name: &str) -> Result<bool> {
        Ok(self.conn().execute(
            "UPDATE sessions SET name = ?2 WHERE id = ?1",
            params![id.to_string(), new_name],
        )? == 1)
    }

    /// Keeps the output of a session's kernel (it outlives the container).
    pub fn set_logs(&self, id: Uuid, logs: &str) -> Result<()> {
        self.set_kept(id, Kept::Logs, logs)
    }

    pub fn logs(&self, id: Uuid) -> Result<Option<String>> {
        self.kept(id, Kept::Logs)
    }

    /// Keeps the last counters of a session that ended (a JSON text, Backend.AI's `last_stat`).
    pub fn set_last_stat(&self, id: Uuid, stat: &str) -> Result<()> {
        self.set_kept(id, Kept::LastStat, stat)
    }

    pub fn last_stat(&self, id: Uuid) -> Result<Option<String>> {
        self.kept(id, Kept::LastStat)
    }

    fn set_kept(&self, id: Uuid, what: Kept, text: &str) -> Result<()> {
        self.conn().execute(
            &format!("UPDATE sessions SET {} = ?2 WHERE id = ?1", what.column()),
            params![id.to_string(), text],
        )?;
        Ok(())
    }

    fn kept(&self, id: Uuid, what: Kept) -> Result<Option<String>> {
        Ok(self
            .conn()
            .query_row(
                &format!("SELECT {} FROM sessions WHERE id = ?1", what.column()),
                [id.to_string()],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }
}

/// What a session keeps after its kernel is gone (a text column each).
#[derive(Debug, Clone, Copy)]
enum Kept {
    Logs,
    LastStat,
}

impl Kept {
    fn column(self) -> &'static str {
        match self {
            Kept::Logs => "logs",
            Kept::LastStat => "last_stat",
        }
    }
}
