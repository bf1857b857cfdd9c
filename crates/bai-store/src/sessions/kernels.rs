//! The sub kernels of cluster sessions (`sub1` …). A session's main kernel is the session
//! row itself (its `main_kernel_id`, `agent_id`, `container_id`, `logs`), so sessions of one
//! kernel, nearly all of them, cost no row here.

use crate::db::{OptionalExtension, params};
use crate::{Result, Store};
use bai_core::status::SessionStatus;
use std::collections::HashMap;
use uuid::Uuid;

/// One sub kernel as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct SubKernel {
    pub id: Uuid,
    pub session_id: Uuid,
    /// 1 for `sub1`, …
    pub idx: u32,
    pub agent_id: Option<String>,
    pub container_id: Option<String>,
    pub exit_code: Option<i32>,
}

impl SubKernel {
    /// `sub1`, `sub2`, … (Backend.AI's names).
    pub fn hostname(&self) -> String {
        format!("sub{}", self.idx)
    }
}

impl Store {
    /// The sub kernels of a session, `sub1` first.
    pub fn sub_kernels(&self, session_id: Uuid) -> Result<Vec<SubKernel>> {
        let conn = self.read();
        let mut st = conn.prepare_cached(
            "SELECT id, idx, agent_id, container_id, exit_code FROM kernels
             WHERE session_id = ?1 ORDER BY idx",
        )?;
        let rows = st.query_map([session_id.to_string()], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<String>>(3)?,
                r.get::<_, Option<i32>>(4)?,
            ))
        })?;
        let mut out = Vec::new();
        for r in rows {
            let (id, idx, agent_id, container_id, exit_code) = r?;
            out.push(SubKernel {
                id: Uuid::parse_str(&id).map_err(|e| super::corrupt("kernels.id", e))?,
                session_id,
                idx: idx.max(0) as u32,
                agent_id,
                container_id,
                exit_code,
            });
        }
        Ok(out)
    }

    /// Records where a sub kernel runs once it was made.
    pub fn set_sub_kernel_started(
        &self,
        kernel_id: Uuid,
        agent_id: &str,
        container_id: &str,
    ) -> Result<()> {
        self.conn().execute(
            "UPDATE kernels SET agent_id = ?2, container_id = ?3 WHERE id = ?1",
            params![kernel_id.to_string(), agent_id, container_id],
        )?;
        Ok(())
    }

    /// Places a session's sub kernels on an agent (single-node: the session's agent).
    pub fn set_sub_kernels_agent(&self, session_id: Uuid, agent_id: &str) -> Result<()> {
        self.conn().execute(
            "UPDATE kernels SET agent_id = ?2 WHERE session_id = ?1",
            params![session_id.to_string(), agent_id],
        )?;
        Ok(())
    }

    /// Keeps what a sub kernel left when it ended.
    pub fn set_sub_kernel_exit(
        &self,
        kernel_id: Uuid,
        exit_code: Option<i32>,
        logs: &str,
    ) -> Result<()> {
        self.conn().execute(
            "UPDATE kernels SET exit_code = COALESCE(?2, exit_code),
                logs = CASE WHEN ?3 = '' THEN logs ELSE ?3 END WHERE id = ?1",
            params![kernel_id.to_string(), exit_code, logs],
        )?;
        Ok(())
    }

    /// The logs a sub kernel left when it ended.
    pub fn sub_kernel_logs(&self, kernel_id: Uuid) -> Result<Option<String>> {
        Ok(self
            .read()
            .query_row(
                "SELECT logs FROM kernels WHERE id = ?1",
                [kernel_id.to_string()],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }
}

/// Where the kernels of multi-node sessions in `statuses` are: session → `(kernel index,
/// agent)` of its sub kernels (main1 is the session's own agent).
pub type SubPlacements = HashMap<Uuid, Vec<(u32, Option<String>)>>;

impl Store {
    /// [`SubPlacements`] of the multi-node sessions in `statuses` (the scheduler's occupancy).
    pub fn multi_node_placements(&self, statuses: &[SessionStatus]) -> Result<SubPlacements> {
        let conn = self.read();
        let mut st = conn.prepare(&format!(
            "SELECT k.session_id, k.idx, k.agent_id FROM kernels k
             JOIN sessions s ON s.id = k.session_id
             WHERE s.cluster_mode = 'multi-node' AND s.status IN ({})
             ORDER BY k.session_id, k.idx",
            super::status_list(statuses)
        ))?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
            ))
        })?;
        let mut out: SubPlacements = HashMap::new();
        for r in rows {
            let (session, idx, agent) = r?;
            let session =
                Uuid::parse_str(&session).map_err(|e| super::corrupt("kernels.session_id", e))?;
            out.entry(session)
                .or_default()
                .push((idx.max(0) as u32, agent));
        }
        Ok(out)
    }

    /// Sessions with a sub kernel on `agent` (a multi-node session whose main1 is elsewhere).
    pub fn sessions_with_subs_on(&self, agent: &str) -> Result<Vec<Uuid>> {
        let conn = self.read();
        let mut st =
            conn.prepare_cached("SELECT DISTINCT session_id FROM kernels WHERE agent_id = ?1")?;
        let rows = st.query_map([agent], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for r in rows {
            out.push(Uuid::parse_str(&r?).map_err(|e| super::corrupt("kernels.session_id", e))?);
        }
        Ok(out)
    }

    /// The sessions that hold resources on `agent` (SCHEDULED through TERMINATING): its
    /// main kernel there, or a sub kernel.
    pub fn sessions_on(&self, agent: &str) -> Result<Vec<crate::SessionRow>> {
        let subs: std::collections::HashSet<Uuid> =
            self.sessions_with_subs_on(agent)?.into_iter().collect();
        Ok(self
            .sessions_in(&SessionStatus::HOLDS_RESOURCES)?
            .into_iter()
            .filter(|r| r.state.agent_id.as_deref() == Some(agent) || subs.contains(&r.id))
            .collect())
    }

    /// Gives a multi-node session an overlay slot no other unended session holds, or returns
    /// the one it holds. None when all are taken. The search starts at a place drawn from
    /// the session's id (then wraps), not at 0: the slot names the session's subnet on every
    /// engine it touches, and two control planes that share an engine (test machines, a
    /// staging manager beside production) would otherwise both take 10.224.0.0/24 first and
    /// collide there; spread over 4,096 slots they almost never do.
    pub fn claim_overlay_slot(&self, session_id: Uuid, slots: u32) -> Result<Option<u32>> {
        let mut conn = self.conn();
        let tx = conn.transaction()?;
        let held: Option<i64> = tx
            .query_row(
                "SELECT overlay_slot FROM sessions WHERE id = ?1",
                [session_id.to_string()],
                |r| r.get(0),
            )
            .optional()?
            .flatten();
        if let Some(h) = held {
            return Ok(u32::try_from(h).ok());
        }
        let ended: Vec<SessionStatus> = SessionStatus::ALL
            .into_iter()
            .filter(|s| s.is_terminal())
            .collect();
        let ended = super::status_list(&ended);
        let taken: std::collections::HashSet<i64> = {
            let mut st = tx.prepare(&format!(
                "SELECT overlay_slot FROM sessions
                 WHERE overlay_slot IS NOT NULL AND status NOT IN ({ended})"
            ))?;
            let rows = st.query_map([], |r| r.get::<_, i64>(0))?;
            rows.collect::<crate::db::Result<_>>()?
        };
        let n = i64::from(slots);
        let start = i64::try_from(session_id.as_u128() % u128::from(slots.max(1))).unwrap_or(0);
        let Some(free) = (0..n).map(|i| (start + i) % n).find(|s| !taken.contains(s)) else {
            return Ok(None);
        };
        tx.execute(
            "UPDATE sessions SET overlay_slot = ?2 WHERE id = ?1",
            params![session_id.to_string(), free],
        )?;
        tx.commit()?;
        Ok(u32::try_from(free).ok())
    }
}

/// Places a multi-node session's sub kernels (inside the scheduler's pass): `subs[i]` is
/// `sub{i+1}`'s agent.
pub(crate) fn place_subs_tx(
    tx: &crate::db::Transaction<'_>,
    session_id: Uuid,
    subs: &[String],
) -> Result<()> {
    let mut st =
        tx.prepare_cached("UPDATE kernels SET agent_id = ?3 WHERE session_id = ?1 AND idx = ?2")?;
    for (i, agent) in subs.iter().enumerate() {
        st.execute(params![session_id.to_string(), i as i64 + 1, agent])?;
    }
    Ok(())
}

/// Inserts the sub kernels of a new session (inside its insert).
pub(crate) fn insert_subs_tx(
    tx: &crate::db::Transaction<'_>,
    session_id: Uuid,
    subs: &[Uuid],
) -> Result<()> {
    let mut st =
        tx.prepare_cached("INSERT INTO kernels(id, session_id, idx) VALUES (?1, ?2, ?3)")?;
    for (i, id) in subs.iter().enumerate() {
        st.execute(params![
            id.to_string(),
            session_id.to_string(),
            i as i64 + 1
        ])?;
    }
    Ok(())
}
