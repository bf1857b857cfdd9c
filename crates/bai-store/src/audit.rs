//! The audit log: who did what, when, and whether it was allowed. Written by the manager
//! for creates, terminations, renames, commits, administrators' changes, logins and token
//! mints; read by administrators, newest first.

use crate::db::params;
use crate::{Result, Store, now_str};
use bai_core::audit::AuditRecord;

/// A new entry (the store adds its id and time).
#[derive(Debug, Clone, Default)]
pub struct AuditEntry<'a> {
    pub actor: &'a str,
    pub access_key: Option<&'a str>,
    pub action: &'a str,
    pub target: &'a str,
    pub outcome: &'a str,
    pub detail: &'a str,
}

/// Which entries to list (empty fields match everything).
#[derive(Debug, Clone, Default)]
pub struct AuditFilter {
    pub actor: Option<String>,
    /// An action, or with a trailing `*` every action starting so (`POST /session*`).
    pub action: Option<String>,
    pub target: Option<String>,
    /// Entries at or after this time (RFC 3339).
    pub since: Option<String>,
    pub limit: i64,
}

impl Store {
    pub fn add_audit(&self, e: &AuditEntry<'_>) -> Result<()> {
        self.conn().execute(
            "INSERT INTO audit_log(at, actor, access_key, action, target, outcome, detail)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                now_str(),
                e.actor,
                e.access_key,
                e.action,
                e.target,
                e.outcome,
                e.detail
            ],
        )?;
        Ok(())
    }

    /// Deletes the entries older than `before` (RFC 3339); returns how many.
    pub fn prune_audit(&self, before: &str) -> Result<usize> {
        Ok(self
            .conn()
            .execute("DELETE FROM audit_log WHERE at < ?1", [before])?)
    }

    /// Entries matching `f`, newest first.
    pub fn audit(&self, f: &AuditFilter) -> Result<Vec<AuditRecord>> {
        let (exact, prefix) = match f.action.as_deref() {
            Some(a) if a.ends_with('*') => (None, Some(a.trim_end_matches('*').to_string())),
            Some(a) => (Some(a.to_string()), None),
            None => (None, None),
        };
        let conn = self.read();
        let mut st = conn.prepare(
            "SELECT id, at, actor, access_key, action, target, outcome, detail FROM audit_log
             WHERE (?1 IS NULL OR actor = ?1)
               AND (?2 IS NULL OR action = ?2)
               AND (?6 IS NULL OR substr(action, 1, length(?6)) = ?6)
               AND (?3 IS NULL OR target = ?3)
               AND (?4 IS NULL OR at >= ?4)
             ORDER BY id DESC LIMIT ?5",
        )?;
        let rows = st.query_map(
            params![
                f.actor,
                exact,
                f.target,
                f.since,
                if f.limit > 0 { f.limit } else { 100 },
                prefix
            ],
            |r| {
                Ok(AuditRecord {
                    id: r.get(0)?,
                    at: r.get(1)?,
                    actor: r.get(2)?,
                    access_key: r.get(3)?,
                    action: r.get(4)?,
                    target: r.get(5)?,
                    outcome: r.get(6)?,
                    detail: r.get(7)?,
                })
            },
        )?;
        Ok(rows.collect::<crate::db::Result<Vec<_>>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_older_than_the_retention_are_pruned() {
        let s = Store::open_for_tests().expect("store");
        let e = AuditEntry {
            actor: "a@x",
            access_key: None,
            action: "login",
            target: "",
            outcome: "ok",
            detail: "",
        };
        s.add_audit(&e).expect("add");
        let mid = now_str();
        s.add_audit(&e).expect("add");
        assert_eq!(s.prune_audit(&mid).expect("prune"), 1);
        let left = s
            .audit(&AuditFilter {
                limit: 10,
                ..Default::default()
            })
            .expect("list");
        assert_eq!(left.len(), 1);
        assert!(left[0].at >= mid);
    }

    #[test]
    fn entries_are_listed_newest_first_and_filtered() {
        let s = Store::open_for_tests().expect("store");
        for (actor, action, target) in [
            ("a@x", "POST /session", "s1"),
            ("b@x", "login", "web"),
            ("a@x", "DELETE /session/{reference}", "s1"),
        ] {
            s.add_audit(&AuditEntry {
                actor,
                action,
                target,
                outcome: "ok",
                ..Default::default()
            })
            .expect("add");
        }
        let all = s.audit(&AuditFilter::default()).expect("list");
        assert_eq!(
            all.iter().map(|r| r.action.as_str()).collect::<Vec<_>>(),
            ["DELETE /session/{reference}", "login", "POST /session"]
        );
        let sessions = s
            .audit(&AuditFilter {
                action: Some("POST /session*".into()),
                ..Default::default()
            })
            .expect("list");
        assert_eq!(sessions.len(), 1);
        let exact = s
            .audit(&AuditFilter {
                action: Some("login".into()),
                ..Default::default()
            })
            .expect("list");
        assert_eq!(exact.len(), 1);
        let b = s
            .audit(&AuditFilter {
                actor: Some("b@x".into()),
                ..Default::default()
            })
            .expect("list");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].target, "web");
    }
}
