//! Storing new sessions and what a session keeps (its reason, name, logs, last readings).

use super::history::{add_history_tx, insert_event_tx};
use super::{NewSession, corrupt};
use crate::db::{OptionalExtension, params};
use crate::{Result, Store, StoreError, now_str};
use bai_core::Reason;
use bai_core::event::{EventKind, SessionEvent};
use bai_core::history::HistoryResult;
use bai_core::status::SessionStatus;
use uuid::Uuid;

impl Store {
    /// Inserts a PENDING session with its first history record and `session_enqueued` event.
    pub fn insert_session(&self, s: &NewSession) -> Result<SessionEvent> {
        self.insert_session_keyed(s, None)
    }

    /// [`Store::insert_session`] that also records the create's idempotency key (key,
    /// digest of the request) in the same transaction, so a retry finds the session even
    /// after a crash right after the insert. A key already taken inserts nothing and fails
    /// with a constraint error; [`Store::session_by_idempotency_key`] then finds its session.
    pub fn insert_session_keyed(
        &self,
        s: &NewSession,
        key: Option<(&str, &str)>,
    ) -> Result<SessionEvent> {
        if s.sub_kernels.len() + 1 != s.spec.cluster_size.max(1) as usize {
            return Err(StoreError::Invalid(format!(
                "session {} has {} sub kernels for a cluster of {}",
                s.id,
                s.sub_kernels.len(),
                s.spec.cluster_size
            )));
        }
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        if let Some((key, digest)) = key {
            tx.execute(
                "INSERT INTO idempotency_keys(access_key, key, digest, session_id, created_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![s.spec.access_key, key, digest, s.id.to_string(), now_str()],
            )?;
        }
        let now = now_str();
        let hist = serde_json::to_string(&super::StatusHistory::from([(
            SessionStatus::Pending,
            now.clone(),
        )]))
        .map_err(|e| corrupt("status_history", e))?;
        let environ = serde_json::to_string(&s.spec.environ).map_err(|e| corrupt("environ", e))?;
        let slots = serde_json::to_string(&s.spec.requested_slots)
            .map_err(|e| corrupt("requested_slots", e))?;
        let deps =
            serde_json::to_string(&s.spec.dependencies).map_err(|e| corrupt("dependencies", e))?;
        let mounts = serde_json::to_string(&s.spec.mounts).map_err(|e| corrupt("mounts", e))?;
        let preopen = serde_json::to_string(&s.spec.preopen_ports)
            .map_err(|e| corrupt("preopen_ports", e))?;
        tx.execute(
            "INSERT INTO sessions(id, name, access_key, user_id, domain_name, group_name,
                scaling_group, type, image, tag, priority, status, status_info, status_changed,
                status_history, created_at, starts_at, batch_timeout, startup_command,
                bootstrap_script, environ, requested_slots, shmem, main_kernel_id,
                designated_agent, dependencies, mounts, preopen_ports, cluster_mode, cluster_size,
                requeue)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?26, ?27, ?12,
                ?13, ?12, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?28, ?29,
                ?30)",
            params![
                s.id.to_string(),
                s.name,
                s.spec.access_key,
                s.spec.user_id,
                s.spec.domain_name,
                s.spec.group_name,
                s.spec.scaling_group,
                s.spec.session_type.as_str(),
                s.spec.image,
                s.spec.tag,
                s.spec.priority,
                now,
                hist,
                s.spec.starts_at,
                s.spec.batch_timeout,
                s.spec.startup_command,
                s.spec.bootstrap_script,
                environ,
                slots,
                s.spec.shmem as i64,
                s.main_kernel_id.to_string(),
                s.spec.designated_agent,
                deps,
                mounts,
                preopen,
                SessionStatus::Pending.as_str(),
                Reason::Enqueued.to_string(),
                s.spec.cluster_mode.as_str(),
                i64::from(s.spec.cluster_size.max(1)),
                i64::from(s.spec.requeue),
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
            &s.spec.access_key,
            &Reason::Enqueued.to_string(),
            None,
            None,
            &now,
        )?;
        tx.commit()?;
        Ok(ev)
    }

    /// The session an idempotency key of `access_key` created, with the digest of the
    /// request that created it.
    pub fn session_by_idempotency_key(
        &self,
        access_key: &str,
        key: &str,
    ) -> Result<Option<(Uuid, String)>> {
        let found: Option<(String, String)> = self
            .read()
            .query_row(
                "SELECT session_id, digest FROM idempotency_keys WHERE access_key = ?1 AND key = ?2",
                params![access_key, key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        match found {
            Some((id, digest)) => Ok(Some((
                Uuid::parse_str(&id).map_err(|e| corrupt("idempotency_keys.session_id", e))?,
                digest,
            ))),
            None => Ok(None),
        }
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

    /// Read on a reader: every listing reads each ended session's `last_stat`, which on the
    /// writer filled the writer's 32 MiB page cache with the sessions table (and waited for
    /// its writes).
    fn kept(&self, id: Uuid, what: Kept) -> Result<Option<String>> {
        Ok(self
            .read()
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
